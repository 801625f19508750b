"""64-bit unsigned integers as pairs of uint32, and the core's SplitMix64 streams on them.

``core.random`` draws every in-episode random number from SplitMix64
streams in uint64 arithmetic. JAX computes in 32 bits unless
``jax_enable_x64`` is switched on for the whole process, which a library
must not do to its users, so a uint64 here is a ``U64`` pair ``(hi, lo)``
of uint32 arrays (any shape, broadcasting) and every operation the
streams need (add, multiply, shift, xor, small modulus) is written on the
pair. The functions are the core's, one for one: ``mix64``,
``derive_seed``, ``draw``, ``shuffled_order``, ``sample_from_list``; the
differential tests (``tests/test_jax_game*.py``) draw the same numbers
from both.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

_M32 = (1 << 32) - 1
# SplitMix64's increment and finaliser multipliers, as in ``core.random`` (its own names are private there);
# the tests draw the same numbers from both.
_GOLDEN64 = 0x9E3779B97F4A7C15
_MIX1 = 0xBF58476D1CE4E5B9
_MIX2 = 0x94D049BB133111EB


class U64(NamedTuple):
    """A uint64 as its high and low 32 bits (uint32 arrays of one shape)."""

    hi: jnp.ndarray
    lo: jnp.ndarray


def const(value: int) -> U64:
    """A Python int (taken mod 2**64) as a ``U64`` of scalars."""
    value = int(value) % (1 << 64)
    return U64(jnp.uint32(value >> 32), jnp.uint32(value & _M32))


def from_int64(values: np.ndarray) -> U64:
    """Host int64 values (seeds) as a ``U64`` (their two's-complement bits)."""
    bits = np.asarray(values, np.int64).view(np.uint64)
    return U64(jnp.asarray((bits >> np.uint64(32)).astype(np.uint32)), jnp.asarray((bits & np.uint64(_M32)).astype(np.uint32)))


def to_int64(value: U64) -> np.ndarray:
    """A ``U64`` back on the host as int64 (the core's seed type)."""
    hi = np.asarray(value.hi, np.uint64)
    lo = np.asarray(value.lo, np.uint64)
    return ((hi << np.uint64(32)) | lo).view(np.int64)


def add(a: U64, b: U64) -> U64:
    lo = a.lo + b.lo
    carry = (lo < a.lo).astype(jnp.uint32)
    return U64(a.hi + b.hi + carry, lo)


def _mul32(a: jnp.ndarray, b: jnp.ndarray) -> U64:
    """The full 64-bit product of two uint32 arrays (16-bit halves: uint32 has no high multiply)."""
    a0, a1 = a & 0xFFFF, a >> 16
    b0, b1 = b & 0xFFFF, b >> 16
    low = a0 * b0
    cross1 = a0 * b1
    cross2 = a1 * b0
    cross = cross1 + cross2
    cross_carry = (cross < cross1).astype(jnp.uint32)
    lo = low + (cross << 16)
    lo_carry = (lo < low).astype(jnp.uint32)
    hi = a1 * b1 + (cross >> 16) + (cross_carry << 16) + lo_carry
    return U64(hi, lo)


def mul(a: U64, b: U64) -> U64:
    """``a * b`` mod 2**64."""
    low = _mul32(a.lo, b.lo)
    return U64(low.hi + a.lo * b.hi + a.hi * b.lo, low.lo)


def xor(a: U64, b: U64) -> U64:
    return U64(a.hi ^ b.hi, a.lo ^ b.lo)


def shr(a: U64, k: int) -> U64:
    """``a >> k`` for a Python int ``0 < k < 64``."""
    if k >= 32:
        return U64(jnp.zeros_like(a.hi), a.hi >> (k - 32))
    return U64(a.hi >> k, (a.lo >> k) | (a.hi << (32 - k)))


def where(condition: jnp.ndarray, a: U64, b: U64) -> U64:
    return U64(jnp.where(condition, a.hi, b.hi), jnp.where(condition, a.lo, b.lo))


def small(value: jnp.ndarray) -> U64:
    """A non-negative int32/uint32 array as a ``U64``."""
    value = jnp.asarray(value).astype(jnp.uint32)
    return U64(jnp.zeros_like(value), value)


_GOLDEN_C = const(_GOLDEN64)
_MIX1_C = const(_MIX1)
_MIX2_C = const(_MIX2)


def mix64(z: U64) -> U64:
    """``core.random.mix64``: the SplitMix64 finaliser."""
    z = mul(xor(z, shr(z, 30)), _MIX1_C)
    z = mul(xor(z, shr(z, 27)), _MIX2_C)
    return xor(z, shr(z, 31))


def derive_seed(seed: U64, stream: int, index: jnp.ndarray) -> U64:
    """``core.random.derive_seed``: the seed of stream ``stream`` (a Python int) / ``index`` (int32 >= 0)."""
    z = mix64(add(seed, const(_GOLDEN64 * (stream + 1))))
    z = mix64(add(z, mul(_GOLDEN_C, small(jnp.asarray(index).astype(jnp.uint32) + 1))))
    return shr(z, 1)


def draw(state: U64, bound: jnp.ndarray) -> tuple[U64, jnp.ndarray]:
    """``core.random.draw``: the next state and a uniform int32 in ``0 .. bound-1`` (``1 <= bound < 2**16``)."""
    state = add(state, _GOLDEN_C)
    value = shr(mix64(state), 11)
    bound = jnp.maximum(jnp.asarray(bound).astype(jnp.uint32), 1)
    wrap = (jnp.uint32(0) - bound) % bound  # 2**32 mod bound
    r = ((value.hi % bound) * wrap + value.lo % bound) % bound
    return state, r.astype(jnp.int32)


def shuffled_order(seed: U64, count: int) -> jnp.ndarray:
    """``core.random.shuffled_order``: a permutation of ``0 .. count-1`` (int32, ``count`` a Python int)."""
    order = jnp.arange(count, dtype=jnp.int32)
    positions = jnp.arange(count)
    state = seed
    for k in range(count - 1, 0, -1):
        state, r = draw(state, jnp.uint32(k + 1))
        at_k, at_r = order[k], order[r]
        order = jnp.where(positions == k, at_r, jnp.where(positions == r, at_k, order))
    return order


def sample_from_list(seed: U64, items: jnp.ndarray, count: jnp.ndarray, k: jnp.ndarray) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``core.random.sample_from_list``: ``(items, take)`` with the first ``take = min(k, count)`` drawn.

    ``items`` is a 1-D int32 array whose first ``count`` entries are the
    list; its length bounds the draws (a static loop).
    """
    take = jnp.minimum(k, count)
    positions = jnp.arange(items.shape[0])

    def swap(t, carry):
        items, state = carry
        active = t < take
        new_state, r = draw(state, (count - t).astype(jnp.uint32))
        r = r + t
        at_t, at_r = items[t], items[r]
        swapped = jnp.where(positions == t, at_r, jnp.where(positions == r, at_t, items))
        return jnp.where(active, swapped, items), where(active, new_state, state)

    items, _ = jax.lax.fori_loop(0, items.shape[0], swap, (items, seed))
    return items, take
