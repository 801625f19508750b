"""The exact oracle (``docs/rules.md#oracle``): numba kernels on arrays, then the ``Structure`` API.

Keep levels
    For each cell, the longest bottom prefix of the current stack equal to
    the target's (cell values carry the partner direction, so equality means
    same code and same partner). Then, until nothing changes, every current
    large block on layer ``L`` that is at or above the keep level of either
    half lowers both halves' keep levels to at most ``L``: such a block has
    to come off, and so does everything above it.

Distance
    Distinct current blocks at or above keep levels (to remove) plus distinct
    target blocks at or above keep levels (to place), a large block once.

Optimal moves (derived directly, checked by brute force in the tests)
    * removing a removable top block that is at or above its keep level;
    * on a "clean" cell (height == keep level) placing the target's next
      block; a large one only when its partner cell is clean at the same
      height.
    Every other legal move leaves the distance unchanged or raises it.

The kernels take board arrays and the action table's arrays; the functions
at the end (``distance``, ``optimal_mask``, ``optimal_actions``,
``optimal_moves``, ``plan``, ``sample_candidates``) take ``Structure``
objects and are the public ``craft_env.oracle``.
"""

from __future__ import annotations

import threading
from typing import NamedTuple

import numpy as np
from numba import njit

from craft_env.core.board import Structure, cached_move, flat_moves
from craft_env.core.encoding import KIND_REMOVE, action_table
from craft_env.core.moves import Move
from craft_env.core.rules import apply_action_inplace, partner_cell, stack_height


@njit(cache=True)
def fill_keep_levels(current, target, n, keep):
    """Write each cell's keep level into ``keep`` (int8, length ``n*n``)."""
    cells = n * n
    h = current.shape[1]
    for c in range(cells):
        level = 0
        while level < h and current[c, level] != 0 and current[c, level] == target[c, level]:
            level += 1
        keep[c] = level
    changed = True
    while changed:
        changed = False
        for c in range(cells):
            for level in range(h):
                v = current[c, level]
                if v == 0:
                    break
                if v >= 6:
                    p = partner_cell(n, c, v)
                    if level >= keep[c] or level >= keep[p]:
                        if keep[c] > level:
                            keep[c] = level
                            changed = True
                        if keep[p] > level:
                            keep[p] = level
                            changed = True


@njit(cache=True)
def distance_from_keep(current, target, n, keep):
    cells = n * n
    h = current.shape[1]
    smalls = 0
    halves = 0
    for c in range(cells):
        for level in range(keep[c], h):
            v = current[c, level]
            if v == 0:
                break
            if v >= 6:
                halves += 1
            else:
                smalls += 1
        for level in range(keep[c], h):
            v = target[c, level]
            if v == 0:
                break
            if v >= 6:
                halves += 1
            else:
                smalls += 1
    return smalls + halves // 2


@njit(cache=True)
def distance_arrays(current, target, n):
    """Fewest moves turning ``current`` into ``target``."""
    keep = np.empty(n * n, np.int8)
    fill_keep_levels(current, target, n, keep)
    return distance_from_keep(current, target, n, keep)


@njit(cache=True)
def optimal_from_keep(current, target, n, pair_of, large_offset, remove_offset, keep, heights, as_mask, out):
    """The optimal actions given ``keep`` (filled by ``fill_keep_levels``), allocation-free; returns the count.

    Writes ``out[action]`` = 1 (``as_mask``) or ``1 +`` the layer the action
    acts on, and 0 for every other action. Fills ``heights`` (scratch, ``n*n``)
    with the current stack heights on the way, for callers that need them.
    """
    cells = n * n
    for a in range(out.shape[0]):
        out[a] = 0
    for c in range(cells):
        heights[c] = stack_height(current, c)
    h = current.shape[1]
    count = 0
    for c in range(cells):
        hc = heights[c]
        if hc > keep[c]:
            top = current[c, hc - 1]
            if top < 6 or heights[partner_cell(n, c, top)] == hc:
                out[remove_offset + c] = 1 if as_mask else hc
                count += 1
        elif hc < h:
            v = target[c, hc]
            if v == 0:
                continue
            if v < 6:
                out[c * 5 + v - 1] = 1 if as_mask else hc + 1
                count += 1
            else:
                p = partner_cell(n, c, v)
                if p > c and heights[p] == hc and keep[p] == hc:
                    out[large_offset + pair_of[c, p] * 5 + (v - 6) // 4] = 1 if as_mask else hc + 1
                    count += 1
    return count


@njit(cache=True)
def _optimal_with_own_scratch(current, target, n, pair_of, large_offset, remove_offset, as_mask, out):
    cells = n * n
    scratch = np.empty(2 * cells, np.int8)
    keep = scratch[:cells]
    fill_keep_levels(current, target, n, keep)
    return optimal_from_keep(
        current, target, n, pair_of, large_offset, remove_offset, keep, scratch[cells:], as_mask, out
    )


@njit(cache=True)
def fill_optimal_layers(current, target, n, pair_of, large_offset, remove_offset, out):
    """Write ``1 +`` the layer each optimal action acts on into ``out`` (int8, 0: not optimal).

    Returns how many actions are optimal.
    """
    return _optimal_with_own_scratch(current, target, n, pair_of, large_offset, remove_offset, False, out)


@njit(cache=True)
def fill_optimal_mask(current, target, n, pair_of, large_offset, remove_offset, out):
    """Write the int8 mask of optimal actions into ``out``; return how many there are."""
    return _optimal_with_own_scratch(current, target, n, pair_of, large_offset, remove_offset, True, out)


@njit(cache=True)
def optimal_move_indices(current, target, n, pair_of, large_offset, remove_offset, out):
    """Write the optimal moves, action ids increasing, into ``out`` (int16, ``n*n`` long); return the count.

    Each entry indexes ``board.flat_moves(n, height)``: ``action * (height + 1)
    + layer + 1``, one int per move so that ``optimal_moves`` reads one list.
    At most one action per cell is optimal (see ``optimal_from_keep``), so
    ``n*n`` entries suffice; the scan stops at the last one.
    """
    stride = current.shape[1] + 1
    codes = np.empty(remove_offset + n * n, np.int8)
    total = fill_optimal_layers(current, target, n, pair_of, large_offset, remove_offset, codes)
    count = 0
    action = 0
    while count < total:
        if codes[action]:
            out[count] = action * stride + codes[action]
            count += 1
        action += 1
    return count


@njit(cache=True)
def optimal_action_ids(current, target, n, pair_of, large_offset, remove_offset, mask, out):
    """Fill ``mask`` and write the optimal action ids in increasing order into ``out``; return the count."""
    fill_optimal_mask(current, target, n, pair_of, large_offset, remove_offset, mask)
    count = 0
    for action in range(mask.shape[0]):
        if mask[action]:
            out[count] = action
            count += 1
    return count


@njit(cache=True)
def build_plan(current, target, n, kind, cell_a, cell_b, colour, pair_of, large_offset, remove_offset):
    """A shortest plan: repeatedly play the lowest-id optimal action. Returns (actions, layers)."""
    board = current.copy()
    total = distance_arrays(board, target, n)
    actions = np.empty(total, np.int16)
    layers = np.empty(total, np.int8)
    mask = np.empty(kind.shape[0], np.int8)
    for step in range(total):
        fill_optimal_mask(board, target, n, pair_of, large_offset, remove_offset, mask)
        action = -1
        for a in range(mask.shape[0]):
            if mask[a]:
                action = a
                break
        level = stack_height(board, cell_a[action])
        layers[step] = level - 1 if kind[action] == KIND_REMOVE else level
        actions[step] = action
        apply_action_inplace(board, n, action, kind, cell_a, cell_b, colour)
    return actions, layers


# The oracle on ``Structure`` objects, what ``craft_env.oracle`` names: checks, then one kernel call.


def _check_pair(current: Structure, target: Structure) -> None:
    if not isinstance(current, Structure) or not isinstance(target, Structure):
        raise TypeError("current, target: expected two Structure objects")
    if current.n != target.n or current.height != target.height:
        raise ValueError(
            f"target: size {target.n}x{target.n}x{target.height} differs from the current board's "
            f"{current.n}x{current.n}x{current.height}"
        )


def distance(current: Structure, target: Structure) -> int:
    """The fewest moves that turn ``current`` into ``target``.

    Reads the boards' slots, not the ``array`` property, as ``optimal_moves`` does (speed).
    """
    _check_pair(current, target)
    return int(distance_arrays(current._cells, target._cells, current.n))


def optimal_mask(current: Structure, target: Structure) -> np.ndarray:
    """int8 mask over action ids: 1 where the move lowers the distance by exactly one."""
    _check_pair(current, target)
    table = action_table(current.n)
    out = np.empty(table.num_actions, np.int8)
    fill_optimal_mask(
        current.array, target.array, current.n, table.pair_of, table.large_offset, table.remove_offset, out
    )
    return out


def optimal_actions(current: Structure, target: Structure) -> np.ndarray:
    """The optimal action ids, increasing."""
    _check_pair(current, target)
    table = action_table(current.n)
    mask = np.empty(table.num_actions, np.int8)
    ids = np.empty(table.num_actions, np.int16)
    count = optimal_action_ids(
        current.array, target.array, current.n, table.pair_of, table.large_offset, table.remove_offset, mask, ids
    )
    return ids[:count]


class _Scratch(NamedTuple):
    """What ``optimal_moves`` needs for one board size: the action table's arguments, the moves, a buffer."""

    pair_of: np.ndarray
    large_offset: int
    remove_offset: int
    moves: list[Move]  # ``flat_moves(n, height)``
    out: np.ndarray  # int16, ``n*n``: ``optimal_move_indices`` writes here
    view: memoryview  # of ``out``: slicing and iterating it is cheaper than through numpy


_PER_THREAD = threading.local()


def _new_scratch(n: int, height: int) -> _Scratch:
    """The calling thread's ``_Scratch`` for this size, made on first use.

    One per thread, so concurrent callers never share ``out`` between the
    kernel writing it and the list being read from it.
    """
    try:
        by_size = _PER_THREAD.by_size
    except AttributeError:
        by_size = _PER_THREAD.by_size = {}
    table = action_table(n)
    out = np.empty(n * n, np.int16)
    scratch = by_size[n, height] = _Scratch(
        table.pair_of, table.large_offset, table.remove_offset, flat_moves(n, height), out, memoryview(out)
    )
    return scratch


def optimal_moves(current: Structure, target: Structure) -> list[Move]:
    """The legal moves after which ``distance`` drops by exactly one (with layers), action ids increasing.

    Empty exactly when ``current == target``. A large removal appears once
    per half (the two cells name the same block), as in the action table.
    The hot path of the oracle, so it is written for speed (a few microseconds,
    ``benchmarks/bench_core.py``): one kernel call on the boards' slots (not the
    ``array`` property), per-size tables and buffer cached per thread
    (``_new_scratch``), and a plain loop (cheaper than a comprehension here).
    """
    _check_pair(current, target)
    n, height = current.n, current.height
    try:
        pair_of, large_offset, remove_offset, moves, out, view = _PER_THREAD.by_size[n, height]
    except (AttributeError, KeyError):
        pair_of, large_offset, remove_offset, moves, out, view = _new_scratch(n, height)
    count = optimal_move_indices(current._cells, target._cells, n, pair_of, large_offset, remove_offset, out)
    result = []
    for index in view[:count]:
        result.append(moves[index])
    return result


def plan(current: Structure, target: Structure) -> list[Move]:
    """A shortest move sequence from ``current`` to ``target`` (``len == distance``)."""
    _check_pair(current, target)
    table = action_table(current.n)
    actions, layers = build_plan(
        current.array,
        target.array,
        current.n,
        table.kind,
        table.cell_a,
        table.cell_b,
        table.colour,
        table.pair_of,
        table.large_offset,
        table.remove_offset,
    )
    return [cached_move(current.n, current.height, int(a), int(l)) for a, l in zip(actions, layers)]


def sample_candidates(
    current: Structure, target: Structure, n: int, rng: np.random.Generator | int | None = None
) -> list[Move]:
    """Up to ``n`` distinct optimal moves drawn without replacement by a seeded RNG (the oracle condition).

    ``rng`` is a ``numpy.random.Generator`` or a seed. Returned in the order
    drawn, so a seed fixes what the builder is shown and in which order.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n: number of candidates must be a non-negative int, got {n!r}")
    generator = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
    moves = optimal_moves(current, target)
    if len(moves) > n:
        moves = [moves[k] for k in generator.choice(len(moves), size=n, replace=False).tolist()]
    return moves
