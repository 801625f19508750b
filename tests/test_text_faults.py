"""Parser faults of issue 15: only ``ParseError`` leaves a parser (#2), refusals are no moves (#5).

Each case is a reproduction from the fault probe.
"""

from __future__ import annotations

import pytest

import craft_env
from craft_env.core.intents import intent_table
from craft_env.core.moves import Move
from craft_env.text import ParseError, parse_builder_reply, parse_director_message, parse_move, text_to_intent

BUILDER = "builder"
DIRECTORS = ("director_0", "director_1", "director_2")

EXTREME_POSITIONS = ["[1e999,0]", "[Infinity,0]", "[-Infinity,1]", "[NaN,0]", "[0,1e400]", "[1e308,0]"]
FRACTIONAL_POSITIONS = ["[-0.5,0]", "[0.9,0.9]", "[1.5,0]", '{"row": 0.5, "col": 0}']


def _json_move(position: str) -> str:
    return '{"action":"place","block":"gs","position":' + position + "}"


@pytest.mark.parametrize("position", EXTREME_POSITIONS + FRACTIONAL_POSITIONS)
def test_bad_json_positions_are_parse_errors(position):
    text = _json_move(position)
    for parse in (parse_move, parse_builder_reply):
        with pytest.raises(ParseError, match="position"):
            parse(text)


@pytest.mark.parametrize("position", EXTREME_POSITIONS + FRACTIONAL_POSITIONS)
def test_director_parsers_never_raise_on_extreme_json(position):
    text = _json_move(position)
    assert parse_director_message(text, "D1") == []
    with pytest.raises(ParseError):
        text_to_intent(text, intent_table("D1", 3, 3))


def test_whole_floats_are_still_positions():
    assert parse_move(_json_move("[1.0, 2.0]")) == Move.place("gs", (1, 2))


@pytest.mark.parametrize("position", ["[1e999,0]", "[-0.5,0]", "[0.9,0.9]"])
def test_env_step_with_an_extreme_position_is_a_failed_turn(position):
    env = craft_env.env(message_mode="text", director_order="fixed")
    env.reset(seed=5)
    for _ in DIRECTORS:
        env.step(0)
    env.step(_json_move(position))
    info = env.unwrapped.infos[BUILDER]
    assert not info["legal"] and "position" in info["reason"]


# ------------------------------------------------------------------ negation (#5)

REFUSALS = [
    "I will not place gs (0,0) L0. I pass.",
    "Don't remove (0,0) L0, I'll just wait.",
    "MOVE: pass because placing gs (0,0) L0 is wrong",
    "I won't put a small green block at (0,0). Passing this turn.",
    "I decided not to place gs (0,0) L0; I pass.",
    "Instead of placing gs (0,0) L0, I pass.",
]


@pytest.mark.parametrize("text", REFUSALS)
def test_a_refused_move_is_not_played(text):
    assert parse_builder_reply(text).move == Move.noop()


@pytest.mark.parametrize(
    "text, move",
    [
        ("I will not place gs (0,0) L0. I'll place bs (1,1) L0 instead.", Move.place("bs", (1, 1), layer=0)),
        ("I'm not sure, but I'll place gs (0,0) L0.", Move.place("gs", (0, 0), layer=0)),
        ("Not removing anything: place rs (2,2) L0", Move.place("rs", (2, 2), layer=0)),
    ],
)
def test_a_move_beside_a_refusal_is_played(text, move):
    assert parse_builder_reply(text).move == move


def test_builder_and_director_parsers_share_the_negation_rule():
    from craft_env.text import _vocab, moves, speech

    assert moves.negated is speech.negated is _vocab.negated
    assert parse_director_message("Don't put a small red block on my left column, bottom layer.", "D1") == []
