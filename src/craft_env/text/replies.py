"""Whole replies of language-model agents read into what the game takes: a director's message, a builder's action.

Director replies: ``<think>`` is private, ``<message>`` public; tags may be
missing, mis-cased or unclosed. A reply without a ``<message>`` tag uses
the text outside ``<think>`` as the message and records why; an empty
reply says nothing. Builder replies go through ``parse_builder_reply``
(``text.moves``): a readable move becomes its canonical line (so the
environment judges exactly what the model meant, layer claim included), a
question ``QUESTION: ...``, and an unreadable reply stays raw text with the
parse error as its reason. Every reader here is linear in the reply's
length (``tests/test_text_linear.py``).
"""

from __future__ import annotations

import bisect
import re
from functools import lru_cache

from craft_env.text.errors import ParseError
from craft_env.text.moves import parse_builder_reply

MAX_MESSAGE_CHARS = 1200
MAX_ENV_TEXT_CHARS = 4000
#: How much of a model's raw reply a log keeps (agents' replies, judges' unreadable answers).
MAX_RAW_CHARS = 20000

_THINK_OPEN = re.compile(r"<\s*think(?:ing)?\s*>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"<\s*/\s*think(?:ing)?\s*>", re.IGNORECASE)
_MESSAGE_OPEN = re.compile(r"<\s*message\s*>", re.IGNORECASE)
_MESSAGE = re.compile(r"<\s*message\s*>(.*?)(?:<\s*/\s*message\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_FENCE = re.compile(r"^[ \t]*(```|~~~)[\w+-]*[ \t]*$", re.MULTILINE)
_STRAY_TAG = re.compile(r"<\s*/?\s*(?:think(?:ing)?|message)\s*>", re.IGNORECASE)


def clip(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"... [cut: {len(text)} characters in all]"


def split_think(text: str) -> tuple[str, str]:
    """``(private, public)``: the reply's ``<think>`` blocks, and everything else.

    A block runs from ``<think>`` to its ``</think>``, whatever it holds
    (a drafted ``<message>`` stays private); an unclosed block runs to the
    next ``<message>`` tag or the end. A ``</think>`` with no opening tag
    before it (chat templates that open the block themselves) makes all
    text before it private. One pass over the tag positions: linear.
    """
    closes = [m.span() for m in _THINK_CLOSE.finditer(text)]
    messages = [m.start() for m in _MESSAGE_OPEN.finditer(text)]
    private: list[str] = []
    public: list[str] = []
    pos = 0
    first_open = _THINK_OPEN.search(text)
    if closes and (first_open is None or closes[0][0] < first_open.start()):
        private.append(text[: closes[0][0]])
        pos = closes[0][1]
    while pos <= len(text):
        opening = _THINK_OPEN.search(text, pos)
        if opening is None:
            public.append(text[pos:])
            break
        public.append(text[pos: opening.start()])
        close = next_at_or_after(closes, opening.end())
        if close is not None:
            private.append(text[opening.end(): close[0]])
            pos = close[1]
            continue
        message = next_at_or_after([(m, m) for m in messages], opening.end())
        end = message[0] if message is not None else len(text)
        private.append(text[opening.end(): end])
        public.append(text[end:])
        break
    think = "\n".join(part.strip() for part in private if part.strip())
    return think, "".join(public)


def next_at_or_after(spans: list[tuple[int, int]], position: int) -> tuple[int, int] | None:
    """The first span in sorted ``spans`` starting at or after ``position``."""
    index = bisect.bisect_left(spans, (position, -1))
    return spans[index] if index < len(spans) else None


#: How long a reply may be to be remembered, and how many are (runs and replays read the same replies
#: again and again: a built-in agent's decisions written out, a replayed model's logged text). Longer
#: replies are read each time (as ``speech``'s messages: a long reply is rarely given twice).
_MEMO_CHARS = 1000
_MEMO_SIZE = 8192


def parse_director_reply(text: str) -> tuple[str, str, str | None]:
    """``(think, message, reason)`` from a director's reply; ``reason`` is ``None`` when well formed.

    Replies up to ``_MEMO_CHARS`` characters are read once and remembered (the result is immutable).
    """
    if type(text) is str and len(text) <= _MEMO_CHARS:
        return _memo_director_reply(text)
    return _director_reply(text)


@lru_cache(maxsize=_MEMO_SIZE)
def _memo_director_reply(text: str) -> tuple[str, str, str | None]:
    return _director_reply(text)


def _director_reply(text: str) -> tuple[str, str, str | None]:
    if not isinstance(text, str) or not text.strip():
        return "", "", "empty reply"
    think, public = split_think(_FENCE.sub("", text))
    message_match = _MESSAGE.search(public)
    reason = None
    if message_match:
        message = _STRAY_TAG.sub(" ", message_match.group(1)).strip()
        if not message:
            reason = "empty <message> tag"
    else:
        message = _STRAY_TAG.sub(" ", public).strip()
        reason = (
            "no <message> tag; used the reply outside <think> as the message"
            if message
            else ("no <message> tag and nothing outside <think>")
        )
    message = " ".join(message.split())
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS]
        reason = (reason + "; " if reason else "") + f"message cut to {MAX_MESSAGE_CHARS} characters"
    return think, message, reason


def builder_action(
    text: str, n: int, height: int, tolerant_span: bool = False
) -> tuple[str, tuple[str, ...], str, str | None]:
    """``(text for the env, followed seats, think, reason)`` from a builder's reply.

    ``tolerant_span``: the paper's reading of a small block with a span
    (``text.paper_grammar``); ``reason`` then notes what was ignored.
    Replies up to ``_MEMO_CHARS`` characters are read once and remembered
    (the result is immutable).
    """
    if type(text) is str and len(text) <= _MEMO_CHARS:
        return _memo_builder_action(text, n, height, bool(tolerant_span))
    return _builder_action(text, n, height, tolerant_span)


@lru_cache(maxsize=_MEMO_SIZE)
def _memo_builder_action(
    text: str, n: int, height: int, tolerant_span: bool
) -> tuple[str, tuple[str, ...], str, str | None]:
    return _builder_action(text, n, height, tolerant_span)


def _builder_action(
    text: str, n: int, height: int, tolerant_span: bool = False
) -> tuple[str, tuple[str, ...], str, str | None]:
    if not isinstance(text, str) or not text.strip():
        return "", (), "", "empty reply"
    think, body = split_think(text)
    try:
        reply = parse_builder_reply(body, n, height, tolerant_span)
    except ParseError as error:
        return clip(body.strip(), MAX_ENV_TEXT_CHARS), (), think, error.reason
    followed = reply.followed_seats
    if reply.move is None or reply.move.action == "noop":
        question = " ".join((reply.question or "").split())
        return (
            (f"QUESTION: {clip(question, MAX_MESSAGE_CHARS)}" if question else "pass"),
            followed,
            think,
            None,
        )
    return str(reply.move), followed, think, reply.note
