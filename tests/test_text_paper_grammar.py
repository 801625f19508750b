"""The paper's builder reply grammar (``text.paper_grammar``), through ``parse_builder_reply``."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from craft_env import Move
from craft_env.text.replies import builder_action
from craft_env.core.encoding import BLOCK_CODES, format_position
from craft_env.text import ParseError, parse_builder_reply
from craft_env.text.paper_grammar import read_paper_reply

cells = st.tuples(st.integers(0, 2), st.integers(0, 2))
layers = st.integers(0, 2)
confirm = st.text(
    st.characters(
        blacklist_categories=("Cs",), blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
    ),
    max_size=40,
)


def _neighbour(cell, step):
    i, j = cell
    di, dj = ((0, 1), (1, 0), (0, -1), (-1, 0))[step]
    return (i + di, j + dj) if 0 <= i + di < 3 and 0 <= j + dj < 3 else None


@given(cells, layers, st.sampled_from(BLOCK_CODES), st.integers(0, 3), confirm)
def test_place_lines_read_as_the_paper_wrote_them(cell, layer, code, step, text):
    partner = _neighbour(cell, step)
    if code.endswith("l") and partner is None:
        return
    span = f":{format_position(partner)}" if code.endswith("l") else ""
    line = f"PLACE:{code}:{format_position(cell)}:{layer}{span}:CONFIRM:{text}"
    reply = parse_builder_reply(line)
    expected = Move.place(code, cell, partner if code.endswith("l") else None, layer)
    assert reply.move == expected and reply.move.layer == layer and reply.note is None


@given(cells, layers, st.one_of(st.none(), st.sampled_from(BLOCK_CODES)), confirm)
def test_remove_lines_take_the_layer_and_strip_a_code(cell, layer, code, text):
    head = "REMOVE:" + (f"{code}:" if code else "")
    reply = parse_builder_reply(f"{head}{format_position(cell)}:{layer}:CONFIRM:{text}")
    assert reply.move == Move.remove(cell, layer) and reply.move.layer == layer and reply.move.block is None


@given(st.text(max_size=200))
def test_anything_after_a_keyword_is_a_reply_or_a_parse_error(tail):
    for keyword in ("PLACE:", "REMOVE:", "CLARIFY:"):
        try:
            reply = read_paper_reply(keyword + tail, tolerant_span=True, n=3)
        except ParseError as error:
            assert error.reason
        else:
            assert reply is not None and reply.move is not None


def test_clarify_is_a_question():
    reply = parse_builder_reply("CLARIFY: which red block, D2?")
    assert reply.move == Move.noop() and reply.question == "which red block, D2?"


def test_a_small_block_with_a_span_is_tolerated_only_when_asked():
    line = "PLACE:gs:(0,0):0:(0,1):CONFIRM:following D1"
    with pytest.raises(ParseError, match="span_to"):
        parse_builder_reply(line)
    reply = parse_builder_reply(line, tolerant_span=True)
    assert reply.move == Move.place("gs", (0, 0), layer=0) and "span_to (0,1) ignored" in reply.note
    sent, followed, _, reason = builder_action(line, 3, 3, tolerant_span=True)
    assert sent == "place gs (0,0) L0" and followed == ("D1",) and "ignored" in reason


def test_the_first_keyword_line_counts_and_other_replies_fall_through():
    reply = parse_builder_reply(
        "I will do it.\n**PLACE:bl:(1,0):1:(2,0):CONFIRM:D3 said so**\nREMOVE:(0,0):0"
    )
    assert reply.move == Move.place("bl", (1, 0), (2, 0), 1)
    assert read_paper_reply("MOVE: place gs (0,0) L0") is None
    assert parse_builder_reply("MOVE: place gs (0,0) L0").move == Move.place("gs", (0, 0), layer=0)
    assert read_paper_reply("Place: I am not sure yet") is None  # the paper's keywords are capitals


@pytest.mark.parametrize(
    "line, field",
    [
        ("PLACE:xx:(0,0):0:CONFIRM:t", "block"),
        ("PLACE:gs:(0,9):0:CONFIRM:t", "position"),
        ("PLACE:gs:(0,0):zero:CONFIRM:t", "layer"),
        ("PLACE:gl:(0,0):0:CONFIRM:t", "span_to"),
        ("PLACE:gl:(0,0):0:(2,2):CONFIRM:t", "span_to"),
        ("REMOVE:(0,0)", "REMOVE:pos:L"),
        ("PLACE:gs:(0,0):0:(0,1):extra:CONFIRM", "CONFIRM"),
    ],
)
def test_bad_fields_name_themselves(line, field):
    with pytest.raises(ParseError, match=field.replace("(", r"\(")):
        read_paper_reply(line, n=3)


def test_long_replies_parse_in_linear_time():
    # A pathological tail (many colons and keywords) is split a bounded number of times.
    reply = parse_builder_reply("PLACE:gs:(0,0):0:CONFIRM:" + "PLACE:" * 50_000)
    assert reply.move == Move.place("gs", (0, 0), layer=0)
