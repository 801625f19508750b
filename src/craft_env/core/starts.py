"""Partial starting boards (``docs/rules.md#turns-and-starting-boards``): a target cut down by one rule.

Each start keeps a bottom prefix of every target stack and then, like the
oracle's keep levels, lowers prefixes until no large block has one half kept
and the other not. The result is always a reachable board, a fresh array
that never aliases the target (``fill_start`` writes into the caller's array).
"""

from __future__ import annotations

from numba import njit

from craft_env.core.rules import partner_cell

STARTS = ("empty", "first_layer", "first_two_layers", "wall_D1", "wall_D2", "wall_D3")


@njit(cache=True)
def fill_start(target, n, start, walls, prefix, board):
    """Write start number ``start`` (its index in ``STARTS``) of ``target`` into ``board``, allocation-free.

    ``walls`` holds the cells of D1, D2, D3 (rows of ``seat_cell_indices``),
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
