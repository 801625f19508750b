"""The JAX oracle (``craft_env.jax.oracle``) against the numba one (``craft_env.core.oracle``).

Differential: keep levels, distance and the optimal-move mask compared
exactly, vmapped over hundreds of thousands of ``(board, target)`` pairs:
boards reached by random legal play (some of it guided by the oracle, some
removal-heavy) from empty boards, from the targets and from other targets;
targets from the numba generator, from random play, the bundled evaluation
sets and the paper fixture; boards equal to their target; staircases of
large blocks straddling keep levels (the longest keep-level chain). Then
hypothesis properties checked by brute force with the numba rules: the
distance is 0 exactly on the target, symmetric, and every legal move changes
it by at most one, lowering it exactly when the mask says so.

Each size compiles once (``_batched``, cached for the module); batches are
padded to one fixed shape so nothing recompiles.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from conftest import board_pairs
from hypothesis import given, settings
from numba import njit

from craft_env.core.encoding import action_table, direction_between, large_value, small_value
from craft_env.core.generator import generate_array
from craft_env.core.oracle import distance_from_keep, fill_keep_levels, fill_optimal_mask
from craft_env.core.rules import apply_action_inplace, fill_legal_mask
from craft_env.datasets import load_eval_set, load_structures

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jax_core = pytest.importorskip("jax.extend.core")
jo = pytest.importorskip("craft_env.jax.oracle")

CHUNK = 2048  # rows per compiled call: every batch is padded to a multiple of this
DEFAULT = (3, 3)
SIZES = [DEFAULT, (4, 4), (2, 1), (6, 5)]


# --------------------------------------------------------------------------- the two oracles on batches


@njit(cache=True)
def _numba_oracle(boards, targets, n, pair_of, large_offset, remove_offset, keeps, distances, masks):
    for b in range(boards.shape[0]):
        fill_keep_levels(boards[b], targets[b], n, keeps[b])
        distances[b] = distance_from_keep(boards[b], targets[b], n, keeps[b])
        fill_optimal_mask(boards[b], targets[b], n, pair_of, large_offset, remove_offset, masks[b])


def numba_oracle(boards: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(keep levels, distances, masks)`` of every row from the numba kernels."""
    batch, cells = boards.shape[:2]
    n = round(cells**0.5)
    table = action_table(n)
    boards, targets = np.ascontiguousarray(boards), np.ascontiguousarray(targets)
    keeps = np.empty((batch, cells), np.int8)
    distances = np.empty(batch, np.int64)
    masks = np.empty((batch, table.num_actions), np.int8)
    _numba_oracle(
        boards, targets, n, table.pair_of, table.large_offset, table.remove_offset, keeps, distances, masks
    )
    return keeps, distances, masks


@functools.cache
def _batched(n: int, height: int):
    """The jitted, vmapped JAX oracle of one size: ``(keep, distance, mask, distance, mask)`` per row.

    At the default size the first distance and mask come from ``distance``
    and ``optimal_mask``, the others from ``distance_and_mask``; at other
    sizes all from ``distance_and_mask`` (one smaller graph, a faster compile).
    """
    tables = jo.oracle_tables(n, height)

    def row(board, target):
        both = jo.distance_and_mask(board, target, tables)
        if (n, height) == DEFAULT:
            alone = (jo.distance(board, target, tables), jo.optimal_mask(board, target, tables))
        else:
            alone = both
        return (jo.keep_levels(board, target, tables),) + alone + both

    return jax.jit(jax.vmap(row))


def jax_oracle(boards: np.ndarray, targets: np.ndarray):
    """``(keep, distance, mask, distance, mask)`` of every row as numpy arrays (see ``_batched``)."""
    batch, cells, height = boards.shape
    n = round(cells**0.5)
    padded = -(-batch // CHUNK) * CHUNK
    pad = ((0, padded - batch), (0, 0), (0, 0))
    boards, targets = np.pad(boards, pad), np.pad(targets, pad)
    parts = [
        _batched(n, height)(boards[start:start + CHUNK], targets[start:start + CHUNK])
        for start in range(0, padded, CHUNK)
    ]
    return [np.concatenate([np.asarray(p[k]) for p in parts])[:batch] for k in range(5)]


def assert_oracles_agree(boards: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Both oracles on every row, compared exactly; returns the distances."""
    keep, distance, mask = numba_oracle(boards, targets)
    j_keep, j_distance, j_mask, j_distance2, j_mask2 = jax_oracle(boards, targets)
    assert j_keep.dtype == j_distance.dtype == np.int32
    assert j_mask.dtype == bool and j_mask.shape == mask.shape
    for name, mine, theirs in (
        ("keep levels", j_keep, keep),
        ("distance", j_distance, distance),
        ("mask", j_mask, mask.astype(bool)),
        ("distance_and_mask's distance", j_distance2, distance),
        ("distance_and_mask's mask", j_mask2, mask.astype(bool)),
    ):
        wrong = np.flatnonzero((mine != theirs).reshape(len(boards), -1).any(axis=1))
        first = wrong[0] if wrong.size else 0
        assert wrong.size == 0, (
            f"{name} differs on {wrong.size} of {len(boards)} rows; first: board {boards[first].tolist()} "
            f"target {targets[first].tolist()}: jax {mine[first].tolist()} numba {theirs[first].tolist()}"
        )
    return distance


# --------------------------------------------------------------------------- states


@njit(cache=True)
def _walks(starts, targets, n, uniforms, removal_bias, guide, kind, cell_a, cell_b, colour, pair_of, out):
    """From each start, random legal moves (no no-op), every board written to ``out[b, step]``.

    Per step, ``uniforms[b, s]`` holds three draws: one against
    ``guide[b]`` (play an optimal move towards ``targets[b]``), one against
    ``removal_bias[b]`` (play a removal), one to pick among the candidates.
    """
    actions = kind.shape[0]
    large_offset = 5 * n * n
    remove_offset = actions - 1 - n * n
    legal = np.empty(actions, np.int8)
    best = np.empty(actions, np.int8)
    for b in range(starts.shape[0]):
        board = starts[b].copy()
        out[b, 0] = board
        for s in range(uniforms.shape[1]):
            fill_legal_mask(board, n, kind, cell_a, cell_b, legal)
            legal[actions - 1] = 0
            u = uniforms[b, s]
            if u[0] < guide[b] and fill_optimal_mask(
                board, targets[b], n, pair_of, large_offset, remove_offset, best
            ):
                legal[:] = best
            elif u[1] < removal_bias[b] and legal[remove_offset:].any():
                legal[:remove_offset] = 0
            count = legal.sum()
            if count > 0:
                pick = min(int(u[2] * count), count - 1)
                for a in range(actions):
                    if legal[a]:
                        if pick == 0:
                            apply_action_inplace(board, n, a, kind, cell_a, cell_b, colour)
                            break
                        pick -= 1
            out[b, s + 1] = board


def walks(starts: np.ndarray, targets: np.ndarray, steps: int, rng: np.random.Generator) -> np.ndarray:
    """``(B * (steps + 1), n*n, h)``: every board of a seeded random walk from each start, the start first."""
    batch, cells, height = starts.shape
    n = round(cells**0.5)
    table = action_table(n)
    starts, targets = np.ascontiguousarray(starts), np.ascontiguousarray(targets)  # one compiled signature
    out = np.empty((batch, steps + 1, cells, height), np.int8)
    uniforms = rng.random((batch, steps, 3))
    removal_bias = rng.choice([0.0, 0.3, 0.7], batch)
    guide = rng.choice([0.0, 0.0, 0.5, 0.9], batch)
    _walks(
        starts, targets, n, uniforms, removal_bias, guide,
        table.kind, table.cell_a, table.cell_b, table.colour, table.pair_of, out,
    )
    return out.reshape(-1, cells, height)


def generated(count: int, n: int, height: int, seed: int) -> np.ndarray:
    return np.stack([generate_array(seed * 1_000_003 + k, n, height) for k in range(count)])


def pairs_towards(targets: np.ndarray, steps: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Walks from empty boards, from the targets and from shuffled targets, each board with its target."""
    starts = [np.zeros_like(targets), targets, targets[rng.permutation(len(targets))]]
    boards = np.concatenate([walks(s, targets, steps, rng) for s in starts])
    goals = np.tile(np.repeat(targets, steps + 1, axis=0), (3, 1, 1))
    return boards, goals


def staircase(n: int, height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(board, target, expected keep levels)``: the longest keep-level chain of a size.

    Every cell full of small blocks except a snake of ``height + 1`` cells
    where large block ``k`` joins snake cells ``k`` and ``k + 1`` on layer
    ``k``; the target recolours the layer-0 block. Each layer's block is
    then at or above its lower cell's keep level, so snake cell ``k + 1``
    keeps ``k`` layers: a chain through every layer.
    """
    snake = [i * n + (j if i % 2 == 0 else n - 1 - j) for i in range(n) for j in range(n)][: height + 1]
    board = np.full((n * n, height), small_value(0), np.int8)
    for k in range(height):
        a, b = divmod(snake[k], n), divmod(snake[k + 1], n)
        board[snake[k], k] = large_value(1, direction_between(a, b))
        board[snake[k + 1], k] = large_value(1, direction_between(b, a))
    target = board.copy()
    target[snake[:2], 0] += large_value(2, 0) - large_value(1, 0)  # the same block in another colour
    keep = np.full(n * n, height, np.int8)
    keep[snake[0]] = keep[snake[1]] = 0
    for k in range(1, height):
        keep[snake[k + 1]] = k
    return board, target, keep


# --------------------------------------------------------------------------- differential tests


@pytest.mark.parametrize(("n", "height"), SIZES)
def test_random_play_matches_numba(n, height):
    rng = np.random.default_rng(31 * n + height)
    count, steps = (512, 40) if (n, height) == DEFAULT else (64, 2 * n * height)
    targets = generated(count, n, height, seed=n * 10 + height)
    boards, goals = pairs_towards(targets, steps, rng)
    distances = assert_oracles_agree(boards, goals)
    assert (distances == 0).sum() >= count, "every walk from its target starts on it"
    # Targets from random play (not the generator's distribution), and random boards paired with them.
    length = 2 * n * height
    played = walks(np.zeros_like(targets), targets, length, rng)[length :: length + 1]
    boards, goals = pairs_towards(played, steps, rng)
    assert_oracles_agree(boards, goals)
    assert_oracles_agree(boards, goals[rng.permutation(len(goals))])


@pytest.mark.parametrize("name", ["paper", "craft"])
def test_bundled_sets_match_numba(name):
    targets = np.stack([s.array for s in load_eval_set(name)])
    targets = np.repeat(targets, 50, axis=0)
    boards, goals = pairs_towards(targets, 27, np.random.default_rng(len(name)))
    assert_oracles_agree(boards, goals)


def test_paper_fixture_matches_numba(paper_fixture_path):
    targets = np.stack([s.array for s in load_structures(paper_fixture_path)])
    targets = np.repeat(targets, 50, axis=0)
    boards, goals = pairs_towards(targets, 27, np.random.default_rng(20))
    assert_oracles_agree(boards, goals)


@pytest.mark.parametrize(("n", "height"), SIZES)
def test_staircase_chains_match_numba(n, height):
    """Large blocks straddling keep levels, the chain through every layer, and walks from it."""
    board, target, expected = staircase(n, height)
    keep, _, _ = numba_oracle(board[None], target[None])
    assert keep[0].tolist() == expected.tolist(), "the construction makes the chain it means to"
    boards = walks(np.repeat(board[None], 64, axis=0), np.repeat(target[None], 64, axis=0), 2 * height,
                   np.random.default_rng(height))
    goals = np.repeat(target[None], len(boards), axis=0)
    assert_oracles_agree(np.concatenate([boards, goals]), np.concatenate([goals, boards]))


def test_noop_is_never_optimal_and_distance_is_zero_on_the_target():
    targets = generated(512, 3, 3, seed=7)
    _, distance, mask, _, _ = jax_oracle(targets, targets)
    assert (distance == 0).all()
    assert not mask.any()
    # The documented call: vmapped with the tables unbatched, here passed to jit as an argument.
    batched = jax.jit(jax.vmap(jo.distance_and_mask, in_axes=(0, 0, None)))
    distance, mask = (np.asarray(x) for x in batched(np.zeros_like(targets), targets, jo.oracle_tables(3, 3)))
    assert (distance == (targets != 0).sum(axis=(1, 2)) - (targets >= 6).sum(axis=(1, 2)) // 2).all()
    assert not mask[:, -1].any() and mask.any(axis=1).all()


def test_tables_are_cached_and_shapes_are_static():
    tables = jo.oracle_tables(3, 3)
    assert jo.oracle_tables(3, 3) is tables
    assert tables.placements.dtype == jnp.int32 and tables.placements.shape == (3, 5)
    with pytest.raises(ValueError, match="n: board side"):
        jo.oracle_tables(7, 3)
    board = jnp.zeros((9, 3), jnp.int8)
    program = jax.make_jaxpr(jo.distance_and_mask)(board, board, tables)
    equations = list(_equations(program.jaxpr))
    wide = [e for e in equations if any(v.aval.dtype == np.int64 for v in e.outvars)]
    assert not wide, "no int64 (x64 is off by default)"
    assert not {e.primitive.name for e in equations} & {"while", "cond", "pure_callback", "io_callback"}


def _equations(jaxpr):
    """Every equation of ``jaxpr`` and of the programs nested in it."""
    for equation in jaxpr.eqns:
        yield equation
        for sub in jax_core.jaxprs_in_params(equation.params):
            yield from _equations(sub)


# --------------------------------------------------------------------------- properties by brute force


@njit(cache=True)
def _after_every_move(board, n, kind, cell_a, cell_b, colour, out):
    """``out[a]``: the board after legal action ``a`` (unchanged if illegal); returns the legal mask."""
    legal = np.empty(kind.shape[0], np.int8)
    fill_legal_mask(board, n, kind, cell_a, cell_b, legal)
    for a in range(kind.shape[0]):
        out[a] = board
        if legal[a]:
            apply_action_inplace(out[a], n, a, kind, cell_a, cell_b, colour)
    return legal


@settings(max_examples=2 * settings().max_examples // 3)
@given(board_pairs(n_range=(3, 3), height_range=(3, 3)))
def test_optimal_moves_are_exactly_the_moves_that_lower_the_distance(pair):
    current, target = (board.to_structure().array for board in pair)
    table = action_table(3)
    after = np.empty((table.num_actions, 9, 3), np.int8)
    legal = _after_every_move(current, 3, table.kind, table.cell_a, table.cell_b, table.colour, after) == 1
    boards = np.concatenate([current[None], target[None], after])
    goals = np.concatenate([target[None], current[None], np.repeat(target[None], len(after), axis=0)])
    _, distance, mask, _, _ = jax_oracle(boards, goals)
    d = distance[0]
    assert (d == 0) == np.array_equal(current, target) == (not mask[0].any())
    assert distance[1] == d, "every move can be undone, so distances are symmetric"
    change = distance[2:] - d
    assert (np.abs(change[legal]) <= 1).all()
    lowers = legal & (change == -1)
    assert np.array_equal(mask[0], lowers), "optimal exactly when a legal move lowers the distance by one"
    assert not mask[0][~legal].any() and not mask[0][-1]
