"""Bad input is a ``ValueError`` that names the field and the value; the action table's layout."""

from __future__ import annotations

import numpy as np
import pytest

from craft_env import IllegalMoveError, Move, Structure
from craft_env.core.encoding import BLOCK_CODES, action_table
from craft_env.core.moves import action_to_move


def entry(structure: dict, spans: dict | None = None) -> dict:
    return {"structure": structure, "spans": spans or {}}


def raises(match: str):
    return pytest.raises(ValueError, match=match)


# --------------------------------------------------------- structure input


def test_unknown_block_code():
    with raises(r"structure \(0,0\) layer 1.*'xs'"):
        Structure.from_dict(entry({"(0,0)": ["gs", "xs"]}))
    with raises(r"structure.*\(0,0\).*layer 0.*'GS'"):
        Structure.from_dict(entry({"(0,0)": ["GS"]}))
    with raises(r"block.*'zz'"):
        Move.place("zz", (0, 0))
    with raises(r"block.*'gq'"):
        Move.from_dict({"action": "place", "block": "gq", "position": "(0,0)"})
    with raises(r"block.*'pl'"):
        Move.remove((0, 0), block="pl")


def test_non_adjacent_span():
    with raises(r"spans.*\(0,0\).*\(1,1\).*layer 0.*orthogonal neighbours"):
        Structure.from_dict(entry({"(0,0)": ["gl"], "(1,1)": ["gl"]}, {"0": [["(0,0)", "(1,1)"]]}))
    with raises(r"span_to.*\(1,1\).*\(0,0\)"):
        Move.place("gl", (0, 0), (1, 1))
    with raises(r"span_to.*\(0,0\)"):
        Move.place("gl", (0, 0), (0, 0))


def test_span_halves_of_different_colours():
    with raises(r"spans.*'gl'.*'bl'"):
        Structure.from_dict(entry({"(0,0)": ["gl"], "(0,1)": ["bl"]}, {"0": [["(0,0)", "(0,1)"]]}))


def test_span_must_name_large_blocks_on_its_layer():
    with raises(r"spans.*\(0,1\).*no large block on that layer"):
        Structure.from_dict(entry({"(0,0)": ["gl"], "(0,1)": ["gs"]}, {"0": [["(0,0)", "(0,1)"]]}))
    with raises(r"spans.*\(0,1\).*no large block"):
        Structure.from_dict(entry({"(0,0)": ["gs", "gl"], "(0,1)": ["gl"]}, {"1": [["(0,0)", "(0,1)"]]}))
    with raises(r"spans.*two spans"):
        Structure.from_dict(
            entry(
                {"(0,0)": ["gl"], "(0,1)": ["gl"], "(0,2)": ["gl"]},
                {"0": [["(0,0)", "(0,1)"], ["(0,1)", "(0,2)"]]},
            )
        )
    with raises(r"spans.*'x'"):
        Structure.from_dict(entry({"(0,0)": ["gs"]}, {"x": []}))
    with raises(r"spans.*'7'.*outside"):
        Structure.from_dict(entry({"(0,0)": ["gs"]}, {"7": []}))
    with raises(r"spans.*pair.*\['\(0,0\)'\]"):
        Structure.from_dict(entry({"(0,0)": ["gl"]}, {"0": [["(0,0)"]]}))


def test_large_block_without_partner():
    with raises(r"spans.*'gl'.*\(0,0\).*layer 0.*no partner"):
        Structure.from_dict(entry({"(0,0)": ["gl"]}))
    with raises(r"span_to.*'rl'"):
        Move.place("rl", (0, 0))
    with raises(r"span_to.*'rs'"):
        Move.place("rs", (0, 0), (0, 1))
    with raises(r"structure.*\(0,1\) layer 0.*no matching other half"):
        cells = np.zeros((9, 3), np.int8)
        cells[1, 0] = 6 + 3  # green half whose partner should be to the right
        Structure.from_array(cells)


def test_stack_taller_than_height():
    with raises(r"structure.*\(0,0\).*4 blocks.*height 3"):
        Structure.from_dict(entry({"(0,0)": ["gs", "gs", "bs", "rs"]}))
    with raises(r"structure.*\(1,1\).*2 blocks.*height 1"):
        Structure.from_dict(entry({"(1,1)": ["gs", "gs"]}), height=1)


def test_floating_blocks_are_rejected():
    cells = np.zeros((9, 3), np.int8)
    cells[4, 1] = 1
    with raises(r"structure.*\(1,1\) layer 1.*floats"):
        Structure.from_array(cells)
    with raises(r"structure.*invalid cell value 26 at \(0,0\) layer 0"):
        cells = np.zeros((9, 3), np.int8)
        cells[0, 0] = 26
        Structure.from_array(cells)


@pytest.mark.parametrize("bad", ["(a,b)", "1-2", "(1,2,3)", "", "((1,2))x"])
def test_bad_position_strings(bad):
    with raises(rf"structure.*{pytest_escape(bad)}"):
        Structure.from_dict(entry({bad: ["gs"]}))
    with raises(rf"position.*{pytest_escape(bad)}"):
        Move.place("gs", bad)
    with raises(rf"span_to.*{pytest_escape(bad)}"):
        Move.place("gl", (0, 0), bad)
    with raises(rf"position.*{pytest_escape(bad)}"):
        Move.from_dict({"action": "remove", "position": bad})
    with raises(rf"spans.*{pytest_escape(bad)}"):
        Structure.from_dict(entry({"(0,0)": ["gl"], "(0,1)": ["gl"]}, {"0": [["(0,0)", bad]]}))


def pytest_escape(text: str) -> str:
    import re

    return re.escape(repr(text))


def test_positions_of_the_wrong_type():
    for bad in (None, 3, (1,), (1, 2, 3), ("1", "2"), (True, 0), 1.5):
        with raises(r"position.*bad position"):
            Move.place("gs", bad)


def test_out_of_board_positions():
    with raises(r"structure.*\(3,0\).*outside the 3x3 board"):
        Structure.from_dict(entry({"(3,0)": ["gs"]}), n=3)
    with raises(r"spans.*'\(0,3\)'.*outside the board on a 3x3 board"):
        Structure.from_dict(entry({"(0,2)": ["gl"]}, {"0": [["(0,2)", "(0,3)"]]}), n=3)
    with raises(r"position.*'\(-1,0\)'.*outside the board"):
        Move.place("gs", "(-1,0)")
    with raises(r"position.*\(-1, 0\).*outside"):
        Move.remove((-1, 0))
    board = Structure.empty()
    reason = board.check(Move.place("gs", (3, 0)))
    assert "position" in reason and "(3,0)" in reason and "outside the 3x3 board" in reason
    reason = board.check(Move.place("gl", (2, 2), (2, 3)))
    assert "span_to" in reason and "(2,3)" in reason
    with pytest.raises(IllegalMoveError, match=r"\(0,5\)") as raised:
        board.apply(Move.remove((0, 5)))
    assert "outside" in raised.value.reason
    with raises(r"position.*\(4,4\).*outside the 3x3 board"):
        Move.place("gs", (4, 4)).to_action(3)
    assert Move.place("gs", (4, 4)).to_action(5) == (4 * 5 + 4) * 5


def test_wrong_layer_in_a_move():
    board = Structure.from_ascii("layer 0\n  gs  ..  ..\n  ..  ..  ..\n  ..  ..  ..")
    with pytest.raises(IllegalMoveError) as raised:
        board.apply(Move.place("bs", (0, 0), layer=0))
    assert raised.value.reason.startswith("wrong layer")
    assert "layer 1" in raised.value.reason and "not layer 0" in raised.value.reason
    assert isinstance(raised.value, ValueError)
    with pytest.raises(IllegalMoveError, match="wrong layer"):
        board.apply(Move.remove((0, 0), layer=2))
    with pytest.raises(IllegalMoveError, match="wrong layer"):
        board.apply(Move.place("rl", (1, 1), (2, 1), layer=1))
    with pytest.raises(IllegalMoveError, match="wrong layer"):
        board.apply(Move.from_dict({"action": "place", "block": "ys", "position": "(2,2)", "layer": 3}))
    assert board.apply(Move.from_dict({"action": "remove", "position": "(0,0)", "layer": 0})).is_empty()


def test_bad_layer_values():
    for bad in (-1, "1", 1.0, True):
        with raises(rf"layer.*{pytest_escape(bad)}"):
            Move.place("gs", (0, 0), layer=bad)
        with raises(r"layer"):
            Move.from_dict({"action": "remove", "position": "(0,0)", "layer": bad})


def test_move_from_dict_with_a_bad_action():
    with raises(r"action.*'jump'"):
        Move.from_dict({"action": "jump", "position": "(0,0)"})
    with raises(r"action.*5"):
        Move.from_dict({"action": 5})
    with raises(r"action.*None"):
        Move.from_dict({"position": "(0,0)"})
    with raises(r"move.*\['place'\]"):
        Move.from_dict(["place"])
    with raises(r"block"):
        Move.from_dict({"action": "place", "position": "(0,0)"})
    for alias in ("noop", "pass", "clarify", "No-Op", " PASS "):
        assert Move.from_dict({"action": alias}) == Move.noop()


def test_bad_sizes():
    with raises(r"n:.*7"):
        Structure.empty(7, 3)
    with raises(r"n:.*1"):
        Structure.empty(1, 3)
    with raises(r"height:.*0"):
        Structure.empty(3, 0)
    with raises(r"height:.*6"):
        Structure.from_dict(entry({}), height=6)
    with raises(r"n:.*'3'"):
        Structure.empty("3", 3)
    with raises(r"cells.*shape"):
        Structure(np.zeros((8, 3), np.int8), 3)


def test_bad_ascii():
    with raises(r"ascii.*layer K"):
        Structure.from_ascii("  gs  ..\n  ..  ..")
    with raises(r"ascii: no 'layer K'"):
        Structure.from_ascii("")
    with raises(r"ascii.*layer 1 has 2 rows, expected 3"):
        Structure.from_ascii(
            "layer 0\n  gs  ..  ..\n  ..  ..  ..\n  ..  ..  ..\nlayer 1\n  ..  ..  ..\n  ..  ..  .."
        )
    with raises(r"ascii.*\(0,0\).*gap"):
        Structure.from_ascii("layer 1\n  gs  ..\n  ..  ..")


def test_structure_input_that_is_not_a_mapping():
    with raises(r"structure"):
        Structure.from_dict([])
    with raises(r"structure"):
        Structure.from_dict({"spans": {}})
    with raises(r"structure.*'\(0,0\)'.*'gs'"):
        Structure.from_dict(entry({"(0,0)": "gs"}))
    with raises(r"spans.*\[\['\(0,0\)', '\(0,1\)'\]\]"):
        Structure.from_dict({"structure": {}, "spans": [["(0,0)", "(0,1)"]]})


# ------------------------------------------------------------ action table


def test_action_table_for_the_default_board():
    table = action_table(3)
    assert table.num_actions == 115
    assert table.noop == 114
    kinds = np.bincount(table.kind, minlength=4).tolist()
    assert kinds == [45, 60, 9, 1]
    assert table.num_pairs == 12
    assert table.large_offset == 45 and table.remove_offset == 105
    assert action_to_move(114) == Move.noop()
    assert action_to_move(0) == Move.place("gs", (0, 0))
    assert action_to_move(44) == Move.place("os", (2, 2))
    assert action_to_move(45) == Move.place("gl", (0, 0), (0, 1))
    assert action_to_move(50) == Move.place("gl", (0, 0), (1, 0))
    assert action_to_move(105) == Move.remove((0, 0))
    assert action_to_move(113) == Move.remove((2, 2))


@pytest.mark.parametrize("n", range(2, 7))
def test_action_ids_round_trip(n):
    table = action_table(n)
    pairs = 2 * n * (n - 1)
    assert table.num_actions == 5 * n * n + 5 * pairs + n * n + 1
    seen = set()
    for action in range(table.num_actions):
        move = action_to_move(action, n)
        assert move.to_action(n) == action
        assert Move.from_dict(move.to_dict()) == move
        with_layer = action_to_move(action, n, layer=2)
        assert with_layer.to_action(n) == action
        if move.action != "noop":
            assert with_layer.layer == 2 and Move.from_dict(with_layer.to_dict()).layer == 2
        if move.is_large:
            swapped = Move.place(move.block, move.span_to, move.position)
            assert swapped.to_action(n) == action
        seen.add(move)
    assert len(seen) == table.num_actions
    for bad in (-1, table.num_actions, True):
        with raises(rf"action.*{bad!r}"):
            action_to_move(bad, n)


def test_legal_mask_dtype_and_shape():
    for n in range(2, 7):
        for height in (1, 5):
            mask = Structure.empty(n, height).legal_mask()
            assert mask.dtype == np.int8
            assert mask.shape == (action_table(n).num_actions,)
            assert mask.sum() == 5 * n * n + 5 * 2 * n * (n - 1) + 1


def test_block_codes_order():
    assert BLOCK_CODES == ("gs", "gl", "bs", "bl", "rs", "rl", "ys", "yl", "os", "ol")
