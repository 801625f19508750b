"""Partial starting boards (SPEC section 8): a target cut down to what one rule keeps.

Each start keeps a bottom prefix of every target stack and then, like the
oracle's keep levels, lowers prefixes until no large block has one half kept
and the other not. The result is always a reachable board, a fresh array
that never aliases the target.
"""

from __future__ import annotations

import numpy as np

from craft_env.core.rules import partner_cell
from craft_env.core.views import seat_cell_indices

STARTS = ("empty", "first_layer", "first_two_layers", "wall_D1", "wall_D2", "wall_D3")


def _closed_prefix(target: np.ndarray, n: int, prefix: np.ndarray) -> np.ndarray:
    changed = True
    while changed:
        changed = False
        for cell in range(n * n):
            for level in range(int(prefix[cell])):
                value = int(target[cell, level])
                if value >= 6:
                    partner = partner_cell(n, cell, value)
                    if prefix[partner] <= level:
                        prefix[cell] = level
                        changed = True
                        break
    board = np.zeros_like(target)
    for cell in range(n * n):
        board[cell, : prefix[cell]] = target[cell, : prefix[cell]]
    return board


def start_board(target: np.ndarray, n: int, start: str) -> np.ndarray:
    """The starting board array for ``start`` (one of ``STARTS``) and the target array."""
    heights = np.count_nonzero(target, axis=1)
    if start == "empty":
        return np.zeros_like(target)
    if start == "first_layer":
        prefix = np.minimum(heights, 1)
    elif start == "first_two_layers":
        prefix = np.minimum(heights, 2)
    elif start.startswith("wall_") and start[5:] in ("D1", "D2", "D3"):
        prefix = np.zeros(n * n, np.int64)
        wall = seat_cell_indices(start[5:], n)
        prefix[wall] = heights[wall]
    else:
        raise ValueError(f"start: unknown start {start!r}; expected one of {', '.join(STARTS)}")
    return _closed_prefix(target, n, np.array(prefix, np.int64))
