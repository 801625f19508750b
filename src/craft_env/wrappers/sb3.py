"""Action masks for sb3-contrib's ``MaskablePPO`` on a SuperSuit vector env (docs/rl.md, "RL libraries").

``MaskablePPO`` asks its vector env for ``env_method("action_masks")``;
SuperSuit's ``concat_vec_envs_v1(..., base_class="stable_baselines3")``
does not forward that call. With a flat homogenised env
(``homogeneous_parallel_env(flat=True)``) the mask is the tail of every
observation, so ``ActionMasks`` reads it from the last observations.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from stable_baselines3.common.vec_env import VecEnv, VecEnvWrapper

MASK_METHOD = "action_masks"


class ActionMasks(VecEnvWrapper):
    """Answers ``env_method("action_masks")`` from the mask entries ``mask_slice`` of the last observations."""

    def __init__(self, venv: VecEnv, mask_slice: slice) -> None:
        super().__init__(venv)
        self.mask_slice = mask_slice
        self._last: np.ndarray | None = None

    def reset(self) -> np.ndarray:
        self._last = self.venv.reset()
        return self._last

    def step_wait(self):
        observations, rewards, dones, infos = self.venv.step_wait()
        self._last = observations
        return observations, rewards, dones, infos

    def action_masks(self) -> np.ndarray:
        """``(num_envs, A)`` bool: the allowed actions of every agent-env at the last observation."""
        if self._last is None:
            raise RuntimeError("action_masks: reset the vector env first")
        return self._last[:, self.mask_slice] > 0.5

    def has_attr(self, attr_name: str) -> bool:
        return attr_name == MASK_METHOD or self.venv.has_attr(attr_name)

    def env_method(self, method_name: str, *method_args: Any, indices: Any = None, **method_kwargs: Any) -> list:
        if method_name == MASK_METHOD:
            return list(self.action_masks())
        return self.venv.env_method(method_name, *method_args, indices=indices, **method_kwargs)
