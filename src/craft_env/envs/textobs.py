"""The ``"text"`` observation: what a language-model agent may know, in words.

A director's text holds its seat and frame of reference, its own private
target wall, the current board (or only the walls of it), and the public
conversation. The builder's holds the conversation, the board and, in the
oracle condition, its candidate moves. Nothing else: in particular no other
director's target wall. Text is kept to printable ASCII so it always lies in
the declared ``gymnasium.spaces.Text`` space.
"""

from __future__ import annotations

import re
import string
import unicodedata

from craft_env.core.views import seat_view
from craft_env.envs.config import SEATS
from craft_env.text import (
    describe_board,
    describe_candidates,
    describe_conversation,
    describe_view,
    director_frame_description,
    intent_to_text,
)

TEXT_CHARSET = frozenset(string.printable)
TEXT_MAX_LENGTH = 200_000

_NOT_PRINTABLE = re.compile(r"[^\x20-\x7e\t\n\r\x0b\x0c]")
_REPLACEMENTS = {"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-", "\u2014": "-",
                 "\u2026": "...", "\u00a0": " "}


def ascii_text(text: str) -> str:
    """Printable-ASCII version of ``text`` (common punctuation mapped, accents dropped, rest '?')."""
    if not _NOT_PRINTABLE.search(text):
        return text[:TEXT_MAX_LENGTH]
    out = []
    for char in text:
        char = _REPLACEMENTS.get(char, char)
        if char in TEXT_CHARSET:
            out.append(char)
            continue
        plain = unicodedata.normalize("NFKD", char).encode("ascii", "ignore").decode()
        out.append("".join(c for c in plain if c in TEXT_CHARSET) or "?")
    return "".join(out)[:TEXT_MAX_LENGTH]


def conversation_lines(game, start: int = 0) -> list[tuple[str, str]]:
    """(speaker, text) pairs of the conversation from entry ``start`` on, intents spoken in words."""
    lines = []
    for entry in game.conversation[start:]:
        speaker = entry["speaker"]
        text = entry["text"]
        if entry.get("outcome") is not None:
            text = game.builder_note(entry["outcome"])
        elif text is None and entry["intent"] is not None:
            text = intent_to_text(entry["intent"], game.intents[SEATS.index(speaker)])
        lines.append((f"turn {entry['turn']} {speaker}", text or ""))
    return lines


def conversation_text(game) -> str:
    """``describe_conversation(conversation_lines(game))``, rendered incrementally.

    Entries never change once added, so each is rendered once per episode
    (kept in ``game.text_cache``, which ``reset`` empties) instead of on
    every observation.
    """
    rendered = game.text_cache.setdefault(("conversation",), [])
    if len(rendered) < len(game.conversation):
        start = len(rendered)
        lines = conversation_lines(game, start)
        rendered.extend(describe_conversation([line]) for line in lines)
    return "\n".join(rendered) if rendered else describe_conversation([])


def board_text(game, walls_only: bool) -> str:
    """The current board in words (or its three walls), cached until the board changes."""
    key = ("board", walls_only)
    board_bytes = game.board.tobytes()
    cached = game.text_cache.get(key)
    if cached is not None and cached[0] == board_bytes:
        return cached[1]
    board = game.board_structure()
    if not walls_only:
        text = describe_board(board)
    else:
        text = "\n".join(
            f"{seat}'s wall of the current board:\n{describe_view(seat_view(board, seat), seat)}"
            for seat in SEATS
        )
    game.text_cache[key] = (board_bytes, text)
    return text


def director_text(game, seat: int) -> str:
    name = SEATS[seat]
    view_key = ("target view", seat)
    if view_key not in game.text_cache:  # the target is fixed for the episode
        game.text_cache[view_key] = describe_view(seat_view(game.target_structure(), name), name)
    parts = [
        f"You are director {name}. Turn {game.turn + 1} of {game.config.max_turns}.",
        director_frame_description(name, game.n, game.height),
        f"Your private target view (your wall of the target; only you see it):\n{game.text_cache[view_key]}",
        f"Current board:\n{board_text(game, game.config.director_sees == 'walls')}",
        f"Conversation so far:\n{conversation_text(game)}",
    ]
    return ascii_text("\n\n".join(parts))


def builder_text(game) -> str:
    parts = [
        f"You are the builder. Turn {game.turn + 1} of {game.config.max_turns}.",
        f"Current board:\n{board_text(game, False)}",
        f"Conversation so far:\n{conversation_text(game)}",
    ]
    candidates = game.candidate_moves()
    if candidates is not None:
        parts.append(f"Candidate moves (choose one, or ask a question):\n{describe_candidates(candidates)}")
    return ascii_text("\n\n".join(parts))
