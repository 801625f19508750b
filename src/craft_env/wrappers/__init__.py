"""Wrappers for the conventions RL libraries assume; see ``wrappers.homogeneous`` and docs/rl.md.

``craft_env.wrappers.sb3`` (imported on its own: it needs Stable-Baselines3)
hands the masks of a flat homogenised env to sb3-contrib's ``MaskablePPO``.
"""

from craft_env.wrappers.homogeneous import (
    ROLES,
    HomogeneousAECWrapper,
    HomogeneousParallelWrapper,
    homogeneous_env,
    homogeneous_parallel_env,
    role_of,
)

__all__ = [
    "ROLES",
    "HomogeneousAECWrapper",
    "HomogeneousParallelWrapper",
    "homogeneous_env",
    "homogeneous_parallel_env",
    "role_of",
]
