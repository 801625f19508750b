"""The homogenising wrappers (craft_env.wrappers): one space for every agent, masks kept, no crash."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from pettingzoo.test import api_test, parallel_api_test

import craft_env
from craft_env.wrappers import (
    ROLES,
    HomogeneousAECWrapper,
    HomogeneousParallelWrapper,
    homogeneous_env,
    homogeneous_parallel_env,
)

BUILDER = "builder"


def _random_actions(observations, rng, flat_slice=None):
    actions = {}
    for agent, obs in observations.items():
        mask = obs[flat_slice] if flat_slice is not None else obs["action_mask"]
        actions[agent] = int(rng.choice(np.flatnonzero(mask)))
    return actions


@pytest.mark.parametrize("flat", [False, True])
def test_every_agent_gets_the_same_spaces(flat):
    inner = craft_env.parallel_env()
    dims = {a: inner.observation_space(a)["observation"].shape[0] for a in inner.possible_agents}
    actions = {a: inner.action_space(a).n for a in inner.possible_agents}
    for env in (homogeneous_parallel_env(flat=flat), homogeneous_env(flat=flat)):
        space = env.observation_space(BUILDER)
        assert all(env.observation_space(a) == space for a in env.possible_agents)
        assert all(env.action_space(a) == env.action_space(BUILDER) for a in env.possible_agents)
        assert env.action_space(BUILDER).n == max(actions.values()) == 145   # directors' intents at 3x3
        obs_dim = max(dims.values()) + len(ROLES)
        if flat:
            assert space.shape == (obs_dim + 145,)
        else:
            assert space["observation"].shape == (obs_dim,) and space["action_mask"].shape == (145,)


def test_observation_is_own_padded_plus_role_and_mask_padded():
    inner = craft_env.parallel_env()
    wrapped = homogeneous_parallel_env()
    flat = homogeneous_parallel_env(flat=True)
    raw_obs, _ = inner.reset(seed=5)
    obs, _ = wrapped.reset(seed=5)
    flat_obs, _ = flat.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(6):
        pad = wrapped.pad_dim
        for agent, own in raw_obs.items():
            dim, actions = own["observation"].shape[0], own["action_mask"].shape[0]
            got = obs[agent]
            np.testing.assert_array_equal(got["observation"][:dim], own["observation"])
            assert not got["observation"][dim:pad].any()
            role = np.zeros(len(ROLES), np.float32)
            role[ROLES.index("builder" if agent == BUILDER else "director")] = 1
            np.testing.assert_array_equal(got["observation"][pad:], role)
            np.testing.assert_array_equal(got["action_mask"][:actions], own["action_mask"])
            assert not got["action_mask"][actions:].any()
            assert got["action_mask"].dtype == np.int8
            np.testing.assert_array_equal(flat_obs[agent][: wrapped.obs_dim], got["observation"])
            np.testing.assert_array_equal(flat_obs[agent][flat.mask_slice], got["action_mask"])
        actions = _random_actions(raw_obs, rng)
        raw_obs, *_ = inner.step(actions)
        obs, *_ = wrapped.step({a: np.int64(x) for a, x in actions.items()})
        flat_obs, *_ = flat.step(actions)


def test_parallel_action_outside_own_space_is_a_failed_turn():
    env = homogeneous_parallel_env(oracle_n=None)
    env.reset(seed=2)
    env.step({a: 0 for a in env.agents})
    board = env.unwrapped.board
    _, _, _, _, infos = env.step({BUILDER: 130, **{a: 0 for a in env.agents if a != BUILDER}})
    assert infos[BUILDER]["legal"] is False and "130" in infos[BUILDER]["reason"]
    assert env.unwrapped.board == board


def test_aec_action_outside_own_space_is_a_failed_turn_and_outside_the_shared_space_an_error():
    env = homogeneous_env()
    env.reset(seed=2)
    for _ in range(3):
        env.step(0)
    assert env.agent_selection == BUILDER
    board = env.unwrapped.board
    env.step(144)
    info = env.infos[BUILDER]
    assert info["legal"] is False and "144" in info["reason"]
    assert env.unwrapped.board == board
    for _ in range(3):
        env.step(0)
    with pytest.raises(AssertionError, match="action space"):
        env.step(145)


@pytest.mark.parametrize("flat", [False, True])
def test_pettingzoo_api_tests_pass(flat):
    parallel_api_test(homogeneous_parallel_env(flat=flat, max_turns=4), num_cycles=20)
    api_test(homogeneous_env(flat=flat, max_turns=4), num_cycles=20)


def test_episode_ends_and_rewards_reach_every_agent():
    env = homogeneous_parallel_env(max_cycles=8)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(0)
    returns = dict.fromkeys(env.possible_agents, 0.0)
    steps = 0
    while env.agents:
        obs, rewards, terminations, truncations, _ = env.step(_random_actions(obs, rng))
        for agent, reward in rewards.items():
            returns[agent] += reward
        steps += 1
    assert steps == 8 and all(truncations.values())
    assert len(set(returns.values())) == 1 and returns[BUILDER] != 0.0


def test_wrappers_take_only_bare_envs():
    with pytest.raises(ValueError, match="env"):
        HomogeneousAECWrapper(craft_env.env())
    with pytest.raises(ValueError, match="env"):
        HomogeneousParallelWrapper(homogeneous_parallel_env())
    with pytest.raises(ValueError, match="flat"):
        homogeneous_parallel_env(flat="yes")


def test_wrapped_envs_pickle_before_and_during_an_episode():
    """SuperSuit's vector envs copy the env by pickling it (cloudpickle); tests/test_pickle.py covers the rest."""
    for env in (homogeneous_parallel_env(flat=True, max_turns=3), craft_env.parallel_env(max_cycles=5)):
        copy = pickle.loads(pickle.dumps(env))
        assert copy.unwrapped.config == env.unwrapped.config and copy.max_cycles == env.max_cycles
        first, copied = env.reset(seed=4)[0][BUILDER], copy.reset(seed=4)[0][BUILDER]
        np.testing.assert_array_equal(first if flat_obs(first) else first["observation"],
                                      copied if flat_obs(copied) else copied["observation"])
        middle = pickle.loads(pickle.dumps(env))
        actions = dict.fromkeys(env.agents, 0)
        stepped, resumed = env.step(actions), middle.step(actions)
        assert stepped[1] == resumed[1] and stepped[2] == resumed[2]
    aec = homogeneous_env(max_turns=3)
    copy = pickle.loads(pickle.dumps(aec))
    aec.reset(seed=4)
    copy.reset(seed=4)
    np.testing.assert_array_equal(aec.observe(BUILDER)["observation"], copy.observe(BUILDER)["observation"])


def flat_obs(obs) -> bool:
    return isinstance(obs, np.ndarray)
