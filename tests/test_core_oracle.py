"""The oracle (docs/rules.md#oracle): distance, optimal moves, plans, candidate sampling.

Three independent checks:

* against the reference model's keep-level distance (written from docs/rules.md#oracle);
* against brute force: every legal move is played and the distance
  recomputed, so "optimal" is checked by definition;
* against breadth-first search over every reachable board of small sizes,
  so the distance is checked to be the true shortest path length.
"""

from __future__ import annotations

import sys
import threading
from collections import deque

import numpy as np
import pytest
from conftest import board_pairs, random_pair
from hypothesis import given, settings
from hypothesis import strategies as st
from reference_model import CODES, RefBoard, bfs_distances, from_engine_move
from reference_model import distance as ref_distance
from reference_model import optimal_moves as ref_optimal_moves

from craft_env import Move, Structure, generate_structure, oracle
from craft_env.core.encoding import action_table


def check_oracle(current: Structure, target: Structure) -> int:
    """Every oracle property on one pair; returns the distance."""
    n = current.n
    d = oracle.distance(current, target)
    assert d >= 0
    assert (d == 0) == (current == target)
    assert oracle.distance(target, current) == d, "shortest paths are symmetric (every move can be undone)"

    best = oracle.optimal_moves(current, target)
    assert (len(best) == 0) == (d == 0)
    assert len(set(best)) == len(best)
    assert all(m.layer is not None for m in best)

    lowered = set()
    for move in current.legal_moves():
        after = oracle.distance(current.apply(move), target)
        assert abs(after - d) <= 1, f"{move} changes the distance by more than one"
        if after == d - 1:
            lowered.add(move)
    assert set(best) == lowered

    mask = oracle.optimal_mask(current, target)
    assert mask.dtype == np.int8
    ids = oracle.optimal_actions(current, target).tolist()
    assert ids == sorted(ids)
    assert np.flatnonzero(mask).tolist() == ids == sorted(m.to_action(n) for m in best)
    assert not (mask & (1 - current.legal_mask())).any(), "optimal moves are legal"

    steps = oracle.plan(current, target)
    assert len(steps) == d
    board = current
    for k, move in enumerate(steps):
        assert move in oracle.optimal_moves(board, target)
        board = board.apply(move)  # the plan's layer claims must be right too
        assert oracle.distance(board, target) == d - k - 1
    assert board == target
    return d


@settings(max_examples=3 * settings().max_examples)
@given(board_pairs())
def test_oracle_properties_and_reference_distance(pair):
    current_model, target_model = pair
    current, target = current_model.to_structure(), target_model.to_structure()
    d = check_oracle(current, target)
    assert d == ref_distance(current_model, target_model)


@pytest.mark.parametrize("block", range(4))
def test_oracle_on_seeded_mid_game_boards(block):
    """Larger, mid-game pairs (Hypothesis favours small ones); 3x3x3 gets its own share."""
    for seed in range(block * 40, block * 40 + 40):
        size = (3, 3) if seed % 2 else (None, None)
        current_model, target_model = random_pair(seed, *size)
        d = check_oracle(current_model.to_structure(), target_model.to_structure())
        assert d == ref_distance(current_model, target_model)


@given(board_pairs(n_range=(2, 3), height_range=(1, 3)))
def test_optimal_moves_match_reference_brute_force(pair):
    current_model, target_model = pair
    current, target = current_model.to_structure(), target_model.to_structure()
    engine = {from_engine_move(m) for m in oracle.optimal_moves(current, target)}
    assert engine == ref_optimal_moves(current_model, target_model)


@pytest.mark.parametrize("seed", range(8))
def test_build_and_dig_generated_structures(seed):
    target = generate_structure(seed)
    empty = Structure.empty()
    assert check_oracle(empty, target) == target.num_blocks
    assert check_oracle(target, empty) == target.num_blocks
    other = generate_structure(seed + 1000)
    check_oracle(other, target)


def test_keep_levels_follow_large_blocks():
    """A matching bottom is kept only if no large block that must go sits across it."""
    target = Structure.from_ascii(
        """
        layer 0
          gs  bs  ..
          ..  ..  ..
          ..  ..  ..
        layer 1
          rs  ys  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    current = Structure.from_ascii(
        """
        layer 0
          gl==gl  ..
          ..  ..  ..
          ..  ..  ..
        layer 1
          rs  ys  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    # The domino is wrong for both cells, so both stacks go entirely: 3 removals + 4 placements.
    assert oracle.distance(current, target) == 7
    tops = {Move.remove((0, 0), layer=1), Move.remove((0, 1), layer=1)}
    assert set(oracle.optimal_moves(current, target)) == tops
    dig = Structure.from_ascii(
        """
        layer 0
          gs  bl==bl
          ..  ..  ..
          ..  ..  ..
        layer 1
          rs  ys  os
          ..  ..  ..
          ..  ..  ..
        """
    )
    # (0,0) is right and stays; the domino under (0,1)/(0,2) must go, taking (0,1)'s ys with it.
    assert oracle.distance(dig, target) == 3 + 2
    tops = {Move.remove((0, 1), layer=1), Move.remove((0, 2), layer=1)}
    assert set(oracle.optimal_moves(dig, target)) == tops


def test_size_mismatch_and_types():
    with pytest.raises(ValueError, match="target"):
        oracle.distance(Structure.empty(3, 3), Structure.empty(3, 2))
    with pytest.raises(ValueError, match="target"):
        oracle.optimal_moves(Structure.empty(3, 3), Structure.empty(4, 3))
    with pytest.raises(TypeError):
        oracle.distance(Structure.empty(), "not a structure")


def test_optimal_moves_from_several_threads():
    """``optimal_moves`` reuses a buffer per thread: threads calling it at once each get their own answers."""
    pairs = []
    for k in range(6):
        target = generate_structure(k)
        steps = oracle.plan(Structure.empty(), target)
        board = Structure.empty()
        for move in steps[: len(steps) * k // 6]:
            board = board.apply(move)
        pairs.append((board, target))
    expected = [oracle.optimal_moves(board, target) for board, target in pairs]
    wrong = []

    def work(offset: int) -> None:
        for _ in range(300):
            for k in range(len(pairs)):
                board, target = pairs[(k + offset) % len(pairs)]
                if oracle.optimal_moves(board, target) != expected[(k + offset) % len(pairs)]:
                    wrong.append(k)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        threads = [threading.Thread(target=work, args=(offset,)) for offset in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    assert not wrong


# --------------------------------------------------------------- sampling


@given(board_pairs(n_range=(2, 4), height_range=(1, 4)), st.integers(0, 8), st.integers(0, 2**32))
def test_sample_candidates(pair, count, seed):
    current, target = pair[0].to_structure(), pair[1].to_structure()
    best = oracle.optimal_moves(current, target)
    drawn = oracle.sample_candidates(current, target, count, seed)
    assert len(drawn) == min(count, len(best))
    assert len(set(drawn)) == len(drawn)
    assert set(drawn) <= set(best)
    assert oracle.sample_candidates(current, target, count, seed) == drawn
    assert oracle.sample_candidates(current, target, count, np.random.default_rng(seed)) == drawn
    if count >= len(best):
        assert set(drawn) == set(best)


def test_sample_candidates_rejects_bad_count():
    for bad in (-1, 2.5, True, "3"):
        with pytest.raises(ValueError, match="n"):
            oracle.sample_candidates(Structure.empty(), generate_structure(0), bad, 0)


# ------------------------------------------------------- breadth-first truth


class Graph:
    """Every board of one size reachable with some block codes, as an index graph."""

    def __init__(self, n: int, height: int, codes: tuple[str, ...]) -> None:
        self.codes = codes
        boards = list(bfs_distances(RefBoard.empty(n, height), codes))
        self.index = {board: k for k, board in enumerate(boards)}
        self.boards = boards
        self.edges = [
            [(move, self.index[board.apply(move)]) for move in board.legal_moves(codes)] for board in boards
        ]
        self.structures = [board.to_structure() for board in boards]

    def distances_to(self, target: int) -> list[int]:
        dist = [-1] * len(self.boards)
        dist[target] = 0
        queue = deque([target])
        while queue:
            k = queue.popleft()
            for _, other in self.edges[k]:
                if dist[other] < 0:
                    dist[other] = dist[k] + 1
                    queue.append(other)
        return dist


GRAPHS = {
    # (n, height, codes, targets, targets whose optimal moves are checked on every board)
    "2x2x1 all colours": (2, 1, CODES, 40, 6),
    "2x2x2 green+blue": (2, 2, ("gs", "gl", "bs", "bl"), 10, 2),
    "2x2x3 green": (2, 3, ("gs", "gl"), 12, 3),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_distance_is_the_true_shortest_path(name):
    """BFS over every reachable board (colour restriction is exact: see ``bfs_distances``)."""
    n, height, codes, num_targets, num_checked = GRAPHS[name]
    graph = Graph(n, height, codes)
    rng = np.random.default_rng(7)
    others = rng.choice(len(graph.boards), num_targets - 2, replace=False).tolist()
    picks = [0, len(graph.boards) - 1, *others]
    table = action_table(n)
    for t_pos, t in enumerate(picks):
        truth = graph.distances_to(t)
        target = graph.structures[t]
        for k, current in enumerate(graph.structures):
            assert oracle.distance(current, target) == truth[k], (str(current), str(target))
        if t_pos >= num_checked:
            continue
        mask = np.empty(table.num_actions, np.int8)
        for k, current in enumerate(graph.structures):
            best = {move for move, other in graph.edges[k] if truth[other] == truth[k] - 1}
            engine = {from_engine_move(m) for m in oracle.optimal_moves(current, target)}
            assert engine == best, (str(current), str(target))
            mask[:] = oracle.optimal_mask(current, target)
            assert int(mask.sum()) == len(best)
