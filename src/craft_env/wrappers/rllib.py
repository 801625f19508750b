"""CRAFT on Ray RLlib (new API stack): the env registered, and a ready multi-agent PPO config.

Imported on its own (it needs the ``rllib`` extra: ``ray[rllib]`` and
torch); see docs/rl.md, "RLlib"::

    import ray
    from craft_env.wrappers import rllib as craft_rllib

    ray.init()
    algo = craft_rllib.ppo_config(num_env_runners=2).build_algo()
    result = algo.train()
    print(result["env_runners"]["episode_return_mean"])
    builder = craft_rllib.greedy_policy(algo, "builder")  # a seat for craft_env.jax.team.evaluate.play

``CraftMultiAgentEnv`` is ``parallel_env()`` as an RLlib ``MultiAgentEnv``:
a turn is two env steps (the directors speak, then the builder moves), every
agent acts at every step, and the idle side's mask holds only its no-op, so
masked sampling never acts out of turn. Observations follow RLlib's
action-masking convention (keys ``"observations"`` and ``"action_mask"``,
the mask as float32); ``MaskedPPOModule`` is PPO's default torch module over
``"observations"`` with ``log(mask)`` added to its logits. The team reward
arrives on the builder's step, to every agent.

``ppo_config`` maps the directors to one shared ``"director"`` module
(their observation ends with a seat one-hot, so it still tells them apart)
and the builder to ``"builder"``; ``shared_policy=False`` gives every agent
its own module. The defaults are small, for a laptop (docs/rl.md, "RLlib",
has the times on 2 cores). The algorithm's process (the learner, and the
sampling when ``num_env_runners=0``) runs torch on ``torch_threads`` threads,
by default ``OMP_NUM_THREADS`` or 1: torch's own default, a thread per core,
fights the env runners' processes for the cores, and the small networks here
gain nothing from more threads. Ray gives each env runner one thread itself
(``OMP_NUM_THREADS=1`` in its actors).
"""

from __future__ import annotations

import functools
import logging
import math
import operator
import os
from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModuleSpec
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.rllib.utils.torch_utils import FLOAT_MIN
from ray.tune.registry import register_env

from craft_env.envs.craft import BUILDER, parallel_env

#: The name ``register()`` gives the env in Ray's registry (``config.environment(ENV_NAME)``).
ENV_NAME = "craft_v0"
#: The module ids under a shared director policy.
DIRECTOR_MODULE, BUILDER_MODULE = "director", "builder"
_log = logging.getLogger("craft_env")
#: Bounds of ``ppo_config``'s numbers (beyond them a run fails late, inside RLlib, or exhausts memory).
MAX_RUNNERS = 1_024
MAX_BATCH = 10_000_000
MAX_EPOCHS = 1_000
MAX_LAYERS, MAX_WIDTH = 16, 16_384
MAX_THREADS = 1_024
#: RLlib seeds numpy with ``seed + worker index`` (+ 10**6 for evaluation), and numpy takes 32 bits.
MAX_SEED = 2**31 - 1


def _rllib_keys(observation: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {"observations": observation["observation"], "action_mask": observation["action_mask"].astype(np.float32)}


class CraftMultiAgentEnv(MultiAgentEnv):
    """``parallel_env(**config)`` as an RLlib ``MultiAgentEnv`` (see the module docstring).

    ``config`` is any ``parallel_env()`` configuration (RLlib's
    ``env_config``; its ``EnvContext`` passes as a dict); actions are ids,
    and a text observation, if configured, is left out.
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
        renamed = {agent: _rllib_keys(obs) for agent, obs in observations.items()}
        return renamed, rewards, terminations, truncations, infos


class MaskedPPOModule(DefaultPPOTorchRLModule):
    """PPO's default torch module on ``obs["observations"]``, its logits masked by ``obs["action_mask"]``.

    The mask enters as ``log(mask)`` (clamped to RLlib's ``FLOAT_MIN``), so
    an action outside it is never sampled and carries no gradient. The
    batches are never changed in place: each forward pass reads the mask
    from the observation dict it is given.
    """

    def __init__(self, *, observation_space: gym.spaces.Dict, **kwargs: Any) -> None:
        self.observation_space_with_mask = observation_space
        super().__init__(observation_space=observation_space["observations"], **kwargs)

    def setup(self) -> None:
        super().setup()  # the networks are built for the observations alone
        self.observation_space = self.observation_space_with_mask

    @staticmethod
    def _split(batch: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        observation = batch[Columns.OBS]
        return observation["action_mask"], {**batch, Columns.OBS: observation["observations"]}

    @staticmethod
    def _masked(output: dict[str, Any], mask: Any) -> dict[str, Any]:
        logits = output[Columns.ACTION_DIST_INPUTS]
        output[Columns.ACTION_DIST_INPUTS] = logits + torch.clamp(torch.log(mask), min=FLOAT_MIN)
        return output

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        mask, batch = self._split(batch)
        return self._masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> Any:
        if embeddings is None:
            batch = self._split(batch)[1]
        return super().compute_values(batch, embeddings)


def greedy_policy(algo: Any, module_id: str):
    """``(observations, masks) -> actions``: the module's greedy action (argmax of its masked logits).

    The callable ``craft_env.jax.team.evaluate.play`` takes for a seat
    (docs/rl.md, "RLlib"): ``observations`` ``(..., D)`` and ``masks``
    ``(..., A)`` with the same leading shape (the directors' ``(N, seats)``,
    the builder's ``(N,)``), the actions with that leading shape.
    """
    module = algo.get_module(module_id)
    if module is None:
        raise ValueError(f"module_id: no module {module_id!r} in the algorithm")

    def act(observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        rows = {
            "observations": torch.as_tensor(np.asarray(observations, np.float32).reshape(-1, observations.shape[-1])),
            "action_mask": torch.as_tensor(np.asarray(masks, np.float32).reshape(-1, masks.shape[-1])),
        }
        with torch.no_grad():
            logits = module.forward_inference({Columns.OBS: rows})[Columns.ACTION_DIST_INPUTS]
        return logits.argmax(-1).numpy().reshape(masks.shape[:-1])

    return act


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


def set_torch_threads(algorithm: Any = None, *, threads: int, **kwargs: Any) -> None:
    """The ``on_algorithm_init`` callback of ``ppo_config``: torch on ``threads`` threads in that process."""
    if torch.get_num_threads() != threads:
        _log.info("torch threads in the algorithm's process: %d", threads)
        torch.set_num_threads(threads)


def _int_or_none(value: object, low: int, high: int) -> int | None:
    """``value`` as an int in ``low..high`` (any integer type, not a bool), else ``None``."""
    try:
        number = None if isinstance(value, bool) else operator.index(value)
    except TypeError:
        return None
    return number if number is not None and low <= number <= high else None


def _int_in(name: str, value: object, low: int, high: int) -> int:
    """``value`` as an int in ``low..high``; ``ValueError`` naming ``name`` and the range otherwise."""
    number = _int_or_none(value, low, high)
    if number is None:
        raise ValueError(f"{name}: expected an int from {low:,} to {high:,}, got {value!r}")
    return number


def check_ppo_arguments(
    num_env_runners: object,
    num_envs_per_env_runner: object,
    shared_policy: object,
    env_config: object,
    train_batch_size: object,
    minibatch_size: object,
    num_epochs: object,
    lr: object,
    hidden: object,
    torch_threads: object,
    seed: object,
) -> None:
    """``ppo_config``'s arguments, each checked before anything is built; ``ValueError`` naming the first
    bad one and its range (RLlib would fail late and elsewhere, or train silently on ``lr=nan``)."""
    _int_in("num_env_runners", num_env_runners, 0, MAX_RUNNERS)
    _int_in("num_envs_per_env_runner", num_envs_per_env_runner, 1, MAX_RUNNERS)
    if not isinstance(shared_policy, bool):
        raise ValueError(f"shared_policy: expected True or False, got {shared_policy!r}")
    if env_config is not None and not isinstance(env_config, Mapping):
        raise ValueError(f"env_config: expected None or a dict of parallel_env() options, got {env_config!r}")
    batch = _int_in("train_batch_size", train_batch_size, 1, MAX_BATCH)
    _int_in("minibatch_size", minibatch_size, 1, batch)
    _int_in("num_epochs", num_epochs, 1, MAX_EPOCHS)
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or not (math.isfinite(lr) and 0 < lr <= 1):
        raise ValueError(f"lr: expected a finite number above 0, at most 1, got {lr!r}")
    layers = isinstance(hidden, (tuple, list)) and 1 <= len(hidden) <= MAX_LAYERS
    if not layers or any(_int_or_none(width, 1, MAX_WIDTH) is None for width in hidden):
        raise ValueError(
            f"hidden: expected 1 to {MAX_LAYERS} layer widths, each an int from 1 to {MAX_WIDTH:,} "
            f"(like (128, 128)), got {hidden!r}"
        )
    if torch_threads is not None:
        _int_in("torch_threads", torch_threads, 1, MAX_THREADS)
    if seed is not None:
        _int_in("seed", seed, 0, MAX_SEED)


def _omp_threads() -> int:
    """``OMP_NUM_THREADS`` as torch's thread count, or 1 when it is unset (a bad value names the variable)."""
    value = os.environ.get("OMP_NUM_THREADS") or "1"
    threads = _int_or_none(int(value), 1, MAX_THREADS) if value.strip().isdigit() else None
    if threads is None:
        raise ValueError(f"OMP_NUM_THREADS: expected an int from 1 to {MAX_THREADS:,}, got {value!r}")
    return threads


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
    torch_threads: int | None = None,
    seed: int | None = 0,
) -> PPOConfig:
    """A multi-agent PPO ``AlgorithmConfig`` for CRAFT, ready for ``.build_algo()``.

    ``num_env_runners`` remote Ray actors sample (0: this process samples),
    each stepping ``num_envs_per_env_runner`` envs; ``env_config`` is the
    envs' ``parallel_env()`` configuration. ``train_batch_size`` env steps
    (two per turn) per iteration, ``num_epochs`` passes of ``minibatch_size``
    over them. ``torch_threads``: torch's threads in the algorithm's process
    (default ``OMP_NUM_THREADS``, else 1; see the module docstring).
    Change anything else on the returned config (``.training(...)``, ...).
    Every argument is checked first (``check_ppo_arguments``): a bad one is a
    ``ValueError`` naming it and its range, before Ray or RLlib is touched.
    """
    check_ppo_arguments(num_env_runners, num_envs_per_env_runner, shared_policy, env_config, train_batch_size,
                        minibatch_size, num_epochs, lr, hidden, torch_threads, seed)
    env_config = dict(env_config or {})
    probe = CraftMultiAgentEnv(env_config)
    threads = torch_threads or _omp_threads()
    agents = probe.possible_agents
    mapping = shared_mapping if shared_policy else separate_mapping
    modules = {}
    for agent in agents:  # the first agent mapped to a module gives it its spaces
        modules.setdefault(mapping(agent), RLModuleSpec(
            module_class=MaskedPPOModule,
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
        .callbacks(on_algorithm_init=functools.partial(set_torch_threads, threads=threads))
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config
