"""Entry files: one leaderboard entry to share, checked when read (docs/leaderboard.md, "Entry files").

``craft-env leaderboard --entry DIR -o model.entry.json`` writes what the
board needs of one run directory (or one paper-log group) without its
logs: the settings (models, protocol, dataset, condition, seats, package
and prompt versions), the per-game results, the taxonomy and behaviour
counts, judge means and credit λ when there are any, and the SHA-256 of
every log file it was computed from, so whoever holds the logs can check
them.

Reading one refuses, naming the field, an entry

* that is not an entry file of this format (version 1 or 2), or has a field
  of the wrong type;
* whose ``group`` (dataset, protocol, condition) is not the one its
  settings declare, or whose protocol is unknown;
* whose games are not on its declared dataset (a bundled set: each game's
  structure must be that set's structure at its index, with its complexity);
* whose numbers do not recompute: the summary from the per-game results,
  the taxonomy's turns from its counts, the behaviour measures from the
  behaviour counts.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from pathlib import Path
from typing import Any

from craft_env.core.protocol import get_protocol
from craft_env.eval.results.behaviour import MEASURES, PANIC_COUNTS, BehaviourCounts, measures
from craft_env.eval.leaderboard.entries import (
    ENTRY_FILE,
    SUMMARY_KEYS,
    Condition,
    Entry,
    GameResult,
    entries_from_path,
)
from craft_env.eval.leaderboard.targets import bundled_targets, complexity_of, structure_key
from craft_env.eval.logs.games import CONFIG_NAME, LOG_NAME
from craft_env.eval.logs.paperlogs import paper_log_files
from craft_env.eval.results.taxonomy import CATEGORIES
from craft_env.models.jsonl import json_safe

FORMAT = "craft-env leaderboard entry"
#: Version 2 added the panic counts (``behaviour.panic_chances``, ``behaviour.panics``) and panic in the
#: teammate score; a version 1 file still reads, with panic not measured (its cell empty).
VERSION = 2
READABLE_VERSIONS = (1, 2)
TOLERANCE = 1e-9
GAME_FIELDS = {
    "structure": str,
    "index": int,
    "run": int,
    "progress": float,
    "completion": float,
    "position_accuracy": float,
    "iou": float,
    "turns": int,
    "failed": int,
    "removes": int,
    "removes_prescribed": int,
    "followed": int,
    "completed": bool,
    "tokens": int,
    "cost": float,
}


def is_entry_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a file that says it is an entry file (its first bytes name the format)."""
    path = Path(path)
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        head = handle.read(4096)
    return FORMAT.encode("utf-8") in head


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def log_files(path: str | os.PathLike) -> list[Path]:
    """The files an entry of ``path`` is computed from: config and run logs, or the paper's result files."""
    root = Path(path)
    if (root / LOG_NAME).exists():
        return [root / LOG_NAME]
    runs = sorted(root.glob(f"run_*/{LOG_NAME}"))
    if runs:
        return ([root / CONFIG_NAME] if (root / CONFIG_NAME).exists() else []) + runs
    return sorted(paper_log_files(root))


def entry_data(entry: Entry) -> dict[str, Any]:
    """An entry as plain data (the entry file's content)."""
    games = []
    for g in entry.games:
        record = {name: getattr(g, name) for name in GAME_FIELDS}
        record["complexity"] = entry.complexity.get(g.structure)
        games.append(record)
    return json_safe(
        {
            "format": FORMAT,
            "version": VERSION,
            "key": entry.key,
            "settings": {
                "director_model": entry.director_model,
                "builder_model": entry.builder_model,
                "protocol": entry.protocol,
                "dataset": entry.dataset,
                "condition": entry.condition.as_dict(),
                "runs": entry.runs,
                "source": entry.kind,
                **entry.settings,
            },
            "group": {
                "dataset": entry.dataset,
                "protocol": entry.protocol,
                "condition": entry.condition.label,
            },
            "games": games,
            "errored": entry.errored,
            "summary": {k: entry.summary.get(k) for k in SUMMARY_KEYS},
            "taxonomy": entry.taxonomy,
            "behaviour": entry.behaviour.as_dict() if entry.behaviour else None,
            "measures": measures(entry.behaviour) if entry.behaviour else None,
            "judges": entry.judges,
            "credit": entry.credit,
            "files": entry.files,
        }
    )


def write_entry(path: str | os.PathLike, output: str | os.PathLike) -> Entry:
    """Write the one entry of ``path`` (a run directory or a paper-log group) to ``output``."""
    entries = entries_from_path(path)
    if len(entries) != 1:
        keys = ", ".join(e.key for e in entries)
        raise ValueError(
            f"--entry: {os.fspath(path)!r} holds {len(entries)} entries ({keys}); give one of them"
        )
    entry = entries[0]
    root = Path(path)
    base = root if root.is_dir() else root.parent
    entry.files = [
        {"path": file.relative_to(base).as_posix(), "sha256": _sha256(file)} for file in log_files(path)
    ]
    text = json.dumps(entry_data(entry), indent=1, ensure_ascii=True, allow_nan=False) + "\n"
    Path(output).write_text(text, encoding="utf-8")
    return entry


# ------------------------------------------------------------------ reading


def _need(data: Any, name: str, kind: type, where: str, optional: bool = False) -> Any:
    """``data[name]`` if it is a ``kind`` (an int passes as a float, a bool never as a number)."""
    value = data.get(name) if isinstance(data, dict) else None
    if value is None and optional:
        return None
    if kind in (int, float):
        numbers = (int, float) if kind is float else (int,)
        ok = isinstance(value, numbers) and not isinstance(value, bool)
    else:
        ok = isinstance(value, kind)
    if not ok:
        raise ValueError(f"{where}{name}: expected {kind.__name__}, got {value!r}")
    return value


def _game(record: Any, k: int) -> tuple[GameResult, str | None]:
    where = f"games[{k}]."
    if not isinstance(record, dict):
        raise ValueError(f"games[{k}]: expected an object, got {record!r}")
    values = {}
    for name, kind in GAME_FIELDS.items():
        value = _need(record, name, kind, where)
        values[name] = float(value) if kind is float else value
    complexity = _need(record, "complexity", str, where, optional=True)
    return GameResult(**values), complexity


def _same(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(float(a) - float(b)) <= TOLERANCE * max(1.0, abs(float(a)))
    return a == b


def _check_dataset(dataset: str, parsed: list[tuple[GameResult, str | None]]) -> dict[str, str]:
    """Each game's structure and complexity against the declared dataset; the structures' labels."""
    targets = bundled_targets(dataset)
    labels: dict[str, str] = {}
    for k, (game, label) in enumerate(parsed):
        if label is not None and labels.setdefault(game.structure, label) != label:
            raise ValueError(
                f"games[{k}].complexity: {label!r} differs from an earlier game on "
                f"{game.structure!r} ({labels[game.structure]!r})"
            )
        if targets is None:
            continue
        if not 0 <= game.index < len(targets):
            raise ValueError(
                f"games[{k}].index: {game.index} is not a structure of dataset {dataset!r} "
                f"(0..{len(targets) - 1})"
            )
        want = structure_key(targets[game.index].id, game.index)
        if game.structure != want:
            raise ValueError(
                f"games[{k}].structure: {game.structure!r} is not structure {game.index} of "
                f"dataset {dataset!r} ({want!r})"
            )
        if label is not None and label != complexity_of(targets[game.index]):
            raise ValueError(
                f"games[{k}].complexity: {label!r} differs from dataset {dataset!r} "
                f"({complexity_of(targets[game.index])!r})"
            )
    return labels


def _check_numbers(entry: Entry, data: dict[str, Any]) -> None:
    summary = data.get("summary")
    if not isinstance(summary, dict):
        raise ValueError(f"summary: expected an object, got {summary!r}")
    recomputed = json_safe(entry.summary)
    for name in SUMMARY_KEYS:
        if not _same(summary.get(name), recomputed.get(name)):
            raise ValueError(
                f"summary.{name}: {summary.get(name)!r} does not recompute from the per-structure "
                f"results ({recomputed.get(name)!r})"
            )
    if entry.taxonomy is not None:
        counted = sum(entry.taxonomy[c] for c in CATEGORIES)
        if counted != entry.taxonomy["turns"]:
            raise ValueError(
                f"taxonomy.turns: {entry.taxonomy['turns']} is not the sum of the categories ({counted})"
            )
    stated = data.get("measures")
    if entry.behaviour is not None and stated is not None:
        found = json_safe(measures(entry.behaviour))
        for name in MEASURES:
            if not _same(stated.get(name) if isinstance(stated, dict) else None, found[name]):
                raise ValueError(
                    f"measures.{name}: {stated.get(name) if isinstance(stated, dict) else None!r} "
                    f"does not recompute from the behaviour counts ({found[name]!r})"
                )


def _taxonomy(data: Any) -> dict[str, int] | None:
    if data is None:
        return None
    counts = {}
    for name in (*CATEGORIES, "turns"):
        value = _need(data, name, int, "taxonomy.")
        if value < 0:
            raise ValueError(f"taxonomy.{name}: expected a count (an int >= 0), got {value!r}")
        counts[name] = value
    return counts


def entry_from_data(data: Any, origin: str = "entry") -> Entry:
    """An entry from an entry file's content, checked (see the module docstring)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(
            f"{origin}: format: expected {FORMAT!r}, got "
            f"{data.get('format') if isinstance(data, dict) else data!r}"
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in READABLE_VERSIONS:
        readable = " or ".join(str(v) for v in READABLE_VERSIONS)
        raise ValueError(f"{origin}: version: expected {readable}, got {version!r}")
    settings = _need(data, "settings", dict, "")
    condition_data = _need(settings, "condition", dict, "settings.")
    seats = _need(condition_data, "seats", list, "settings.condition.")
    condition = Condition(
        oracle_n=_need(condition_data, "oracle_n", int, "settings.condition.", optional=True),
        builder_tools=_need(condition_data, "builder_tools", bool, "settings.condition."),
        turns=_need(condition_data, "turns", int, "settings.condition.", optional=True),
        start=_need(condition_data, "start", str, "settings.condition."),
        seats=tuple(str(s) for s in seats),
    )
    protocol = _need(settings, "protocol", str, "settings.")
    try:
        protocol = get_protocol(protocol, "settings.protocol").name
    except ValueError as error:
        raise ValueError(str(error)) from None
    dataset = _need(settings, "dataset", str, "settings.")
    group = _need(data, "group", dict, "")
    declared = {"dataset": dataset, "protocol": protocol, "condition": condition.label}
    for name, want in declared.items():
        if group.get(name) != want:
            raise ValueError(
                f"group.{name}: {group.get(name)!r} differs from what the settings declare ({want!r})"
            )
    records = _need(data, "games", list, "")
    parsed = [_game(record, k) for k, record in enumerate(records)]
    games = [game for game, _ in parsed]
    complexity = _check_dataset(dataset, parsed)
    behaviour = data.get("behaviour")
    entry = Entry(
        key=str(_need(data, "key", str, "")),
        director_model=_need(settings, "director_model", str, "settings."),
        builder_model=_need(settings, "builder_model", str, "settings.", optional=True),
        kind=ENTRY_FILE,
        dataset=dataset,
        protocol=protocol,
        condition=condition,
        games=games,
        runs=_need(settings, "runs", int, "settings.", optional=True),
        errored=_need(data, "errored", int, ""),
        taxonomy=_taxonomy(data.get("taxonomy")),
        behaviour=None
        if behaviour is None
        else BehaviourCounts.from_dict(behaviour, predates=PANIC_COUNTS if version == 1 else ()),
        judges=_need(data, "judges", dict, "", optional=True),
        credit=_need(data, "credit", dict, "", optional=True),
        complexity=complexity,
        settings={k: settings.get(k) for k in ("craft_env_version", "prompt_version")},
        files=[dict(f) for f in _need(data, "files", list, "") if isinstance(f, dict)],
    )
    _check_numbers(entry, data)
    return entry


def read_entry(path: str | os.PathLike) -> Entry:
    """The checked entry of an entry file (a ``ValueError`` naming the file and the field otherwise)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{os.fspath(path)}: not a readable entry file ({error})") from None
    try:
        entry = entry_from_data(data, os.fspath(path))
    except ValueError as error:
        raise ValueError(f"{os.fspath(path)}: {error}") from None
    entry.source = Path(path)
    return entry
