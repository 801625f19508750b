"""Judge prompts: a system line and one user message per judged item, in our own words.

A prompt shows the game in a few sentences, then exactly the fields its
questions read (``questions.reads_of``), then the questions with their
codes, then the reply format. The same item and questions always give the
same messages, so replies are cached and replayed like the runner's.
"""

from __future__ import annotations

from typing import Any

from craft_env.eval.judges.items import JudgedItem
from craft_env.eval.judges.questions import (
    BOARD,
    BUILDER,
    CONVERSATION,
    MESSAGE,
    MESSAGES,
    MM,
    ORACLE,
    OTHERS,
    OUTCOME,
    PS,
    SG,
    TARGET_VIEW,
    THINK,
    Question,
    family_questions,
    reads_of,
)

JUDGE_PROMPT_VERSION = "craft-judges-v1"

SYSTEM = (
    "You grade one moment of a cooperative building game. Read the evidence, answer every "
    "question, and reply with a single JSON object and nothing else."
)

GAME = (
    "The game: a builder places and removes coloured blocks on a 3x3 board, up to 3 layers high, "
    "to copy a hidden target structure. Blocks are small (one cell) or large (two neighbouring "
    "cells at the same height). Three directors each see only one outer wall of the target "
    "(D1 the builder's left side, D2 the far side, D3 the builder's right side); the middle cell "
    "(1,1) and the near-middle cell (2,1) are on no director's wall. Each turn every director "
    "sends the builder one message, then the builder makes one move. Cells are (row,column): "
    "row 0 is the far side, column 0 the builder's left; layer 0 is the ground."
)

TITLES = {
    TARGET_VIEW: "The director's private target wall (only this director sees it)",
    BOARD: "The board before the builder's move",
    ORACLE: "Correct next moves",
    THINK: "The director's private reasoning",
    MESSAGE: "The director's public message",
    OTHERS: "The other directors' messages this turn",
    MESSAGES: "The directors' messages this turn",
    CONVERSATION: "The recent conversation (oldest first; includes this turn)",
    BUILDER: "The builder's reply",
    OUTCOME: "What happened",
}

FOCUS = {
    SG: "Judge the spatial grounding of director {seat} in turn {turn}: does what it reasons and asks "
        "for fit its target wall and the board?",
    MM: "Judge how well director {seat} in turn {turn} models the others: the builder and the other "
        "directors.",
    PS: "Judge turn {turn} as a whole: were the directors' messages, together, enough for the builder?",
}


def _format_line(questions: tuple[Question, ...]) -> str:
    example = ", ".join(f'"{q.code}": {{"answer": "...", "reason": "..."}}' for q in questions[:2])
    return (
        "Reply with one JSON object with a key for every question code: "
        f"{{{example}, ...}}. Each answer is exactly one of \"Yes\", \"No\", \"Unclear\" or \"N/A\" "
        "(N/A: the question does not apply here); each reason is one short sentence."
    )


def judge_messages(item: JudgedItem, questions: tuple[Question, ...] | None = None) -> list[dict[str, Any]]:
    """The chat messages that ask ``questions`` (default: the item's whole family) about ``item``."""
    questions = questions or family_questions(item.family)
    if any(q.family != item.family for q in questions):
        raise ValueError(f"questions: a {item.family} item cannot be asked {[q.code for q in questions]}")
    parts = [GAME, "", FOCUS[item.family].format(seat=item.seat, turn=item.turn)]
    for name in reads_of(questions):
        parts += ["", f"## {TITLES[name]}", item.fields[name]]
    parts += ["", "## Questions"]
    parts += [f"{q.code}: {q.text}" for q in questions]
    parts += ["", _format_line(questions)]
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n".join(parts)}]
