"""Director behaviour from logged turns: pure counts per game, measures per entry (docs/leaderboard.md).

Every measure is a ratio of two counts, so games and runs pool by adding
counts (``BehaviourCounts.__add__``) and an entry file can carry the counts
and be checked. Over all logged turns of finished games:

* **chatter**: of the director messages with text, the share that name no
  block, no position and no layer (``text.named_information``);
* **broken record**: of the director messages on a turn that follows a turn
  whose move left the board unchanged (failed, a question, a pass), from a
  director that also spoke on that turn, the share that repeat its own
  message of that turn (``repeats``: the same words, Jaccard >= 0.8 over
  the sets of lower-case words);
* **grounding**: of the director replies with any text, the share whose
  think or message names a board position (a cell or a wall column);
* **recovery**: of the turns after turn 1 that made no progress (progress
  after the turn not above progress after the turn before) and are followed
  by another turn, the share whose next turn makes progress;
* **panic**: of the director messages on a turn that follows a setback (a
  turn whose move failed, or after which progress fell below progress after
  the turn before), the share that call for tearing the build down or raise
  an alarm (``panics``: a reset phrase such as "start over" or "remove
  everything", or an alarm word such as stop / wrong / no shouted in
  capitals or followed by "!");
* **overthink**: characters of think text over characters of message text,
  over all director replies (0 with no think text; unbounded above);
* **teammate**: the mean of (1 - chatter), (1 - broken record), (1 - panic),
  grounding and recovery, over those of the five that are defined.

A measure with an empty denominator is NaN (shown as n/a), never 0. Counts
read from an entry file written before panic was measured (entry format
version 1) have no panic counts: panic is n/a there and the teammate score
is the mean of the other four, as it was when that file was written.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from typing import Any

from craft_env.eval.results.checked import count
from craft_env.text import named_information

MEASURES = ("chatter", "broken_record", "panic", "grounding", "recovery", "overthink", "teammate")
TEAMMATE_FORMULA = (
    "teammate = mean of (1 - chatter), (1 - broken record), (1 - panic), grounding, recovery (those defined)"
)
#: The counts that entry files of format version 1 predate (read as 0: panic not measured).
PANIC_COUNTS = ("panic_chances", "panics")
REPEAT_SIMILARITY = 0.8
PROGRESS_TOLERANCE = 1e-9
_WORD = re.compile(r"[a-z0-9]+")
NAN = float("nan")

# Panic (docs/leaderboard.md, "Director behaviour"). A reset phrase, in any case: starting over, or a
# tear-down verb whose object is the whole build and is not narrowed to a part of it.
_WHOLE_BUILD = (
    r"(?:everything|it\s+all|all\s+of\s+it|all\s+(?:the\s+)?blocks|the\s+board"
    r"|the\s+(?:whole|entire)\s+(?:thing|structure|board|build|tower|wall))"
)
_NARROWED = r"(?!\s+(?:on|in|at|from|of|above|below|except|but|that|which|to|with|apart)\b)"
_TEAR_DOWN = (
    r"(?:remove|clear|delete|undo|scrap|demolish|dismantle|tear\s+down|knock\s+down"
    r"|take\s+(?:down|off|away))"
)
_RESET = re.compile(
    rf"\b(?:start(?:ing)?\s+(?:all\s+)?(?:over|again|afresh)|from\s+scratch|restart|reset"
    rf"|{_TEAR_DOWN}\s+{_WHOLE_BUILD}\b{_NARROWED}"
    r"|(?:tear|knock)\s+(?:it(?:\s+all)?|everything)\s+down|take\s+(?:it\s+all|everything)\s+(?:down|off|away))",
    re.IGNORECASE,
)
#: Alarm words: they count when shouted (written in capitals) or followed by "!"; said calmly ("no block
#: there", "the wrong colour") they are ordinary corrections.
ALARM_WORDS = ("stop", "wrong", "no", "mistake", "mistakes", "oops", "undo", "halt")
_SHOUTED = re.compile(rf"\b(?:{'|'.join(w.upper() for w in ALARM_WORDS)})\b")
_EXCLAIMED = re.compile(rf"\b(?:{'|'.join(ALARM_WORDS)})\s*!", re.IGNORECASE)


@dataclass(frozen=True)
class BehaviourCounts:
    """The numerators and denominators of the measures (see the module docstring)."""

    messages: int = 0
    chatter: int = 0
    repeat_chances: int = 0
    repeats: int = 0
    replies: int = 0
    grounded: int = 0
    stalls: int = 0
    recoveries: int = 0
    think_chars: int = 0
    message_chars: int = 0
    panic_chances: int = 0
    panics: int = 0

    def __add__(self, other: BehaviourCounts) -> BehaviourCounts:
        return BehaviourCounts(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], where: str = "behaviour", predates: Iterable[str] = ()
    ) -> BehaviourCounts:
        """Counts from plain data; a missing count, or one that is not an int from 0 to
        ``checked.MAX_COUNT``, is a ``ValueError`` naming it.

        ``predates`` names counts the data was written before (``PANIC_COUNTS`` for entry files of
        version 1): they are 0, not measured, whatever the data holds.
        """
        values = {}
        skipped = set(predates)
        for f in fields(cls):
            if f.name in skipped:
                values[f.name] = 0
                continue
            value = data.get(f.name) if isinstance(data, Mapping) else None
            values[f.name] = count(value, f"{where}.{f.name}")
        for part, whole in _PARTS.items():
            if values[part] > values[whole]:
                raise ValueError(
                    f"{where}.{part}: {values[part]} is more than {where}.{whole} ({values[whole]})"
                )
        return cls(**values)


#: Each numerator count and the denominator it is a part of.
_PARTS = {
    "chatter": "messages",
    "repeats": "repeat_chances",
    "grounded": "replies",
    "recoveries": "stalls",
    "panics": "panic_chances",
}


@lru_cache(maxsize=1 << 16)
def _named(text: str) -> frozenset[str]:
    """``text.named_information``, remembered: teams repeat their messages word for word."""
    return named_information(text)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else NAN


@lru_cache(maxsize=1 << 16)
def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def repeats(message: str, previous: str) -> bool:
    """Whether ``message`` says what ``previous`` said: Jaccard >= 0.8 over their sets of lower-case words."""
    a, b = _words(message), _words(previous)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= REPEAT_SIMILARITY


@lru_cache(maxsize=1 << 16)
def panics(message: str) -> bool:
    """Whether ``message`` calls for tearing the build down or raises an alarm (the panic measure).

    A reset phrase in any case ("start over", "start again", "from scratch",
    "restart", "reset", or remove / clear / undo / scrap / tear down ... the
    whole build: "everything", "it all", "all the blocks", "the board", "the
    whole structure", unless narrowed to a part: "remove everything on the
    left" is not), or an alarm word (``ALARM_WORDS``) shouted in capitals
    ("STOP", "WRONG") or followed by "!" ("no!", "Wrong !").
    """
    return bool(_RESET.search(message) or _SHOUTED.search(message) or _EXCLAIMED.search(message))


def _replies(turn: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The turn's director replies that are JSON objects (logged turns are read from JSON: dicts)."""
    replies = turn.get("director_responses")
    return [r for r in replies if isinstance(r, dict)] if isinstance(replies, list) else []


def _progress(turn: Mapping[str, Any]) -> float | None:
    data = turn.get("progress_data")
    value = data.get("progress") if isinstance(data, dict) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _board_changed(turn: Mapping[str, Any]) -> bool:
    """Whether the turn's move changed the board (an executed place or remove)."""
    return bool(turn.get("executed"))


def _setback(turn: Mapping[str, Any], before: float | None, after: float | None) -> bool:
    """Whether the turn's move failed (``legal`` false) or left the board further from the target."""
    fell = before is not None and after is not None and after < before - PROGRESS_TOLERANCE
    return turn.get("legal") is False or fell


def game_behaviour(turns: Sequence[Mapping[str, Any]]) -> BehaviourCounts:
    """The counts of one game's turns (in turn order), read in one pass over the turns."""
    messages = chatter = chances = repeated = replies = grounded = 0
    panic_chances = panicked = think_chars = message_chars = 0
    earlier: dict[str, str] | None = None  # each seat's message on the turn before, if it left the board as it was
    after_setback = False
    progress: list[float | None] = []
    for turn in turns:
        said: dict[str, str] = {}  # each seat's message (its last, when it spoke twice, as the paper allows)
        for reply in _replies(turn):
            message, think = reply.get("message"), reply.get("think")
            message = message.strip() if isinstance(message, str) else ""
            think = think.strip() if isinstance(think, str) else ""
            think_chars += len(think)
            message_chars += len(message)
            if message:
                kinds = _named(message)
                messages += 1
                chatter += not kinds
                said[str(reply.get("director"))] = message
                if after_setback:
                    panic_chances += 1
                    panicked += panics(message)
                if "position" in kinds:
                    replies += 1
                    grounded += 1
                    continue
            if message or think:
                replies += 1
                grounded += bool(think) and "position" in _named(think)
        if earlier is not None:
            for seat, message in said.items():
                if seat in earlier:
                    chances += 1
                    repeated += repeats(message, earlier[seat])
        earlier = None if _board_changed(turn) else said
        now = _progress(turn)
        after_setback = _setback(turn, progress[-1] if progress else None, now)
        progress.append(now)
    stalls = recovered = 0
    for before, now, after in zip(progress, progress[1:-1], progress[2:]):
        if before is None or now is None or after is None or now > before + PROGRESS_TOLERANCE:
            continue
        stalls += 1
        recovered += after > now + PROGRESS_TOLERANCE
    return BehaviourCounts(
        messages, chatter, chances, repeated, replies, grounded, stalls, recovered, think_chars, message_chars,
        panic_chances, panicked,
    )


def total(counts: Iterable[BehaviourCounts]) -> BehaviourCounts:
    """The counts of several games (or runs) pooled."""
    pooled = BehaviourCounts()
    for item in counts:
        pooled = pooled + item
    return pooled


def measures(counts: BehaviourCounts) -> dict[str, float]:
    """The measures of ``counts`` (NaN where the denominator is empty; see the module docstring)."""
    found = {
        "chatter": _ratio(counts.chatter, counts.messages),
        "broken_record": _ratio(counts.repeats, counts.repeat_chances),
        "panic": _ratio(counts.panics, counts.panic_chances),
        "grounding": _ratio(counts.grounded, counts.replies),
        "recovery": _ratio(counts.recoveries, counts.stalls),
        "overthink": _ratio(counts.think_chars, counts.message_chars),
    }
    parts = [
        1.0 - found["chatter"],
        1.0 - found["broken_record"],
        1.0 - found["panic"],
        found["grounding"],
        found["recovery"],
    ]
    defined = [p for p in parts if not math.isnan(p)]
    found["teammate"] = math.fsum(defined) / len(defined) if defined else NAN
    return found
