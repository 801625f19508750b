"""Batched core kernels over stacks of boards, for tests and benchmarks only (the package does not use them).

A batch of boards is an ``int8`` array ``(B, n*n, h)``: the single-board
layout of ``encoding`` stacked along a leading axis, so ``boards[b]`` *is* a
board every core kernel accepts. Masks are ``(B, num_actions)`` int8,
scores ``(B, 5)`` float64 (``metrics.METRIC_NAMES`` order).

Each kernel has a per-board row kernel and two drivers, a serial loop and
a ``prange`` loop; the Python wrapper picks the parallel one from
``batch.PARALLEL_MIN_BATCH[name]`` boards when numba runs more than one
thread. Nothing allocates inside the batch loop: scratch comes from a
preallocated ``(B, scratch_width(n))`` int8 array, one row per board.
``tests/test_batch.py`` compares every kernel with the single-board ones
and counts allocations; ``benchmarks/bench_vector.py`` times them.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from craft_env.core.batch import use_parallel
from craft_env.core.encoding import VALUE_TO_CODE_INDEX, action_table
from craft_env.core.game import pair_cells as _pair_cells
from craft_env.core.game import scratch_width
from craft_env.core.metrics import fill_scores
from craft_env.core.oracle import distance_from_keep, fill_keep_levels, optimal_from_keep
from craft_env.core.rules import OK, apply_action_inplace, check_action, fill_heights, legal_from_heights


@functools.cache
def pair_cells(n: int) -> np.ndarray:
    """``(P, 2)`` int16: the two cells of each adjacent pair, in action-table order (cached, read-only)."""
    pairs = _pair_cells(n)
    pairs.flags.writeable = False
    return pairs


def new_scratch(batch: int, n: int) -> np.ndarray:
    return np.zeros((batch, scratch_width(n)), np.int8)


# --------------------------------------------------------------------------- row kernels


@njit(cache=True)
def legal_mask_row(board, n, pairs, heights, out):
    """``rules.fill_legal_mask`` with ``heights`` as scratch, written range by range of the action table."""
    fill_heights(board, n * n, heights)
    large_offset = 5 * n * n
    legal_from_heights(board, n, pairs, large_offset, large_offset + 5 * pairs.shape[0], heights, out)


@njit(cache=True)
def optimal_mask_row(current, target, n, pair_of, large_offset, remove_offset, keep, heights, out):
    """``oracle.fill_optimal_mask`` with ``keep`` and ``heights`` as scratch; returns the count."""
    fill_keep_levels(current, target, n, keep)
    return optimal_from_keep(current, target, n, pair_of, large_offset, remove_offset, keep, heights, True, out)


@njit(cache=True)
def distance_row(current, target, n, keep):
    """``oracle.distance`` with ``keep`` as scratch."""
    fill_keep_levels(current, target, n, keep)
    return distance_from_keep(current, target, n, keep)


@njit(cache=True)
def scores_row(current, target, n, code_of, keep, scores):
    """Metrics into ``scores`` (``metrics.fill_scores``) and the distance (returned)."""
    fill_scores(current, target, n, code_of, scores)
    return distance_row(current, target, n, keep)


# --------------------------------------------------------------------------- batch drivers


@njit(cache=True)
def _legal_serial(boards, n, pairs, scratch, out):
    for b in range(boards.shape[0]):
        legal_mask_row(boards[b], n, pairs, scratch[b], out[b])


@njit(cache=True, parallel=True)
def _legal_parallel(boards, n, pairs, scratch, out):
    for b in prange(boards.shape[0]):
        legal_mask_row(boards[b], n, pairs, scratch[b], out[b])


@njit(cache=True)
def _optimal_serial(boards, targets, n, pair_of, large_offset, remove_offset, scratch, out, counts):
    cells = n * n
    for b in range(boards.shape[0]):
        row = scratch[b]
        counts[b] = optimal_mask_row(
            boards[b], targets[b], n, pair_of, large_offset, remove_offset, row[cells:], row[:cells], out[b]
        )


@njit(cache=True, parallel=True)
def _optimal_parallel(boards, targets, n, pair_of, large_offset, remove_offset, scratch, out, counts):
    cells = n * n
    for b in prange(boards.shape[0]):
        row = scratch[b]
        counts[b] = optimal_mask_row(
            boards[b], targets[b], n, pair_of, large_offset, remove_offset, row[cells:], row[:cells], out[b]
        )


@njit(cache=True)
def _scores_serial(boards, targets, n, code_of, scratch, scores, distances):
    for b in range(boards.shape[0]):
        distances[b] = scores_row(boards[b], targets[b], n, code_of, scratch[b], scores[b])


@njit(cache=True, parallel=True)
def _scores_parallel(boards, targets, n, code_of, scratch, scores, distances):
    for b in prange(boards.shape[0]):
        distances[b] = scores_row(boards[b], targets[b], n, code_of, scratch[b], scores[b])


@njit(cache=True)
def _apply_serial(boards, n, actions, kind, cell_a, cell_b, colour, reasons):
    for b in range(boards.shape[0]):
        code = check_action(boards[b], n, actions[b], kind, cell_a, cell_b)
        if code == OK:
            apply_action_inplace(boards[b], n, actions[b], kind, cell_a, cell_b, colour)
        reasons[b] = code


# --------------------------------------------------------------------------- Python API


def _boards3(boards: np.ndarray, name: str = "boards") -> np.ndarray:
    if not isinstance(boards, np.ndarray) or boards.dtype != np.int8 or boards.ndim != 3:
        raise ValueError(f"{name}: expected an int8 array (B, n*n, h), got {getattr(boards, 'shape', boards)!r}")
    return np.ascontiguousarray(boards)


def _side(boards: np.ndarray) -> int:
    n = round(boards.shape[1] ** 0.5)
    if n * n != boards.shape[1]:
        raise ValueError(f"boards: second axis must be n*n cells, got {boards.shape[1]}")
    return n


def _boards_and_targets(boards: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Checked ``(boards, targets, n)`` for the kernels that compare each board with its target."""
    boards = _boards3(boards)
    targets = _boards3(targets, "targets")
    if targets.shape != boards.shape:
        raise ValueError(f"targets: shape {targets.shape} differs from boards {boards.shape}")
    return boards, targets, _side(boards)


def _scratch(scratch: np.ndarray | None, batch: int, n: int) -> np.ndarray:
    if scratch is None:
        return new_scratch(batch, n)
    if scratch.shape[0] < batch or scratch.shape[1] < scratch_width(n) or scratch.dtype != np.int8:
        raise ValueError(f"scratch: need int8 ({batch}, {scratch_width(n)}) at least, got {scratch.shape}")
    return scratch


def legal_masks(boards: np.ndarray, out: np.ndarray | None = None, scratch: np.ndarray | None = None) -> np.ndarray:
    """The int8 legal-move mask of every board: ``(B, num_actions)`` (``rules.fill_legal_mask`` per row).

    Pass ``out`` and ``scratch`` (``new_scratch(B, n)``) to reuse buffers.
    """
    boards = _boards3(boards)
    n = _side(boards)
    batch = boards.shape[0]
    if out is None:
        out = np.empty((batch, action_table(n).num_actions), np.int8)
    scratch = _scratch(scratch, batch, n)
    kernel = _legal_parallel if use_parallel("legal", batch) else _legal_serial
    kernel(boards, n, pair_cells(n), scratch, out)
    return out


def optimal_masks(
    boards: np.ndarray,
    targets: np.ndarray,
    out: np.ndarray | None = None,
    counts: np.ndarray | None = None,
    scratch: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(masks, counts)``: every board's int8 optimal-move mask towards its target and how many moves it holds."""
    boards, targets, n = _boards_and_targets(boards, targets)
    table = action_table(n)
    batch = boards.shape[0]
    if out is None:
        out = np.empty((batch, table.num_actions), np.int8)
    if counts is None:
        counts = np.empty(batch, np.int64)
    scratch = _scratch(scratch, batch, n)
    kernel = _optimal_parallel if use_parallel("optimal", batch) else _optimal_serial
    kernel(boards, targets, n, table.pair_of, table.large_offset, table.remove_offset, scratch, out, counts)
    return out, counts


def scores_and_distances(
    boards: np.ndarray, targets: np.ndarray, scratch: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(scores (B, 5) float64, distances (B,) int64)``: the paper's metrics and the oracle distance per board."""
    boards, targets, n = _boards_and_targets(boards, targets)
    batch = boards.shape[0]
    scores = np.empty((batch, 5), np.float64)
    distances = np.empty(batch, np.int64)
    scratch = _scratch(scratch, batch, n)
    kernel = _scores_parallel if use_parallel("scores", batch) else _scores_serial
    kernel(boards, targets, n, VALUE_TO_CODE_INDEX, scratch, scores, distances)
    return scores, distances


def apply_actions(boards: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Play ``actions[b]`` on ``boards[b]`` in place where legal; returns each reason code (``rules.OK`` = played)."""
    boards = _boards3(boards)
    n = _side(boards)
    table = action_table(n)
    actions = np.ascontiguousarray(actions, np.int64)
    reasons = np.empty(boards.shape[0], np.int8)
    _apply_serial(boards, n, actions, table.kind, table.cell_a, table.cell_b, table.colour, reasons)
    return reasons
