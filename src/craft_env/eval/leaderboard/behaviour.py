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
* **overthink**: characters of think text over characters of message text,
  over all director replies (0 with no think text; unbounded above);
* **teammate**: the mean of (1 - chatter), (1 - broken record), grounding
  and recovery, over those of the four that are defined.

A measure with an empty denominator is NaN (shown as n/a), never 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, fields
from functools import lru_cache
from itertools import pairwise
from typing import Any

from craft_env.text import named_information

MEASURES = ("chatter", "broken_record", "grounding", "recovery", "overthink", "teammate")
TEAMMATE_FORMULA = (
    "teammate = mean of (1 - chatter), (1 - broken record), grounding, recovery (those defined)"
)
REPEAT_SIMILARITY = 0.8
PROGRESS_TOLERANCE = 1e-9
_WORD = re.compile(r"[a-z0-9]+")
NAN = float("nan")


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

    def __add__(self, other: BehaviourCounts) -> BehaviourCounts:
        return BehaviourCounts(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    def as_dict(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "behaviour") -> BehaviourCounts:
        """Counts from plain data; a missing, negative or non-integer count is a ``ValueError`` naming it."""
        values = {}
        for f in fields(cls):
            value = data.get(f.name) if isinstance(data, Mapping) else None
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{where}.{f.name}: expected a count (an int >= 0), got {value!r}")
            values[f.name] = value
        return cls(**values)


@lru_cache(maxsize=1 << 16)
def _named(text: str) -> frozenset[str]:
    """``text.named_information``, remembered: teams repeat their messages word for word."""
    return named_information(text)


def _ratio(numerator: int, denominator: int) -> float:
    return numerator / denominator if denominator else NAN


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def repeats(message: str, previous: str) -> bool:
    """Whether ``message`` says what ``previous`` said: Jaccard >= 0.8 over their sets of lower-case words."""
    a, b = _words(message), _words(previous)
    if not a or not b:
        return False
    return len(a & b) / len(a | b) >= REPEAT_SIMILARITY


def _replies(turn: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    replies = turn.get("director_responses")
    return [r for r in replies if isinstance(r, Mapping)] if isinstance(replies, list) else []


def _messages_by_seat(turn: Mapping[str, Any]) -> dict[str, str]:
    """Each seat's message of the turn (its last, when a seat spoke twice, as the paper's protocol allows)."""
    found = {}
    for reply in _replies(turn):
        message = _text(reply.get("message"))
        if message:
            found[str(reply.get("director"))] = message
    return found


def _progress(turn: Mapping[str, Any]) -> float | None:
    data = turn.get("progress_data")
    value = data.get("progress") if isinstance(data, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _board_changed(turn: Mapping[str, Any]) -> bool:
    """Whether the turn's move changed the board (an executed place or remove)."""
    return bool(turn.get("executed"))


def game_behaviour(turns: Sequence[Mapping[str, Any]]) -> BehaviourCounts:
    """The counts of one game's turns (in turn order)."""
    messages = chatter = chances = repeated = replies = grounded = stalls = recovered = 0
    think_chars = message_chars = 0
    for turn in turns:
        for reply in _replies(turn):
            message, think = _text(reply.get("message")), _text(reply.get("think"))
            think_chars += len(think)
            message_chars += len(message)
            kinds = _named(message)
            if message:
                messages += 1
                chatter += not kinds
            if message or think:
                replies += 1
                grounded += "position" in kinds or "position" in _named(think)
    for before, turn in pairwise(turns):
        if _board_changed(before):
            continue
        earlier = _messages_by_seat(before)
        for seat, message in _messages_by_seat(turn).items():
            if seat in earlier:
                chances += 1
                repeated += repeats(message, earlier[seat])
    progress = [_progress(t) for t in turns]
    for k in range(1, len(turns) - 1):
        before, now, after = progress[k - 1], progress[k], progress[k + 1]
        if before is None or now is None or after is None or now > before + PROGRESS_TOLERANCE:
            continue
        stalls += 1
        recovered += after > now + PROGRESS_TOLERANCE
    return BehaviourCounts(
        messages, chatter, chances, repeated, replies, grounded, stalls, recovered, think_chars, message_chars
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
        "grounding": _ratio(counts.grounded, counts.replies),
        "recovery": _ratio(counts.recoveries, counts.stalls),
        "overthink": _ratio(counts.think_chars, counts.message_chars),
    }
    parts = [1.0 - found["chatter"], 1.0 - found["broken_record"], found["grounding"], found["recovery"]]
    defined = [p for p in parts if not math.isnan(p)]
    found["teammate"] = math.fsum(defined) / len(defined) if defined else NAN
    return found
