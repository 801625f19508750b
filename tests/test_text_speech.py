"""craft_env.text speech: director intents in words, in each seat's own frame, and back."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from craft_env.core.intents import ALONG_RIGHT, INWARD, intent_table
from craft_env.core.moves import Move
from craft_env.text import (
    NOOP_TEXT,
    ParseError,
    describe_intents,
    director_frame_description,
    intent_move,
    intent_to_text,
    layer_name,
    parse_director_message,
    slot_name,
    text_to_intent,
)

SEATS = ("D1", "D2", "D3", "D0")
RED, BLUE, GREEN, ORANGE = 2, 1, 0, 4


# ------------------------------------------------------------------ names


def test_slot_names():
    assert [slot_name(p, 3) for p in range(3)] == ["left", "middle", "right"]
    assert [slot_name(p, 2) for p in range(2)] == ["left", "right"]
    assert [slot_name(p, 5) for p in range(5)] == [
        "leftmost", "2nd from left", "3rd from left", "4th from left", "rightmost",
    ]
    with pytest.raises(ValueError):
        slot_name(3, 3)


def test_layer_names():
    assert [layer_name(k, 3) for k in range(3)] == ["bottom", "middle", "top"]
    assert [layer_name(k, 1) for k in range(1)] == ["bottom"]
    assert [layer_name(k, 2) for k in range(2)] == ["bottom", "top"]
    assert [layer_name(k, 4) for k in range(4)] == ["bottom", "second", "third", "top"]


# ------------------------------------------------------------------ speaking


def test_intent_texts_match_the_brief():
    table = intent_table("D1", 3, 3)
    assert intent_to_text(0, table) == NOOP_TEXT == "Nothing to add from me."
    small = "put a small red block on my left column, bottom layer"
    assert intent_to_text(table.small(0, 0, RED), table) == small
    assert (
        intent_to_text(table.large(1, 0, BLUE, ALONG_RIGHT), table)
        == "put a large blue block across the middle and right of my bottom layer"
    )
    assert (
        intent_to_text(table.large(0, 1, GREEN, INWARD), table)
        == "put a large green block on my left column, middle layer, reaching inward"
    )
    assert intent_to_text(table.remove(0, 2), table) == "take the top block off my left column (top layer)"


@pytest.mark.parametrize("seat", SEATS)
@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_every_intent_round_trips(seat, n):
    for height in range(1, 6):
        table = intent_table(seat, n, height)
        for intent in range(table.num_intents):
            text = intent_to_text(intent, table)
            assert text_to_intent(text, table) == intent, (seat, n, height, text)


@pytest.mark.parametrize(
    "seat, move",
    [
        ("D1", Move.place("rs", (0, 0), layer=0)),
        ("D2", Move.place("rs", (0, 2), layer=0)),
        ("D3", Move.place("rs", (2, 2), layer=0)),
        ("D0", Move.place("rs", (2, 0), layer=0)),
    ],
)
def test_left_is_the_seats_own_left(seat, move):
    table = intent_table(seat, 3, 3)
    intent = text_to_intent("put a small red block on my left column, bottom layer", table)
    assert intent_move(intent, table) == move


def test_inward_and_along_in_board_cells():
    d2 = intent_table("D2", 3, 3)
    along = text_to_intent("a large blue block across the middle and right of my bottom layer", d2)
    assert intent_move(along, d2) == Move.place("bl", (0, 1), (0, 0), 0)
    inward = text_to_intent("a large blue block on my left column, bottom layer, reaching inward", d2)
    assert intent_move(inward, d2) == Move.place("bl", (0, 2), (1, 2), 0)
    assert intent_move(0, d2) is None
    off_board = d2.large(2, 0, BLUE, ALONG_RIGHT)
    assert intent_move(off_board, d2) is None


# ------------------------------------------------------------------ paraphrase

D1 = intent_table("D1", 3, 3)
PARAPHRASES = [
    ("Place a small red block on my left column, bottom row.", D1.small(0, 0, RED)),
    ("put a single r block on the left, first layer", D1.small(0, 0, RED)),
    ("add a little red cube at my left, layer 0", D1.small(0, 0, RED)),
    ("small red on my left, L0", D1.small(0, 0, RED)),
    ("red small block, left column, on the ground", D1.small(0, 0, RED)),
    ("a rs on my left, ground level", D1.small(0, 0, RED)),
    ("PUT A SMALL RED BLOCK ON MY LEFT COLUMN, BOTTOM LAYER", D1.small(0, 0, RED)),
    ("Put a big blue block across the right and middle of my bottom layer",
     D1.large(1, 0, BLUE, ALONG_RIGHT)),
    ("a long blue domino spanning middle and right, bottom row", D1.large(1, 0, BLUE, ALONG_RIGHT)),
    ("large orange block spanning middle and right of my bottom layer", D1.large(1, 0, ORANGE, ALONG_RIGHT)),
    ("put a bl on my middle column reaching to my right, layer 0", D1.large(1, 0, BLUE, ALONG_RIGHT)),
    ("large blue from my right column extending to my left, bottom layer", D1.large(1, 0, BLUE, ALONG_RIGHT)),
    ("place a large green block on my left column, middle layer, going inward",
     D1.large(0, 1, GREEN, INWARD)),
    ("large green on my left column middle layer into the board", D1.large(0, 1, GREEN, INWARD)),
    ("put a large green block on my left column, layer 1, toward the centre", D1.large(0, 1, GREEN, INWARD)),
    ("big green, my left, second layer, pointing inwards", D1.large(0, 1, GREEN, INWARD)),
    ("take off the top block from my left column (top layer)", D1.remove(0, 2)),
    ("remove the block on my left column, top layer", D1.remove(0, 2)),
    ("get rid of the top block on my left, layer 2", D1.remove(0, 2)),
    # The paper's Table 5 / Table 11 instructions.
    ("remove the large orange block from the middle-left of my bottom layer", D1.remove(0, 0)),
    ("remove orange from bottom left corner", D1.remove(0, 0)),
    ("get rid of large orange from bottom layer middle-left", D1.remove(0, 0)),
    ("add small orange to bottom right", D1.small(2, 0, ORANGE)),
    ("Nothing to add from me.", 0),
    ("All good on my side, nothing more.", 0),
]


@pytest.mark.parametrize("text, intent", PARAPHRASES)
def test_text_to_intent_paraphrases(text, intent):
    assert text_to_intent(text, D1) == intent, intent_to_text(text_to_intent(text, D1), D1)


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("put a purple block on my left, bottom layer", "purple"),
        ("put a medium red block on my left, bottom layer", "medium"),
        ("put a small red block on my left column", "layer"),
        ("put a small red block on the bottom layer", "column"),
        ("put a large red block across my left and right, bottom layer", "neighbouring"),
        ("put a small red block on my left, layer 5", "layer 5"),
        ("confirm small orange in bottom right", "no instruction"),
        ("hmm", "no instruction"),
        ("", "no instruction"),
    ],
)
def test_text_to_intent_errors(text, fragment):
    with pytest.raises(ParseError) as info:
        text_to_intent(text, D1)
    assert fragment in info.value.reason


# ------------------------------------------------------------------ messages


def test_parse_director_message_finds_every_instruction():
    message = (
        "Hi builder! First, put a small red block on my left column, bottom layer. "
        "Then a large blue across the middle and right of my bottom layer; "
        "also take the top block off my right column (middle layer)."
    )
    assert parse_director_message(message, "D1") == [
        D1.small(0, 0, RED), D1.large(1, 0, BLUE, ALONG_RIGHT), D1.remove(2, 1),
    ]


def test_parse_director_message_skips_what_is_not_an_instruction():
    message = (
        "I confirm the small orange in my bottom right. D2's bottom layer looks wrong. "
        "Don't remove the yellow one on my left, bottom layer. Put a small red block on my middle column, "
        "top layer."
    )
    assert parse_director_message(message, "D1") == [D1.small(1, 2, RED)]


def test_parse_director_message_reads_board_cells_on_its_wall():
    d2 = intent_table("D2", 3, 3)
    text = "place a large orange block spanning (0,1) and (0,2) on the bottom layer"
    found = parse_director_message(text, "D2")
    assert [intent_move(i, d2) for i in found] == [Move.place("ol", (0, 1), (0, 2), 0)]
    # A cell that is not on D2's wall, or no layer: nothing this seat can say as an intent.
    assert parse_director_message("place gs (2,1) L0", "D2") == []
    assert parse_director_message("place ol (0,1)-(0,2)", "D2") == []


def test_parse_director_message_noop_and_nothing():
    assert parse_director_message("Nothing to add from me.", "D3") == [0]
    assert parse_director_message("", "D3") == []
    assert parse_director_message("What a lovely structure", "D3") == []


def test_parse_director_message_other_sizes():
    table = intent_table("D0", 4, 4)
    text = "put a small yellow block on my 3rd from left column, third layer"
    assert parse_director_message(text, "D0", 4, 4) == [table.small(2, 2, 3)]


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(max_size=300),
        st.lists(
            st.sampled_from(
                ["put", "remove", "take", "off", "small", "large", "red", "purple", "my", "left", "middle",
                 "right", "column", "bottom", "top", "layer", "row", "2", "L9", "across", "and", "of",
                 "inward", "to my right", "nothing to add", "D2's", "don't", "(0,1)", "(0,2)", ".", "then"]
            ),
            max_size=40,
        ).map(" ".join),
    ),
    st.sampled_from(SEATS),
    st.integers(2, 4),
    st.integers(1, 4),
)
def test_speech_parsers_never_raise_anything_else(text, seat, n, height):
    table = intent_table(seat, n, height)
    try:
        intent = text_to_intent(text, table)
    except ParseError:
        pass
    else:
        assert 0 <= intent < table.num_intents
    found = parse_director_message(text, seat, n, height)
    assert all(0 <= i < table.num_intents for i in found)


@pytest.mark.parametrize(
    "text", ["x" * 100_000, "put " * 25_000, "left middle right " * 6_000, "." * 100_000, "(1,1)" * 20_000]
)
def test_speech_huge_input_is_fast(text):
    start = time.thread_time()
    with pytest.raises(ParseError):
        text_to_intent(text, D1)
    parse_director_message(text, "D1")
    assert time.thread_time() - start < 2.0


# ------------------------------------------------------------------ prompts


@pytest.mark.parametrize("seat", SEATS)
def test_frame_description_names_the_wall_cells(seat):
    text = director_frame_description(seat, 3)
    from craft_env.core.views import seat_cells

    cells = seat_cells(seat, 3)
    assert f"your left column is ({cells[0][0]},{cells[0][1]})" in text
    assert f"your right column is ({cells[2][0]},{cells[2][1]})" in text
    assert seat in text
    same = "are the builder's" if seat == "D0" else "are not the builder's"
    assert f"Your left and right {same}" in text
    assert "bottom = layer 0, middle = layer 1, top = layer 2" in director_frame_description(seat, 3, 3)


def test_describe_intents_lists_only_masked_real_intents():
    import numpy as np

    mask = np.zeros(D1.num_intents, np.int8)
    mask[[0, D1.small(0, 0, RED)]] = 1
    assert describe_intents(D1, mask) == (
        f"0: {NOOP_TEXT}\n{D1.small(0, 0, RED)}: put a small red block on my left column, bottom layer"
    )
    every = describe_intents(D1).splitlines()
    assert len(every) == int((D1.action >= 0).sum()) + 1
