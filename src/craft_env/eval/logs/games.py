"""Game logs: one self-describing JSON line per turn, game markers, and resume.

Layout of an output directory::

    OUT/config.json            the run settings (no secrets)
    OUT/cache.jsonl            recorded model calls (see ``cache``)
    OUT/run_<k>/log.jsonl      every line of run k, appended and flushed
    OUT/run_<k>/summary.json   written when run k finishes

Each line of ``log.jsonl`` names its game (``structure_id``,
``structure_index``, ``run``), its ``attempt`` and its ``turn_number``, and
has a ``kind``:

* ``"game"`` with ``event`` ``"start"``, ``"done"``, ``"errored"`` or
  ``"stopped"`` (a person quit ``craft-env play``): game markers
  (``turn_number`` is the last turn played);
* ``"turn"``: the paper's fields (``structure_before``,
  ``director_responses`` with think and message, ``oracle_moves``,
  ``move_attempted``, ``executed``, ``followed_oracle``, ``progress_data``)
  plus ours (``reason``, ``optimal``, ``remove_prescribed``,
  ``remove_attempted``, ``tokens``, ``cost``, ``latency``).

Resume: a game is finished when a ``done`` marker exists; only the turns of
that attempt count. An errored, stopped or unfinished game is played again from the
start under the next attempt number, so stale turns are superseded, never
mixed in: whatever the reader returns holds each game once and each of its
turns once.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from craft_env.models.jsonl import AppendOnlyJsonl, collection_paused, read_jsonl
from craft_env.models.redact import Redactor

log = logging.getLogger(__name__)

LOG_NAME = "log.jsonl"
SUMMARY_NAME = "summary.json"
CONFIG_NAME = "config.json"
CACHE_NAME = "cache.jsonl"
#: The most runs (``run_1`` .. ``run_<MAX_RUNS>``) a run directory holds; more is refused by name.
MAX_RUNS = 1_000


def run_dir(out: str | os.PathLike, run: int) -> Path:
    return Path(out) / f"run_{run}"


@dataclass
class GameLog:
    """One game as the log tells it: its final status and the turns of the attempt that counts."""

    run: int
    structure_index: int
    structure_id: str | None
    status: str = "partial"
    attempt: int = 0
    attempts: int = 0
    turns: list[dict[str, Any]] = field(default_factory=list)
    marker: dict[str, Any] | None = None

    @property
    def key(self) -> tuple[int, int]:
        return (self.run, self.structure_index)


def read_games(log_path: str | os.PathLike) -> dict[tuple[int, int], GameLog]:
    """Every game in one ``log.jsonl``, keyed by ``(run, structure_index)``.

    ``status`` is ``done`` (turns of the done attempt, sorted, one per turn
    number), ``errored`` (last attempt ended in an error), ``stopped`` (a
    person ended it), or ``partial``.
    """
    with collection_paused():
        return _read_games(log_path)


def _read_games(log_path: str | os.PathLike) -> dict[tuple[int, int], GameLog]:
    turns: dict[tuple[int, int, int], dict[int, dict[str, Any]]] = {}
    games: dict[tuple[int, int], GameLog] = {}
    for record in read_jsonl(log_path):
        try:
            key = (int(record["run"]), int(record["structure_index"]))
            attempt = int(record.get("attempt", 1))
        except (KeyError, TypeError, ValueError):
            continue
        game = games.get(key)
        if game is None:
            game = games[key] = GameLog(key[0], key[1], record.get("structure_id"))
        if attempt > game.attempts:
            game.attempts = attempt
        kind = record.get("kind")
        if kind == "turn":
            number = record.get("turn_number")
            if isinstance(number, bool) or not isinstance(number, int) or not isinstance(
                record.get("progress_data"), dict
            ):
                log.warning("%s: skipping a turn line without turn_number or progress_data", log_path)
                continue
            turns.setdefault((*key, attempt), {})[number] = record
        elif kind == "game":
            event = record.get("event")
            if event == "done" and game.status != "done":
                game.status, game.attempt, game.marker = "done", attempt, record
            elif event in ("errored", "stopped") and game.status != "done" and attempt >= game.attempt:
                game.status, game.attempt, game.marker = event, attempt, record
    for game in games.values():
        if game.status == "done":
            by_number = turns.get((*game.key, game.attempt), {})
            game.turns = [by_number[k] for k in sorted(by_number)]
    return games


class RunLog:
    """Writer for one run's ``log.jsonl`` (appends, flushes every line, redacts)."""

    def __init__(self, out: str | os.PathLike, run: int, redactor: Redactor | None = None) -> None:
        self.path = run_dir(out, run) / LOG_NAME
        self.run = run
        self._writer = AppendOnlyJsonl(self.path, redactor)

    def _header(self, index: int, structure_id: str | None, attempt: int, turn_number: int) -> dict[str, Any]:
        return {
            "structure_id": structure_id,
            "structure_index": index,
            "run": self.run,
            "attempt": attempt,
            "turn_number": turn_number,
        }

    def game_event(
        self, event: str, index: int, structure_id: str | None, attempt: int, turn_number: int, **fields: Any
    ) -> None:
        record = self._header(index, structure_id, attempt, turn_number)
        record.update(kind="game", event=event, **fields)
        self._writer.write(record)

    def turn(
        self, index: int, structure_id: str | None, attempt: int, turn_number: int, fields: dict[str, Any]
    ) -> None:
        record = self._header(index, structure_id, attempt, turn_number)
        record["kind"] = "turn"
        record.update(fields)
        self._writer.write(record)

    def close(self) -> None:
        self._writer.close()


def read_config(out: Path) -> dict[str, Any]:
    """A run directory's ``config.json`` (empty when missing or unreadable, with a warning for the latter)."""
    path = out / CONFIG_NAME
    if not path.exists():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        log.warning("%s: unreadable config; showing the run without it", path)
        return {}


def run_dirs(path: Path) -> list[Path]:
    """``path`` itself when it holds a game log, else its ``run_N`` folders that do, in run order."""
    if (path / LOG_NAME).exists():
        return [path]
    found = [p for p in path.glob("run_*") if (p / LOG_NAME).exists()]
    return sorted(
        found, key=lambda p: int(p.name.split("_", 1)[1]) if p.name.split("_", 1)[1].isdigit() else 0
    )
