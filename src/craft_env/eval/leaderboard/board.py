"""The board: every entry, its group, ranks and bands, structure cards and replay links, as plain data.

``build_board`` gathers the entries (run directories, paper-log
directories, entry files; the paper's published rows unless told not to),
tags them, splits them into groups of the same dataset, protocol and
condition, ranks each group (``bands.rank_bands``), and lays out what every
view of the page shows. The HTML page (``page``), the Markdown
(``markdown``) and ``--format json`` are all drawn from this one dict.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from craft_env.core.views import ALL_SEATS
from craft_env.eval.results.bands import LEVEL, PAIRED, SAMPLES, SEED, Scores, rank_bands
from craft_env.eval.results.behaviour import MEASURES, TEAMMATE_FORMULA, measures
from craft_env.eval.leaderboard.entries import (
    PUBLISHED,
    RUN,
    SUMMARY_KEYS,
    Entry,
    Group,
    apply_tags,
    entries_from_path,
    unique_keys,
)
from craft_env.eval.leaderboard.entryfile import read_entry
from craft_env.eval.leaderboard.published import published_entries, published_table
from craft_env.eval.leaderboard.targets import COMPLEXITIES, structure_key, targets_named
from craft_env.eval.replay.page import block_colours, load_runs, render_html, replay_data, target_picture
from craft_env.eval.results.taxonomy import CATEGORIES
from craft_env.models.jsonl import json_safe, write_atomic
from craft_env.text.clean import valid_unicode

log = logging.getLogger(__name__)

TABS = ("table", "bands", "structures", "failures", "behaviour")


@dataclass
class BoardOptions:
    """What ``craft-env leaderboard`` was asked for, beside its inputs."""

    published: bool = True
    tags: Sequence[tuple[str, str]] = ()
    replays: dict[str, str] = field(default_factory=dict)
    with_replays: bool = False
    output: Path | None = None
    samples: int = SAMPLES
    seed: int = SEED
    title: str = "CRAFT leaderboard"


def load_entries(paths: Sequence[str | os.PathLike]) -> list[Entry]:
    """The entries of every input: an entry file, a run directory or a directory of paper result logs."""
    entries: list[Entry] = []
    for raw in paths:
        path = Path(raw)
        if path.is_file():  # an entry file, whatever its keys' order (read_entry refuses any other file)
            entries.append(read_entry(path))
        elif path.is_dir():
            entries += entries_from_path(path)
        else:
            raise ValueError(f"leaderboard: {os.fspath(raw)!r} is neither a directory nor an entry file")
    return entries


def _split(entry: Entry) -> dict[str, float | None] | None:
    """Mean progress on simple, medium and complex structures (``None`` without labels)."""
    if not entry.games or not entry.complexity:
        return None
    found = {}
    for label in COMPLEXITIES:
        values = [g.progress for g in entry.games if entry.complexity.get(g.structure) == label]
        found[label] = math.fsum(values) / len(values) if values else None
    return found


def _fractions(counts: dict[str, int] | None) -> dict[str, Any] | None:
    if counts is None:
        return None
    turns = counts["turns"]
    return {**{c: (counts[c] / turns if turns else None) for c in CATEGORIES}, "turns": turns}


def _interval(interval: Any) -> dict[str, Any] | None:
    if interval is None:
        return None
    return {
        "diff": interval.diff,
        "low": interval.low,
        "high": interval.high,
        "method": interval.method,
        "structures": interval.structures,
        "reason": interval.reason,
    }


def _entry_record(entry: Entry, group: int, placement: Any) -> dict[str, Any]:
    credit = entry.credit or {}
    return {
        "key": entry.key,
        "name": entry.director_model,
        "label": entry.director_model,
        "builder": entry.builder_model,
        "kind": entry.kind,
        "tags": list(entry.tags),
        "group": group,
        "runs": entry.runs,
        "games": entry.summary.get("games"),
        "errored": entry.errored if entry.kind != PUBLISHED else None,
        "m": {k: entry.summary.get(k) for k in SUMMARY_KEYS},
        "split": _split(entry),
        "rank": placement.rank,
        "band": placement.band,
        "position": placement.position,
        "score": placement.mean,
        "not_comparable": placement.not_comparable,
        "ci": list(placement.interval),
        "ci_method": placement.interval_method,
        "next": _interval(placement.to_next),
        "beaten_by": placement.beaten_by,
        "taxonomy": _fractions(entry.taxonomy),
        "behaviour": measures(entry.behaviour) if entry.behaviour else None,
        "judges": entry.judges,
        "credit": {k: v for k, v in credit.items() if k.startswith("lambda")} or None,
        "source": valid_unicode(entry.source.name) if entry.source else None,
        "citation": entry.citation,
        "settings": entry.settings,
    }


def _scores(entry: Entry) -> Scores:
    """What the bands see of an entry: per-structure progress, or (a published row) the mean, the SEM and
    the structures it was played on: every structure of its bundled dataset (Table 1: the paper's 20)."""
    by_structure = entry.by_structure if entry.games else None
    mean = entry.summary.get("progress")
    sem = entry.summary.get("progress_sem")
    played = None
    if entry.kind == PUBLISHED:
        targets = targets_named(entry.dataset)
        played = frozenset(structure_key(t.id, i) for i, t in enumerate(targets)) if targets else None
    return Scores(
        entry.key,
        math.nan if mean is None else float(mean),
        math.nan if sem is None else float(sem),
        by_structure,
        played,
    )


def _groups(entries: list[Entry]) -> list[tuple[Group, list[Entry]]]:
    found: dict[Group, list[Entry]] = {}
    for entry in entries:
        found.setdefault(entry.group, []).append(entry)
    # the group with our own runs first, then by size and label
    return sorted(
        found.items(),
        key=lambda item: (all(e.kind == PUBLISHED for e in item[1]), -len(item[1]), item[0].label),
    )


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _page_names(keys: Sequence[str]) -> dict[str, str]:
    """A file name for each entry key's replay page: distinct for distinct keys, whatever the file system.

    A key of letters, digits, ``.``, ``_`` and ``-`` keeps its name; any other (``x#2``, ``a/b``) has the
    rest replaced by ``_`` and the first 8 hex digits of its SHA-256 appended, and so does a key whose name
    is already taken, ignoring case (``x_2`` beside ``X_2``).
    """
    names: dict[str, str] = {}
    used: set[str] = set()
    for key in sorted(keys):
        safe = _UNSAFE.sub("_", key).strip("_.") or "entry"
        if safe != key or safe.casefold() in used:
            safe = f"{safe[:80]}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:8]}"
        while safe.casefold() in used:  # a key that is itself another key's hashed name
            safe += "_"
        names[key] = safe
        used.add(safe.casefold())
    return names


def _link(target: Path, output: Path | None, game: int) -> str:
    base = output.parent if output is not None else Path.cwd()
    relative = Path(os.path.relpath(target.resolve(), base.resolve())).as_posix()
    quoted = "/".join(
        re.sub(r"[^A-Za-z0-9._~-]", lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), part)
        for part in relative.split("/")
    )
    return f"{quoted}#g={game}&t=1"


def _replay_links(entries: list[Entry], options: BoardOptions) -> dict[str, dict[str, str]]:
    """``{entry key: {structure: link}}`` to the replay page of each entry's first game on a structure."""
    given = {Path(d).resolve(): Path(f) for d, f in options.replays.items()}
    links: dict[str, dict[str, str]] = {}
    names = _page_names([e.key for e in entries])
    for entry in entries:
        if entry.kind != RUN or entry.source is None:
            continue
        page = given.get(entry.source.resolve())
        if page is None and options.with_replays:
            folder = (options.output.parent if options.output else Path.cwd()) / (
                (options.output.stem if options.output else "leaderboard") + "-replays"
            )
            folder.mkdir(parents=True, exist_ok=True)
            page = folder / f"{names[entry.key]}.html"
            html = render_html(replay_data([entry.source]), f"CRAFT replay: {entry.key}")
            write_atomic(page, valid_unicode(html))  # the replay's config text may hold a lone surrogate
        if page is None:
            continue
        games = [g for run in load_runs([entry.source]) for g in run.games]
        found: dict[str, str] = {}
        for position, game in enumerate(games):
            key = structure_key(game.structure_id, game.structure_index)
            found.setdefault(key, _link(page, options.output, position))
        links[entry.key] = found
    for directory in given:
        if not any(e.source is not None and e.source.resolve() == directory for e in entries):
            raise ValueError(
                f"--replay: {os.fspath(directory)!r} is not the directory of an entry on the board"
            )
    return links


def _structure_cards(groups: list[tuple[Group, list[Entry]]], links: dict[str, dict[str, str]]) -> list[dict]:
    """One section per dataset: a card per structure played, with each entry's mean progress on it."""
    sections = []
    by_dataset: dict[str, list[Entry]] = {}
    for group, members in groups:
        by_dataset.setdefault(group.dataset, []).extend(e for e in members if e.games)
    for dataset, members in by_dataset.items():
        if not members:
            continue
        targets = targets_named(dataset)
        seats = tuple(s for s in ALL_SEATS if any(s in e.condition.seats for e in members))
        played: dict[str, int] = {}
        for entry in members:
            for game in entry.games:
                played.setdefault(game.structure, game.index)
        runs = {entry.key: entry.by_structure for entry in members}
        cards = []
        for structure, index in sorted(played.items(), key=lambda item: (item[1], item[0])):
            results = []
            for entry in members:
                values = runs[entry.key].get(structure)
                if values:
                    results.append(
                        {
                            "entry": entry.key,
                            "progress": math.fsum(values) / len(values),
                            "runs": len(values),
                            "replay": links.get(entry.key, {}).get(structure),
                        }
                    )
            target = targets[index] if targets and 0 <= index < len(targets) else None
            if target is not None and target.id is not None and target.id != structure:
                target = None
            complexity = next((e.complexity[structure] for e in members if structure in e.complexity), None)
            cards.append(
                {
                    "key": structure,
                    "index": index,
                    "complexity": complexity,
                    "mean": math.fsum(r["progress"] for r in results) / len(results),
                    "results": sorted(results, key=lambda r: -r["progress"]),
                    "picture": target_picture(target, seats) if target is not None else None,
                }
            )
        sections.append({"dataset": dataset, "cards": cards})
    return sections


def build_board(paths: Sequence[str | os.PathLike], options: BoardOptions | None = None) -> dict[str, Any]:
    """Everything the page shows (see the module docstring)."""
    options = options or BoardOptions()
    options.title = valid_unicode(options.title)
    entries = load_entries(paths)
    if not entries and not options.published:
        raise ValueError("leaderboard: no entries (give run directories, paper logs or entry files)")
    if options.published:
        entries += published_entries()
    unique_keys(entries)
    apply_tags(entries, options.tags)
    groups = _groups(entries)
    records = []
    group_records = []
    for number, (group, members) in enumerate(groups):
        placements = rank_bands([_scores(e) for e in members], options.samples, options.seed, LEVEL)
        by_key = {e.key: e for e in members}
        ordered = [_entry_record(by_key[p.key], number, p) for p in placements]
        records += ordered
        labelled = {e.complexity.get(g.structure) for e in members for g in e.games} - {None}
        group_records.append(
            {
                "id": number,
                "dataset": group.dataset,
                "protocol": group.protocol,
                "condition": group.condition,
                "label": group.label,
                "entries": [r["key"] for r in ordered],
                "complexity": bool(labelled),
                "paired": any(r["ci_method"] == PAIRED for r in ordered),
            }
        )
    names = [r["name"] for r in records]
    for record in records:
        if names.count(record["name"]) > 1:
            record["label"] = f"{record['name']} ({record['key']})"
    links = _replay_links(entries, options)
    tags = sorted({t for e in entries for t in e.tags})
    builders = {e.builder_model for e in entries if e.builder_model is not None}
    table = published_table()
    return json_safe(
        {
            "title": options.title,
            "tabs": list(TABS),
            "colours": block_colours(),
            "categories": list(CATEGORIES),
            "complexities": list(COMPLEXITIES),
            "measures": list(MEASURES),
            "teammate_formula": TEAMMATE_FORMULA,
            "tags": tags,
            "show_builder": len(builders) > 1,
            "groups": group_records,
            "entries": records,
            "structures": _structure_cards(groups, links),
            "bootstrap": {"samples": options.samples, "seed": options.seed, "level": LEVEL},
            "published": {"shown": options.published, "citation": table["citation"], "note": table["note"]},
        }
    )
