"""The fields of a finished game's log that export reads, checked before the game is replayed.

A run directory's log is read line by line and a torn or unreadable line is
skipped (``models.jsonl``), so a finished game can lack a turn; and a line
that reads can still hold a field of the wrong type. Export replays a game
only when its turns are numbered 1 to the last turn its ``done`` marker
names, every speaker of ``director_order`` has its entry in
``director_responses`` (in that order), and every field below has its
type. Otherwise ``check_game`` raises ``LogFault`` naming the turn, the
field and the value, and ``fault_line`` finds the log line to name: export
then skips that one game (``docs/train.md``).
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

from craft_env.eval.logs.games import GameLog
from craft_env.models.jsonl import loads_line

#: Optional text fields of a director's entry and of the builder's record.
DIRECTOR_TEXT = ("raw", "message", "think")
BUILDER_TEXT = ("raw", "think")
#: Flags of a turn record that export's outcome reads.
FLAGS = ("legal", "executed", "optimal")


class LogFault(ValueError):
    """A finished game's log cannot be replayed; ``turn`` is the turn at fault (``None``: the game)."""

    def __init__(self, message: str, turn: int | None = None) -> None:
        super().__init__(message)
        self.turn = turn


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text_or_none(record: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        value = record.get(name)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{where}.{name}: expected text or null, got {value!r}")


def _check_directors(record: dict[str, Any]) -> None:
    responses = record.get("director_responses")
    if responses is None:
        responses = []
    if not isinstance(responses, list):
        raise ValueError(f"director_responses: expected a list, got {responses!r}")
    for k, entry in enumerate(responses):
        where = f"director_responses[{k}]"
        if not isinstance(entry, dict):
            raise ValueError(f"{where}: expected an object, got {entry!r}")
        if not isinstance(entry.get("director"), str):
            raise ValueError(f"{where}.director: expected a seat name, got {entry.get('director')!r}")
        if "order" in entry and not _is_int(entry["order"]):
            raise ValueError(f"{where}.order: expected an integer, got {entry['order']!r}")
        _text_or_none(entry, DIRECTOR_TEXT, where)
    order = record.get("director_order")
    spoken = [entry["director"] for entry in sorted(responses, key=lambda e: e.get("order", 0))]
    if order is not None and order != spoken:
        raise ValueError(f"director_responses: the speakers {spoken!r} are not director_order {order!r}")


def _check_builder(record: dict[str, Any]) -> None:
    builder = record.get("builder")
    if builder is None:
        builder = {}
    if not isinstance(builder, dict):
        raise ValueError(f"builder: expected an object, got {builder!r}")
    _text_or_none(builder, BUILDER_TEXT, "builder")
    followed = builder.get("followed")
    if followed is not None and (
        not isinstance(followed, list) or not all(isinstance(seat, str) for seat in followed)
    ):
        raise ValueError(f"builder.followed: expected a list of seat names, got {followed!r}")
    _text_or_none(record, ("move", "question"), "turn")


def _check_outcome(record: dict[str, Any]) -> None:
    for name in FLAGS:
        if not isinstance(record.get(name), bool):
            raise ValueError(f"{name}: expected true or false, got {record.get(name)!r}")
    before = record.get("structure_before")
    if not isinstance(before, dict) or not isinstance(before.get("structure"), dict):
        raise ValueError(f"structure_before: expected a board object, got {before!r}")
    data = record["progress_data"]
    progress, distance = data.get("progress"), data.get("distance")
    if not isinstance(progress, (int, float)) or isinstance(progress, bool) or not math.isfinite(progress):
        raise ValueError(f"progress_data.progress: expected a finite number, got {progress!r}")
    if not _is_int(distance) or distance < 0:
        raise ValueError(f"progress_data.distance: expected a whole number >= 0, got {distance!r}")


def check_game(game: GameLog) -> None:
    """``LogFault`` when ``game`` (finished) cannot be replayed (see the module docstring)."""
    last = (game.marker or {}).get("turn_number")
    numbers = [record["turn_number"] for record in game.turns]
    if not _is_int(last) or numbers != list(range(1, last + 1)):
        missing = sorted(set(range(1, last + 1)) - set(numbers)) if _is_int(last) else []
        if missing:
            raise LogFault(
                f"turn {missing[0]} is missing from the log (a torn or unreadable line)", missing[0]
            )
        raise LogFault(f"the done marker's turn_number {last!r} does not match turns {numbers[:3]!r}..")
    for record in game.turns:
        try:
            _check_directors(record)
            _check_builder(record)
            _check_outcome(record)
        except ValueError as error:
            raise LogFault(f"turn {record['turn_number']}: {error}", record["turn_number"]) from None


def fault_line(log_path: str | os.PathLike, game: GameLog, turn: int | None) -> int | None:
    """The line of ``log_path`` to name for a fault at ``turn`` of ``game``: the turn's own line, or else the
    first line that does not read (a torn one). Read again only when a game is skipped."""
    unreadable = None
    with Path(log_path).open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if raw.isspace():
                continue
            try:
                record = loads_line(raw)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                unreadable = unreadable or number
                continue
            if (
                isinstance(record, dict)
                and record.get("kind") == "turn"
                and record.get("run") == game.run
                and record.get("structure_index") == game.structure_index
                and record.get("attempt", 1) == game.attempt
                and record.get("turn_number") == turn
            ):
                return number
    return unreadable
