"""Directors' views (docs/rules.md#directors-views) on hand-drawn boards.

Each view is written below as one line per layer, bottom first, in the
seat's own left-to-right order: a token is the colour's initial and the
apparent size (``g1`` a green block that looks small, ``r2`` one half of a
red domino lying along the wall), ``--`` an empty slot.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from craft_env import Structure, generate_structure
from craft_env.core.views import (
    ALL_SEATS,
    DEFAULT_SEATS,
    director_views,
    hidden_cells,
    seat_cells,
    seat_view,
    visible_part,
)

BOARD_3 = Structure.from_ascii(
    """
    layer 0
      gs  bs  rs
      ol==ol  os
      gl==gl  bs
    layer 1
      yl==yl  ..
      rl  ..  bl
      ||      ||
      rl  ..  bl
    layer 2
      bs  ..  ..
      ..  ..  ..
      ..  ..  ..
    """
)

EXPECTED_3 = {
    # D1, builder's left, column 0 from the far row to the near row. (1,0)'s
    # orange domino runs into the hidden (1,1) and (2,0)'s green one into
    # (2,1): both look small. The red domino lies along the wall: size 2.
    "D1": ["g1 o1 g1", "y1 r2 r2", "b1 -- --"],
    # D2, far side, row 0 from right to left as the builder sees it. The
    # yellow domino (0,0)-(0,1) lies along this wall.
    "D2": ["r1 b1 g1", "-- y2 y2", "-- -- b1"],
    # D3, builder's right, column 2 from the near row to the far row.
    "D3": ["b1 o1 r1", "b2 b2 --", "-- -- --"],
    # D0, the optional near seat, row 2 from left to right.
    "D0": ["g2 g2 b1", "r1 -- b1", "-- -- --"],
}

BOARD_4 = Structure.from_ascii(
    """
    layer 0
      gs  bs  rs  ys
      os  ..  ..  gl
                  ||
      bl  ..  ..  gl
      ||
      bl  rl==rl  os
    """,
    height=2,
)

EXPECTED_4 = {
    "D1": ["g1 o1 b2 b2", "-- -- -- --"],
    "D2": ["y1 r1 b1 g1", "-- -- -- --"],
    "D3": ["o1 g2 g2 y1", "-- -- -- --"],
    "D0": ["b1 r2 r2 o1", "-- -- -- --"],
}


def tokens(view: dict) -> list[str]:
    rows = []
    for level in range(len(view)):
        slots = view[f"row_{level}"]
        rows.append(" ".join("--" if s["color"] is None else f"{s['color'][0]}{s['size']}" for s in slots))
    return rows


@pytest.mark.parametrize("seat", ALL_SEATS)
def test_each_seat_on_a_3x3_board(seat):
    assert tokens(seat_view(BOARD_3, seat)) == EXPECTED_3[seat]


@pytest.mark.parametrize("seat", ALL_SEATS)
def test_each_seat_on_a_4x4_board(seat):
    assert tokens(seat_view(BOARD_4, seat)) == EXPECTED_4[seat]


def test_seat_geometry():
    assert seat_cells("D1", 3) == [(0, 0), (1, 0), (2, 0)]
    assert seat_cells("D2", 3) == [(0, 2), (0, 1), (0, 0)]
    assert seat_cells("D3", 3) == [(2, 2), (1, 2), (0, 2)]
    assert seat_cells("D0", 3) == [(2, 0), (2, 1), (2, 2)]
    assert seat_cells("D3", 4) == [(3, 3), (2, 3), (1, 3), (0, 3)]
    assert hidden_cells(3) == [(1, 1), (2, 1)]
    assert hidden_cells(3, ALL_SEATS) == [(1, 1)]
    assert hidden_cells(4) == [(1, 1), (1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]
    with pytest.raises(ValueError, match="seat.*'D9'"):
        seat_cells("D9", 3)


def test_view_format():
    views = director_views(BOARD_3)
    assert tuple(views) == DEFAULT_SEATS == ("D1", "D2", "D3")
    assert views["D1"]["row_0"][0] == {"color": "green", "size": 1}
    assert views["D2"]["row_1"][1] == {"color": "yellow", "size": 2}
    assert views["D3"]["row_2"][0] == {"color": None, "size": 0}
    assert list(views["D1"]) == ["row_0", "row_1", "row_2"]
    assert tuple(director_views(BOARD_3, ALL_SEATS)) == ALL_SEATS
    assert BOARD_3.to_dict()["director_views"] == views
    empty = director_views(Structure.empty(2, 1))
    assert all(tokens(v) == ["-- --"] for v in empty.values())


def test_hidden_cells_never_show():
    """Boards that differ only at (1,1) and (2,1) look the same to D1, D2, D3; D0 sees (2,1)."""
    plain = Structure.from_ascii(
        """
        layer 0
          gs  bs  rs
          ys  gs  os
          bs  rs  gs
        """
    )
    domino = Structure.from_ascii(
        """
        layer 0
          gs  bs  rs
          ys  ol  os
              ||
          bs  ol  gs
        """
    )
    assert director_views(plain) == director_views(domino)
    assert tokens(seat_view(plain, "D0")) == ["b1 r1 g1", "-- -- --", "-- -- --"]
    assert tokens(seat_view(domino, "D0")) == ["b1 o1 g1", "-- -- --", "-- -- --"]


@pytest.mark.parametrize("n", range(2, 7))
def test_wide_blocks_come_in_adjacent_pairs(n):
    for seed in range(30):
        structure = generate_structure(seed, n, 3)
        for seat, view in director_views(structure, ALL_SEATS).items():
            for row in view.values():
                assert len(row) == n
                for k, slot in enumerate(row):
                    if slot["size"] == 2:
                        around = [row[x] for x in (k - 1, k + 1) if 0 <= x < n]
                        assert any(o == slot for o in around), (seat, row)


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 5),
       seats=st.sets(st.sampled_from(ALL_SEATS), min_size=1).map(sorted))
@settings(max_examples=60, deadline=None)
def test_the_visible_part_looks_the_same_to_every_seat_and_guesses_nothing(seed, n, seats):
    """``visible_part`` (the reference board of perfect speech, ``docs/rl.md``): a reachable board that
    every seated director sees exactly as it sees the target, with nothing on the hidden cells, no block the
    walls do not show, and a large block only where one wall shows it whole."""
    target = generate_structure(seed, n, 3)
    shown = Structure(visible_part(target.array, n, seats), n)  # validates: a reachable board
    assert director_views(shown, seats) == director_views(target, seats)
    for i, j in hidden_cells(n, seats):
        assert not shown.array[i * n + j].any()
    assert np.count_nonzero(shown.array) <= np.count_nonzero(target.array)
    assert np.array_equal(visible_part(shown.array, n, seats), shown.array)


def test_the_visible_part_of_the_hand_drawn_board():
    """BOARD_3's dominoes into the hidden cells (layer 0) become small blocks on their seen halves; the red
    one along D1's wall and the yellow one along D2's (layer 1) stay large; (1,1) and (2,1) empty."""
    shown = visible_part(BOARD_3.array, 3)
    ground = Structure.from_ascii(
        """
        layer 0
          gs  bs  rs
          os  ..  os
          gs  ..  bs
        """
    )
    np.testing.assert_array_equal(shown[:, 0], ground.array[:, 0])
    np.testing.assert_array_equal(shown[:, 1:], BOARD_3.array[:, 1:])
