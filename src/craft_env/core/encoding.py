"""Block codes, cell values and the fixed action table.

Everything numeric that the rest of the engine agrees on lives here.

Board arrays
------------
A board of side ``n`` and height ``h`` is an ``int8`` array of shape
``(n * n, h)``: row ``k = i * n + j`` is the stack of cell ``(i, j)``, bottom
first, ``0`` above the top block. A batch of boards is ``(B, n * n, h)``.
Each entry is a *cell value*:

==========  ===============================================================
value       meaning
==========  ===============================================================
0           empty
1 .. 5      small block of colour ``value - 1`` (order ``g b r y o``)
6 .. 25     half of a large block: colour ``(value - 6) // 4``, partner
            direction ``(value - 6) % 4`` (0: row ``i-1`` / far,
            1: row ``i+1`` / near, 2: column ``j-1`` / left,
            3: column ``j+1`` / right)
==========  ===============================================================

Storing the partner direction in the value makes "same code and same
partner" a plain equality test, which is what the oracle's keep levels need.

Block codes
-----------
The ten paper codes, indexed ``2 * colour + size`` (size 0 small, 1 large):
``gs gl bs bl rs rl ys yl os ol``.

Action table
------------
For side ``n`` with ``P = 2 n (n - 1)`` adjacent pairs, action ids are laid
out in four consecutive ranges:

1. small placements ``cell * 5 + colour`` (``5 n^2`` ids, cells row-major),
2. large placements ``5 n^2 + pair * 5 + colour`` (``5 P`` ids); pairs are
   enumerated cell by cell in row-major order, first the pair with the right
   neighbour, then the pair with the near (``i + 1``) neighbour,
3. removals ``5 n^2 + 5 P + cell`` (``n^2`` ids),
4. the no-op (builder "clarify"/"pass"), the last id.

With the default ``n = 3`` that is 45 + 60 + 9 moves and the no-op: 115 ids,
no-op = 114.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

import numpy as np

COLOURS = "gbryo"
COLOUR_NAMES = ("green", "blue", "red", "yellow", "orange")
NUM_COLOURS = 5
BLOCK_CODES = tuple(c + s for c in COLOURS for s in "sl")
NUM_VALUES = 26

KIND_SMALL = 0
KIND_LARGE = 1
KIND_REMOVE = 2
KIND_NOOP = 3

DIRECTION_OFFSETS = ((-1, 0), (1, 0), (0, -1), (0, 1))

DEFAULT_N = 3
DEFAULT_HEIGHT = 3
MIN_N, MAX_N = 2, 6
MIN_HEIGHT, MAX_HEIGHT = 1, 5

_POSITION_RE = re.compile(r"^\s*\(?\s*(-?\d+)\s*,\s*(-?\d+)\s*\)?\s*$")


def small_value(colour: int) -> int:
    """Cell value of a small block of ``colour`` (0..4)."""
    return 1 + colour


def large_value(colour: int, direction: int) -> int:
    """Cell value of a large half of ``colour`` whose partner lies in ``direction``."""
    return 6 + 4 * colour + direction


def value_colour(value: int) -> int:
    """Colour index of a non-empty cell value."""
    return value - 1 if value < 6 else (value - 6) // 4


def value_code(value: int) -> str:
    """Paper block code (``"gs"``, ``"bl"``, ...) of a non-empty cell value."""
    return COLOURS[value_colour(value)] + ("l" if value >= 6 else "s")


def parse_block_code(code: object, field: str = "block") -> tuple[int, bool]:
    """``"gl"`` -> ``(colour, is_large)``; anything else is a ``ValueError`` naming ``field``."""
    if not isinstance(code, str) or len(code) != 2 or code[0] not in COLOURS or code[1] not in "sl":
        raise ValueError(
            f"{field}: unknown block code {code!r}; expected one of {', '.join(BLOCK_CODES)}"
        )
    return COLOURS.index(code[0]), code[1] == "l"


def parse_position(text: object, n: int | None = None, field: str = "position") -> tuple[int, int]:
    """Read ``"(i,j)"`` (or a 2-sequence of ints) into a cell, checking bounds when ``n`` is given."""
    if isinstance(text, str):
        match = _POSITION_RE.match(text)
        if not match:
            raise ValueError(f"{field}: bad position {text!r}; expected a string like '(1,2)'")
        i, j = int(match.group(1)), int(match.group(2))
    elif isinstance(text, (tuple, list)) and len(text) == 2 and all(
        isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in text
    ):
        i, j = int(text[0]), int(text[1])
    else:
        raise ValueError(f"{field}: bad position {text!r}; expected a string like '(1,2)' or (i, j)")
    if i < 0 or j < 0 or (n is not None and (i >= n or j >= n)):
        bound = f" on a {n}x{n} board" if n is not None else ""
        raise ValueError(f"{field}: position {text!r} is outside the board{bound}")
    return i, j


def format_position(cell: tuple[int, int]) -> str:
    return f"({cell[0]},{cell[1]})"


def direction_between(a: tuple[int, int], b: tuple[int, int]) -> int:
    """Direction index from cell ``a`` to its orthogonal neighbour ``b``; -1 if not neighbours."""
    delta = (b[0] - a[0], b[1] - a[1])
    return DIRECTION_OFFSETS.index(delta) if delta in DIRECTION_OFFSETS else -1


@dataclass(frozen=True)
class ActionTable:
    """The action id layout for one board side ``n`` (see the module docstring).

    ``kind``, ``cell_a``, ``cell_b`` and ``colour`` are parallel arrays indexed
    by action id and are what the numba kernels read; ``pair_of`` maps two
    neighbouring cell indices to their pair index (-1 otherwise).
    """

    n: int
    kind: np.ndarray
    cell_a: np.ndarray
    cell_b: np.ndarray
    colour: np.ndarray
    pair_of: np.ndarray
    num_pairs: int

    @property
    def num_actions(self) -> int:
        return int(self.kind.shape[0])

    @property
    def noop(self) -> int:
        return self.num_actions - 1

    @property
    def large_offset(self) -> int:
        return 5 * self.n * self.n

    @property
    def remove_offset(self) -> int:
        return self.large_offset + 5 * self.num_pairs

    def small_action(self, cell: int, colour: int) -> int:
        return cell * 5 + colour

    def large_action(self, cell_a: int, cell_b: int, colour: int) -> int:
        pair = int(self.pair_of[cell_a, cell_b])
        if pair < 0:
            raise ValueError(f"span_to: cells {cell_a} and {cell_b} are not orthogonal neighbours")
        return self.large_offset + pair * 5 + colour

    def remove_action(self, cell: int) -> int:
        return self.remove_offset + cell


@functools.lru_cache(maxsize=None)
def action_table(n: int = DEFAULT_N) -> ActionTable:
    """The (cached) action table for side ``n``."""
    check_size(n, DEFAULT_HEIGHT)
    cells = n * n
    pairs: list[tuple[int, int]] = []
    for i in range(n):
        for j in range(n):
            k = i * n + j
            if j + 1 < n:
                pairs.append((k, k + 1))
            if i + 1 < n:
                pairs.append((k, k + n))
    total = 5 * cells + 5 * len(pairs) + cells + 1
    kind = np.empty(total, np.int8)
    cell_a = np.full(total, -1, np.int16)
    cell_b = np.full(total, -1, np.int16)
    colour = np.full(total, -1, np.int8)
    pair_of = np.full((cells, cells), -1, np.int16)
    idx = 0
    for k in range(cells):
        for c in range(5):
            kind[idx], cell_a[idx], colour[idx] = KIND_SMALL, k, c
            idx += 1
    for p, (a, b) in enumerate(pairs):
        pair_of[a, b] = pair_of[b, a] = p
        for c in range(5):
            kind[idx], cell_a[idx], cell_b[idx], colour[idx] = KIND_LARGE, a, b, c
            idx += 1
    for k in range(cells):
        kind[idx], cell_a[idx] = KIND_REMOVE, k
        idx += 1
    kind[idx] = KIND_NOOP
    for array in (kind, cell_a, cell_b, colour, pair_of):
        array.flags.writeable = False
    return ActionTable(n, kind, cell_a, cell_b, colour, pair_of, len(pairs))


def check_size(n: object, height: object) -> None:
    """Validate a board side and height, naming the bad field."""
    if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or not MIN_N <= n <= MAX_N:
        raise ValueError(f"n: board side must be an int in {MIN_N}..{MAX_N}, got {n!r}")
    if (
        not isinstance(height, (int, np.integer))
        or isinstance(height, bool)
        or not MIN_HEIGHT <= height <= MAX_HEIGHT
    ):
        raise ValueError(
            f"height: board height must be an int in {MIN_HEIGHT}..{MAX_HEIGHT}, got {height!r}"
        )


VALUE_TO_CODE_INDEX = np.array(
    [-1] + [2 * c for c in range(5)] + [2 * ((v - 6) // 4) + 1 for v in range(6, 26)], np.int8
)
VALUE_TO_CODE_INDEX.flags.writeable = False
