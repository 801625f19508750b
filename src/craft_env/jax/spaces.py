"""The two spaces the JAX env needs, shaped like JaxMARL's and gymnax's (``Discrete``, ``Box``).

Own classes, so the ``jax`` extra needs neither: ``n``, ``shape``,
``dtype``, ``low``/``high``, ``sample(key)`` and ``contains(x)``, jittable.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp


class Discrete:
    """The ids ``0 .. n-1``."""

    def __init__(self, num_categories: int, dtype: Any = jnp.int32) -> None:
        self.n = int(num_categories)
        self.shape: tuple[int, ...] = ()
        self.dtype = dtype

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.randint(key, self.shape, 0, self.n).astype(self.dtype)

    def contains(self, x: jax.Array) -> jax.Array:
        return jnp.logical_and(x >= 0, x < self.n)

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


class Box:
    """Arrays of ``shape`` with every entry in ``[low, high]``."""

    def __init__(self, low: float, high: float, shape: tuple[int, ...], dtype: Any = jnp.float32) -> None:
        self.low = low
        self.high = high
        self.shape = tuple(shape)
        self.dtype = dtype

    def sample(self, key: jax.Array) -> jax.Array:
        return jax.random.uniform(key, self.shape, minval=self.low, maxval=self.high).astype(self.dtype)

    def contains(self, x: jax.Array) -> jax.Array:
        return jnp.logical_and(jnp.all(x >= self.low), jnp.all(x <= self.high))

    def __repr__(self) -> str:
        return f"Box({self.low}, {self.high}, {self.shape}, {jnp.dtype(self.dtype).name})"
