"""Seats and the directors' wall projections (``docs/rules.md#directors-views``): the observer.

A seat sees the outer wall of cells on its side, every layer, listed left to
right *from that seat*:

====  ==========  ===================================  =====================
seat  side        wall                                 left to right (n=3)
====  ==========  ===================================  =====================
D0    near side   row ``i = n-1`` (beside the builder, (2,0) (2,1) (2,2)
      (optional)  facing the board as the builder does)
D1    builder's   column ``j = 0``                     (0,0) (1,0) (2,0)
      left
D2    far side    row ``i = 0``                        (0,2) (0,1) (0,0)
D3    builder's   column ``j = n-1``                   (2,2) (1,2) (0,2)
      right
====  ==========  ===================================  =====================

Left to right is each seat's own: a seat faces the middle of the board, so
D1 (facing the builder's right) has the far side on its left, D2 (facing the
builder) has the builder's right on its left, D3 has the near side on its
left, and D0, facing the board like the builder, shares the builder's left
(column ``j = 0``). A game seats any non-empty subset of these four
(``seats``, default ``DEFAULT_SEATS``; ``check_seats``); seat ``Dk`` is the
agent ``director_k`` (``agent_name``).

A large block shows ``size`` 2 only when its other half is on the same wall;
otherwise it looks small (size 1): the paper's deliberate ambiguity.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from numba import njit

from craft_env.core.encoding import COLOUR_NAMES
from craft_env.core.rules import partner_cell

DEFAULT_SEATS = ("D1", "D2", "D3")
ALL_SEATS = ("D0", "D1", "D2", "D3")
SEAT_SIDES = {"D0": "near", "D1": "left", "D2": "far", "D3": "right"}


def check_seats(seats: Any) -> tuple[str, ...]:
    """``seats`` as a tuple of seat names, or a ``ValueError`` naming the field and the value.

    Any non-empty subset of ``ALL_SEATS`` without repeats, in the order
    given: that order is the seat index order of the game kernels (speaking
    order is still drawn per turn).
    """
    if isinstance(seats, (set, frozenset, dict)):  # no stable order: the seat indices would vary by process
        raise ValueError(f"seats: expected an ordered sequence such as ('D1', 'D3'), got {seats!r}")
    try:
        names = tuple(s.strip() for s in seats.split(",")) if isinstance(seats, str) else tuple(seats)
    except TypeError:
        names = None
    if not names:
        raise ValueError(f"seats: expected a non-empty subset of {', '.join(ALL_SEATS)}, got {seats!r}")
    unknown = [s for s in names if s not in ALL_SEATS]
    if unknown:
        raise ValueError(
            f"seats: unknown seat {unknown[0]!r} in {seats!r}; expected seats among {', '.join(ALL_SEATS)}"
        )
    if len(set(names)) != len(names):
        raise ValueError(f"seats: each seat may appear once, got {seats!r}")
    return names


def agent_name(seat: str) -> str:
    """The PettingZoo agent of ``seat``: ``Dk`` is ``director_k``."""
    return f"director_{seat[1:]}"


#: The envs' agent names: the builder, and the directors of the default seats.
BUILDER = "builder"
DIRECTORS = tuple(agent_name(seat) for seat in DEFAULT_SEATS)


def seat_cells(seat: str, n: int) -> list[tuple[int, int]]:
    """The cells on ``seat``'s wall, left to right from that seat."""
    if seat == "D0":
        return [(n - 1, j) for j in range(n)]
    if seat == "D1":
        return [(i, 0) for i in range(n)]
    if seat == "D2":
        return [(0, j) for j in range(n - 1, -1, -1)]
    if seat == "D3":
        return [(i, n - 1) for i in range(n - 1, -1, -1)]
    raise ValueError(f"seat: unknown seat {seat!r}; expected one of {', '.join(ALL_SEATS)}")


def seat_cell_indices(seat: str, n: int) -> np.ndarray:
    """``seat_cells`` as flat cell indices (int16)."""
    return np.array([i * n + j for i, j in seat_cells(seat, n)], np.int16)


def hidden_cells(n: int, seats: Sequence[str] = DEFAULT_SEATS) -> list[tuple[int, int]]:
    """Cells that no director in ``seats`` sees (``(1,1)`` and ``(2,1)`` by default)."""
    seen = {cell for seat in seats for cell in seat_cells(seat, n)}
    return [(i, j) for i in range(n) for j in range(n) if (i, j) not in seen]


def visible_part(cells: np.ndarray, n: int, seats: Sequence[str] = DEFAULT_SEATS) -> np.ndarray:
    """The board of what the directors at ``seats`` show together, guessing nothing (a new int8 array).

    Every block on a seen cell stays; the hidden cells (``hidden_cells``)
    are left empty; a large block stays large only when one wall shows it
    whole, and otherwise each of its halves on a seen cell becomes a small
    block of its colour (how every wall that sees it shows it). It is what
    a builder would build if the three walls were described to it exactly
    and it filled no gap, so its score against the target is the part of the
    game that speech alone can reach (``docs/rl.md``). Always a reachable
    board: a seen cell's blocks stand on the same cell's, which stay.
    """
    walls = [set(seat_cell_indices(seat, n).tolist()) for seat in check_seats(seats)]
    seen = set().union(*walls)
    out = np.zeros_like(cells, dtype=np.int8)
    for cell in seen:
        for level in range(cells.shape[1]):
            value = int(cells[cell, level])
            if value >= 6:
                partner = int(partner_cell.py_func(n, cell, value))
                if not any(cell in wall and partner in wall for wall in walls):
                    value = 1 + (value - 6) // 4
            out[cell, level] = value
    return out


@njit(cache=True, inline="always")
def wall_slot(wall, cell):
    """The slot of ``cell`` on ``wall`` (-1 when it is not on the wall)."""
    for s in range(wall.shape[0]):
        if wall[s] == cell:
            return s
    return -1


@njit(cache=True, inline="always")
def view_code(cells, n, wall, slot, level):
    """What a person at the seat with cells ``wall`` sees at ``(slot, level)``.

    0 is empty, else ``1 + 2 * colour + wide``: 11 values, what a director
    can tell apart by looking; ``wide`` is 1 when the block is large and its
    other half is on the same wall.
    """
    cell = wall[slot]
    value = cells[cell, level]
    if value == 0:
        return 0
    if value < 6:
        return 1 + 2 * (value - 1)
    wide = 1 if wall_slot(wall, partner_cell(n, cell, value)) >= 0 else 0
    return 1 + 2 * ((value - 6) // 4) + wide


def interpreted(kernel: Any, *called: Any) -> Any:
    """``kernel``'s own Python function, run by the interpreter, calling the kernels ``called`` the same way.

    The rule stays in one place (the kernel's source) while code that runs
    it a few times, such as a dataset's digest (``datasets.structures_sha256``)
    or a seat's view, loads no compiled kernel: a fresh process pays for
    loading numba's caches only when a game needs them.
    """
    names = dict(kernel.py_func.__globals__)
    names.update({function.py_func.__name__: function.py_func for function in called})
    function = kernel.py_func
    return type(function)(function.__code__, names, function.__name__, function.__defaults__, function.__closure__)


_VIEW_CODE = interpreted(view_code, wall_slot, partner_cell)


def seat_view(structure: Any, seat: str) -> dict[str, list[dict[str, Any]]]:
    """One seat's view in the paper's format: ``{"row_k": [{"color", "size"}, ...]}``, ``row_k`` = layer k.

    The codes are ``view_code``'s, interpreted (``interpreted``): a view is
    made a few times per game, and hashing a dataset makes three per structure.
    """
    n = structure.n
    wall = seat_cell_indices(seat, n)
    cells = structure.array
    codes = [[_VIEW_CODE(cells, n, wall, slot, level) for level in range(structure.height)]
             for slot in range(len(wall))]
    view: dict[str, list[dict[str, Any]]] = {}
    for level in range(structure.height):
        row = []
        for slot in range(len(wall)):
            code = int(codes[slot][level])
            if code == 0:
                row.append({"color": None, "size": 0})
            else:
                row.append({"color": COLOUR_NAMES[(code - 1) // 2], "size": 1 + (code - 1) % 2})
        view[f"row_{level}"] = row
    return view


def director_views(structure: Any, seats: Sequence[str] = DEFAULT_SEATS) -> dict[str, dict]:
    """Every seat's view of ``structure``, keyed by seat name."""
    return {seat: seat_view(structure, seat) for seat in seats}
