"""Partial starting boards (``docs/rules.md#turns-and-starting-boards``): a target cut down by one rule.

Each start keeps a bottom prefix of every target stack and then, like the
oracle's keep levels, lowers prefixes until no large block has one half kept
and the other not. The result is always a reachable board, a fresh array
that never aliases the target (``fill_start`` writes into the caller's array).
"""

from __future__ import annotations

from typing import Sequence

from numba import njit

from craft_env.core.rules import partner_cell
from craft_env.core.views import ALL_SEATS

#: The layer starts, then one wall start per seat (``wall_D0`` .. ``wall_D3``).
LAYER_STARTS = ("empty", "first_layer", "first_two_layers")
STARTS = (*LAYER_STARTS, *(f"wall_{seat}" for seat in ALL_SEATS))


def start_code(start: str, seats: Sequence[str]) -> int:
    """The number ``fill_start`` takes for ``start`` in a game seating ``seats``.

    A layer start is its index in ``LAYER_STARTS``; ``wall_Dk`` is 3 plus
    the seat index of ``Dk`` (its row of the kernels' ``walls``), so its
    seat must be seated (else a ``ValueError`` naming ``start``).
    """
    if start in LAYER_STARTS:
        return LAYER_STARTS.index(start)
    seat = start[len("wall_"):] if start in STARTS else None
    if seat not in seats:
        raise ValueError(
            f"start: must be one of {', '.join(LAYER_STARTS)} or wall_<seat> of a seated director "
            f"({', '.join(f'wall_{s}' for s in seats)}), got {start!r}"
        )
    return len(LAYER_STARTS) + list(seats).index(seat)


@njit(cache=True)
def fill_start(target, n, start, walls, prefix, board):
    """Write start number ``start`` (``start_code``) of ``target`` into ``board``, allocation-free.

    ``walls`` holds the seated directors' cells (rows of ``seat_cell_indices``),
    ``prefix`` is ``n*n`` scratch. Every cell keeps a bottom prefix of its
    target stack (none, one layer, two layers, or the whole stack on the
    chosen wall); then, until nothing changes, a large block with one half
    kept and the other not is cut off with everything above it.
    """
    cells = n * n
    h = target.shape[1]
    for c in range(cells):
        count = 0
        for level in range(h):
            if target[c, level] != 0:
                count += 1
        if start == 0:
            prefix[c] = 0
        elif start == 1:
            prefix[c] = min(1, count)
        elif start == 2:
            prefix[c] = min(2, count)
        else:
            prefix[c] = 0
            wall = walls[start - 3]
            for s in range(wall.shape[0]):
                if wall[s] == c:
                    prefix[c] = count
    changed = True
    while changed:
        changed = False
        for c in range(cells):
            for level in range(prefix[c]):
                value = target[c, level]
                if value >= 6:
                    if prefix[partner_cell(n, c, value)] <= level:
                        prefix[c] = level
                        changed = True
                        break
    for c in range(cells):
        for level in range(h):
            board[c, level] = target[c, level] if level < prefix[c] else 0
