"""Read a director's numeric observation back into boards and walls.

The layout is ``craft_env.core.observation``'s: ``[board | own target wall
| intents | turn | seat]``. Scripted directors decode what they were given
rather than peeking at the environment, so they know exactly what an RL
director would know: the board (as far as it is visible) and their own wall
of the target.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from craft_env.core.encoding import large_value, small_value
from craft_env.core.observation import BOARD_CHANNELS, VIEW_CHANNELS, board_dim, view_dim
from craft_env.core.views import seat_cell_indices

UNSEEN = -1


def _value_table() -> np.ndarray:
    """int16 ``(10 block codes, 4 directions)``: the cell value of code ``1 + 2*colour + large`` (minus 1)
    whose first direction channel set is the column (a small block ignores it)."""
    table = np.empty((10, 4), np.int16)
    for code in range(10):
        for direction in range(4):
            colour = code // 2
            table[code, direction] = large_value(colour, direction) if code % 2 else small_value(colour)
    return table


_VALUES = _value_table()


def _pattern_tables() -> tuple[np.ndarray, np.ndarray]:
    """``decode_board``'s and ``decode_visible``'s value of a cell layer for each of the 2**15 patterns of its
    channels set (bit k: channel k above 0.5): the empty channel wins, else the first block code set with
    the first direction set, else ``UNSEEN`` (0 for the visible board)."""
    bits = (np.arange(1 << BOARD_CHANNELS)[:, None] >> np.arange(BOARD_CHANNELS)) & 1 == 1
    codes = bits[:, 1:11]
    values = _VALUES[codes.argmax(axis=1), bits[:, 11:15].argmax(axis=1)]
    board = np.where(codes.any(axis=1), values, np.int16(UNSEEN)).astype(np.int16)
    board[bits[:, 0]] = 0
    return board, np.where(board < 0, 0, board).astype(np.int8)


_BOARD_OF_PATTERN, _VISIBLE_OF_PATTERN = _pattern_tables()
#: ``_decoded``'s last board part and its readings (every director of a turn decodes the same board).
_last_board: tuple = (None, None)


def decode_board(vector: np.ndarray, n: int, height: int) -> np.ndarray:
    """Cell values ``(n*n, height)`` (int16) from the board part; ``UNSEEN`` where no channel is set.

    Per cell and layer: the empty channel wins, else the first block code
    set (``1 + 2*colour + large``) and, for a large half, the first direction
    set (0 when none is). Vectorised over cells, through a table of values:
    it runs once per director turn of every scripted game, and the last
    reading is kept (the turn's directors share one board when they see it
    whole).
    """
    return _decoded(vector, n, height)[0].copy()


def decode_visible(vector: np.ndarray, n: int, height: int) -> np.ndarray:
    """``decode_board`` with unseen cells read as empty, as int8 (what the scripted policy kernel takes)."""
    return _decoded(vector, n, height)[1].copy()


def decoded_visible(vector: np.ndarray, n: int, height: int) -> np.ndarray:
    """``decode_visible`` without the copy: the kept reading itself, for callers that only read it."""
    return _decoded(vector, n, height)[1]


def _decoded(vector: np.ndarray, n: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """``(decode_board, decode_visible)`` of ``vector``, the last one kept (the caller copies)."""
    global _last_board
    part = np.asarray(vector[: board_dim(n, height)])
    key = (n, height, part.dtype.str, part.tobytes())
    last = _last_board  # one read of one tuple: another thread may replace it, never half
    if last[0] == key:  # the turn's other directors see the same board
        return last[1]
    # each cell layer's channels as one 15-bit pattern (two bytes, little-endian), read through the tables
    bits = np.packbits(part.reshape(n * n * height, BOARD_CHANNELS) > 0.5, axis=1, bitorder="little")
    pattern = bits.view("<u2").ravel()
    decoded = (_BOARD_OF_PATTERN[pattern].reshape(n * n, height),
               _VISIBLE_OF_PATTERN[pattern].reshape(n * n, height))
    _last_board = (key, decoded)
    return decoded


def decode_wall_view(vector: np.ndarray, n: int, height: int) -> np.ndarray:
    """The private target wall ``(n slots, height)``: 0 empty, else ``1 + 2*colour + (looks large)``."""
    start = board_dim(n, height)
    block = np.asarray(vector[start : start + view_dim(n, height)]).reshape(n, height, VIEW_CHANNELS)
    return np.argmax(block, axis=2).astype(np.int16)


@lru_cache(maxsize=64)
def wall_cells(seat: str, n: int) -> tuple[int, ...]:
    """``core.views.seat_cell_indices`` as a tuple of ints, made once per seat and size."""
    return tuple(seat_cell_indices(seat, n).tolist())


def apparent_wall(board: np.ndarray, n: int, seat: str) -> np.ndarray:
    """What ``seat`` sees of ``board`` on its own wall, coded like ``decode_wall_view``.

    A large block looks large only when its other half is on the same wall;
    unseen cells read as empty.
    """
    wall = wall_cells(seat, n)
    rows = board[list(wall)].tolist()
    height = board.shape[1]
    out = [[0] * height for _ in wall]
    for slot, cell in enumerate(wall):
        for level, value in enumerate(rows[slot]):
            if value <= 0:
                continue
            if value < 6:
                out[slot][level] = 1 + 2 * (value - 1)
                continue
            colour, direction = (value - 6) // 4, (value - 6) % 4
            di, dj = ((-1, 0), (1, 0), (0, -1), (0, 1))[direction]
            partner = (cell // n + di) * n + (cell % n + dj)
            out[slot][level] = 1 + 2 * colour + (1 if partner in wall else 0)
    return np.array(out, np.int16).reshape(len(wall), height)
