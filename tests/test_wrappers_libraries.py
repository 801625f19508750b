"""The wrappers driven by the RL libraries themselves (docs/rl.md, "RL libraries").

Each test skips when its library is absent (they are in the ``test``
extra). They assert what a user of the library relies on: the library's
sampled actions respect the masks, episodes end, the team's reward arrives.
"""

from __future__ import annotations

import numpy as np
import pytest

from craft_env.wrappers import homogeneous_env, homogeneous_parallel_env

BUILDER_INDEX = 3   # possible_agents: director_1..3, builder


@pytest.fixture(autouse=True)
def _sb3_logs_in_tmp_path(tmp_path, monkeypatch):
    """SB3's ``learn`` makes a log folder in the system's temporary directory unless SB3_LOGDIR names one."""
    monkeypatch.setenv("SB3_LOGDIR", str(tmp_path / "sb3"))


def _sb3_vec_env(max_turns: int):
    """SuperSuit's SB3 vector env (2 games x 4 agents); seeded through SB3's global seed.

    ``PPO(seed=...)`` would call ``seed()`` on the vector env, which SuperSuit's does not have.
    """
    ss = pytest.importorskip("supersuit")
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.utils import set_random_seed

    set_random_seed(0)
    env = homogeneous_parallel_env(flat=True, max_turns=max_turns)
    vec = ss.pettingzoo_env_to_vec_env_v1(env)
    return ss.concat_vec_envs_v1(vec, 2, num_cpus=0, base_class="stable_baselines3"), env.mask_slice


def _recorder():
    from stable_baselines3.common.callbacks import BaseCallback

    class Recorder(BaseCallback):
        """Keeps what the algorithm saw on every vector step."""

        def __init__(self) -> None:
            super().__init__()
            self.steps: list[dict] = []

        def _on_step(self) -> bool:
            keep = ("actions", "rewards", "dones", "infos", "action_masks")
            self.steps.append({k: self.locals[k] for k in keep if k in self.locals})
            return True

    return Recorder()


def _check_team_steps(steps, max_turns: int, masked: bool) -> None:
    dones = np.array([s["dones"] for s in steps])               # (T, 4 agents x 2 games)
    rewards = np.array([s["rewards"] for s in steps])
    assert dones.shape[1] == 8
    # Episodes end together for the four agents of a game, every 2 * max_turns vector steps.
    assert (dones.reshape(len(steps), 2, 4) == dones.reshape(len(steps), 2, 4)[:, :, :1]).all()
    ends = np.flatnonzero(dones[:, 0])
    assert len(ends) >= 2 and set(np.diff(ends)) == {2 * max_turns}
    # The team's reward reaches all four agents of a game.
    per_game = rewards.reshape(len(steps), 2, 4)
    assert np.allclose(per_game, per_game[:, :, :1]) and np.abs(rewards).sum() > 0
    builder_legal = [info["legal"] for s in steps for info in s["infos"][BUILDER_INDEX::4] if "metrics" in info]
    assert builder_legal
    if masked:
        for s in steps:
            masks, actions = np.asarray(s["action_masks"]), np.asarray(s["actions"])
            assert masks[np.arange(len(actions)), actions].all()
        assert all(builder_legal)
    else:
        assert not all(builder_legal)    # unmasked PPO plays illegal moves: failed turns, no crash


def test_supersuit_vec_env_drives_sb3_maskable_ppo_within_the_masks():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    from craft_env.wrappers.sb3 import ActionMasks

    vec, mask_slice = _sb3_vec_env(max_turns=4)
    vec = ActionMasks(vec, mask_slice)
    model = sb3_contrib.MaskablePPO("MlpPolicy", vec, n_steps=128, batch_size=256, n_epochs=1, device="cpu",
                                    policy_kwargs={"net_arch": [32]})
    recorder = _recorder()
    model.learn(total_timesteps=2048, callback=recorder)
    assert len(recorder.steps) * 8 >= 2048
    _check_team_steps(recorder.steps, max_turns=4, masked=True)


def test_the_sb3_snippets_evaluation_plays_a_maskable_ppo_model_within_its_masks():
    """docs/rl.md's SB3 snippet ends with ``homogeneous_policy`` and ``play``: a MaskablePPO model (one short
    rollout) plays the bundled games, greedy, every director's and the builder's action within its mask."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    pytest.importorskip("jax")
    import craft_env
    from craft_env.jax.team.evaluate import homogeneous_policy, play
    from craft_env.wrappers.sb3 import ActionMasks

    vec, mask_slice = _sb3_vec_env(max_turns=4)
    model = sb3_contrib.MaskablePPO("MlpPolicy", ActionMasks(vec, mask_slice), n_steps=16, batch_size=64,
                                    n_epochs=1, device="cpu", policy_kwargs={"net_arch": [32]})
    model.learn(total_timesteps=128)
    seen = []

    def predict(obs, masks):
        actions = model.predict(obs, action_masks=masks, deterministic=True)[0]
        seen.append((obs[:, mask_slice.start - 2:mask_slice.start], masks, actions))
        return actions

    env = craft_env.vector_env(1)
    directors, builder = homogeneous_policy(predict, director_dim=env.director_dim, builder_dim=env.builder_dim)
    games = play("SB3 team", directors, builder, seeds=1)
    summary = games.summary()
    assert summary["games"] == 20 and 0.0 <= summary["progress"] <= 1.0 and 1 <= summary["turns"] <= 20
    assert len(seen) == 2 * games.turns.max()          # every turn: the directors' call, then the builder's
    for roles, masks, actions in seen:
        assert masks[np.arange(len(actions)), actions].all()
    assert (seen[0][0] == [1, 0]).all() and (seen[1][0] == [0, 1]).all()   # role one-hots: directors, builder
    assert len(seen[0][2]) == 3 * 20 and len(seen[1][2]) == 20


def test_supersuit_vec_env_drives_sb3_ppo_and_illegal_actions_are_failed_turns():
    vec, _ = _sb3_vec_env(max_turns=4)
    from stable_baselines3 import PPO

    model = PPO("MlpPolicy", vec, n_steps=128, batch_size=256, n_epochs=1, device="cpu",
                policy_kwargs={"net_arch": [32]})
    recorder = _recorder()
    model.learn(total_timesteps=1024, callback=recorder)
    _check_team_steps(recorder.steps, max_turns=4, masked=False)


def test_tianshou_collects_masked_episodes():
    pytest.importorskip("tianshou")
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    max_turns = 3

    def make():
        return PettingZooEnv(homogeneous_env(max_turns=max_turns))

    probe = make()
    algorithm = MultiAgentOffPolicyAlgorithm(
        algorithms=[MARLRandomDiscreteMaskedOffPolicyAlgorithm(probe.action_space) for _ in probe.agents],
        env=probe,
    )
    buffer = VectorReplayBuffer(400, 2)
    collector = Collector(algorithm, DummyVectorEnv([make, make]), buffer)
    stats = collector.collect(n_episode=4, reset_before_collect=True)
    assert stats.n_collected_episodes == 4
    assert set(stats.lens.tolist()) == {4 * max_turns}   # every agent acts once a turn
    batch, _ = buffer.sample(0)
    masks, actions = np.asarray(batch.obs.mask), np.asarray(batch.act)
    assert masks[np.arange(len(actions)), actions].all()
    rewards = np.asarray(batch.rew)                          # (steps, 4): one column per agent
    assert np.allclose(rewards, rewards[:, :1]) and np.abs(rewards).sum() > 0
    assert set(np.asarray(batch.obs.agent_id).tolist()) == set(probe.agents)


def test_torchrl_wrapper_passes_check_env_specs_and_rolls_out_within_masks():
    pytest.importorskip("torchrl")
    import torch
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType, check_env_specs

    max_turns = 3
    env = PettingZooWrapper(homogeneous_parallel_env(max_turns=max_turns, reward="distance"),
                            group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=0)
    check_env_specs(env)
    rollout = env.rollout(50, break_when_any_done=True)
    assert rollout.batch_size[0] == 2 * max_turns           # a turn is two parallel steps
    assert rollout["next", "done"][-1].all() and not rollout["next", "done"][:-1].any()
    actions, masks = rollout["agents", "action"], rollout["agents", "action_mask"]
    assert masks.shape[-2:] == (4, 145)
    assert torch.gather(masks, -1, actions.unsqueeze(-1)).all()
    rewards = rollout["next", "agents", "reward"]
    assert torch.allclose(rewards, rewards[:, :1]) and rewards.abs().sum() > 0
