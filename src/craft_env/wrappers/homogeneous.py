"""The homogenising wrappers: one observation and action space for every agent (docs/rl.md, "RL libraries").

Libraries that stack agents into one batch (SuperSuit's vector envs, hence
Stable-Baselines3; Tianshou's ``PettingZooEnv``) require every agent to have
the same observation and action space. CRAFT's directors and builder do not
(at 3x3x3: observations of 943 and 841 floats, 145 intents and 115 moves), so
the homogenising wrappers give every agent:

- the observation ``Box(0, 1, (D + 2,), float32)``: the agent's own
  observation zero-padded to the largest one (D), then a role one-hot
  (``ROLES``: director, builder);
- the action space ``Discrete(A)``, the largest one; the ids past an
  agent's own space are masked out and, if played anyway, are failed turns
  (board unchanged, ``info["reason"]`` says why), never an error.

The action mask keeps the form each library reads:

- ``flat=False`` (Tianshou, TorchRL, RLlib-style masking): the observation
  is ``Dict(observation=Box(D + 2), action_mask=Box(0, 1, (A,), int8))``;
- ``flat=True`` (SuperSuit + Stable-Baselines3, whose vector envs and
  policies want one ``Box``): the observation is ``Box(0, 1, (D + 2 + A,),
  float32)``, the mask being its last A entries (``mask_slice``).

Text observations are dropped (no library batches a ``Text`` space) and
actions are ids only. The wrappers wrap the bare envs (``raw_env``,
``parallel_env()``): ``homogeneous_env()`` adds PettingZoo's own bounds and
order checks outside, so a bounds check never refuses an id that is merely
outside one agent's own space.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv
from pettingzoo.utils.wrappers import (
    AssertOutOfBoundsWrapper,
    BaseParallelWrapper,
    BaseWrapper,
    OrderEnforcingWrapper,
)

from craft_env.envs.craft import parallel_env, raw_env

ROLES = ("director", "builder")


def role_of(agent: str) -> str:
    """The role of a CRAFT agent name (``builder`` or one of the ``director_k``)."""
    return "builder" if agent == "builder" else "director"


class _Homogeneous:
    """The conversion both wrappers share: padded observation, role one-hot, padded mask."""

    def _homogenise(self, inner: Any, flat: bool) -> None:
        if not isinstance(flat, bool):
            raise ValueError(f"flat: must be a bool, got {flat!r}")
        self.flat = flat
        agents = list(inner.possible_agents)
        self._own_dims = {a: int(inner.observation_space(a)["observation"].shape[0]) for a in agents}
        self._own_actions = {a: int(inner.action_space(a).n) for a in agents}
        self.pad_dim = max(self._own_dims.values())
        self.obs_dim = self.pad_dim + len(ROLES)
        self.num_actions = max(self._own_actions.values())
        self._role_index = {a: self.pad_dim + ROLES.index(role_of(a)) for a in agents}
        self.mask_slice = slice(self.obs_dim, self.obs_dim + self.num_actions)
        if flat:
            shared: spaces.Space = spaces.Box(0.0, 1.0, (self.obs_dim + self.num_actions,), np.float32)
        else:
            shared = spaces.Dict({
                "observation": spaces.Box(0.0, 1.0, (self.obs_dim,), np.float32),
                "action_mask": spaces.Box(0, 1, (self.num_actions,), np.int8),
            })
        action = spaces.Discrete(self.num_actions)
        self.observation_spaces = dict.fromkeys(agents, shared)
        self.action_spaces = dict.fromkeys(agents, action)

    def _convert(self, agent: str, obs: dict[str, Any]) -> np.ndarray | dict[str, np.ndarray]:
        own, mask = obs["observation"], obs["action_mask"]
        if self.flat:
            out = np.zeros(self.obs_dim + self.num_actions, np.float32)
            out[self.mask_slice.start:self.mask_slice.start + mask.shape[0]] = mask
        else:
            out = np.zeros(self.obs_dim, np.float32)
        out[:own.shape[0]] = own
        out[self._role_index[agent]] = 1.0
        if self.flat:
            return out
        padded = np.zeros(self.num_actions, np.int8)
        padded[:mask.shape[0]] = mask
        return {"observation": out, "action_mask": padded}

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    @staticmethod
    def _as_id(action: Any) -> Any:
        """Library actions arrive as numpy scalars or 0-d arrays; the env takes a Python int."""
        if isinstance(action, np.integer) or (isinstance(action, np.ndarray) and action.ndim == 0):
            return int(action)
        return action


def _require_bare(env: Any, kind: type, name: str) -> None:
    if not isinstance(env, kind) or env.unwrapped is not env:
        raise ValueError(
            f"env: {name} wraps a bare CRAFT env ({'raw_env()' if kind is AECEnv else 'parallel_env()'}), "
            f"got {type(env).__name__}; use craft_env.wrappers.homogeneous_env() for the checked AEC stack"
        )


class HomogeneousParallelWrapper(_Homogeneous, BaseParallelWrapper):
    """``parallel_env()`` with one observation and action space for every agent (module docstring)."""

    def __init__(self, env: ParallelEnv, flat: bool = False) -> None:
        _require_bare(env, ParallelEnv, "HomogeneousParallelWrapper")
        super().__init__(env)
        self._homogenise(env, flat)

    def reset(self, seed: int | None = None, options: dict | None = None):
        observations, infos = self.env.reset(seed=seed, options=options)
        return {a: self._convert(a, o) for a, o in observations.items()}, infos

    def step(self, actions: dict[str, Any]):
        observations, rewards, terminations, truncations, infos = self.env.step(
            {a: self._as_id(act) for a, act in actions.items()}
        )
        return {a: self._convert(a, o) for a, o in observations.items()}, rewards, terminations, truncations, infos


class HomogeneousAECWrapper(_Homogeneous, BaseWrapper):
    """``raw_env`` with one observation and action space for every agent (module docstring)."""

    def __init__(self, env: AECEnv, flat: bool = False) -> None:
        _require_bare(env, AECEnv, "HomogeneousAECWrapper")
        super().__init__(env)
        self._homogenise(env, flat)

    def observe(self, agent: str) -> np.ndarray | dict[str, np.ndarray]:
        return self._convert(agent, self.env.observe(agent))

    def step(self, action: Any) -> None:
        self.env.step(self._as_id(action))


def homogeneous_env(flat: bool = False, **config: Any) -> AECEnv:
    """The AEC env, homogenised, inside PettingZoo's bounds and order checks (what ``env()`` gives)."""
    return OrderEnforcingWrapper(AssertOutOfBoundsWrapper(HomogeneousAECWrapper(raw_env(**config), flat=flat)))


def homogeneous_parallel_env(flat: bool = False, **config: Any) -> ParallelEnv:
    """The Parallel env, homogenised."""
    return HomogeneousParallelWrapper(parallel_env(**config), flat=flat)
