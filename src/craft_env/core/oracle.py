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

import numpy as np
from numba import njit

from craft_env.core.board import Structure, cached_move, cached_moves
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
def optimal_action_layers(current, target, n, pair_of, large_offset, remove_offset, out):
    """Write the optimal ``(action id, layer)`` rows, ids increasing, into ``out`` (int16 ``(A, 2)``).

    Returns how many rows were written.
    """
    codes = np.empty(out.shape[0], np.int8)
    fill_optimal_layers(current, target, n, pair_of, large_offset, remove_offset, codes)
    count = 0
    for action in range(codes.shape[0]):
        if codes[action]:
            out[count, 0] = action
            out[count, 1] = codes[action] - 1
            count += 1
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
    """The fewest moves that turn ``current`` into ``target``."""
    _check_pair(current, target)
    return int(distance_arrays(current.array, target.array, current.n))


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


def _optimal_rows(current: Structure, target: Structure) -> np.ndarray:
    """The optimal ``(action id, layer)`` rows, ids increasing (int16 ``(k, 2)``)."""
    _check_pair(current, target)
    table = action_table(current.n)
    out = np.empty((table.num_actions, 2), np.int16)
    count = optimal_action_layers(
        current.array, target.array, current.n, table.pair_of, table.large_offset, table.remove_offset, out
    )
    return out[:count]


def _moves_for(current: Structure, rows: np.ndarray) -> list[Move]:
    moves = cached_moves(current.n, current.height)
    return [moves[action][layer + 1] for action, layer in rows.tolist()]


def optimal_moves(current: Structure, target: Structure) -> list[Move]:
    """The legal moves after which ``distance`` drops by exactly one (with layers).

    Empty exactly when ``current == target``. A large removal appears once
    per half (the two cells name the same block), as in the action table.
    """
    return _moves_for(current, _optimal_rows(current, target))


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
    rows = _optimal_rows(current, target)
    if len(rows) > n:
        rows = rows[generator.choice(len(rows), size=n, replace=False)]
    return _moves_for(current, rows)
