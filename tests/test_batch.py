"""``core.batch`` computes, board by board, exactly what the single-board kernels compute.

Batches are random (board, target) pairs of a random size, built with the
single-board kernels themselves: generated structures, random legal walks
from empty, and targets disturbed by a few random moves. Batch sizes
include 1 and sizes on both sides of the parallel threshold (lowered for
the test, and the prange drivers are also called directly), so both
drivers are exercised whatever the thread count.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import batch_kernels  # tests/ is on sys.path (conftest)
from craft_env.core import batch, game
from craft_env.core.encoding import VALUE_TO_CODE_INDEX, action_table
from craft_env.core.generator import generate_array, generate_with_scratch
from craft_env.core.intents import fill_director_mask, intent_groups, intent_table
from craft_env.core.metrics import fill_scores
from craft_env.core.oracle import distance_arrays, fill_keep_levels, fill_optimal_mask, optimal_from_keep
from craft_env.core.rules import apply_action_inplace, check_action, fill_legal_mask
from craft_env.core.starts import LAYER_STARTS, STARTS, fill_start, start_code
from craft_env.core.views import DEFAULT_SEATS as SEATS
from craft_env.core.views import seat_cell_indices

#: The starts of a game with the default seats (a wall start needs its seat seated).
SEATED_STARTS = [start for start in STARTS if start in LAYER_STARTS or start[len("wall_"):] in SEATS]
BATCH_SIZES = (1, 2, 7, 8, 9, 40)
LOW_THRESHOLD = 8



def start_board(target: np.ndarray, n: int, start: str) -> np.ndarray:
    """Start ``start`` (one of ``STARTS``) of ``target``, from zeroed scratch into a new array."""
    walls = np.stack([seat_cell_indices(seat, n) for seat in SEATS])
    board = np.zeros_like(target)
    fill_start(target, n, start_code(start, SEATS), walls, np.zeros(n * n, np.int8), board)
    return board
def random_walk(board: np.ndarray, n: int, rng: np.random.Generator, steps: int, remove_bias: bool) -> np.ndarray:
    """Play ``steps`` random legal moves on a copy of ``board`` with the single-board kernels."""
    table = action_table(n)
    board = board.copy()
    mask = np.empty(table.num_actions, np.int8)
    for _ in range(steps):
        fill_legal_mask(board, n, table.kind, table.cell_a, table.cell_b, mask)
        legal = np.flatnonzero(mask[:-1])
        removals = legal[legal >= table.remove_offset]
        pool = removals if remove_bias and len(removals) and rng.random() < 0.6 else legal
        action = int(rng.choice(pool))
        apply_action_inplace(board, n, action, table.kind, table.cell_a, table.cell_b, table.colour)
    return board


def random_batch(seed: int, size: int, n: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``(boards, targets)``: ``size`` mid-game pairs of side ``n`` and height ``height``."""
    rng = np.random.default_rng(seed)
    cap = n * n * height
    boards = np.zeros((size, n * n, height), np.int8)
    targets = np.zeros_like(boards)
    empty = np.zeros((n * n, height), np.int8)
    for b in range(size):
        if rng.random() < 0.5:
            target = generate_array(int(rng.integers(1 << 62)), n, height)
        else:
            target = random_walk(empty, n, rng, int(rng.integers(0, cap + 1)), False)
        mode = rng.integers(5)
        if mode == 0:
            board = empty
        elif mode == 1:
            board = target.copy()
        elif mode == 2:
            board = random_walk(empty, n, rng, int(rng.integers(0, cap + 1)), bool(rng.integers(2)))
        else:
            board = random_walk(target, n, rng, int(rng.integers(1, 2 * height + 3)), bool(rng.integers(2)))
        boards[b], targets[b] = board, target
    return boards, targets


batches = st.tuples(
    st.integers(0, 2**32),
    st.sampled_from(BATCH_SIZES),
    st.integers(2, 6),
    st.integers(1, 5),
)


@pytest.fixture(scope="module")
def low_threshold():
    """Make every wrapper choose its prange driver from ``LOW_THRESHOLD`` boards (when threads > 1)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batch, "PARALLEL_MIN_BATCH", dict.fromkeys(batch.PARALLEL_MIN_BATCH, LOW_THRESHOLD))
        yield


def single_legal(boards: np.ndarray, n: int) -> np.ndarray:
    table = action_table(n)
    out = np.empty((len(boards), table.num_actions), np.int8)
    for b, board in enumerate(boards):
        fill_legal_mask(board, n, table.kind, table.cell_a, table.cell_b, out[b])
    return out


def single_optimal(boards: np.ndarray, targets: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    table = action_table(n)
    out = np.empty((len(boards), table.num_actions), np.int8)
    counts = np.empty(len(boards), np.int64)
    for b in range(len(boards)):
        counts[b] = fill_optimal_mask(
            boards[b], targets[b], n, table.pair_of, table.large_offset, table.remove_offset, out[b]
        )
    return out, counts


# ---------------------------------------------------------------- batched kernels


@given(batches)
def test_legal_masks_equal_single_board(low_threshold, case):
    seed, size, n, height = case
    boards, _ = random_batch(seed, size, n, height)
    expected = single_legal(boards, n)
    assert np.array_equal(batch_kernels.legal_masks(boards), expected)
    pairs, scratch = batch_kernels.pair_cells(n), batch_kernels.new_scratch(size, n)
    for kernel in (batch_kernels._legal_serial, batch_kernels._legal_parallel):
        out = np.full_like(expected, 7)
        kernel(boards, n, pairs, scratch, out)
        assert np.array_equal(out, expected)


@given(batches)
def test_optimal_masks_equal_single_board(low_threshold, case):
    seed, size, n, height = case
    boards, targets = random_batch(seed, size, n, height)
    expected, expected_counts = single_optimal(boards, targets, n)
    masks, counts = batch_kernels.optimal_masks(boards, targets)
    assert np.array_equal(masks, expected)
    assert np.array_equal(counts, expected_counts)
    assert np.array_equal(counts, masks.sum(axis=1))
    table = action_table(n)
    for kernel in (batch_kernels._optimal_serial, batch_kernels._optimal_parallel):
        out = np.full_like(expected, 7)
        out_counts = np.full(size, -1, np.int64)
        kernel(boards, targets, n, table.pair_of, table.large_offset, table.remove_offset,
               batch_kernels.new_scratch(size, n), out, out_counts)
        assert np.array_equal(out, expected) and np.array_equal(out_counts, expected_counts)


@given(batches)
def test_scores_and_distances_equal_single_board(low_threshold, case):
    seed, size, n, height = case
    boards, targets = random_batch(seed, size, n, height)
    expected_scores = np.empty((size, 5), np.float64)
    for b in range(size):
        fill_scores(boards[b], targets[b], n, VALUE_TO_CODE_INDEX, expected_scores[b])
    expected_distances = np.array([distance_arrays(boards[b], targets[b], n) for b in range(size)])
    scores, distances = batch_kernels.scores_and_distances(boards, targets)
    assert np.array_equal(scores, expected_scores)
    assert np.array_equal(distances, expected_distances)
    for kernel in (batch_kernels._scores_serial, batch_kernels._scores_parallel):
        out_scores = np.zeros((size, 5))
        out_distances = np.zeros(size, np.int64)
        kernel(boards, targets, n, VALUE_TO_CODE_INDEX, batch_kernels.new_scratch(size, n), out_scores, out_distances)
        assert np.array_equal(out_scores, expected_scores) and np.array_equal(out_distances, expected_distances)


@given(batches, st.integers(0, 2**32))
def test_apply_actions_equal_single_board(case, action_seed):
    seed, size, n, height = case
    boards, _ = random_batch(seed, size, n, height)
    table = action_table(n)
    actions = np.random.default_rng(action_seed).integers(-2, table.num_actions + 2, size)
    expected = boards.copy()
    expected_codes = np.empty(size, np.int8)
    for b in range(size):
        expected_codes[b] = check_action(expected[b], n, actions[b], table.kind, table.cell_a, table.cell_b)
        if expected_codes[b] == 0:
            apply_action_inplace(expected[b], n, actions[b], table.kind, table.cell_a, table.cell_b, table.colour)
    codes = batch_kernels.apply_actions(boards, actions)
    assert np.array_equal(codes, expected_codes)
    assert np.array_equal(boards, expected)


@given(batches)
def test_director_masks_equal_single_board(case):
    seed, size, n, height = case
    boards, _ = random_batch(seed, size, n, height)
    table = action_table(n)
    tables = [intent_table(seat, n, height) for seat in SEATS]
    groups, bucket_ptr = intent_groups(tables, n, height)
    heights = np.empty(n * n, np.int8)
    scratch = np.empty(table.num_actions, np.int8)
    for board in boards:
        heights[:] = np.count_nonzero(board, axis=1)
        out = np.full((len(SEATS), tables[0].num_intents), 7, np.int8)
        game.director_masks_row(board, n, groups, bucket_ptr, heights, out)
        for s, intents in enumerate(tables):
            expected = np.empty(intents.num_intents, np.int8)
            fill_director_mask(board, n, table.kind, table.cell_a, table.cell_b, intents.action,
                               intents.layer, scratch, expected)
            assert np.array_equal(out[s], expected)


def test_sample_masks_draws_set_positions_reproducibly():
    rng = np.random.default_rng(0)
    masks = (rng.random((300, 115)) < 0.05).astype(np.int8)
    masks[0] = 0
    first = batch.sample_masks(masks, seed=11)
    assert first[0] == -1
    assert all(masks[b, first[b]] == 1 for b in range(1, len(masks)))
    assert np.array_equal(first, batch.sample_masks(masks, seed=11))
    assert not np.array_equal(first, batch.sample_masks(masks, seed=12))
    # Uniform over the set positions: every set position of a dense row turns up.
    row = np.ones((2000, 6), np.int8)
    assert set(batch.sample_masks(row, seed=3).tolist()) == set(range(6))


def test_wrappers_across_the_real_thresholds():
    """Batches just below, at and above the shipped ``PARALLEL_MIN_BATCH`` give the single-board answers."""
    threshold = max(batch.PARALLEL_MIN_BATCH[name] for name in ("legal", "optimal", "scores"))
    boards, targets = random_batch(7, threshold + 1, 3, 3)
    legal = single_legal(boards, 3)
    optimal, counts = single_optimal(boards, targets, 3)
    for name in ("legal", "optimal", "scores"):
        for size in (batch.PARALLEL_MIN_BATCH[name] - 1, batch.PARALLEL_MIN_BATCH[name],
                     batch.PARALLEL_MIN_BATCH[name] + 1):
            part, goal = boards[:size], targets[:size]
            if name == "legal":
                assert np.array_equal(batch_kernels.legal_masks(part), legal[:size])
            elif name == "optimal":
                masks, got = batch_kernels.optimal_masks(part, goal)
                assert np.array_equal(masks, optimal[:size]) and np.array_equal(got, counts[:size])
            else:
                _, distances = batch_kernels.scores_and_distances(part, goal)
                assert distances.tolist() == [distance_arrays(part[b], goal[b], 3) for b in range(size)]


# -------------------------------------------- scratch-taking core kernels used per row


@given(st.integers(0, 2**64 - 1), st.integers(2, 6), st.integers(1, 5), st.integers(-128, 127))
def test_generator_ignores_whatever_its_scratch_holds(seed, n, height, garbage):
    """The vector env reuses scratch rows between boards: leftovers must not change a structure."""
    board = np.zeros((n * n, height), np.int8)
    scratch = np.full(2 * n * n + 8, garbage, np.int8)
    cells = n * n
    generate_with_scratch(np.uint64(seed), n, board, scratch[:cells], scratch[cells:2 * cells],
                          scratch[2 * cells:2 * cells + 4], scratch[2 * cells + 4:])
    assert np.array_equal(board, generate_array(seed, n, height))


@given(batches, st.integers(-128, 127))
def test_starts_and_optimal_masks_ignore_whatever_their_scratch_holds(case, garbage):
    seed, size, n, height = case
    boards, targets = random_batch(seed, size, n, height)
    walls = np.stack([seat_cell_indices(seat, n) for seat in SEATS])
    table = action_table(n)
    for board, target in zip(boards, targets):
        for start in SEATED_STARTS:
            out = np.full_like(target, 9)
            fill_start(target, n, start_code(start, SEATS), walls, np.full(n * n, garbage, np.int8), out)
            assert np.array_equal(out, start_board(target, n, start)), start
        keep = np.empty(n * n, np.int8)
        fill_keep_levels(board, target, n, keep)
        mask = np.full(table.num_actions, garbage, np.int8)
        count = optimal_from_keep(board, target, n, table.pair_of, table.large_offset, table.remove_offset, keep,
                                  np.full(n * n, garbage, np.int8), True, mask)
        expected = np.empty(table.num_actions, np.int8)
        assert count == fill_optimal_mask(board, target, n, table.pair_of, table.large_offset,
                                          table.remove_offset, expected)
        assert np.array_equal(mask, expected)


# ------------------------------------------------------------- allocation-free


def _allocations(call) -> int:
    rtsys = pytest.importorskip("numba.core.runtime").rtsys
    before = rtsys.get_allocation_stats().alloc
    call()
    return rtsys.get_allocation_stats().alloc - before


@pytest.fixture
def nrt_stats():
    try:
        from numba.core.runtime import _nrt_python
    except ImportError:  # pragma: no cover - numba internals moved
        pytest.skip("numba's NRT statistics are not available")
    _nrt_python.memsys_enable_stats()
    yield
    _nrt_python.memsys_disable_stats()


def driver_calls(size: int) -> dict:
    """Calls of every batch driver on ``size`` mid-game 3x3x3 boards with preallocated outputs."""
    boards, targets = random_batch(size, size, 3, 3)
    table = action_table(3)
    pairs, scratch = batch_kernels.pair_cells(3), batch_kernels.new_scratch(size, 3)
    out = np.empty((size, table.num_actions), np.int8)
    counts = np.empty(size, np.int64)
    scores, distances = np.empty((size, 5)), np.empty(size, np.int64)
    optimal_args = (boards, targets, 3, table.pair_of, table.large_offset, table.remove_offset, scratch, out, counts)
    return {
        "legal": lambda: batch_kernels._legal_serial(boards, 3, pairs, scratch, out),
        "legal_parallel": lambda: batch_kernels._legal_parallel(boards, 3, pairs, scratch, out),
        "optimal": lambda: batch_kernels._optimal_serial(*optimal_args),
        "optimal_parallel": lambda: batch_kernels._optimal_parallel(*optimal_args),
        "scores": lambda: batch_kernels._scores_serial(boards, targets, 3, VALUE_TO_CODE_INDEX, scratch, scores, distances),
    }


def test_drivers_allocate_nothing_per_board(nrt_stats):
    """A driver's allocations (argument unboxing, thread scheduling) do not grow with the batch."""
    counts = {}
    for size in (16, 512):
        for name, call in driver_calls(size).items():
            call()  # compile
            counts[name, size] = _allocations(call)
    for name in ("legal", "legal_parallel", "optimal", "optimal_parallel", "scores"):
        assert counts[name, 16] == counts[name, 512], name


def game_calls(size: int) -> dict:
    """Calls of the game kernels on a vector env of ``size`` envs a few turns in."""
    import craft_env

    env = craft_env.vector_env(size)
    env.reset(seed=1)
    intents = np.zeros((size, 3), np.int64)
    actions = np.full(size, env.noop, np.int64)
    for _ in range(2):
        env.step_directors(intents)
        env.step_builder(actions)
    tables, state = env._config_record, env._episode_record
    legal = np.zeros((size, 3), bool)
    outputs = (env._rewards, env._terminations, env._truncations, env._result)
    return {
        "directors": lambda: batch.game_directors(tables, state, intents, legal),
        "builder": lambda: batch.game_builder_serial(tables, state, actions, *outputs),
        "scripted": lambda: batch.game_scripted(tables, state, intents),
        "reset": lambda: batch.game_reset(tables, state),
    }


def test_vector_env_phases_allocate_nothing_per_env(nrt_stats):
    counts = {}
    for size in (4, 256):
        for name, call in game_calls(size).items():
            call()
            counts[name, size] = _allocations(call)
    for name in ("directors", "builder", "scripted", "reset"):
        assert counts[name, 4] == counts[name, 256], name
