"""Seeded target generator (``docs/rules.md#structures``), identical on every platform.

Randomness comes from our own SplitMix64 stream inside the kernel, not from
numpy's global state, so a seed means the same structure in every process,
on every machine, forever.

Paper distribution (``n = 3``, ``height = 3``): the seven cells on some
director's wall have height exactly 3; ``(1,1)`` and ``(2,1)``, which no
director sees, get height 0..2 uniformly. Each layer is tiled by visiting
cells in a random order: an unfilled cell becomes, with probability 1/2, a
large block with a uniformly chosen unfilled neighbour that needs a block on
that layer (a small block if there is none), else a small block; colours are
uniform.

Generalisation to other sizes: "on a wall" means on a default seat's wall
(column 0, row 0 or column ``n-1``); wall cells have height ``height``, the
other cells ``0 .. height-1`` uniformly; tiling is the same.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from craft_env.core.board import Structure, complexity_tier
from craft_env.core.encoding import check_size
from craft_env.core.random import draw

@njit(cache=True)
def generate_with_scratch(seed, n, board, heights, order, neighbours, directions):
    """Fill the zeroed ``board`` (n*n, h) with the structure for uint64 ``seed``, allocation-free.

    Scratch (int8 is enough): ``heights`` and ``order`` hold ``n*n`` entries,
    ``neighbours`` and ``directions`` 4. The batched vector env calls this
    per board with rows of its own scratch.
    """
    h = board.shape[1]
    cells = n * n
    state = seed
    state, _ = draw(state, 2)
    for c in range(cells):
        i = c // n
        j = c % n
        if i == 0 or j == 0 or j == n - 1:
            heights[c] = h
        else:
            state, heights[c] = draw(state, h)
    for level in range(h):
        for c in range(cells):
            order[c] = c
        for c in range(cells - 1, 0, -1):
            state, r = draw(state, c + 1)
            tmp = order[c]
            order[c] = order[r]
            order[r] = tmp
        for idx in range(cells):
            c = order[idx]
            if heights[c] <= level or board[c, level] != 0:
                continue
            state, coin = draw(state, 2)
            count = 0
            if coin == 0:
                i = c // n
                j = c % n
                for d in range(4):
                    ni = i - 1 if d == 0 else (i + 1 if d == 1 else i)
                    nj = j - 1 if d == 2 else (j + 1 if d == 3 else j)
                    if 0 <= ni < n and 0 <= nj < n:
                        p = ni * n + nj
                        if heights[p] > level and board[p, level] == 0:
                            neighbours[count] = p
                            directions[count] = d
                            count += 1
            state, colour = draw(state, 5)
            if count == 0:
                board[c, level] = 1 + colour
            else:
                state, pick = draw(state, count)
                d = directions[pick]
                board[c, level] = 6 + 4 * colour + d
                board[neighbours[pick], level] = 6 + 4 * colour + (d ^ 1)


@njit(cache=True)
def generate_into(seed, n, board):
    """Fill the zeroed ``board`` (n*n, h) with the structure for uint64 ``seed``."""
    cells = n * n
    scratch = np.empty(2 * cells + 8, np.int8)
    generate_with_scratch(
        seed, n, board, scratch[:cells], scratch[cells:2 * cells], scratch[2 * cells:2 * cells + 4],
        scratch[2 * cells + 4:],
    )


def generate_array(seed: int, n: int, height: int) -> np.ndarray:
    board = np.zeros((n * n, height), np.int8)
    generate_into(np.uint64(seed % (1 << 64)), n, board)
    return board


def generate_structure(seed: int, n: int = 3, height: int = 3, id: str | None = None):
    """The structure for ``seed`` from the paper distribution (generalised for other sizes).

    Deterministic across processes and platforms; ``complexity`` is the tier.
    """
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed: must be a non-negative int, got {seed!r}")
    check_size(n, height)
    board = generate_array(int(seed), n, height)
    board.flags.writeable = False
    entries = int(np.count_nonzero(board))
    return Structure(board, n, id=id, complexity=complexity_tier(entries, n, height), _trusted=True)
