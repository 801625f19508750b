"""CRAFT on Ray RLlib (new API stack): the env registered, and a ready multi-agent PPO config.

Imported on its own (it needs the ``rllib`` extra: ``ray[rllib]`` and
torch); see docs/rl.md, "RLlib"::

    import ray
    from craft_env.wrappers import rllib as craft_rllib

    ray.init()
    algo = craft_rllib.ppo_config(num_env_runners=2, env_config={"oracle_n": 5}).build_algo()
    result = algo.train()
    print(result["env_runners"]["episode_return_mean"])

``CraftMultiAgentEnv`` is ``parallel_env()`` as an RLlib ``MultiAgentEnv``:
a turn is two env steps (the directors speak, then the builder moves), every
agent acts at every step, and the idle side's mask holds only its no-op, so
masked sampling never acts out of turn. Observations follow RLlib's
action-masking convention (keys ``"observations"`` and ``"action_mask"``,
the mask as float32) for ``ActionMaskingTorchRLModule``, which adds
``log(mask)`` to the logits. The team reward arrives on the builder's step,
to every agent.

``ppo_config`` maps the directors to one shared ``"director"`` module
(their observation ends with a seat one-hot, so it still tells them apart)
and the builder to ``"builder"``; ``shared_policy=False`` gives every agent
its own module. The defaults are small, for a laptop: one iteration is a few
seconds of sampling and learning on 2 cores. With remote env runners the
learner in this process gets ``learner_threads`` torch threads (1 unless
``OMP_NUM_THREADS`` says otherwise): torch's default, one per core, starves
the runners' processes on a small machine. Ray itself gives each runner one
thread (``OMP_NUM_THREADS=1`` in its actors).
"""

from __future__ import annotations

import logging
import os
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule
from ray.tune.registry import register_env

from craft_env.envs.craft import BUILDER, parallel_env

#: The name ``register()`` gives the env in Ray's registry (``config.environment(ENV_NAME)``).
ENV_NAME = "craft_v0"
#: The module ids under a shared director policy.
DIRECTOR_MODULE, BUILDER_MODULE = "director", "builder"
_log = logging.getLogger("craft_env")


def _rllib_keys(observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


class CraftMultiAgentEnv(MultiAgentEnv):
    """``parallel_env(**config)`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` is any ``parallel_env()`` configuration without text or
    rendering (RLlib's ``env_config``; its ``EnvContext`` passes as a dict).
    """

    def __init__(self, config: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.env = parallel_env(**dict(config or {}))
        self.possible_agents = list(self.env.possible_agents)
        self.agents = list(self.possible_agents)
        self.observation_spaces = {}
        for agent in self.possible_agents:
            space = self.env.observation_space(agent)
            mask = gym.spaces.Box(0.0, 1.0, space["action_mask"].shape, np.float32)
            self.observation_spaces[agent] = gym.spaces.Dict({"observations": space["observation"],
                                                              "action_mask": mask})
        self.action_spaces = {agent: self.env.action_space(agent) for agent in self.possible_agents}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        self.agents = list(self.env.agents)
        return {agent: _rllib_keys(obs) for agent, obs in observations.items()}, infos

    def step(self, action_dict: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(
            {agent: int(action) for agent, action in action_dict.items()}
        )
        terminations["__all__"] = all(terminations.values())
        truncations["__all__"] = all(truncations.values())
        self.agents = list(self.env.agents)
        return {agent: _rllib_keys(obs) for agent, obs in observations.items()}, rewards, terminations, \
            truncations, infos


def make_env(config: dict[str, Any] | None = None) -> CraftMultiAgentEnv:
    """The env creator ``register()`` gives Ray: ``CraftMultiAgentEnv(config)``."""
    return CraftMultiAgentEnv(config)


def register(name: str = ENV_NAME) -> str:
    """Register the env under ``name`` in Ray's registry (for ``config.environment(name)``); returns ``name``."""
    register_env(name, make_env)
    return name


def shared_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Directors to the shared ``"director"`` module, the builder to ``"builder"``."""
    return BUILDER_MODULE if agent_id == BUILDER else DIRECTOR_MODULE


def separate_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """Every agent to its own module, named after it."""
    return agent_id


def ppo_config(
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 1,
    shared_policy: bool = True,
    env_config: dict[str, Any] | None = None,
    train_batch_size: int = 1000,
    minibatch_size: int = 250,
    num_epochs: int = 2,
    lr: float = 3e-4,
    hidden: tuple[int, ...] = (128, 128),
    learner_threads: int | None = None,
    seed: int | None = 0,
) -> PPOConfig:
    """A multi-agent PPO ``AlgorithmConfig`` for CRAFT, ready for ``.build_algo()``.

    ``num_env_runners`` remote Ray actors sample (0: this process samples),
    each stepping ``num_envs_per_env_runner`` envs; ``env_config`` is the
    envs' ``parallel_env()`` configuration. ``train_batch_size`` env steps
    (two per turn) per iteration, ``num_epochs`` passes of ``minibatch_size``
    over them. ``learner_threads``: torch threads of the learner in this
    process when runners are remote (default: ``OMP_NUM_THREADS``, else 1).
    Change anything else on the returned config (``.training(...)``, ...).
    """
    for field, value, least in (("num_env_runners", num_env_runners, 0),
                                ("num_envs_per_env_runner", num_envs_per_env_runner, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise ValueError(f"{field}: expected an int >= {least}, got {value!r}")
    env_config = dict(env_config or {})
    probe = CraftMultiAgentEnv(env_config)
    if num_env_runners:
        threads = learner_threads or int(os.environ.get("OMP_NUM_THREADS", "1"))
        if torch.get_num_threads() != threads:
            _log.info("learner torch threads: %d (remote env runners share the machine)", threads)
            torch.set_num_threads(threads)
    agents = probe.possible_agents
    mapping = shared_mapping if shared_policy else separate_mapping
    modules = {}
    for agent in agents:  # the first agent mapped to a module gives it its spaces
        modules.setdefault(mapping(agent), RLModuleSpec(
            module_class=ActionMaskingTorchRLModule,
            observation_space=probe.observation_spaces[agent],
            action_space=probe.action_spaces[agent],
            model_config={"fcnet_hiddens": list(hidden), "head_fcnet_hiddens": []},
        ))
    config = (
        PPOConfig()
        .environment(register(), env_config=env_config)
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .learners(num_learners=0)
        .multi_agent(policies=set(modules), policy_mapping_fn=mapping)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs=modules))
        .training(train_batch_size_per_learner=train_batch_size, minibatch_size=minibatch_size,
                  num_epochs=num_epochs, lr=lr)
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config
