"""RLlib on a local Ray: one PPO iteration with a remote env runner, a Ray actor holding a vector env, worker logs.

Needs the ``rllib`` extra (``ray[rllib]``, torch); skipped without it. One
Ray instance on 2 CPUs serves the module (``docs/rl.md``, "RLlib").
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

import craft_env
from craft_env.core import jit
from craft_env.wrappers import rllib as craft_rllib

# Ray's workers cannot import this test module: its actor class travels by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, object_store_memory=200 * 2**20)
    yield
    ray.shutdown()


def test_one_ppo_iteration_with_a_remote_env_runner(local_ray):
    config = craft_rllib.ppo_config(
        num_env_runners=1, env_config={"oracle_n": 5, "max_turns": 3},
        train_batch_size=60, minibatch_size=30, num_epochs=1, hidden=(32,),
    )
    algo = config.build_algo()
    try:
        result = algo.train()
        games, seen = _greedy_evaluation(algo)
    finally:
        algo.stop()
    # docs/rl.md's RLlib snippet ends with this evaluation: greedy modules on the bundled games, within the masks.
    assert games.summary()["games"] == 20 and 0.0 <= games.summary()["progress"] <= 1.0
    assert [module for module, *_ in seen[:2]] == ["director", "builder"]
    assert len(seen) == 2 * games.turns.max()
    for module, masks, actions in seen:
        assert actions.shape == masks.shape[:-1] == ((20, 3) if module == "director" else (20,))
        assert np.take_along_axis(masks, actions[..., None], -1).all()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled"] >= 60
    assert runners["num_episodes"] >= 5  # 3 turns = 6 env steps an episode
    # The oracle condition leaves the builder only optimal moves and the pass: the team's progress rises.
    assert runners["episode_return_mean"] > 0
    assert set(runners["num_module_steps_sampled"]) == {"director", "builder"}
    assert {"director", "builder"} <= set(result["learners"])


def _greedy_evaluation(algo):
    """``play`` with ``greedy_policy`` seats on one game per bundled structure; what each seat was given and did."""
    pytest.importorskip("jax")
    from craft_env.jax.team.evaluate import play

    seen = []

    def recorded(module_id):
        act = craft_rllib.greedy_policy(algo, module_id)

        def seat(obs, masks):
            actions = act(obs, masks)
            seen.append((module_id, masks.astype(bool), actions))
            return actions
        return seat

    with pytest.raises(ValueError, match="module_id: no module 'nobody'"):
        craft_rllib.greedy_policy(algo, "nobody")
    return play("RLlib team", recorded("director"), recorded("builder"), seeds=1), seen


def test_separate_policies_give_every_agent_its_module():
    config = craft_rllib.ppo_config(shared_policy=False)
    specs = config.rl_module_spec.rl_module_specs
    assert set(specs) == {*craft_env.parallel_env().possible_agents}
    assert specs["builder"].action_space.n == 115 and specs["director_1"].action_space.n == 145


def test_config_errors_name_the_field():
    with pytest.raises(ValueError, match="num_env_runners: expected an int from 0 to 1,024, got -1"):
        craft_rllib.ppo_config(num_env_runners=-1)
    with pytest.raises(ValueError, match="num_envs_per_env_runner"):
        craft_rllib.ppo_config(num_envs_per_env_runner=0)


def test_the_env_follows_rllibs_masking_convention():
    env = craft_rllib.make_env({"max_turns": 2})
    observations, _ = env.reset(seed=3)
    assert set(observations) == set(env.possible_agents)
    for agent, observation in observations.items():
        assert env.observation_spaces[agent].contains(observation)
    steps = 0
    while True:
        actions = {a: int(np.flatnonzero(o["action_mask"])[0]) for a, o in observations.items()}
        observations, rewards, terminations, truncations, _ = env.step(actions)
        steps += 1
        if terminations["__all__"] or truncations["__all__"]:
            break
    assert steps == 4 and truncations["__all__"] and len(set(rewards.values())) == 1


@ray.remote
class VectorEnvHolder:
    """A Ray actor that receives a vector env (pickled on the way) and steps it."""

    def __init__(self, env) -> None:
        self.env = env

    def play(self, actions: list[np.ndarray]) -> list[tuple]:
        return [self.env.step(a)[1:4] for a in actions]

    def log_compiling(self) -> str:
        """Announce a cold kernel as the envs do; returns the file this worker's stderr goes to."""
        jit._announced = False
        jit.announce_cold_kernels(_ColdKernel())
        return os.readlink("/proc/self/fd/2")


class _ColdKernel:
    """Looks to ``jit.announce_cold_kernels`` like a dispatcher with an empty cache index."""

    class _cache:  # numba's attribute names
        class _cache_file:
            @staticmethod
            def _load_index() -> dict:
                return {}


def test_a_ray_actor_holds_a_vector_env_mid_episode(local_ray):
    env = craft_env.vector_env(4, oracle_n=5, max_turns=4, copy=True)
    env.reset(seed=11)
    for step in range(5):  # mid-episode, on the builder's phase
        env.step(env.scripted_intents() if env.phase == "directors" else env.sample_actions(seed=step))
    remote = VectorEnvHolder.remote(env)  # the env travels pickled
    actions, expected = [], []
    for step in range(12):  # crosses the end of the first episodes (8 steps)
        action = env.scripted_intents() if env.phase == "directors" else env.sample_actions(seed=50 + step)
        actions.append(action)
        expected.append(env.step(action)[1:4])
    played = ray.get(remote.play.remote(actions))
    assert len(played) == len(expected)
    for here, there in zip(expected, played):
        for a, b in zip(here, there):
            np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not Path("/proc/self/fd/2").exists(), reason="reads the worker's stderr file from /proc")
def test_compiling_is_announced_in_the_worker_log(local_ray):
    """Nothing configures logging in a Ray worker: the warning still reaches its log (``core.jit``)."""
    log = Path(ray.get(VectorEnvHolder.remote(craft_env.vector_env(1)).log_compiling.remote()))
    assert log.name.endswith(".err")
    assert jit.COMPILING_MESSAGE in log.read_text()
