"""``Structure`` and ``Move`` as values: equality, hashing, immutability, text and JSON forms."""

from __future__ import annotations

import json

import numpy as np
import pytest

from craft_env import Move, Structure, generate_structure

DRAWN = """
layer 0
  gl  bl==bl
  ||
  gl  ..  os
  ..  ..  ..
"""


def built_by_moves() -> Structure:
    board = Structure.empty()
    for move in (
        Move.place("gl", (1, 0), (0, 0)),
        Move.place("bl", (0, 2), (0, 1)),
        Move.place("os", (1, 2)),
        Move.place("rs", (2, 2)),
        Move.remove((2, 2)),
    ):
        board = board.apply(move)
    return board


def test_structure_equality_and_hash():
    """The same board reached three ways is one value; labels do not count."""
    drawn = Structure.from_ascii(DRAWN)
    moved = built_by_moves()
    loaded = Structure.from_dict(
        {"id": "x", "complexity": "simple",
         "structure": {"(0,0)": ["gl"], "(0,1)": ["bl"], "(0,2)": ["bl"], "(1,0)": ["gl"], "(1,2)": ["os"]},
         "spans": {"0": [["(0,1)", "(0,2)"], ["(0,0)", "(1,0)"]]}}
    )
    assert drawn == moved == loaded
    assert hash(drawn) == hash(moved) == hash(loaded)
    assert len({drawn, moved, loaded}) == 1
    assert {drawn: 1}[loaded] == 1
    assert drawn != Structure.empty()
    assert Structure.empty(3, 3) != Structure.empty(3, 4)
    assert Structure.empty(2, 3) != Structure.empty(3, 3)
    assert drawn != "a structure" and drawn != None  # noqa: E711


def test_structure_is_immutable():
    board = built_by_moves()
    assert not board.array.flags.writeable
    with pytest.raises(ValueError):
        board.array[0, 0] = 1
    source = np.zeros((9, 3), np.int8)
    wrapped = Structure.from_array(source)
    source[0, 0] = 1
    assert wrapped.is_empty()
    before = board.array.copy()
    board.apply(Move.place("ys", (2, 0)))
    board.apply_action(0)
    assert np.array_equal(board.array, before)
    assert generate_structure(1).array.flags.writeable is False
    assert Structure.empty().array.flags.writeable is False


def test_structure_queries():
    board = Structure.from_ascii(DRAWN)
    assert board.stack(0, 0) == ["gl"] and board.stack(2, 2) == []
    assert board.partner(0, 0, 0) == (1, 0) and board.partner(0, 2, 0) == (0, 1)
    assert board.partner(1, 2, 0) is None and board.partner(2, 2, 0) is None
    assert board.num_entries == 5 and board.num_blocks == 3
    assert board.heights().tolist() == [[1, 1, 1], [1, 0, 1], [0, 0, 0]]
    assert board.heights().dtype == np.int8
    assert "blocks=3" in repr(board)


def test_ascii_round_trip():
    assert str(Structure.from_ascii(DRAWN)) == "\n".join(line[0:] for line in DRAWN.strip().splitlines())
    for n in range(2, 7):
        for height in range(1, 6):
            for seed in range(4):
                structure = generate_structure(seed, n, height)
                assert Structure.from_ascii(str(structure), height=height) == structure
            empty = Structure.empty(n, height)
            assert Structure.from_ascii(str(empty), height=height) == empty


def test_dict_round_trip_for_every_size():
    for n in range(2, 7):
        for height in range(1, 6):
            structure = generate_structure(n * 10 + height, n, height, id=f"s{n}{height}")
            data = json.loads(json.dumps(structure.to_dict()))
            assert data["metadata"]["n"] == n and data["metadata"]["height"] == height
            again = Structure.from_dict(data)
            assert again == structure
            assert (again.id, again.complexity) == (structure.id, structure.complexity)
            assert Structure.from_dict(structure.to_dict(views=False)) == structure
            assert "director_views" not in structure.to_dict(views=False)


def test_sparse_paper_entry_is_a_default_board():
    board = Structure.from_dict({"structure": {"(0,0)": ["gs"]}})
    assert (board.n, board.height) == (3, 3)
    wide = Structure.from_dict({"structure": {"(4,0)": ["gs"]}})
    assert wide.n == 5
    small = Structure.from_dict({"structure": {"(0,0)": ["gs"]}, "metadata": {"n": 2, "height": 1}})
    assert (small.n, small.height) == (2, 1)


# ------------------------------------------------------------------- moves


def test_move_equality_with_halves_swapped():
    a = Move.place("gl", (1, 1), (1, 2))
    b = Move.place("gl", "(1,2)", [1, 1])
    assert a == b and hash(a) == hash(b)
    assert a.cells == b.cells == ((1, 1), (1, 2))
    assert a.to_action() == b.to_action()
    assert a != Move.place("bl", (1, 1), (1, 2))
    assert a != Move.place("gl", (1, 1), (0, 1))
    assert Move.remove((1, 1)) != Move.place("gs", (1, 1))
    assert Move.remove((1, 1), block="gs") == Move.remove((1, 1))


def test_move_layer_claims():
    bare = Move.place("gs", (0, 0))
    assert bare == bare.with_layer(0) and bare == bare.with_layer(2)
    assert bare.with_layer(0) != bare.with_layer(1)
    assert hash(bare.with_layer(0)) == hash(bare.with_layer(1))
    assert bare.with_layer(1).layer == 1 and bare.layer is None


def test_move_is_immutable():
    move = Move.place("gs", (0, 0))
    with pytest.raises(AttributeError):
        move.layer = 1
    with pytest.raises(AttributeError):
        move.block = "bs"


def test_move_text():
    assert str(Move.place("gl", (1, 1), (1, 2), layer=0)) == "place gl (1,1)-(1,2) L0"
    assert str(Move.place("gl", (1, 2), (1, 1))) == "place gl (1,2)-(1,1)"
    assert str(Move.place("ys", (0, 2), layer=2)) == "place ys (0,2) L2"
    assert str(Move.remove((0, 2), layer=2)) == "remove (0,2) L2"
    assert str(Move.remove((0, 2), block="ys")) == "remove ys (0,2)"
    assert str(Move.noop()) == "noop"
    assert repr(Move.remove((1, 0))) == "Move('remove (1,0)')"


def test_move_paper_log_format():
    place = {"action": "place", "block": "gl", "position": "(1,1)", "layer": 0, "span_to": "(1,2)"}
    remove = {"action": "remove", "position": "(0,2)", "layer": 2, "span_to": None}
    assert Move.from_dict(place) == Move.place("gl", (1, 1), (1, 2), layer=0)
    assert Move.from_dict(place).to_dict() == place
    assert Move.from_dict(remove).to_dict() == remove
    assert Move.from_dict(remove).layer == 2
    assert Move.noop().to_dict() == {"action": "noop"}
    assert Move.from_dict(Move.noop().to_dict()) == Move.noop()


def test_structure_attributes_cannot_be_reassigned():
    structure = generate_structure(1)
    with pytest.raises(AttributeError):
        structure.n = 4
    with pytest.raises(AttributeError):
        structure.id = "other"
