"""The core kernels over a batch of boards, and the batched full game.

Layout
------
A batch of boards is an ``int8`` array ``(B, n*n, h)``: the single-board
layout of ``encoding`` stacked along a leading axis, so ``boards[b]`` *is* a
board every core kernel accepts (a C-contiguous view, no copy). Targets are
stacked the same way. Masks are ``(B, num_actions)`` int8, scores
``(B, 5)`` float64 (``metrics.METRIC_NAMES`` order).

Kernels
-------
Every batched function here has a per-board *row* kernel and two drivers:
a serial ``@njit`` loop and a ``parallel=True`` ``prange`` loop over the
batch. The Python wrapper picks the parallel driver only when the batch is
at least ``PARALLEL_MIN_BATCH[name]`` boards and numba runs more than one
thread (starting a parallel region costs microseconds; small batches stay
serial). Only four kernels have a parallel driver, to keep compile time
down: legal masks, optimal masks, scores-and-distances, and the builder
phase of the game (the expensive one). The rest are serial; they are cheap.

Allocation-free
---------------
Nothing allocates inside the batch loop. Where a single-board kernel of
``rules``/``oracle``/``random``/``generator``/``turn`` allocates a small
scratch array (``heights``, ``keep``, a one-element RNG state), this module
has a variant taking its scratch from a preallocated ``(B, k)`` int8 array,
one row per board (44 bytes for 3x3, so ``prange`` threads never share
scratch), and the RNG state as a scalar. Hot loops test legality with
arithmetic rather than branches (a legal move is data, and mispredicted
branches cost more than the work). Each variant computes exactly what its
original does: ``tests/test_batch.py`` compares them on random batches and
checks with numba's allocation counters that no driver allocates per board.

The batched game
----------------
``game_reset``, ``game_directors``, ``game_builder`` and ``game_scripted``
play ``core.turn``'s ``begin_turn``/``play_builder_action`` logic and the
``core.observation`` writers for every episode of a lock-step batch; the
vector env (``craft_env.envs.vector``) is one numba call per phase. The
game's arrays travel as two tuples, ``tables`` and ``state`` (listed above
``director_masks_row``; the vector env owns them). Observations are kept up to
date *incrementally*: an episode's rows are written in full by
``core.observation`` when it starts, and afterwards each phase rewrites
only what changed (the spoken-intent one-hots, the one or two cells the
builder's move touched, the turn fraction). The result is the array the
full writers produce (tested after every step against ``parallel_env()``),
at a fraction of the memory traffic.

A note for prange drivers: numba makes the prange index unsigned; a row
kernel called with it compiles a second time, for ``uint64``, with its
whole call tree. The drivers cast it back to int64 first.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import njit, prange

from craft_env.core.encoding import KIND_LARGE, KIND_NOOP, KIND_REMOVE, VALUE_TO_CODE_INDEX, action_table
from craft_env.core.generator import generate_with_scratch
from craft_env.core.metrics import fill_scores
from craft_env.core.observation import (
    fill_builder_obs,
    fill_director_obs,
    fill_state,
    note_intent,
    played_fraction,
    rewrite_cell_obs,
    start_turn_obs,
)
from craft_env.core.oracle import distance_from_keep, fill_keep_levels, optimal_from_keep
from craft_env.core.random import (
    STREAM_CANDIDATES,
    STREAM_ORDER,
    STREAM_SAMPLE,
    STREAM_TARGET,
    STREAM_VECTOR_EPISODE,
    derive_seed,
    draw,
    sample_from_mask,
    shuffled_order,
)
from craft_env.core.rules import (
    OK,
    UNKNOWN_ACTION,
    apply_action_inplace,
    check_action,
    partner_cell,
    stack_height,
)
from craft_env.core.scripted import scripted_intent
from craft_env.core.starts import fill_start
from craft_env.core.turn import (
    RESULT_DISTANCE,
    RESULT_FOLLOWED,
    RESULT_LAYER,
    RESULT_OPTIMAL,
    RESULT_REASON,
    RESULT_REMOVE_ATTEMPTED,
    RESULT_REMOVE_PRESCRIBED,
    RESULT_REWARD,
    REWARD_DISTANCE,
    REWARD_PROGRESS_DELTA,
)

# Smallest batch that runs the prange driver (measured on 2 cores; see benchmarks/bench_vector.py).
PARALLEL_MIN_BATCH = {"legal": 128, "optimal": 128, "scores": 128, "builder": 64}



def use_parallel(name: str, batch: int) -> bool:
    """Whether a batch of ``batch`` boards runs the prange driver of kernel ``name``."""
    return batch >= PARALLEL_MIN_BATCH[name] and numba.get_num_threads() > 1


# --------------------------------------------------------------------------- tables


@functools.cache
def pair_cells(n: int) -> np.ndarray:
    """``(P, 2)`` int16: the two cells of each adjacent pair, in action-table order."""
    table = action_table(n)
    ids = table.large_offset + 5 * np.arange(table.num_pairs)
    pairs = np.stack([table.cell_a[ids], table.cell_b[ids]], axis=1).astype(np.int16)
    pairs.flags.writeable = False
    return pairs


def scratch_width(n: int) -> int:
    """Columns of int8 scratch one board needs (heights, keep, prefix, order, 4 + 4 neighbours)."""
    return 4 * n * n + 8


def new_scratch(batch: int, n: int) -> np.ndarray:
    return np.zeros((batch, scratch_width(n)), np.int8)


# --------------------------------------------------------------------------- row kernels


@njit(cache=True, inline="always")
def _fill_heights(board, cells, heights):
    """``rules.stack_height`` of every cell, branch-free: the length of the non-empty bottom run."""
    h = board.shape[1]
    for c in range(cells):
        alive = 1
        level = 0
        for layer in range(h):
            alive &= board[c, layer] != 0
            level += alive
        heights[c] = level


@njit(cache=True, inline="always")
def _partner_offset(n, d):
    """``partner_cell``'s step for direction ``d`` (0..3), without branches."""
    return (d == 1) * n - (d == 0) * n + (d == 3) * 1 - (d == 2) * 1


@njit(cache=True)
def _legal_from_heights(board, n, pairs, heights, out):
    """``legal_mask_row`` when ``heights`` is already filled (branch-free: legality is data, not control flow)."""
    cells = n * n
    h = board.shape[1]
    for c in range(cells):
        v = np.int8(heights[c] < h)
        base = c * 5
        for colour in range(5):
            out[base + colour] = v
    large_offset = 5 * cells
    for p in range(pairs.shape[0]):
        ha = heights[pairs[p, 0]]
        v = np.int8((ha < h) & (ha == heights[pairs[p, 1]]))
        base = large_offset + p * 5
        for colour in range(5):
            out[base + colour] = v
    remove_offset = large_offset + 5 * pairs.shape[0]
    for c in range(cells):
        hc = heights[c]
        # An empty stack reads layer 0 (empty, so "small"); a large top checks its partner's height.
        top = board[c, max(hc - 1, 0)]
        large = top >= 6
        partner = c + large * _partner_offset(n, (top - 6) & 3)
        out[remove_offset + c] = np.int8((hc > 0) & ((top < 6) | (heights[partner] == hc)))
    out[remove_offset + cells] = 1


@njit(cache=True)
def legal_mask_row(board, n, pairs, heights, out):
    """``rules.fill_legal_mask`` with ``heights`` as scratch, written range by range of the action table."""
    _fill_heights(board, n * n, heights)
    _legal_from_heights(board, n, pairs, heights, out)


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


@njit(cache=True)
def _sample_serial(masks, seed, out):
    for b in range(masks.shape[0]):
        mask = masks[b]
        count = 0
        for a in range(mask.shape[0]):
            if mask[a]:
                count += 1
        if count == 0:
            out[b] = -1
            continue
        state = np.uint64(derive_seed(seed, STREAM_SAMPLE, b))
        state, r = draw(state, count)
        for a in range(mask.shape[0]):
            if mask[a]:
                if r == 0:
                    out[b] = a
                    break
                r -= 1


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


def sample_masks(masks: np.ndarray, seed: int, out: np.ndarray | None = None) -> np.ndarray:
    """One uniformly random set position per row of ``masks`` (``-1`` for an all-zero row).

    Row ``b`` draws from the stream ``derive_seed(seed, STREAM_SAMPLE, b)``:
    a random policy for a whole batch in one call (change ``seed`` per step).
    """
    masks = np.ascontiguousarray(masks)
    if out is None:
        out = np.empty(masks.shape[0], np.int64)
    _sample_serial(masks.reshape(masks.shape[0], -1), np.int64(seed & ((1 << 63) - 1)), out)
    return out


# --------------------------------------------------------------------------- the batched game

# Columns of the per-episode int64 state ``st``.
ST_SEED = 0  # this episode's seed
ST_EPISODE = 1  # episodes this env has started (0 = the first)
ST_TURN = 2  # turns played in this episode
ST_DISTANCE = 3  # oracle distance of the current board
ST_CANDIDATES = 4  # oracle candidates drawn this turn
ST_ENV_SEED = 5  # the env's stream seed (episode seeds derive from it)
ST_STEP_SEED = 6  # the seed of the episode the last builder step belonged to
ST_STEP_EPISODE = 7  # its episode index
ST_WIDTH = 8

# Columns of the float64 ``result`` written by the builder phase: ``turn.RESULT_*`` (0..7), then these.
RESULT_TURN = 8
RESULT_SCORES = 9  # 5 columns, ``metrics.METRIC_NAMES`` order, after the move
RESULT_WIDTH = 14

# Entries of the int64 ``cfg`` vector.
CFG_N = 0
CFG_MAX_TURNS = 1
CFG_ORACLE_N = 2
CFG_REWARD = 3
CFG_START = 4
CFG_GENERATE = 5
CFG_NUM_INTENTS = 6
CFG_ORDER = 7  # 3 entries: fixed order, or -1 for a seeded shuffle
CFG_WIDTH = 10


GROUP_START = 0
GROUP_LENGTH = 1
GROUP_CELL_A = 2
GROUP_CELL_B = 3
GROUP_NEED = 4
GROUP_REMOVE = 5


def intent_groups(intent_tables, n: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """The director masks' structure, derived from the intent tables: ``(groups, bucket_ptr)``.

    A *group* is a run of consecutive intent ids of one seat that denote
    builder actions of one kind on the same cells and layer (they differ
    only in colour), so their mask entries are equal. ``groups`` is int16
    ``(seats, G, 6)``: ``start, length, cell_a, cell_b, need, remove``.
    Such an intent is allowed (``turn.begin_turn``: its action is legal and
    acts on the intent's layer ``L``) iff ``height(cell_a) == need`` and
    ``height(cell_b) == need``, where ``need`` is ``L`` for a placement
    (``cell_b = cell_a`` for a small block) and ``L + 1`` for a removal,
    which must also be removable (a large top's partner not covered).

    Groups are sorted by ``key = cell_a * (height + 1) + need``;
    ``bucket_ptr[s, key] .. bucket_ptr[s, key + 1]`` are seat ``s``'s groups
    with that key, so a board with ``height(c) = k`` only ever checks the
    groups in bucket ``c * (height + 1) + k``. Intents that denote no action
    belong to no group (always 0).
    """
    table = action_table(n)
    keys = n * n * (height + 1)
    per_seat = []
    for intents in intent_tables:
        runs: list[list[int]] = []
        for intent in range(1, intents.num_intents):
            action = int(intents.action[intent])
            if action < 0:
                continue
            kind = int(table.kind[action])
            cell_a = int(table.cell_a[action])
            cell_b = int(table.cell_b[action]) if kind == KIND_LARGE else cell_a
            layer = int(intents.layer[intent])
            need = layer + 1 if kind == KIND_REMOVE else layer
            key = [cell_a, cell_b, need, 1 if kind == KIND_REMOVE else 0]
            if runs and runs[-1][2:] == key and runs[-1][0] + runs[-1][1] == intent:
                runs[-1][1] += 1
            else:
                runs.append([intent, 1, *key])
        runs.sort(key=lambda run: (run[2] * (height + 1) + run[4], run[0]))
        per_seat.append(runs)
    width = max(len(runs) for runs in per_seat)
    groups = np.zeros((len(per_seat), width, 6), np.int16)
    bucket_ptr = np.zeros((len(per_seat), keys + 1), np.int16)
    for s, runs in enumerate(per_seat):
        groups[s, : len(runs)] = runs
        counts = np.bincount([run[2] * (height + 1) + run[4] for run in runs], minlength=keys)
        bucket_ptr[s, 1:] = np.cumsum(counts)
    return groups, bucket_ptr


# ``tables`` (read-only, shared by every episode) and ``state`` (one row per episode) are tuples:
#
#   tables = (cfg, static, pairs, pair_of, groups, bucket_ptr, walls, visible, all_visible, code_of,
#             fixed_targets)
#   state  = (boards, targets, st, scores, spoken, order, optimal, candidates, builder_mask,
#             director_masks, director_obs, builder_obs, scratch)
#
# ``static`` is ``turn.pack_static``; ``groups, bucket_ptr`` are ``intent_groups``; ``visible`` the cells directors see (``director_sees``);
# ``fixed_targets`` (B, n*n, h) the given structures when ``cfg[CFG_GENERATE] == 0``.


@njit(cache=True)
def director_masks_row(board, n, groups, bucket_ptr, heights, out):
    """Every seat's intent mask (``intents.fill_director_mask``) into ``out`` (seats, I), bucket by bucket.

    ``heights`` must hold the board's stack heights; ``groups, bucket_ptr``
    come from ``intent_groups``.
    """
    h = board.shape[1]
    for s in range(groups.shape[0]):
        mask = out[s]
        for intent in range(mask.shape[0]):
            mask[intent] = 0
        mask[0] = 1
        ptr = bucket_ptr[s]
        for a in range(n * n):
            ha = heights[a]
            key = a * (h + 1) + ha
            for g in range(ptr[key], ptr[key + 1]):
                if groups[s, g, GROUP_REMOVE]:
                    top = board[a, ha - 1]
                    allowed = top < 6 or heights[partner_cell(n, a, top)] == ha
                else:
                    allowed = heights[groups[s, g, GROUP_CELL_B]] == ha
                if allowed:
                    start = groups[s, g, GROUP_START]
                    for intent in range(start, start + groups[s, g, GROUP_LENGTH]):
                        mask[intent] = 1


@njit(cache=True)
def _begin_turn_row(b, tables, state):
    """``turn.begin_turn`` for episode ``b``; ``scratch[b, C:2C]`` must hold the board's keep levels."""
    cfg, pairs, pair_of, groups, bucket_ptr = tables[0], tables[2], tables[3], tables[4], tables[5]
    boards, targets, st, spoken, order = state[0], state[1], state[2], state[4], state[5]
    optimal, candidates, builder_mask, director_masks, scratch = state[6], state[7], state[8], state[9], state[12]
    n = cfg[CFG_N]
    cells = n * n
    board = boards[b]
    large_offset = 5 * cells
    remove_offset = large_offset + 5 * pairs.shape[0]
    row = scratch[b]
    heights = row[:cells]
    keep = row[cells:2 * cells]
    seed = st[b, ST_SEED]
    turn = st[b, ST_TURN]
    seats = order.shape[1]
    for s in range(seats):
        spoken[b, s] = -1
    if cfg[CFG_ORDER] < 0:
        shuffled_order(derive_seed(seed, STREAM_ORDER, turn), seats, order[b])
    else:
        for s in range(seats):
            order[b, s] = cfg[CFG_ORDER + s]
    # optimal_from_keep fills ``heights`` for this board; the rest of the turn reuses it.
    optimal_from_keep(board, targets[b], n, pair_of, large_offset, remove_offset, keep, heights, True, optimal[b])
    oracle_n = cfg[CFG_ORACLE_N]
    mask = builder_mask[b]
    if oracle_n <= 0:
        _legal_from_heights(board, n, pairs, heights, mask)
        st[b, ST_CANDIDATES] = 0
    else:
        count = sample_from_mask(derive_seed(seed, STREAM_CANDIDATES, turn), optimal[b], oracle_n, candidates[b])
        for a in range(mask.shape[0]):
            mask[a] = 0
        for k in range(count):
            mask[candidates[b, k]] = 1
        mask[mask.shape[0] - 1] = 1
        st[b, ST_CANDIDATES] = count
    director_masks_row(board, n, groups, bucket_ptr, heights, director_masks[b])


@njit(cache=True)
def _write_all_obs(b, tables, state):
    """Every observation row of episode ``b`` in full, by the ``core.observation`` writers."""
    cfg, walls, visible, all_visible, code_of = tables[0], tables[6], tables[7], tables[8], tables[9]
    boards, targets, st, spoken, dobs, bobs = state[0], state[1], state[2], state[4], state[10], state[11]
    n = cfg[CFG_N]
    num_intents = cfg[CFG_NUM_INTENTS]
    fraction = played_fraction(st[b, ST_TURN], cfg[CFG_MAX_TURNS])
    fill_builder_obs(boards[b], n, code_of, all_visible, spoken[b], num_intents, fraction, bobs[b])
    for s in range(walls.shape[0]):
        fill_director_obs(
            boards[b], targets[b], n, code_of, visible, walls[s], spoken[b], num_intents, fraction, s, dobs[b, s]
        )


@njit(cache=True)
def _reset_row(b, tables, state):
    """Start episode ``st[b, ST_EPISODE]`` of env ``b``: ``CraftGame.reset`` with its derived seed."""
    cfg, walls, code_of, fixed_targets = tables[0], tables[6], tables[9], tables[10]
    boards, targets, st, scores, scratch = state[0], state[1], state[2], state[3], state[12]
    n = cfg[CFG_N]
    cells = n * n
    row = scratch[b]
    seed = derive_seed(st[b, ST_ENV_SEED], STREAM_VECTOR_EPISODE, st[b, ST_EPISODE])
    st[b, ST_SEED] = seed
    board = boards[b]
    target = targets[b]
    h = target.shape[1]
    if cfg[CFG_GENERATE]:
        for c in range(cells):
            for level in range(h):
                target[c, level] = 0
        generate_with_scratch(
            np.uint64(derive_seed(seed, STREAM_TARGET, 0)), n, target, row[:cells], row[3 * cells:4 * cells],
            row[4 * cells:4 * cells + 4], row[4 * cells + 4:4 * cells + 8],
        )
    else:
        source = fixed_targets[b]
        for c in range(cells):
            for level in range(h):
                target[c, level] = source[c, level]
    fill_start(target, n, cfg[CFG_START], walls, row[2 * cells:3 * cells], board)
    st[b, ST_TURN] = 0
    fill_scores(board, target, n, code_of, scores[b])
    keep = row[cells:2 * cells]
    fill_keep_levels(board, target, n, keep)
    st[b, ST_DISTANCE] = distance_from_keep(board, target, n, keep)
    _begin_turn_row(b, tables, state)
    _write_all_obs(b, tables, state)


@njit(cache=True)
def game_reset(tables, state):
    """Start every env's episode ``st[:, ST_EPISODE]`` (serial: called once per ``reset``)."""
    for b in range(state[0].shape[0]):
        _reset_row(b, tables, state)


@njit(cache=True)
def game_directors(tables, state, intents, legal):
    """The director phase: every env's directors speak ``intents[b, seat]`` in this turn's order.

    An intent outside the seat's mask is the no-op (``CraftGame.speak``);
    ``legal[b, seat]`` records whether it was allowed.
    """
    cfg = tables[0]
    spoken, order, director_masks, dobs, bobs = state[4], state[5], state[9], state[10], state[11]
    num_intents = cfg[CFG_NUM_INTENTS]
    seats = order.shape[1]
    for b in range(spoken.shape[0]):
        for k in range(seats):
            s = order[b, k]
            intent = intents[b, s]
            in_range = 0 <= intent < num_intents
            allowed = note_intent(director_masks[b], spoken[b], s, intent if in_range else 0, dobs[b], bobs[b])
            legal[b, s] = in_range and allowed


@njit(cache=True)
def game_states(tables, state, out):
    """Every env's global state (``observation.fill_state``) into ``out`` (B, S)."""
    cfg = tables[0]
    boards, targets, st, spoken = state[0], state[1], state[2], state[4]
    n = cfg[CFG_N]
    for b in range(boards.shape[0]):
        fraction = played_fraction(st[b, ST_TURN], cfg[CFG_MAX_TURNS])
        fill_state(boards[b], targets[b], n, spoken[b], cfg[CFG_NUM_INTENTS], fraction, out[b])


@njit(cache=True)
def game_scripted(tables, state, out):
    """Every env's scripted directors' intents (``scripted.scripted_intent``) into ``out`` (B, seats)."""
    cfg, walls = tables[0], tables[6]
    boards, targets, director_masks = state[0], state[1], state[9]
    n = cfg[CFG_N]
    for b in range(boards.shape[0]):
        for s in range(walls.shape[0]):
            out[b, s] = scripted_intent(boards[b], targets[b], n, walls[s], director_masks[b, s])


@njit(cache=True)
def _builder_row(b, tables, state, action, rewards, terminations, truncations, result):
    """``turn.play_builder_action`` + ``CraftGame.build`` for env ``b``; auto-resets a finished episode."""
    cfg, static, visible, code_of = tables[0], tables[1], tables[7], tables[9]
    boards, targets, st, scores, spoken = state[0], state[1], state[2], state[3], state[4]
    optimal, candidates, dobs, bobs, scratch = state[6], state[7], state[10], state[11], state[12]
    n = cfg[CFG_N]
    cells = n * n
    kind = static[0]
    cell_a = static[1]
    cell_b = static[2]
    colour = static[3]
    board = boards[b]
    target = targets[b]
    code = check_action(board, n, action, kind, cell_a, cell_b)
    known = code != UNKNOWN_ACTION
    remove_offset = 5 * cells + 10 * n * (n - 1)
    prescribed = 0.0
    for c in range(cells):
        if optimal[b, remove_offset + c]:
            prescribed = 1.0
    layer = -1
    changed_a = -1
    changed_b = -1
    if code == OK:
        k = kind[action]
        if k != KIND_NOOP:
            a = cell_a[action]
            changed_a = a
            layer = stack_height(board, a)
            if k == KIND_REMOVE:
                layer -= 1
                top = board[a, layer]
                if top >= 6:
                    changed_b = partner_cell(n, a, top)
            elif k == KIND_LARGE:
                changed_b = cell_b[action]
        apply_action_inplace(board, n, action, kind, cell_a, cell_b, colour)
    before_progress = scores[b, 3]
    before_distance = st[b, ST_DISTANCE]
    fill_scores(board, target, n, code_of, scores[b])
    keep = scratch[b, cells:2 * cells]
    fill_keep_levels(board, target, n, keep)
    after = distance_from_keep(board, target, n, keep)
    is_optimal = 1.0 if code == OK and optimal[b, action] else 0.0
    followed = is_optimal
    if cfg[CFG_ORACLE_N] > 0:
        followed = 0.0
        if code == OK:
            for k in range(st[b, ST_CANDIDATES]):
                if candidates[b, k] == action:
                    followed = 1.0
    reward_kind = cfg[CFG_REWARD]
    if reward_kind == REWARD_PROGRESS_DELTA:
        reward = scores[b, 3] - before_progress
    elif reward_kind == REWARD_DISTANCE:
        reward = float(before_distance - after)
    else:
        reward = 1.0 if after == 0 else 0.0
    out = result[b]
    out[RESULT_REASON] = code
    out[RESULT_LAYER] = layer
    out[RESULT_DISTANCE] = after
    out[RESULT_REWARD] = reward
    out[RESULT_OPTIMAL] = is_optimal
    out[RESULT_REMOVE_PRESCRIBED] = prescribed
    out[RESULT_REMOVE_ATTEMPTED] = 1.0 if known and kind[action] == KIND_REMOVE else 0.0
    out[RESULT_FOLLOWED] = followed
    turn = st[b, ST_TURN] + 1
    out[RESULT_TURN] = turn
    for m in range(5):
        out[RESULT_SCORES + m] = scores[b, m]
    st[b, ST_TURN] = turn
    st[b, ST_DISTANCE] = after
    st[b, ST_STEP_SEED] = st[b, ST_SEED]
    st[b, ST_STEP_EPISODE] = st[b, ST_EPISODE]
    terminated = after == 0
    truncated = not terminated and turn >= cfg[CFG_MAX_TURNS]
    rewards[b] = reward
    terminations[b] = terminated
    truncations[b] = truncated
    if terminated or truncated:
        st[b, ST_EPISODE] += 1
        _reset_row(b, tables, state)
        return
    # Incremental observation update (what ``_write_all_obs`` would change), then the next turn.
    for changed in (changed_a, changed_b):
        if changed >= 0:
            rewrite_cell_obs(board, n, changed, visible, dobs[b], bobs[b])
    fraction = played_fraction(turn, cfg[CFG_MAX_TURNS])
    start_turn_obs(spoken[b], cfg[CFG_NUM_INTENTS], fraction, dobs[b], bobs[b])
    _begin_turn_row(b, tables, state)


@njit(cache=True)
def game_builder_serial(tables, state, actions, rewards, terminations, truncations, result):
    """The builder phase for every env (serial driver)."""
    for b in range(actions.shape[0]):
        _builder_row(b, tables, state, actions[b], rewards, terminations, truncations, result)


@njit(cache=True, parallel=True)
def game_builder_parallel(tables, state, actions, rewards, terminations, truncations, result):
    """The builder phase for every env (prange driver)."""
    for i in prange(actions.shape[0]):
        # prange indices are unsigned: cast, so the row kernel is the serial driver's compiled one.
        b = np.int64(i)
        _builder_row(b, tables, state, actions[b], rewards, terminations, truncations, result)


def game_builder(tables, state, actions, rewards, terminations, truncations, result) -> None:
    """The builder phase, serial or parallel by batch size (``PARALLEL_MIN_BATCH["builder"]``)."""
    kernel = game_builder_parallel if use_parallel("builder", actions.shape[0]) else game_builder_serial
    kernel(tables, state, actions, rewards, terminations, truncations, result)
