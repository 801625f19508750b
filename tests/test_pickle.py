"""Every env pickles at any point, mid-episode included, and the copy continues exactly as the original.

The packed records inside the envs are numba structrefs, which do not
pickle; the envs pickle as plain arrays and rebuild them (``envs.game``,
"Pickling"). Each test plays the original and the unpickled copy side by
side with the same actions and compares everything a step returns.
"""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import craft_env
from craft_env.core import game as kernels
from craft_env.envs.game import episode_arrays, restore_episode

SEEDS = st.integers(0, 2**31 - 1)
CONFIGS = st.sampled_from([{}, {"oracle_n": 5}, {"protocol": "paper"}, {"max_turns": 3}])


def assert_same(first, second, where="") -> None:
    """Equal values, recursively through dicts, lists and arrays (NaN equal to NaN)."""
    assert type(first) is type(second), where
    if isinstance(first, dict):
        assert first.keys() == second.keys(), where
        for key in first:
            assert_same(first[key], second[key], f"{where}.{key}")
    elif isinstance(first, (list, tuple)):
        assert len(first) == len(second), where
        for k, (a, b) in enumerate(zip(first, second)):
            assert_same(a, b, f"{where}[{k}]")
    elif isinstance(first, np.ndarray):
        np.testing.assert_array_equal(first, second, err_msg=where)
    elif isinstance(first, float):
        assert first == second or (math.isnan(first) and math.isnan(second)), f"{where}: {first!r} != {second!r}"
    else:
        assert first == second, f"{where}: {first!r} != {second!r}"


def random_actions(observations: dict, rng: np.random.Generator) -> dict[str, int]:
    return {agent: int(rng.choice(np.flatnonzero(obs["action_mask"]))) for agent, obs in observations.items()}


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS, before=st.integers(0, 45), config=CONFIGS)
def test_parallel_env_continues_identically_after_unpickling(seed, before, config):
    env = craft_env.parallel_env(**config)
    observations, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(before):  # may run past the end: then a new episode starts
        if not env.agents:
            observations, _ = env.reset(seed=int(rng.integers(2**31)))
        observations, *_ = env.step(random_actions(observations, rng))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.agents == env.agents and copy.builder_phase == env.builder_phase
    assert_same(copy.state(), env.state())
    for _ in range(12):
        if not env.agents:
            seed = int(rng.integers(2**31))
            observations, infos = env.reset(seed=seed)
            assert_same(copy.reset(seed=seed), (observations, infos))
        actions = random_actions(observations, rng)
        stepped = env.step(actions)
        assert_same(copy.step(actions), stepped)
        observations = stepped[0]


@settings(max_examples=15, deadline=None)
@given(seed=SEEDS, before=st.integers(0, 30), text=st.booleans())
def test_aec_env_continues_identically_after_unpickling(seed, before, text):
    env = craft_env.env(oracle_n=5, max_turns=4, message_mode="text" if text else "intent")
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)

    def act(game) -> object:
        observation, _, terminated, truncated, _ = game.last()
        return None if terminated or truncated else int(rng.choice(np.flatnonzero(observation["action_mask"])))

    for _ in range(before):
        if not env.agents:
            break
        env.step(act(env))
    copy = pickle.loads(pickle.dumps(env))
    for _ in range(10):
        if not env.agents:
            assert not copy.agents
            break
        assert copy.agent_selection == env.agent_selection
        assert_same(copy.last(), env.last())
        action = act(env)
        env.step(action)
        copy.step(action)
        assert_same(copy.rewards, env.rewards)
        assert_same(copy.infos, env.infos)
    assert copy.conversation == env.conversation and copy.board == env.board


@settings(max_examples=10, deadline=None)
@given(seed=SEEDS, before=st.integers(0, 90), num_envs=st.sampled_from([1, 3, 9]))
def test_vector_env_continues_identically_after_unpickling(seed, before, num_envs):
    env = craft_env.vector_env(num_envs, max_turns=5, oracle_n=5, copy=True)
    env.reset(seed=seed)

    def act(step: int) -> np.ndarray:
        return env.scripted_intents() if env.phase == "directors" else env.sample_actions(seed=seed + step)

    for step in range(before):  # crosses auto-resets: episodes are 10 steps
        env.step(act(step))
    copy = pickle.loads(pickle.dumps(env))
    assert copy.phase == env.phase and copy.base_seed == env.base_seed
    assert_same(copy.episode_counts, env.episode_counts)
    assert_same(copy.state(), env.state())
    for step in range(before, before + 25):
        actions = act(step)
        assert_same(copy.step(actions), env.step(actions))


def test_envs_pickle_before_reset():
    for env in (craft_env.parallel_env(), craft_env.vector_env(2)):
        copy = pickle.loads(pickle.dumps(env))
        assert_same(copy.reset(seed=1), env.reset(seed=1))
    aec = craft_env.env()
    copy = pickle.loads(pickle.dumps(aec))
    aec.reset(seed=1)
    copy.reset(seed=1)
    assert_same(copy.last(), aec.last())


def test_restoring_an_episode_of_another_shape_names_the_field():
    small, large = craft_env.vector_env(2), craft_env.vector_env(3)
    with pytest.raises(ValueError, match=r"episode\.boards: expected an array of shape \(3, 9, 3\)"):
        restore_episode(large._episode, episode_arrays(small._episode))
    assert set(episode_arrays(small._episode)) == set(kernels.EPISODE_FIELDS)
