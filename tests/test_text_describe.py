"""craft_env.text describe: board, wall views, candidates and conversation as prompt text."""

from __future__ import annotations

from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.core.views import seat_view
from craft_env.text import describe_board, describe_candidates, describe_conversation, describe_view

# Seen from above, far row at the top; "==" and "||" join the halves of a large block.
BOARD = Structure.from_ascii(
    """
    layer 0
      ys  ..  os
      bl  ..  ..
      ||
      bl  ..  ..
    layer 1
      ol  ..  ..
      ||
      ol  ..  ..
      ..  ..  ..
    layer 2
      gs  ..  ..
      ..  ..  ..
      ..  ..  ..
    """
)


def test_describe_board_lists_every_stack_bottom_first():
    assert describe_board(BOARD) == "\n".join(
        [
            "(0,0): L0 ys, L1 ol (spans to (1,0)), L2 gs",
            "(0,1): empty",
            "(0,2): L0 os",
            "(1,0): L0 bl (spans to (2,0)), L1 ol (spans to (0,0))",
            "(1,1): empty",
            "(1,2): empty",
            "(2,0): L0 bl (spans to (1,0))",
            "(2,1): empty",
            "(2,2): empty",
        ]
    )


def test_describe_board_empty_and_deterministic():
    empty = Structure.empty(2, 1)
    assert describe_board(empty) == "(0,0): empty\n(0,1): empty\n(1,0): empty\n(1,1): empty"
    assert describe_board(BOARD) == describe_board(Structure.from_ascii(str(BOARD)))


def test_describe_view_top_layer_first_in_the_seats_words():
    text = describe_view(seat_view(BOARD, "D1"), "D1")
    assert text.splitlines() == [
        "D1's wall, left to right from D1's seat: left (0,0), middle (1,0), right (2,0). Top layer first:",
        "top layer (L2): left green (1 wide) | middle empty | right empty",
        "middle layer (L1): left+middle orange (large, 2 wide) | right empty",
        "bottom layer (L0): left yellow (1 wide) | middle+right blue (large, 2 wide)",
        "(1 wide: a small block, or a large block whose other half is not on this wall)",
    ]


def test_describe_view_end_on_large_block_looks_one_wide():
    # D2 sees (0,2), (0,1), (0,0): the orange domino at (0,0)-(1,0) points away from its wall.
    lines = describe_view(seat_view(BOARD, "D2"), "D2").splitlines()
    assert "left (0,2), middle (0,1), right (0,0)" in lines[0]
    assert lines[2] == "middle layer (L1): left empty | middle empty | right orange (1 wide)"
    assert lines[3] == "bottom layer (L0): left orange (1 wide) | middle empty | right yellow (1 wide)"


def test_describe_candidates_numbers_canonical_lines():
    moves = [Move.place("gs", (0, 0), layer=2), Move.place("rl", (1, 0), (2, 0), 2), Move.remove((0, 2), 0)]
    assert describe_candidates(moves) == (
        "1. place gs (0,0) L2\n2. place rl (1,0)-(2,0) L2\n3. remove (0,2) L0"
    )
    assert describe_candidates([]) == "(no candidate moves)"


def test_describe_conversation():
    messages = [
        ("D1", "put a small red block on my left column, bottom layer"),
        ("D2", "Nothing to add from me.\nReally."),
        {"speaker": "Builder", "text": "place rs (0,0) L0"},
    ]
    assert describe_conversation(messages) == (
        "D1: put a small red block on my left column, bottom layer\n"
        "D2: Nothing to add from me.\n"
        "    Really.\n"
        "Builder: place rs (0,0) L0"
    )
    assert describe_conversation([]) == "(no messages yet)"


def test_text_layer_depends_on_core_only():
    """``craft_env.text`` sits just above ``core`` (docs/architecture.md): no env, agent or model libraries."""
    import subprocess
    import sys

    code = (
        "import sys, craft_env.text; "
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pettingzoo', 'litellm', 'gymnasium') "
        "or m.startswith(('craft_env.envs', 'craft_env.agents', 'craft_env.eval'))]; "
        "print(','.join(bad))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
