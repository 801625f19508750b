"""craft_env.text moves: canonical lines, the forgiving move parser and builder replies."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from craft_env.core.encoding import BLOCK_CODES
from craft_env.core.moves import Move
from craft_env.text import ParsedBuilderReply, ParseError, format_move, parse_builder_reply, parse_move


def same(a: Move, b: Move) -> bool:
    """Equal moves *and* the same layer claim (``Move.__eq__`` lets a missing layer match any)."""
    return a == b and a.layer == b.layer and a.block == b.block


# ------------------------------------------------------------------ format_move


@pytest.mark.parametrize(
    "move, line",
    [
        (Move.place("gl", (1, 1), (1, 2), 0), "place gl (1,1)-(1,2) L0"),
        (Move.place("gs", (0, 0), layer=1), "place gs (0,0) L1"),
        (Move.remove((0, 2), 2), "remove (0,2) L2"),
        (Move.noop(), "noop"),
        (Move.place("bs", (2, 2)), "place bs (2,2)"),
    ],
)
def test_format_move_is_the_canonical_line(move, line):
    assert format_move(move) == line == str(move)


# ------------------------------------------------------------------ parse_move

GL_11_12_L0 = Move.place("gl", (1, 1), (1, 2), 0)

PARSE_CASES = [
    ("place gl (1,1)-(1,2) L0", GL_11_12_L0),
    ("PLACE GL (1, 1)-(1,2) layer 0", GL_11_12_L0),
    ("place large green at (1,1) spanning (1,2) on layer 0", GL_11_12_L0),
    ("Place a big green domino on (1,1) and (1,2), layer: 0", GL_11_12_L0),
    ("place gl [1,1] to [1,2] L0", GL_11_12_L0),
    ("place gl (1,2)-(1,1) L0", GL_11_12_L0),
    ("place large green at (1,1) to the right, layer 0", GL_11_12_L0),
    ("place gs at 0,0 L1", Move.place("gs", (0, 0), layer=1)),
    ("place gs (0,0) L1", Move.place("gs", (0, 0), layer=1)),
    ("place gs [0,0] l1", Move.place("gs", (0, 0), layer=1)),
    ("put a small red block at row 1 col 2", Move.place("rs", (1, 2))),
    ("place a red block at column 2, row 1, layer 0", Move.place("rs", (1, 2), layer=0)),
    ("place ys (i=2, j=0) on the ground", Move.place("ys", (2, 0), layer=0)),
    ("At (0,0), place a small green block.", Move.place("gs", (0, 0))),
    ('{"action":"place","block":"gl","position":"(1,1)","layer":0,"span_to":"(1,2)"}', GL_11_12_L0),
    (
        'Here you go:\n```json\n{"action": "place", "block": "gl", "position": "(1,1)", '
        '"layer": 0, "span_to": "(1,2)"}\n```\nHope that helps.',
        GL_11_12_L0,
    ),
    ('{"action": "remove", "position": "(0,2)", "layer": 2, "span_to": null}', Move.remove((0, 2), 2)),
    ("{'action': 'place', 'block': 'os', 'position': [2, 2], 'layer': '0'}",
     Move.place("os", (2, 2), layer=0)),
    ('{"move": {"action": "place", "color": "blue", "size": "small", "position": "1,1"}}',
     Move.place("bs", (1, 1))),
    ('{"action": "place", "block": "yl", "position": "(0,0)-(0,1)", "layer": 1}',
     Move.place("yl", (0, 0), (0, 1), 1)),
    ("remove (0,2) L2", Move.remove((0, 2), 2)),
    ("remove the block at (0,2)", Move.remove((0, 2))),
    ("Take the top block off (0,2), layer 2.", Move.remove((0, 2), 2)),
    ("remove os @(0,2) L0", Move.remove((0, 2), 0, "os")),
    ("get rid of the block at [1, 0]", Move.remove((1, 0))),
    ("noop", Move.noop()),
    ("pass", Move.noop()),
    ("clarify", Move.noop()),
    ("NO-OP", Move.noop()),
    ('{"action": "clarify", "question": "which layer?"}', Move.noop()),
    ("gs (0,0) L1", Move.place("gs", (0, 0), layer=1)),
    ("I'll take D2's advice and place ol (0,0)-(1,0) L1.", Move.place("ol", (0, 0), (1, 0), 1)),
    # Several moves written: the committed one, else the last (reasoning first, conclusion last).
    ("D1 says place rs (0,0) but D2 says place bs (0,1). Going with D2: place bs (0,1) L0.",
     Move.place("bs", (0, 1), layer=0)),
    ("I will place gs (0,0) L0, because D1 asked to place gs there and D3 asked to remove (0,2).",
     Move.place("gs", (0, 0), layer=0)),
    ("Rather than pass, I'll place gs (0,0)", Move.place("gs", (0, 0))),
]


@pytest.mark.parametrize("text, expected", PARSE_CASES)
def test_parse_move_variants(text, expected):
    assert same(parse_move(text), expected), text


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("place gs (3,1) L0", "(3,1)"),
        ("place gl (2,2)-(2,3)", "(2,3)"),
        ("remove (0,5)", "(0,5)"),
        ('{"action": "place", "block": "gs", "position": "(4,0)"}', "(4,0)"),
        ("place purple block at (0,0)", "purple"),
        ("place a medium red block at (0,0)", "medium"),
        ("place xs (0,0)", "xs"),
        ('{"action": "place", "block": "zz", "position": "(0,0)"}', "zz"),
        ("place gs (0,0) L7", "layer 7"),
        ("place gl (0,0)-(1,1)", "neighbour"),
        ("place gs (0,0)-(0,1)", "one cell"),
        ("place gl (0,0) L0", "both cells"),
        ('{"action": "jump", "position": "(0,0)"}', "action"),
        ("", "no move found"),
        ("hello there", "no move found"),
    ],
)
def test_parse_move_errors_name_the_problem(text, fragment):
    with pytest.raises(ParseError) as info:
        parse_move(text)
    assert fragment in info.value.reason
    assert info.value.text == text
    assert isinstance(info.value, ValueError)


def test_parse_move_respects_board_size():
    assert same(parse_move("place gs (3,3) L3", n=4, height=4), Move.place("gs", (3, 3), layer=3))
    with pytest.raises(ParseError, match="2x2"):
        parse_move("place gs (2,0)", n=2)


def test_parse_move_non_text_is_a_parse_error():
    with pytest.raises(ParseError):
        parse_move(None)  # type: ignore[arg-type]


# ------------------------------------------------------------------ builder replies

REPLY_CASES = [
    ("<move>place gs (0,0) L1</move>", Move.place("gs", (0, 0), layer=1), None, None),
    ("<MOVE> place GS (0, 0) layer 1 </MOVE>", Move.place("gs", (0, 0), layer=1), None, None),
    ("<move>place gs (0,0) L1", Move.place("gs", (0, 0), layer=1), None, None),
    ("I will follow D2.\nMOVE: place gl (1,1)-(1,2) L0\nFOLLOWED: D2", GL_11_12_L0, None, "D2"),
    ("**Move:** `place gs (0,0) L0`", Move.place("gs", (0, 0), layer=0), None, None),
    ("move: remove 0,2 L2\nfollowed: director_3", Move.remove((0, 2), 2), None, "D3"),
    (
        "Following D2's instruction, I'll place a large green block at (1,1) spanning (1,2) on layer 0.",
        GL_11_12_L0, None, "D2",
    ),
    (
        'Reasoning: D1 wants red here.\n```json\n{"action": "place", "block": "rs", "position": "(2,0)", '
        '"layer": 0, "span_to": null}\n```',
        Move.place("rs", (2, 0), layer=0), None, None,
    ),
    (
        "Move:\n```json\n{\"action\":\"place\",\"block\":\"ol\",\"position\":\"(0,0)\",\"layer\":1,"
        "\"span_to\":\"(1,0)\"}\n```",
        Move.place("ol", (0, 0), (1, 0), 1), None, None,
    ),
    ("{'action': 'remove', 'position': '(0,2)', 'layer': 2, 'span_to': None}",
     Move.remove((0, 2), 2), None, None),
    ("D2's instruction seems best: remove the block at (0,2) L2", Move.remove((0, 2), 2), None, "D2"),
    ("place YS at (2, 2) layer 0 -- following D3", Move.place("ys", (2, 2), layer=0), None, "D3"),
    ("As D1 said, I place gs at 0,0", Move.place("gs", (0, 0)), None, "D1"),
    ("I'll place gs at (0,0). Is that right?", Move.place("gs", (0, 0)), "Is that right?", None),
    ("<question>Which layer should the blue go on?</question>", Move.noop(),
     "Which layer should the blue go on?", None),
    ("QUESTION: D1, do you mean your left or mine?\nMOVE: noop", Move.noop(),
     "D1, do you mean your left or mine?", None),
    ("Should I place gs at (0,0)?", Move.noop(), "Should I place gs at (0,0)?", None),
    ("Hmm. Which block do you mean, D3?", Move.noop(), "Which block do you mean, D3?", None),
    ('{"move": {"action": "clarify"}, "question": "which one?", "followed": "D1"}', Move.noop(),
     "which one?", "D1"),
    ("MOVE: pass\nQUESTION: none\nFOLLOWED: none", Move.noop(), None, None),
]


@pytest.mark.parametrize("text, move, question, followed", REPLY_CASES)
def test_parse_builder_reply_table(text, move, question, followed):
    reply = parse_builder_reply(text)
    assert isinstance(reply, ParsedBuilderReply)
    assert same(reply.move, move), text
    assert reply.question == question
    assert reply.followed == followed
    assert reply.raw == text


@pytest.mark.parametrize(
    "text", ["", "   ", "lorem ipsum dolor", "I think we need more information.", "```\n```"]
)
def test_parse_builder_reply_nothing_understandable(text):
    with pytest.raises(ParseError) as info:
        parse_builder_reply(text)
    assert info.value.reason == "no move or question found"


def test_parse_builder_reply_reports_a_bad_attempted_move():
    with pytest.raises(ParseError, match=r"\(5,5\)"):
        parse_builder_reply("<move>place gs (5,5)</move>")


# ------------------------------------------------------------------ robustness

HUGE = [
    "x" * 100_000,
    "place " * 17_000,
    "{" * 100_000,
    '{"a":' * 20_000,
    "(1,1)" * 20_000,
    "?" * 100_000,
    "1," * 50_000,
    " " * 100_000,
    "MOVE:" * 20_000,
    "<move>" * 16_000,
    "following " * 10_000,
    "place gs (" + "1" * 100_000 + ",1)",
    "{" * 5_000 + '"action": "place"' + "}" * 5_000,
]


@pytest.mark.parametrize("text", HUGE, ids=range(len(HUGE)))
def test_huge_input_fails_fast_with_parse_error(text):
    for parse in (parse_move, parse_builder_reply):
        start = time.thread_time()
        try:
            parse(text)
        except ParseError:
            pass
        assert time.thread_time() - start < 2.0


@st.composite
def moves(draw):
    n = draw(st.integers(2, 6))
    height = draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["small", "large", "remove", "noop"]))
    layer = draw(st.one_of(st.none(), st.integers(0, height - 1)))
    cell = (draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1)))
    colour = draw(st.sampled_from("gbryo"))
    if kind == "noop":
        move = Move.noop()
    elif kind == "remove":
        move = Move.remove(cell, layer, draw(st.one_of(st.none(), st.sampled_from(BLOCK_CODES))))
    elif kind == "small":
        move = Move.place(colour + "s", cell, None, layer)
    else:
        i, j = cell
        around = ((i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1))
        options = [(a, b) for a, b in around if 0 <= a < n and 0 <= b < n]
        move = Move.place(colour + "l", cell, draw(st.sampled_from(options)), layer)
    return move, n, height


@given(moves())
def test_parse_move_inverts_format_move(case):
    move, n, height = case
    parsed = parse_move(format_move(move), n, height)
    assert same(parsed, move)
    assert format_move(parsed) == format_move(move)


@given(moves(), st.sampled_from(["MOVE: {}", "<move>{}</move>", "Sure! {}.", "```\n{}\n```", "{}"]))
def test_parse_builder_reply_reads_canonical_lines(case, template):
    move, n, height = case
    reply = parse_builder_reply(template.format(format_move(move)), n, height)
    assert same(reply.move, move)


@given(moves())
def test_parse_move_reads_the_paper_json(case):
    import json

    move, n, height = case
    assert same(parse_move(json.dumps(move.to_dict()), n, height), move)


_TOKENS = [
    "place", "remove", "take", "noop", "pass", "gs", "gl", "ol", "xs", "large", "small", "green", "purple",
    "(1,1)", "(0,2)", "(9,9)", "[1,2]", "1,1", "row", "col", "2", "L0", "layer", "7", "-", "to", "{", "}",
    '"action":', '"place"', '"block":', '"position":', "null", "MOVE:", "<move>", "</move>", "?", ".",
    "\n", "```", "following", "D2", "'s", "instruction", "question:", "spanning", "right", "inward",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(st.text(max_size=300), st.lists(st.sampled_from(_TOKENS), max_size=40).map(" ".join)))
def test_parsers_raise_only_parse_error(text):
    for parse in (parse_move, parse_builder_reply):
        try:
            result = parse(text)
        except ParseError as error:
            assert error.reason and error.text == text
        else:
            assert result is not None
