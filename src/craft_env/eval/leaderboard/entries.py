"""Leaderboard entries: one row per run directory or paper-log group, its games, and its comparison group.

An entry is what one team did under one condition: the director and
builder models, the dataset, the protocol, the condition (oracle, tools,
turns, start, seats), and per game the Table 1 values after its last turn
(``GameResult``). The entry's Table 1 row is always recomputed from those
per-game values (``summarise``), whatever the entry came from, so an entry
file can be checked against them and every row on the board means the same.

Inputs read here: output directories of ``craft-env run`` (all runs of a
directory pooled into one entry, through ``report.load_results``) and
directories of the paper's result logs (one entry per condition and model
pair, replayed by ``paperlogs``). Entry files are read by ``entryfile``;
the paper's published rows by ``published``.

Entries are ranked only against entries of the same *group*: the same
dataset, protocol and condition (``Entry.group``).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from craft_env.core.protocol import is_completed
from craft_env.core.views import DEFAULT_SEATS
from craft_env.eval.judges.tables import judged_summary
from craft_env.eval.results.behaviour import BehaviourCounts, game_behaviour, total
from craft_env.eval.leaderboard.targets import (
    complexity_of,
    identify_dataset,
    paper_log_dataset,
    structure_key,
)
from craft_env.eval.logs.games import CONFIG_NAME, SUMMARY_NAME, GameLog, run_dirs
from craft_env.eval.report.report import load_results
from craft_env.eval.results.checked import shown
from craft_env.eval.results.diagnostics import credit_lambda
from craft_env.eval.results.results import RunResult
from craft_env.eval.results.stats import mean_sem
from craft_env.eval.results.table import METRICS, final_metrics
from craft_env.eval.results.taxonomy import CATEGORIES, taxonomy
from craft_env.models.jsonl import collection_paused
from craft_env.text.clean import valid_unicode, valid_unicode_data

RUN, PAPER_LOGS, ENTRY_FILE, PUBLISHED = "run", "paper logs", "entry file", "published"
JUDGE_FAMILIES = ("SG", "MM", "PS")


@dataclass(frozen=True)
class Condition:
    """What the builder was given and for how long: the part of a run's settings that changes its scores."""

    oracle_n: int | None
    builder_tools: bool = False
    turns: int | None = 20
    start: str = "empty"
    seats: tuple[str, ...] = DEFAULT_SEATS

    @property
    def label(self) -> str:
        """``oracle 5 · no tools · 20 turns`` (plus the start and seats when they are not the defaults)."""
        oracle = (
            "oracle ?"
            if self.oracle_n is None
            else (f"oracle {self.oracle_n}" if self.oracle_n else "no oracle")
        )
        parts = [oracle, "tools" if self.builder_tools else "no tools", f"{self.turns or '?'} turns"]
        if self.start and self.start != "empty":
            parts.append(f"start {self.start}")
        if tuple(self.seats) != DEFAULT_SEATS:
            parts.append(f"seats {','.join(self.seats)}")
        return " · ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        return {
            "oracle_n": self.oracle_n,
            "builder_tools": self.builder_tools,
            "turns": self.turns,
            "start": self.start,
            "seats": list(self.seats),
        }

    @classmethod
    def from_config(cls, config: dict[str, Any]) -> Condition:
        """The condition of a run's ``config.json`` (or an imported paper-log group's config)."""
        oracle = config.get("oracle_n")
        turns = config.get("turns")
        return cls(
            oracle_n=int(oracle) if isinstance(oracle, int) and not isinstance(oracle, bool) else None,
            builder_tools=bool(config.get("builder_tools")),
            turns=int(turns) if isinstance(turns, int) and not isinstance(turns, bool) else None,
            start=str(config.get("start") or "empty"),
            seats=tuple(config.get("seats") or DEFAULT_SEATS),
        )


@dataclass(frozen=True)
class Group:
    """Entries that may be ranked together: same dataset, protocol and condition."""

    dataset: str
    protocol: str
    condition: str

    @property
    def label(self) -> str:
        return f"dataset {self.dataset} · protocol {self.protocol} · {self.condition}"


@dataclass(frozen=True)
class GameResult:
    """One finished game as the board uses it: where it was played and the Table 1 values after it."""

    structure: str
    index: int
    run: int
    progress: float
    completion: float
    position_accuracy: float
    iou: float
    turns: int
    failed: int
    removes: int
    removes_prescribed: int
    followed: int
    completed: bool
    tokens: int = 0
    cost: float = 0.0

    @property
    def fail(self) -> float | None:
        """The game's rate of failed turns (``None`` for a game without turns)."""
        return self.failed / self.turns if self.turns else None


SUMMARY_KEYS = (
    *[k for m in METRICS for k in (m, m + "_sem")],
    *("fail", "fail_sem", "remove", "remove_prescribed", "gap", "followed_oracle", "completed"),
    *("games", "turns", "tokens", "cost"),
)


def summarise(games: Sequence[GameResult]) -> dict[str, Any]:
    """Table 1 and its extras from per-game values, as ``table.table_row`` computes them from logs."""
    row: dict[str, Any] = {"games": len(games)}
    for name in METRICS:
        row[name], row[name + "_sem"] = mean_sem([float(getattr(g, name)) for g in games])
    row["fail"], row["fail_sem"] = mean_sem([g.fail for g in games if g.fail is not None])
    turns = sum(g.turns for g in games)
    row["turns"] = turns
    row["remove"] = sum(g.removes for g in games) / turns if turns else math.nan
    row["remove_prescribed"] = sum(g.removes_prescribed for g in games) / turns if turns else math.nan
    row["gap"] = row["remove"] - row["remove_prescribed"]
    row["followed_oracle"] = sum(g.followed for g in games) / turns if turns else math.nan
    row["completed"] = sum(g.completed for g in games) / len(games) if games else math.nan
    row["tokens"] = sum(g.tokens for g in games)
    row["cost"] = math.fsum(g.cost for g in games)
    return row


@dataclass
class Entry:
    """One row of the board (see the module docstring); ``games`` is empty for a published row."""

    key: str
    director_model: str
    builder_model: str | None
    kind: str
    dataset: str
    protocol: str
    condition: Condition
    games: list[GameResult] = field(default_factory=list)
    runs: int | None = None
    errored: int = 0
    taxonomy: dict[str, int] | None = None
    behaviour: BehaviourCounts | None = None
    judges: dict[str, Any] | None = None
    credit: dict[str, Any] | None = None
    complexity: dict[str, str] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    files: list[dict[str, str]] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    source: Path | None = None
    citation: str | None = None

    def __post_init__(self) -> None:
        if self.kind != PUBLISHED:
            self.summary = summarise(self.games)

    @property
    def group(self) -> Group:
        return Group(self.dataset, self.protocol, self.condition.label)

    @property
    def by_structure(self) -> dict[str, list[float]]:
        """Progress of each run on each structure (the bands' pairing)."""
        found: dict[str, list[float]] = {}
        for game in sorted(self.games, key=lambda g: (g.structure, g.run)):
            found.setdefault(game.structure, []).append(game.progress)
        return found


def game_result(game: GameLog, rules: Any) -> GameResult:
    """The board's view of one finished game of our logs (the same values ``table.table_row`` reads)."""
    final = final_metrics(game)
    turns = game.turns
    tokens = sum(
        int((t.get("tokens") or {}).get("prompt", 0)) + int((t.get("tokens") or {}).get("completion", 0))
        for t in turns
    )
    exact = final.get("completion", 0.0) >= 1.0 and final.get("voxel_iou", 0.0) >= 1.0
    return GameResult(
        structure=structure_key(game.structure_id, game.structure_index),
        index=game.structure_index,
        run=game.run,
        progress=float(final.get("progress", math.nan)),
        completion=float(final.get("completion", math.nan)),
        position_accuracy=float(final.get("position_accuracy", math.nan)),
        iou=float(final.get("iou", math.nan)),
        turns=len(turns),
        failed=sum(1 for t in turns if not t["legal"]),
        removes=sum(1 for t in turns if t["remove_attempted"]),
        removes_prescribed=sum(1 for t in turns if t["remove_prescribed"]),
        followed=sum(1 for t in turns if t["followed_oracle"]),
        completed=is_completed(rules, final.get("progress", 0.0), exact),
        tokens=tokens,
        cost=math.fsum(float(t.get("cost", 0.0)) for t in turns),
    )


def taxonomy_counts(turns: Iterable[dict[str, Any]]) -> dict[str, int]:
    """How many turns fell in each taxonomy category, and ``turns`` (those with offered moves)."""
    found = taxonomy(turns)
    counts = {name: 0 if found["turns"] == 0 else round(found[name] * found["turns"]) for name in CATEGORIES}
    counts["turns"] = found["turns"]
    return counts


def _judges(result: RunResult) -> dict[str, Any] | None:
    """SG/MM/PS means of the first judge model (by name) run over the result's directory, if any."""
    summary = sorted(judged_summary([result]), key=lambda e: e["judge_model"]) if result.source else []
    if not summary:
        return None
    first = summary[0]
    found: dict[str, Any] = {"model": first["judge_model"]}
    for family in JUDGE_FAMILIES:
        stats = first["scores"].get(family)
        found[family] = stats["mean"] if stats else None
    return found


def from_result(result: RunResult, key: str, kind: str, dataset: str, complexity: dict[str, str]) -> Entry:
    """An entry from a report row (a run directory's pooled runs, or one paper-log group)."""
    rules = result.rules
    turns = [t for g in result.games for t in g.turns]
    credit = credit_lambda(turns, result.seats)
    return Entry(
        key=key,
        director_model=result.director_model,
        builder_model=result.builder_model,
        kind=kind,
        dataset=dataset,
        protocol=rules.name,
        condition=Condition.from_config(result.config),
        games=[game_result(g, rules) for g in result.games],
        runs=len({g.run for g in result.games}) or None,
        errored=result.errored,
        taxonomy=taxonomy_counts(turns),
        behaviour=total(game_behaviour(g.turns) for g in result.games),
        judges=_judges(result),
        credit=credit,
        complexity=complexity,
        settings={
            "craft_env_version": result.config.get("craft_env_version"),
            "prompt_version": result.config.get("prompt_version"),
        },
        source=Path(result.source) if result.source else None,
    )


def _complexity(structures: Any, games: Iterable[GameLog]) -> dict[str, str]:
    found = {}
    for game in games:
        if structures and 0 <= game.structure_index < len(structures):
            found[structure_key(game.structure_id, game.structure_index)] = complexity_of(
                structures[game.structure_index]
            )
    return found


def entries_from_path(path: str | os.PathLike) -> list[Entry]:
    """The entries of one run directory (all runs pooled) or one directory of paper result logs.

    The logs' records live only while their entry is made, so the cycle
    collector stays paused until they are gone (``jsonl.collection_paused``):
    it never walks them.
    """
    with collection_paused():
        return _entries_from_path(path)


#: The settings a run's ``summary.json`` repeats from ``config.json``: runs that differ in one are not pooled.
RUN_SETTINGS = ("director_model", "builder_model", "protocol", "prompt_version")


def check_runs_agree(path: Path, config: dict[str, Any]) -> None:
    """Refuse a run directory whose runs were played with different settings (``RUN_SETTINGS``).

    Each finished run's ``summary.json`` names its models and protocol; a run copied in from another
    directory would otherwise be pooled, and shown, under ``config.json``'s names.
    """
    for run in run_dirs(path):
        summary_path = run / SUMMARY_NAME
        try:
            summary = json.loads(summary_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):  # an unfinished run has none; an unreadable one says nothing
            continue
        if not isinstance(summary, dict):
            continue
        summary = valid_unicode_data(summary)
        for name in RUN_SETTINGS:
            mine, declared = summary.get(name), config.get(name)
            if mine is not None and declared is not None and mine != declared:
                raise ValueError(
                    f"leaderboard: {os.fspath(summary_path)}: {name} {shown(mine)} differs from "
                    f"{CONFIG_NAME} ({shown(declared)}); runs of different settings are not pooled into "
                    "one entry: give each its own output directory"
                )


def _entries_from_path(path: str | os.PathLike) -> list[Entry]:
    results = load_results([path])
    pooled = [r for r in results if r.pooled]
    chosen = pooled or results
    name = valid_unicode(Path(path).resolve().name)
    entries = []
    for result in chosen:
        result.config = valid_unicode_data(result.config)  # text enters valid (docs/robustness.md)
        if result.config.get("source") != "paper logs":
            check_runs_agree(Path(path), result.config)
        if result.config.get("source") == "paper logs":
            keys = [(g.structure_index, g.structure_id) for g in result.games]
            dataset = paper_log_dataset(keys)
            kind = PAPER_LOGS
            structures = identify_dataset(dataset)[1] if dataset == "paper" else None
            key = f"{name}/{result.label}"
        else:
            dataset, structures = identify_dataset(result.config.get("dataset"))
            kind = RUN
            key = name if len(chosen) == 1 else f"{name}/{result.label}"
        key = valid_unicode(key)
        entries.append(from_result(result, key, kind, dataset, _complexity(structures, result.games)))
    return entries


def apply_tags(entries: Iterable[Entry], patterns: Sequence[tuple[str, str]]) -> None:
    """Tag each entry with every NAME whose PATTERN (a glob, any case) matches its model or its key."""
    for entry in entries:
        names = (entry.director_model.lower(), entry.key.lower())
        for tag, pattern in patterns:
            if tag not in entry.tags and any(fnmatchcase(n, pattern.lower()) for n in names):
                entry.tags.append(tag)


def unique_keys(entries: list[Entry]) -> None:
    """Make entry keys unique on one board (a repeated key gets ``#2``, ``#3``...)."""
    used: set[str] = set()
    for entry in entries:
        key, count = entry.key, 1
        while key in used:
            count += 1
            key = f"{entry.key}#{count}"
        entry.key = key
        used.add(key)
