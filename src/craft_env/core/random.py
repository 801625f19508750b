"""Episode randomness that numba and Python draw identically.

Everything random inside an episode (the target when none is given, the
directors' speaking order each turn, the oracle candidates shown to the
builder) comes from SplitMix64 streams derived from the episode seed, so the
PettingZoo envs and the batched vector env produce the same episode from
the same seed, bit for bit, on every platform.

Streams: ``derive_seed(seed, STREAM_x, index)`` gives the seed of one
independent stream (``index`` is usually the turn number).
"""

from __future__ import annotations

import numpy as np
from numba import njit

STREAM_TARGET = 1
STREAM_ORDER = 2
STREAM_CANDIDATES = 3
# The vector env's streams: one per env from the base seed, one per episode of an env, and its sampler.
STREAM_VECTOR_ENV = 101
STREAM_VECTOR_EPISODE = 102
STREAM_SAMPLE = 103

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S11 = np.uint64(11)
_MASK63 = (1 << 63) - 1


@njit(cache=True, inline="always")
def mix64(z):
    """SplitMix64 finaliser: a bijective scramble of a uint64."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


@njit(cache=True)
def derive_seed(seed, stream, index):
    """The seed (non-negative int64) of stream ``stream``/``index`` of an episode seeded ``seed``."""
    z = mix64(np.uint64(seed) + _GOLDEN * np.uint64(stream + 1))
    z = mix64(z + _GOLDEN * np.uint64(index + 1))
    return np.int64(z >> np.uint64(1))


@njit(cache=True, inline="always")
def draw(state, bound):
    """One step of the SplitMix64 stream ``state`` (uint64): ``(new state, uniform int in 0 .. bound-1)``.

    The state is a scalar passed in and out, so drawing never allocates.
    """
    state = state + _GOLDEN
    return state, np.int64(mix64(state) >> _S11) % bound


@njit(cache=True)
def shuffled_order(seed, count, out):
    """A uniformly random permutation of ``0 .. count-1`` into ``out`` (Fisher-Yates)."""
    state = np.uint64(seed)
    for k in range(count):
        out[k] = k
    for k in range(count - 1, 0, -1):
        state, r = draw(state, k + 1)
        tmp = out[k]
        out[k] = out[r]
        out[r] = tmp


@njit(cache=True)
def sample_from_list(seed, items, count, k):
    """Choose up to ``k`` of ``items[:count]`` uniformly, in draw order, into ``items[:k]``; return how many.

    Partial Fisher-Yates in place: the first ``min(k, count)`` entries are
    the drawn items.
    """
    take = k if k < count else count
    state = np.uint64(seed)
    for t in range(take):
        state, r = draw(state, count - t)
        r += t
        tmp = items[t]
        items[t] = items[r]
        items[r] = tmp
    return take


@njit(cache=True)
def sample_from_mask(seed, mask, k, out):
    """Choose up to ``k`` distinct set positions of ``mask`` uniformly, in draw order, into ``out``; return how many.

    The set positions in increasing order, then ``sample_from_list``.
    """
    count = 0
    for a in range(mask.shape[0]):
        if mask[a]:
            out[count] = a
            count += 1
    return sample_from_list(seed, out, count, k)


def normalise_seed(seed: object, field: str = "seed") -> int:
    """Check a user seed and map it to a non-negative int63."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"{field}: must be an int, got {seed!r}")
    if not -(2**63) <= int(seed) < 2**63:
        raise ValueError(f"{field}: must fit in 64 signed bits (|seed| < 2**63), got {seed!r}")
    return int(seed) & _MASK63
