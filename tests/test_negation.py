"""The negation rule of issue 26 (#8), as a table: refusals never play, affirmative look-alikes still do.

The rule (docs/robustness.md, "Refusals are no moves") lives in one place,
``text._vocab.negated``, shared by the builder's and the directors'
parsers. A refused move with no other move in the reply is a pass. The
counts of each class are quoted in the docs; the test holds them equal to
the tables, so the docs cannot drift.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from craft_env import Move
from craft_env.text import parse_builder_reply, parse_director_message

GS = Move.place("gs", (0, 0), layer=0)

#: A move inside a refusal: none of these may place or remove anything.
REFUSALS = [
    "I refuse to place gs (0,0) L0. I pass.",
    "I will not be placing gs (0,0) L0.",
    "I decided against placing gs (0,0) L0.",
    "I will not, under any circumstances, place gs (0,0) L0.",
    "I will not place gs (0,0) L0. I pass.",
    "Don't remove (0,0) L0, I'll just wait.",
    "MOVE: pass because placing gs (0,0) L0 is wrong",
    "I won't put a small green block at (0,0). Passing this turn.",
    "I decided not to place gs (0,0) L0; I pass.",
    "Instead of placing gs (0,0) L0, I pass.",
    "Rather than placing gs (0,0) L0, I pass.",
    "I would never place gs (0,0) L0 here.",
    "I cannot place gs (0,0) L0 yet.",
    "I decline to place gs (0,0) L0.",
    "I'm avoiding placing gs (0,0) L0 for now.",
    "There is no way I'll place gs (0,0) L0.",
    "Under no circumstances will I place gs (0,0) L0.",
    "I'm not going to place gs (0,0) L0.",
    "No need to place gs (0,0) L0.",
    "I won't be removing (0,2) L0; pass.",
    "Neither placing gs (0,0) L0 nor removing (1,1) is right; I pass.",
    "I shouldn\u2019t place gs (0,0) L0 before D2 answers.",
    "I will NOT place gs (0,0) L0.",
    "I'd rather not place gs (0,0) L0 this turn.",
]

#: Affirmative text that looks like a refusal: each must play the move given.
AFFIRMATIVES = [
    ("I will now place gs (0,0) L0.", GS),
    ("Not sure, but place gs (0,0) L0.", GS),
    ("I'm not sure, but I'll place gs (0,0) L0.", GS),
    ("Not removing anything: place gs (0,0) L0", GS),
    ("No problem. I'll place gs (0,0) L0.", GS),
    ("Nothing blocks it, so I'll place gs (0,0) L0.", GS),
    ("Since D1 asked for it, I'll place gs (0,0) L0.", GS),
    ("Because the board is empty, I will place gs (0,0) L0.", GS),
    ("I can't see (2,1), but I will place gs (0,0) L0.", GS),
    ("D2 doesn't mind; place gs (0,0) L0.", GS),
    ("Don't worry, I will place gs (0,0) L0.", GS),
    ("I won't wait any longer: place gs (0,0) L0.", GS),
    ("Without a doubt, I place gs (0,0) L0.", GS),
    ("Notably, I place gs (0,0) L0.", GS),
    ("I know (0,0) is empty. Place gs (0,0) L0.", GS),
    ("Nobody objected, so I'll place gs (0,0) L0.", GS),
    ("Let me place gs (0,0) L0 now, not later.", GS),
    ("I never doubted D1: place gs (0,0) L0.", GS),
    ("Why not? I'll place gs (0,0) L0.", GS),
    ("MOVE: place gs (0,0) L0 (not a remove)", GS),
    ("I don't think there is a better move, so I will place gs (0,0) L0.", GS),
    ("I'll place gs (0,0) L0; no need to remove anything.", GS),
    ("I will not place gs (0,0) L0. I'll place bs (1,1) L0 instead.", Move.place("bs", (1, 1), layer=0)),
    ("Don't place gs (0,0) L0; remove (2,2) L0.", Move.remove((2, 2), 0)),
]


def _plays(text: str) -> Move | None:
    """The move the reply plays (``None``: no move, or an unreadable reply)."""
    try:
        move = parse_builder_reply(text).move
    except ValueError:
        return None
    return None if move is None or move.action == "noop" else move


@pytest.mark.parametrize("text", REFUSALS)
def test_a_refused_move_is_not_played(text):
    assert _plays(text) is None


@pytest.mark.parametrize("text", [t for t in REFUSALS if "pass" not in t.lower() and "wait" not in t])
def test_a_refusal_alone_is_a_pass(text):
    assert parse_builder_reply(text).move == Move.noop()


@pytest.mark.parametrize("text, move", AFFIRMATIVES)
def test_an_affirmative_look_alike_plays_its_move(text, move):
    assert _plays(text) == move


@pytest.mark.parametrize(
    "message, intents",
    [
        ("I refuse to tell you to put a small red block on my left column, bottom layer.", 0),
        ("Under no circumstances put a small red block on my left column, bottom layer.", 0),
        ("Not sure, but put a small red block on my left column, bottom layer.", 1),
    ],
)
def test_directors_read_refusals_by_the_same_rule(message, intents):
    assert len(parse_director_message(message, "D1")) == intents


def test_the_docs_quote_the_table_counts():
    text = (Path(__file__).parents[1] / "docs" / "robustness.md").read_text(encoding="utf-8")
    quoted = re.search(r"(\d+) of (\d+) refusals\b.*?\b(\d+) of (\d+) affirmative look-alikes", text, re.DOTALL)
    assert quoted, "docs/robustness.md states the negation table's counts"
    refused = sum(_plays(t) is None for t in REFUSALS)
    played = sum(_plays(t) == m for t, m in AFFIRMATIVES)
    assert [int(g) for g in quoted.groups()] == [refused, len(REFUSALS), played, len(AFFIRMATIVES)]
