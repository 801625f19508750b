"""The exact oracle (SPEC section 6) on ``Structure`` objects.

Thin wrappers over the numba kernels in ``craft_env.core.oracle``; see that
module for the algorithm.
"""

from __future__ import annotations

import numpy as np

from craft_env.core import oracle as kernels
from craft_env.core.board import Structure, cached_move, cached_moves
from craft_env.core.encoding import action_table
from craft_env.core.moves import Move


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
    return int(kernels.distance(current.array, target.array, current.n))


def optimal_mask(current: Structure, target: Structure) -> np.ndarray:
    """int8 mask over action ids: 1 where the move lowers the distance by exactly one."""
    _check_pair(current, target)
    table = action_table(current.n)
    out = np.empty(table.num_actions, np.int8)
    kernels.fill_optimal_mask(
        current.array, target.array, current.n, table.pair_of, table.large_offset, table.remove_offset, out
    )
    return out


def optimal_actions(current: Structure, target: Structure) -> np.ndarray:
    """The optimal action ids, increasing."""
    _check_pair(current, target)
    table = action_table(current.n)
    mask = np.empty(table.num_actions, np.int8)
    ids = np.empty(table.num_actions, np.int16)
    count = kernels.optimal_actions(
        current.array, target.array, current.n, table.pair_of, table.large_offset, table.remove_offset, mask, ids
    )
    return ids[:count]


def _optimal_rows(current: Structure, target: Structure) -> np.ndarray:
    """The optimal ``(action id, layer)`` rows, ids increasing (int16 ``(k, 2)``)."""
    _check_pair(current, target)
    table = action_table(current.n)
    out = np.empty((table.num_actions, 2), np.int16)
    count = kernels.optimal_action_layers(
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
    actions, layers = kernels.build_plan(
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
