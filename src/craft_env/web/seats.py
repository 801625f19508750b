"""Who sits where in a served game, and a person's input read as the terminal's ``craft-env play`` reads it.

Every seat (``builder`` and each seated director) is a *kind*: ``person``
(someone at a browser), a built-in agent (``scripted``, ``random``) or a
litellm model string (the ``llm`` extra). ``role_models`` writes the kinds
into the run's ``director_model``/``builder_model``/``person`` fields, the
names ``craft-env report``, ``leaderboard`` and ``export`` already read
(``eval.results.results.RunResult``, ``train.replay``): ``person`` where
every seat of a role is a person, the agent where one kind holds the
role's other seats and at most one person sits beside it (``person``
names that seat, as ``craft-env play`` does), and the kinds joined by
``+`` for any other mix; the exact kind of every seat goes into
``config.json`` too (``seat_kinds``).

A person's input is read by the text layer like the terminal's
(``agents.human``): a builder's line by ``parse_builder_reply`` (or the
number of a candidate), a director's message by
``parse_director_message`` (refused when it holds no instruction and the
builder is a built-in agent, which reads nothing else) or an instruction
picked from the seat's menu. What the text layer cannot read is refused
with its reason, and the person's turn stays open.
"""

from __future__ import annotations

import re
from typing import Any

from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply
from craft_env.core.views import BUILDER, check_seats
from craft_env.eval.run.settings import BUILT_IN
from craft_env.text import NOOP_TEXT, ParseError, format_move, parse_builder_reply, parse_director_message
from craft_env.web.frames import director_options

PERSON = "person"
#: What a person's seat does when its timeout passes: keep waiting (the organiser sees it is late), or pass.
ON_TIMEOUT = ("wait", "pass")
#: The longest message or move line a person may send, in characters.
MAX_INPUT_CHARS = 2_000
#: The longest participant label the organiser may type for a seat.
MAX_LABEL_CHARS = 80
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:/@+-]{0,199}$")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


class Refused(ValueError):
    """A request the server will not act on; ``status`` is its HTTP status (400 unless told)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def check_kind(seat: str, kind: object) -> str:
    """``kind`` of ``seat`` checked: ``person``, ``scripted``, ``random`` or a litellm model string."""
    if kind == PERSON or kind in BUILT_IN:
        return str(kind)
    if isinstance(kind, str) and _MODEL.match(kind) and "/" in kind:
        return kind
    raise Refused(
        f"seats.{seat}: expected person, scripted, random or a litellm model like 'openai/gpt-4o-mini', "
        f"got {str(kind)[:80]!r}"
    )


def check_label(seat: str, label: object) -> str:
    """An organiser's label for a seat (a participant code): short, one line, no control characters."""
    if label is None or label == "":
        return ""
    if not isinstance(label, str) or len(label) > MAX_LABEL_CHARS or _CONTROL.search(label) or "\n" in label:
        raise Refused(f"labels.{seat}: expected one line of at most {MAX_LABEL_CHARS} characters")
    return label.strip()


def check_seat_kinds(kinds: object, directors: tuple[str, ...]) -> dict[str, str]:
    """``{seat: kind}`` for the builder and every seated director; ``Refused`` naming what is wrong."""
    if not isinstance(kinds, dict):
        raise Refused("seats: expected an object of seat -> kind")
    wanted = (BUILDER, *check_seats(directors))
    unknown = sorted(set(kinds) - set(wanted))
    if unknown:
        raise Refused(f"seats: {unknown[0]!r} is not seated (seated: {', '.join(wanted)})")
    return {seat: check_kind(seat, kinds.get(seat, "scripted")) for seat in wanted}


def _role(kinds: list[str]) -> tuple[str, str | None]:
    """``(model field, person seat index or None)`` for the kinds of one role's seats."""
    others = sorted({k for k in kinds if k != PERSON})
    people = [i for i, k in enumerate(kinds) if k == PERSON]
    if not others:
        return PERSON, None
    if len(others) == 1 and len(people) <= 1:
        return others[0], (people[0] if people else None)
    return "+".join(sorted(set(kinds))), None


def role_models(kinds: dict[str, str]) -> dict[str, Any]:
    """The ``RunSettings`` fields that name who played: ``director_model``, ``builder_model``, ``person``."""
    directors = [seat for seat in kinds if seat != BUILDER]
    director_model, index = _role([kinds[s] for s in directors])
    person = directors[index] if index is not None else None
    return {"director_model": director_model, "builder_model": kinds[BUILDER], "person": person}


def has_instruction(message: str, context: AgentContext) -> bool:
    return bool(parse_director_message(message, context.seat, context.n, context.height))


def _text(payload: dict[str, Any], name: str) -> str:
    value = payload.get(name)
    if not isinstance(value, str):
        raise Refused(f"{name}: expected text")
    if len(value) > MAX_INPUT_CHARS:
        raise Refused(f"{name}: at most {MAX_INPUT_CHARS} characters, got {len(value)}")
    if _CONTROL.search(value):
        raise Refused(f"{name}: control characters are not accepted")
    value = value.strip()
    if not value:
        raise Refused(f"{name}: empty")
    return value


def _number(payload: dict[str, Any], name: str) -> int:
    value = payload.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(f"{name}: expected a whole number, got {str(value)[:40]!r}")
    return value


def director_reply(payload: dict[str, Any], context: AgentContext, strict: bool) -> DirectorReply:
    """A person's director turn from ``{"message": text}``, ``{"intent": id}`` or ``{"pass": true}``."""
    if payload.get("pass") is True:
        return DirectorReply(message=NOOP_TEXT)
    if "intent" in payload:
        intent = _number(payload, "intent")
        offered = {o["id"]: o["text"] for o in director_options(context)}
        if intent not in offered:
            raise Refused(f"intent: {intent} is not one of the instructions offered this turn", 422)
        return DirectorReply(message=offered[intent], intent=intent)
    message = _text(payload, "message")
    if message.lower() == "pass":
        return DirectorReply(message=NOOP_TEXT)
    if strict and not has_instruction(message, context):
        raise Refused(
            "message: the builder would not understand that (no instruction found); "
            "write one like the examples or pick an instruction", 422,
        )
    return DirectorReply(message=message)


def builder_reply(payload: dict[str, Any], context: AgentContext) -> BuilderReply:
    """A person's builder turn: ``{"move": line}``, ``{"candidate": k}`` (from 1) or ``{"pass": true}``."""
    if payload.get("pass") is True:
        return BuilderReply(action="pass")
    if "candidate" in payload:
        k = _number(payload, "candidate")
        candidates = list(context.candidates or ())
        if not 1 <= k <= len(candidates):
            offer = f"1..{len(candidates)}" if candidates else "none are offered without the oracle"
            raise Refused(f"candidate: no candidate {k} (candidates: {offer})", 422)
        return BuilderReply(action=format_move(candidates[k - 1]))
    line = _text(payload, "move")
    try:
        parse_builder_reply(line, context.n, context.height, context.protocol.tolerant_span)
    except ParseError as error:
        raise Refused(f"move: not understood: {error.reason}", 422) from None
    return BuilderReply(action=line)


def person_reply(payload: object, context: AgentContext, strict: bool) -> DirectorReply | BuilderReply:
    """The reply of the person whose turn ``context`` is; ``Refused`` (with the reason) for anything else."""
    if not isinstance(payload, dict):
        raise Refused("expected a JSON object")
    if context.seat is None:
        return builder_reply(payload, context)
    return director_reply(payload, context, strict)


def timed_out(context: AgentContext, seconds: float) -> DirectorReply | BuilderReply:
    """The pass a seat plays when it did not act within ``seconds`` (the organiser chose ``pass``)."""
    reason = f"no reply within {seconds:g} s: passed by the server"
    if context.seat is None:
        return BuilderReply(action="pass", reason=reason)
    return DirectorReply(message=NOOP_TEXT, reason=reason)

