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
