"""The ``"text"`` observation: what a language-model agent may know, in words.

A director's text holds its seat and frame of reference, its own private
target wall, the current board (or only the walls of it), and the public
conversation. The builder's holds the conversation, the board and, in the
oracle condition, its candidate moves. Nothing else: in particular no other
director's target wall. A text longer than ``TEXT_MAX_LENGTH`` loses its
oldest conversation entries first, never the rules, the board, the
candidates or this turn's messages, and says so. Text is kept to printable ASCII so it always lies in
the declared ``gymnasium.spaces.Text`` space.

Under a protocol with ``directors_see_walls`` (the paper's prompts,
``core.protocol``) a director sees the three walls of the current board and
the conversation as it stood before the turn began (not what others said
this turn), and the builder sees only this turn's directors' messages.
"""

from __future__ import annotations

import re
import string
import unicodedata
from functools import lru_cache

from craft_env.core.views import seat_view
from craft_env.text import (
    describe_board,
    describe_candidates,
    describe_conversation,
    describe_message,
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
    """Printable-ASCII version of ``text`` (common punctuation mapped, accents dropped, rest '?').

    The parts of a text observation recur (a seat's rules, its target wall,
    the board until it changes), so short texts are converted once and
    remembered (``_MEMO_CHARS``, ``_MEMO_SIZE``).
    """
    if len(text) <= _MEMO_CHARS and type(text) is str:
        return _memo_ascii(text)
    return _ascii(text)


#: How long a text may be to be remembered, and how many are (a few MB at most).
_MEMO_CHARS = 8192
_MEMO_SIZE = 512


@lru_cache(maxsize=_MEMO_SIZE)
def _memo_ascii(text: str) -> str:
    return _ascii(text)


def _ascii(text: str) -> str:
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
    """(speaker, text) pairs of the conversation from entry ``start`` on, intents spoken in words.

    Entries never change once added, so each line is made once per episode
    (kept in ``game.text_cache``, which ``reset`` empties).
    """
    return _kept_lines(game)[start:]


def _kept_lines(game) -> list[tuple[str, str]]:
    """``conversation_lines`` of the whole conversation: the kept list itself (read only)."""
    lines = game.text_cache.setdefault(("lines",), [])
    if len(lines) < len(game.conversation):
        lines.extend(_lines(game, len(lines)))
    return lines


def _lines(game, start: int) -> list[tuple[str, str]]:
    lines = []
    for entry in game.conversation[start:]:
        speaker = entry["speaker"]
        text = entry["text"]
        if entry.get("outcome") is not None:
            text = game.builder_note(entry["outcome"])
        elif text is None and entry["intent"] is not None:
            text = intent_to_text(entry["intent"], game.intents[game.seats.index(speaker)])
        lines.append((f"turn {entry['turn']} {speaker}", text or ""))
    return lines


def conversation_text(game, keep=None) -> str:
    """``describe_conversation(conversation_lines(game))``, rendered incrementally.

    Entries never change once added, so each is rendered once per episode
    (kept in ``game.text_cache``, which ``reset`` empties) instead of on
    every observation. ``keep(entry)``, when given, selects the entries shown.
    """
    rendered = _rendered(game)
    if keep is not None:
        rendered = [text for text, entry in zip(rendered, game.conversation) if keep(entry)]
    return "\n".join(rendered) if rendered else describe_conversation([])


def _rendered(game) -> list[str]:
    """Each conversation entry in words (``describe_conversation`` of its line), made once per episode."""
    rendered = game.text_cache.setdefault(("conversation",), [])
    if len(rendered) < len(game.conversation):
        lines = _kept_lines(game)
        rendered.extend([describe_message(speaker, text) for speaker, text in lines[len(rendered):]])
    return rendered


def _ascii_conversation(game, keep=None) -> str:
    """``ascii_text(conversation_text(game, keep))`` but for the cut at ``TEXT_MAX_LENGTH``, from entries
    made ASCII once per episode (``ascii_text`` maps character by character, so the entries' join is the
    join's). Only for ``_fitted``, where a text that long is cut differently anyway."""
    rendered = _rendered(game)
    cache = game.text_cache
    plain = cache.setdefault(("conversation ascii",), [])
    if len(plain) < len(rendered):
        plain.extend(_ascii(text) for text in rendered[len(plain):])
    if keep is not None:
        plain = [text for text, entry in zip(plain, game.conversation) if keep(entry)]
    elif plain:  # the whole conversation: the last join, extended by the entries said since
        count, joined = cache.get(("conversation joined",), (0, ""))
        if count < len(plain):
            joined = "\n".join([joined, *plain[count:]] if count else plain)
            cache[("conversation joined",)] = (len(plain), joined)
        return joined
    return "\n".join(plain) if plain else ascii_text(describe_conversation([]))


def game_protocol(game):
    """The ``Protocol`` the game is played under (``craft`` when its config names none)."""
    return game.config.protocol


def _fitted(head: list[str], game, tail: list[str], title: str = "Conversation so far:", keep=None) -> str:
    """``head``, the conversation, then ``tail``, in at most ``TEXT_MAX_LENGTH`` characters.

    The rules, board, candidates and other fixed parts are kept whole; when
    the whole would be too long, the oldest conversation entries go first
    (this turn's messages are the newest, so they stay) and a note says how
    many were left out. ``keep`` selects the entries shown (``conversation_text``).
    """
    head = [ascii_text(part) for part in head]
    tail = [ascii_text(part) for part in tail]
    conversation = f"{ascii_text(title)}\n{_ascii_conversation(game, keep)}"
    whole = "\n\n".join([*head, conversation, *tail])
    if len(whole) <= TEXT_MAX_LENGTH:
        return whole
    rendered = [
        ascii_text(text)
        for text, entry in zip(game.text_cache.get(("conversation",), []), game.conversation)
        if keep is None or keep(entry)
    ]
    fixed = sum(len(part) + 2 for part in head + tail) + len(title) + 1
    note_room = 120
    budget = max(0, TEXT_MAX_LENGTH - fixed - note_room)
    kept: list[str] = []
    used = 0
    for entry in reversed(rendered):
        if used + len(entry) + 1 > budget:
            if not kept:  # even the newest entry is too long: keep its start
                kept.append(entry[: max(0, budget - 1)])
            break
        kept.append(entry)
        used += len(entry) + 1
    dropped = len(rendered) - len(kept)
    note = (
        f"[{dropped} earlier conversation entries left out to keep this text under "
        f"{TEXT_MAX_LENGTH} characters]"
    )
    conversation = "\n".join([title, note, *reversed(kept)])
    return "\n\n".join([*head, conversation, *tail])[:TEXT_MAX_LENGTH]


def board_text(game, walls_only: bool) -> str:
    """The current board in words (or the seated directors' walls), cached until the board changes."""
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
            for seat in game.seats
        )
    game.text_cache[key] = (board_bytes, text)
    return text


def director_text(game, seat: int) -> str:
    name = game.seats[seat]
    view_key = ("target view", seat)
    if view_key not in game.text_cache:  # the target is fixed for the episode
        game.text_cache[view_key] = describe_view(seat_view(game.target_structure(), name), name)
    frozen = game_protocol(game).directors_see_walls
    turn = game.turn + 1
    walls = frozen or game.config.director_sees == "walls"
    keep = (lambda entry: entry["turn"] < turn) if frozen else None
    parts = [
        f"You are director {name}. Turn {turn} of {game.config.max_turns}.",
        director_frame_description(name, game.n, game.height),
        f"Your private target view (your wall of the target; only you see it):\n{game.text_cache[view_key]}",
        f"Current board:\n{board_text(game, walls)}",
    ]
    title = f"Conversation {'before this turn' if frozen else 'so far'}:"
    return _fitted(parts, game, [], title, keep)


def public_conversation(game) -> list[dict]:
    """The public conversation: ``turn``, ``speaker`` and ``text`` of every entry so far (intents in words).

    A new list each time; its entries are made once per episode (they never
    change once said) and are shared, so treat them as read-only.
    """
    entries = game.text_cache.setdefault(("public conversation",), [])
    conversation = game.conversation
    if len(entries) < len(conversation):
        lines = _kept_lines(game)
        for k in range(len(entries), len(conversation)):
            entry = conversation[k]
            entries.append({"turn": entry["turn"], "speaker": entry["speaker"], "text": lines[k][1]})
    return list(entries)


def text_observation(game, seat: int | None) -> str:
    """The ``"text"`` observation of director ``seat`` (its index), or of the builder (``None``)."""
    return builder_text(game) if seat is None else director_text(game, seat)


def builder_text(game) -> str:
    turn = game.turn + 1
    this_turn_only = game_protocol(game).directors_see_walls
    title = "This turn's messages:" if this_turn_only else "Conversation so far:"
    keep = (lambda entry: entry["turn"] == turn and entry["speaker"] != "builder") if this_turn_only else None
    parts = [
        f"You are the builder. Turn {turn} of {game.config.max_turns}.",
        f"Current board:\n{board_text(game, False)}",
    ]
    candidates = game.candidate_moves()
    tail = []
    if candidates is not None:
        tail.append(f"Candidate moves (choose one, or ask a question):\n{describe_candidates(candidates)}")
    return _fitted(parts, game, tail, title, keep)
