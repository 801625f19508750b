"""The numba game's float64 scores, bit for bit, in 32-bit JAX: exact rational arithmetic on ``u64`` pairs.

The numba game scores a board in float64 (``core.metrics.fill_scores``):
``iou = inter / union``, ``completion``, ``position_accuracy``, then
``progress = (iou + completion + position_accuracy) / 3`` and the
``progress_delta`` reward ``progress_after - progress_before``, cast to
float32 only at the end. Float32 arithmetic would differ from that in the
last bit now and then (and a reward that is a float64 rounding residue,
``1e-17`` where the exact difference is 0, would be lost), so this module
computes the float64 results exactly without float64: every value is an
unsigned fixed-point integer (a ``u64.U64`` counting units of ``2**-F``)
and every float64 operation is the exact operation followed by IEEE
round-to-nearest-even to 53 significant bits (``round_sig``). The scores
are in [0, 3] and, when not 0, at least ``1/1080`` (``1 / (3 * 360)`` for
the largest board), so ``F = 62`` (sums) and ``F = 63`` (progress) hold
every float64 result exactly, ulp included.

The quotients of counts (``iou``, ``completion``, ...) take few values
per board size: ``ratio_table`` holds every one, made on the host by
numpy's float64 division, and the jitted scores look them up. Float32
outputs are the float64 values rounded to 24 bits (``to_f32``); for a
quotient of integers below ``2**24`` rounding the exact quotient once
gives the same float32 as rounding its float64 (the quotient is at least
``2**-48`` of its size away from any float32 tie, beyond float64's
error), which ``ratio_f32`` (the turn fraction) uses.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.jax import u64
from craft_env.jax.u64 import U64

F_SCORE = 62  # fixed-point bits of the scores and their sums (values < 4)
F_PROGRESS = 63  # of progress and the reward (values <= 1)


class RatioTable(NamedTuple):
    """Every quotient ``num / den`` a score of one board size takes (``0 <= num <= den <= largest``), made
    once on the host from numpy's float64 division: the float64 in ``F_SCORE`` units and its float32.
    Indexed ``num * (largest + 1) + den``."""

    hi: np.ndarray  # uint32
    lo: np.ndarray  # uint32
    single: np.ndarray  # float32
    side: int  # largest + 1


def ratio_table(n: int, height: int) -> RatioTable:
    """The quotients of ``scores`` for side ``n`` and ``height``: denominators up to the largest union of
    code sets (``min(10, 2 * height)`` per cell), target entries and cells."""
    cells = n * n
    largest = max(min(10, 2 * height) * cells, cells * height, cells)
    num, den = np.meshgrid(np.arange(largest + 1), np.arange(largest + 1), indexing="ij")
    value = np.where(num <= den, num / np.maximum(den, 1), 0.0)
    units = np.ldexp(value, F_SCORE).astype(np.uint64)  # exact: at most 53 significant bits, below 2**63
    return RatioTable(
        hi=(units >> np.uint64(32)).astype(np.uint32).ravel(),
        lo=(units & np.uint64(0xFFFFFFFF)).astype(np.uint32).ravel(),
        single=value.astype(np.float32).ravel(),
        side=largest + 1,
    )


def _shl_const(value: jax.Array, k: int) -> U64:
    """A uint32 value shifted left by a Python int ``0 <= k < 64``, as a ``U64``."""
    value = value.astype(jnp.uint32)
    if k == 0:
        return U64(jnp.zeros_like(value), value)
    if k >= 32:
        return U64(value << (k - 32), jnp.zeros_like(value))
    return U64(value >> (32 - k), value << k)


def _or(a: U64, b: U64) -> U64:
    return U64(a.hi | b.hi, a.lo | b.lo)


def bit_length(x: U64) -> jax.Array:
    """int32: the number of significant bits of ``x`` (0 for 0)."""
    hi_len = 32 - jax.lax.clz(x.hi).astype(jnp.int32)
    lo_len = 32 - jax.lax.clz(x.lo).astype(jnp.int32)
    return jnp.where(x.hi != 0, 32 + hi_len, lo_len)


def shr_dyn(x: U64, k: jax.Array) -> U64:
    """``x >> k`` for traced ``0 <= k <= 64``."""
    k = k.astype(jnp.uint32)
    small_k = jnp.minimum(k, 31)
    lo_small = (x.lo >> small_k) | jnp.where(k == 0, 0, x.hi << (32 - jnp.maximum(small_k, 1)))
    hi_small = x.hi >> small_k
    big = jnp.minimum(jnp.maximum(k, 32) - 32, 31)
    lo_big = jnp.where(k >= 64, 0, x.hi >> big)
    return U64(jnp.where(k >= 32, 0, hi_small), jnp.where(k >= 32, lo_big, lo_small))


def shl_dyn(x: U64, k: jax.Array) -> U64:
    """``x << k`` (mod 2**64) for traced ``0 <= k <= 64``."""
    k = k.astype(jnp.uint32)
    small_k = jnp.minimum(k, 31)
    hi_small = (x.hi << small_k) | jnp.where(k == 0, 0, x.lo >> (32 - jnp.maximum(small_k, 1)))
    lo_small = x.lo << small_k
    big = jnp.minimum(jnp.maximum(k, 32) - 32, 31)
    hi_big = jnp.where(k >= 64, 0, x.lo << big)
    return U64(jnp.where(k >= 32, hi_big, hi_small), jnp.where(k >= 32, 0, lo_small))


def sub(a: U64, b: U64) -> U64:
    """``a - b`` for ``a >= b``."""
    lo = a.lo - b.lo
    borrow = (a.lo < b.lo).astype(jnp.uint32)
    return U64(a.hi - b.hi - borrow, lo)


def ge(a: U64, b: U64) -> jax.Array:
    return (a.hi > b.hi) | ((a.hi == b.hi) & (a.lo >= b.lo))


def div_small(x: U64, d: jax.Array) -> tuple[U64, jax.Array]:
    """``(x // d, x % d)`` for a uint32 ``1 <= d < 2**16``: long division in 16-bit digits."""
    d = d.astype(jnp.uint32)
    digits = (x.hi >> 16, x.hi & 0xFFFF, x.lo >> 16, x.lo & 0xFFFF)
    r = jnp.zeros_like(d)
    q = []
    for digit in digits:
        value = (r << 16) | digit
        q.append(value // d)
        r = value % d
    return U64((q[0] << 16) | q[1], (q[2] << 16) | q[3]), r


def ratio(num: jax.Array, den: jax.Array, f: int) -> tuple[U64, jax.Array]:
    """``(floor(num * 2**f / den), remainder)`` for ints ``0 <= num < 4 * den``, ``1 <= den < 2**16`` (any
    shape).

    The exact quotient in units of ``2**-f`` is the first value plus
    ``remainder / den``.
    """
    num = num.astype(jnp.uint32)
    den = jnp.maximum(den.astype(jnp.uint32), 1)
    whole = num // den
    r = num % den
    q = _shl_const(whole, f)
    left = f
    while left > 0:
        width = min(16, left)
        left -= width
        value = r << width
        q = _or(q, _shl_const(value // den, left))
        r = value % den
    return q, r


def round_sig(x: U64, rem: jax.Array, den: jax.Array, bits: int) -> U64:
    """``x + rem/den`` (units; ``0 <= rem < den``) rounded to ``bits`` significant bits, ties to even.

    The rounding position must be at or above the unit (``x`` has at least
    ``bits`` bits, or ``rem`` is 0): the module docstring's ranges.
    """
    rem = rem.astype(jnp.uint32)
    den = den.astype(jnp.uint32)
    length = bit_length(x)
    shift = jnp.maximum(length - bits, 0)
    kept = shr_dyn(x, shift)
    dropped = sub(x, shl_dyn(kept, shift))
    half = shl_dyn(u64.const(1), jnp.maximum(shift - 1, 0))
    sticky = rem != 0
    odd = (kept.lo & 1) == 1
    above_half = ge(dropped, half) & ~((dropped.hi == half.hi) & (dropped.lo == half.lo))
    at_half = (dropped.hi == half.hi) & (dropped.lo == half.lo)
    up_shifted = above_half | (at_half & (sticky | odd))
    up_unit = (2 * rem > den) | ((2 * rem == den) & odd)
    up = jnp.where(shift > 0, up_shifted, up_unit)
    kept = u64.add(kept, u64.small(up.astype(jnp.uint32)))
    return shl_dyn(kept, shift)


def _pow2_f32(e: jax.Array) -> jax.Array:
    """float32 ``2**e`` for traced ``-126 <= e <= 127``, exact (built from its bits)."""
    return jax.lax.bitcast_convert_type(((e + 127).astype(jnp.uint32) << 23), jnp.float32)


def to_f32(x: U64, f: int) -> jax.Array:
    """float32 of ``x`` units of ``2**-f`` when ``x`` has at most 24 significant bits (exact)."""
    length = bit_length(x)
    shift = jnp.maximum(length - 24, 0)
    mantissa = shr_dyn(x, shift).lo
    return mantissa.astype(jnp.float32) * _pow2_f32(shift - f)


def ratio_f32(num: jax.Array, den: jax.Array) -> jax.Array:
    """float32 of the float64 ``num / den`` (ints, ``0 <= num <= den < 2**16``, ``den >= 1``), exact.

    Rounds the exact quotient once (the module docstring says why that is
    the float32 of the float64 quotient). ``2**40`` units hold at least 25
    bits of any quotient from ``2**-16`` up.
    """
    q, r = ratio(num, den, 40)
    return to_f32(round_sig(q, r, den, 24), 40)


def _counts(board: jax.Array, target: jax.Array, value_code: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The numerators and denominators of ``iou, completion, position_accuracy, voxel_iou``: int32 (4,) each
    (``fill_scores``'s counts; an empty denominator's case folded in as ``0/1`` or ``1/1``)."""
    current = board.astype(jnp.int32)
    goal = target.astype(jnp.int32)
    cells = current.shape[0]
    code_c = value_code[current]
    code_t = value_code[goal]
    has_c = current != 0
    has_t = goal != 0
    codes = jnp.arange(10, dtype=jnp.int32)
    in_c = jnp.any(has_c[..., None] & (code_c[..., None] == codes), axis=1)  # (cells, 10) the cell's code set
    in_t = jnp.any(has_t[..., None] & (code_t[..., None] == codes), axis=1)
    inter = jnp.sum(in_c & in_t, dtype=jnp.int32)
    union = jnp.sum(in_c | in_t, dtype=jnp.int32)
    matched = jnp.sum(jnp.all(in_c == in_t, axis=1), dtype=jnp.int32)
    target_entries = jnp.sum(has_t, dtype=jnp.int32)
    either = jnp.sum(has_c | has_t, dtype=jnp.int32)
    correct = jnp.sum(has_c & has_t & (code_c == code_t), dtype=jnp.int32)
    both = jnp.sum(has_c & has_t & (current == goal), dtype=jnp.int32)
    one = jnp.int32(1)
    nums = jnp.stack([
        jnp.where(union > 0, inter, 0),
        jnp.where(target_entries > 0, correct, jnp.where(either == 0, one, 0)),
        matched,
        jnp.where(either > 0, both, one),
    ])
    dens = jnp.stack([jnp.maximum(union, 1), jnp.maximum(target_entries, 1), jnp.int32(cells), jnp.maximum(either, 1)])
    return nums, dens


def _progress(parts: U64) -> U64:
    """float64 ``(iou + completion + position_accuracy) / 3`` from the three float64 parts (``F_SCORE`` units)."""
    exact = jnp.uint32(1)
    s1 = round_sig(u64.add(U64(parts.hi[0], parts.lo[0]), U64(parts.hi[1], parts.lo[1])), jnp.uint32(0), exact, 53)
    s2 = round_sig(u64.add(s1, U64(parts.hi[2], parts.lo[2])), jnp.uint32(0), exact, 53)
    q3, r3 = div_small(s2, jnp.uint32(3))
    carry = 2 * r3 >= 3
    p = u64.add(u64.add(q3, q3), u64.small(carry.astype(jnp.uint32)))
    return round_sig(p, jnp.where(carry, 2 * r3 - 3, 2 * r3), jnp.uint32(3), 53)


def _looked_up(nums: jax.Array, dens: jax.Array, table: RatioTable) -> tuple[U64, jax.Array]:
    index = nums * table.side + dens
    return U64(jnp.asarray(table.hi)[index], jnp.asarray(table.lo)[index]), jnp.asarray(table.single)[index]


def progress(board: jax.Array, target: jax.Array, value_code: jax.Array, table: RatioTable) -> U64:
    """The board's float64 progress, exactly, in units of ``2**-F_PROGRESS``."""
    nums, dens = _counts(board, target, value_code)
    parts, _ = _looked_up(nums[:3], dens[:3], table)
    return _progress(parts)


def scores(board: jax.Array, target: jax.Array, value_code: jax.Array, table: RatioTable) -> tuple[jax.Array, U64]:
    """``core.metrics.fill_scores`` of one board: float32 ``(5,)`` (``METRIC_NAMES`` order) and the
    float64 progress exactly, in units of ``2**-F_PROGRESS``."""
    nums, dens = _counts(board, target, value_code)
    parts, singles = _looked_up(nums, dens, table)
    value = _progress(U64(parts.hi[:3], parts.lo[:3]))
    whole = to_f32(round_sig(value, jnp.uint32(0), jnp.uint32(1), 24), F_PROGRESS)
    return jnp.concatenate([singles[:3], whole[None], singles[3:]]), value


def progress_delta(after: U64, before: U64) -> jax.Array:
    """float32 of the float64 ``after - before`` (both progress values in ``F_PROGRESS`` units)."""
    up = ge(after, before)
    magnitude = u64.where(up, sub(after, before), sub(before, after))
    exact = jnp.uint32(1)
    rounded = round_sig(round_sig(magnitude, jnp.uint32(0), exact, 53), jnp.uint32(0), exact, 24)
    value = to_f32(rounded, F_PROGRESS)
    return jnp.where(up, value, -value)


def threshold(value: float) -> int:
    """The least progress (``F_PROGRESS`` units, a Python int) at or above the float64 ``value``."""
    return math.ceil(Fraction(value) * (1 << F_PROGRESS))


def turn_fraction(turn: jax.Array, max_turns: jax.Array) -> jax.Array:
    """float32 of the float64 ``min(turn / max_turns, 1)`` (``core.observation.played_fraction``).

    Exact for ``max_turns < 2**16``; above that the float32 quotient.
    """
    turn = jnp.minimum(turn, max_turns)
    small_den = max_turns < (1 << 16)
    exact = ratio_f32(jnp.where(small_den, turn, 0), jnp.where(small_den, max_turns, 1))
    return jnp.where(small_den, exact, turn.astype(jnp.float32) / max_turns.astype(jnp.float32))

