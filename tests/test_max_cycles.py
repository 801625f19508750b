"""PettingZoo's ``max_cycles`` keyword on both envs (src/craft_env/envs/craft.py docstring)."""

from __future__ import annotations

import types

import numpy as np
import pytest
from pettingzoo.test import max_cycles_test

import craft_env


def _module() -> types.ModuleType:
    """What ``max_cycles_test`` imports: a module with ``env`` and ``parallel_env`` factories."""
    module = types.ModuleType("craft_v0")
    module.env = craft_env.env
    module.parallel_env = craft_env.parallel_env
    return module


def test_pettingzoo_max_cycles_test_passes():
    max_cycles_test(_module())


@pytest.mark.parametrize("max_cycles", [1, 2, 3, 6, 7])
def test_parallel_env_truncates_after_max_cycles_steps(max_cycles):
    env = craft_env.parallel_env(max_cycles=max_cycles)
    observations, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    steps = 0
    while env.agents:
        actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
        observations, _, terminations, truncations, _ = env.step(actions)
        steps += 1
    assert steps == max_cycles
    assert all(truncations.values()) and not any(terminations.values())
    assert env.config.max_turns == -(-max_cycles // 2)


@pytest.mark.parametrize("max_cycles", [1, 4])
def test_aec_env_gives_every_agent_max_cycles_steps(max_cycles):
    env = craft_env.env(max_cycles=max_cycles)
    env.reset(seed=1)
    counts = dict.fromkeys(env.possible_agents, 0)
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        counts[agent] += 1
        env.step(None if termination or truncation else 0)
    assert set(counts.values()) == {max_cycles + 1}   # max_cycles live steps, then the dead step
    assert env.unwrapped.turn == max_cycles


@pytest.mark.parametrize(("config", "field"), [
    ({"max_cycles": 0}, "max_cycles"),
    ({"max_cycles": "4"}, "max_cycles"),
    ({"max_cycles": 4, "max_turns": 4}, "max_cycles"),
])
def test_bad_max_cycles_is_a_clear_error(config, field):
    for factory in (craft_env.env, craft_env.parallel_env):
        with pytest.raises(ValueError, match=field):
            factory(**config)
