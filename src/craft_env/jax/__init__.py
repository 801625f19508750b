"""The CRAFT vector game as pure JAX functions (jit/vmap), equal to the numba core (``docs/jax.md``).

``make(**config)`` is ``vector_env()``'s game in JaxMARL's multi-agent
interface (``env.CraftJaxEnv``); ``game`` holds the pure functions of one
env's ``State``, ``oracle`` the exact oracle, ``u64`` and ``exact`` the
core's SplitMix64 streams and float64 scores in 32-bit arithmetic.
Needs the ``jax`` extra; ``import craft_env`` never imports this package.
"""

from craft_env.jax.env import CraftJaxEnv, make
from craft_env.jax.game import Params, State

__all__ = ["CraftJaxEnv", "Params", "State", "make"]
