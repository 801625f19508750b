"""Entry files: one leaderboard entry to share, checked when read (docs/leaderboard.md, "Entry files").

``craft-env leaderboard --entry DIR -o model.entry.json`` writes what the
board needs of one run directory (or one paper-log group) without its
logs: the settings (models, protocol, dataset, condition, seats, package
and prompt versions), the per-game results, the taxonomy and behaviour
counts, judge means and credit λ when there are any, and the SHA-256 of
every log file it was computed from, so whoever holds the logs can check
them.

Reading one refuses, naming the field and showing the value, an entry

* that is not an entry file of this format (version 1 or 2), is larger
  than ``MAX_ENTRY_BYTES`` or holds more than ``MAX_ENTRY_GAMES`` games, or
  has a field of the wrong type or outside its range (``checked``: shares
  from 0 to 1, counts from 0 up, failed turns and the like at most the
  game's turns, finite numbers only);
* whose games repeat a game (the same structure and run twice), put one
  structure at two indices, or disagree with ``settings.runs``;
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
import re
from pathlib import Path
from typing import Any

from craft_env.core.protocol import get_protocol
from craft_env.core.views import ALL_SEATS
from craft_env.envs.config import MAX_ORACLE_N, MAX_TURNS
from craft_env.eval.leaderboard.entries import (
    ENTRY_FILE,
    JUDGE_FAMILIES,
    SUMMARY_KEYS,
    Condition,
    Entry,
    GameResult,
    entries_from_path,
)
from craft_env.eval.leaderboard.targets import bundled_targets, complexity_of, structure_key
from craft_env.eval.logs.games import CONFIG_NAME, LOG_NAME, MAX_RUNS
from craft_env.eval.logs.paperlogs import MAX_STRUCTURE_INDEX, paper_log_files
from craft_env.eval.results import checked
from craft_env.eval.results.behaviour import MEASURES, PANIC_COUNTS, BehaviourCounts, measures
from craft_env.eval.results.taxonomy import CATEGORIES
from craft_env.models.jsonl import json_safe, write_atomic
from craft_env.text.clean import holds_surrogate_escape, valid_unicode_data

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
#: The game fields that are shares (0 to 1) and those that count turns (0 to the game's turns).
SHARES = ("progress", "completion", "position_accuracy", "iou")
PER_TURN = ("failed", "removes", "removes_prescribed", "followed")
#: The largest entry file read: a run directory of 1,000 runs of 20 structures writes about 8 MiB.
MAX_ENTRY_BYTES = 16 * 2**20
#: The most games one entry file may hold (a game's turns are bounded as a run's: ``envs.config.MAX_TURNS``).
MAX_ENTRY_GAMES = 100_000
#: The highest cost of one game in dollars, and the largest judge mean, that a file may state.
MAX_COST = 1e9
MAX_SCORE = 1e6
#: The credit row's counts and rates beside its λ's (``diagnostics.credit_lambda``).
CREDIT_COUNTS = ("filtered", "total", "oracle", "degenerate")
CREDIT_RATES = ("oracle_rate", "degenerate_rate")
_SHA256 = re.compile("[0-9a-f]{64}")
#: The versions an entry's settings name (its package and prompts).
VERSION_SETTINGS = ("craft_env_version", "prompt_version")


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
    write_atomic(output, text)
    return entry


# ------------------------------------------------------------------ reading


def _game(record: Any, k: int) -> tuple[GameResult, str | None]:
    where = f"games[{k}]."
    record = checked.mapping(record, f"games[{k}]")
    turns = checked.count(record.get("turns"), where + "turns", MAX_TURNS)
    values: dict[str, Any] = {
        "structure": checked.text(record.get("structure"), where + "structure"),
        "index": checked.integer(record.get("index"), where + "index", 0, MAX_STRUCTURE_INDEX),
        "run": checked.integer(record.get("run"), where + "run", 0, MAX_RUNS),
        "turns": turns,
        "completed": checked.flag(record.get("completed"), where + "completed"),
        "tokens": checked.count(record.get("tokens"), where + "tokens"),
        "cost": checked.number(record.get("cost"), where + "cost", 0.0, MAX_COST),
    }
    for name in SHARES:
        values[name] = checked.share(record.get(name), where + name)
    for name in PER_TURN:
        values[name] = checked.count(record.get(name), where + name, turns)
    complexity = record.get("complexity")
    if complexity is not None:
        complexity = checked.text(complexity, where + "complexity", 40)
    return GameResult(**values), complexity


def _check_games(parsed: list[tuple[GameResult, str | None]]) -> None:
    """Each game once: one (structure, run) per game, and a structure always at one index."""
    seen: set[tuple[str, int]] = set()
    index_of: dict[str, int] = {}
    name_of: dict[int, str] = {}
    for k, (game, _) in enumerate(parsed):
        if (game.structure, game.run) in seen:
            raise ValueError(
                f"games[{k}]: structure {game.structure!r} run {game.run} is already an earlier game "
                "(each game appears once)"
            )
        seen.add((game.structure, game.run))
        if index_of.setdefault(game.structure, game.index) != game.index:
            raise ValueError(
                f"games[{k}].index: {game.index} differs from an earlier game on {game.structure!r} "
                f"({index_of[game.structure]})"
            )
        if name_of.setdefault(game.index, game.structure) != game.structure:
            raise ValueError(
                f"games[{k}].structure: {game.structure!r} differs from an earlier game at index "
                f"{game.index} ({name_of[game.index]!r})"
            )


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _same(a: Any, b: Any) -> bool:
    """Whether a stated value is the recomputed one (numbers within ``TOLERANCE``; a huge int never is)."""
    if a is None or b is None:
        return a is None and b is None
    if not (_is_number(a) and _is_number(b)):
        return a == b
    if abs(a) > checked.MAX_COUNT * 1e3 or abs(b) > checked.MAX_COUNT * 1e3:
        return a == b
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abs(float(a) - float(b)) <= TOLERANCE * max(1.0, abs(float(a)))


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
    summary = checked.mapping(data.get("summary"), "summary")
    recomputed = json_safe(entry.summary)
    for name in SUMMARY_KEYS:
        if not _same(summary.get(name), recomputed.get(name)):
            raise ValueError(
                f"summary.{name}: {checked.shown(summary.get(name))} does not recompute from the "
                f"per-structure results ({recomputed.get(name)!r})"
            )
    if entry.taxonomy is not None:
        counted = sum(entry.taxonomy[c] for c in CATEGORIES)
        if counted != entry.taxonomy["turns"]:
            raise ValueError(
                f"taxonomy.turns: {entry.taxonomy['turns']} is not the sum of the categories ({counted})"
            )
        if entry.taxonomy["turns"] > entry.summary["turns"]:
            raise ValueError(
                f"taxonomy.turns: {entry.taxonomy['turns']} is more than the games' turns "
                f"({entry.summary['turns']})"
            )
    stated = data.get("measures")
    if entry.behaviour is not None and stated is not None:
        stated = checked.mapping(stated, "measures")
        found = json_safe(measures(entry.behaviour))
        for name in MEASURES:
            if not _same(stated.get(name), found[name]):
                raise ValueError(
                    f"measures.{name}: {checked.shown(stated.get(name))} does not recompute from the "
                    f"behaviour counts ({found[name]!r})"
                )


def _taxonomy(data: Any) -> dict[str, int] | None:
    if data is None:
        return None
    data = checked.mapping(data, "taxonomy")
    return {name: checked.count(data.get(name), f"taxonomy.{name}") for name in (*CATEGORIES, "turns")}


def _judges(data: Any) -> dict[str, Any] | None:
    if data is None:
        return None
    data = checked.mapping(data, "judges")
    found: dict[str, Any] = {"model": checked.text(data.get("model"), "judges.model")}
    for family in JUDGE_FAMILIES:
        value = data.get(family)
        where = f"judges.{family}"
        found[family] = None if value is None else checked.number(value, where, -MAX_SCORE, MAX_SCORE)
    extra = sorted(set(data) - set(found))
    if extra:
        raise ValueError(f"judges.{extra[0]}: not a field of judges (model, {', '.join(JUDGE_FAMILIES)})")
    return found


def _credit(data: Any, seats: tuple[str, ...]) -> dict[str, Any] | None:
    if data is None:
        return None
    data = checked.mapping(data, "credit")
    found: dict[str, Any] = {}
    for name in CREDIT_COUNTS:
        found[name] = checked.count(data.get(name), f"credit.{name}")
    for name in (*(f"lambda_{seat}" for seat in seats), "lambda_std", *CREDIT_RATES):
        value = data.get(name)
        found[name] = None if value is None else checked.share(value, f"credit.{name}")
    extra = sorted(set(data) - set(found))
    if extra:
        raise ValueError(f"credit.{extra[0]}: not a field of credit for seats {', '.join(seats)}")
    if not found["oracle"] <= found["total"]:
        raise ValueError(f"credit.oracle: {found['oracle']} is more than credit.total ({found['total']})")
    if not found["degenerate"] + found["filtered"] == found["oracle"]:
        raise ValueError(
            f"credit.filtered: {found['filtered']} plus credit.degenerate ({found['degenerate']}) is not "
            f"credit.oracle ({found['oracle']})"
        )
    return found


def _files(data: Any) -> list[dict[str, str]]:
    found = []
    for k, record in enumerate(checked.sequence(data, "files", MAX_RUNS + 1)):
        record = checked.mapping(record, f"files[{k}]")
        path = checked.text(record.get("path"), f"files[{k}].path")
        digest = record.get("sha256")
        if not isinstance(digest, str) or not _SHA256.fullmatch(digest):
            raise ValueError(f"files[{k}].sha256: expected 64 hex digits, got {checked.shown(digest)}")
        found.append({"path": path, "sha256": digest})
    return found


def _condition(data: Any) -> Condition:
    where = "settings.condition."
    data = checked.mapping(data, "settings.condition")
    seats = checked.sequence(data.get("seats"), where + "seats", len(ALL_SEATS))
    for k, seat in enumerate(seats):
        if seat not in ALL_SEATS or seat in seats[:k]:
            raise ValueError(
                f"{where}seats[{k}]: expected one of {', '.join(ALL_SEATS)}, each once, "
                f"got {checked.shown(seat)}"
            )
    if not seats:
        raise ValueError(f"{where}seats: expected at least one seat, got []")
    oracle = data.get("oracle_n")
    turns = data.get("turns")
    return Condition(
        oracle_n=None if oracle is None else checked.integer(oracle, where + "oracle_n", 0, MAX_ORACLE_N),
        builder_tools=checked.flag(data.get("builder_tools"), where + "builder_tools"),
        turns=None if turns is None else checked.integer(turns, where + "turns", 1, MAX_TURNS),
        start=checked.text(data.get("start"), where + "start", 40),
        seats=tuple(seats),
    )


def _optional_text(data: dict[str, Any], name: str, where: str) -> str | None:
    value = data.get(name)
    return None if value is None else checked.text(value, where + name)


def entry_from_data(data: Any) -> Entry:
    """An entry from an entry file's content, checked (see the module docstring)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(
            f"format: expected {FORMAT!r}, got "
            f"{checked.shown(data.get('format') if isinstance(data, dict) else data)}: not an entry file "
            "(a PATH is a run directory, a directory of paper logs or an entry file)"
        )
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in READABLE_VERSIONS:
        readable = " or ".join(str(v) for v in READABLE_VERSIONS)
        raise ValueError(f"version: expected {readable}, got {checked.shown(version)}")
    settings = checked.mapping(data.get("settings"), "settings")
    condition = _condition(settings.get("condition"))
    protocol = checked.text(settings.get("protocol"), "settings.protocol", 40)
    try:
        protocol = get_protocol(protocol, "settings.protocol").name
    except ValueError as error:
        raise ValueError(str(error)) from None
    dataset = checked.text(settings.get("dataset"), "settings.dataset")
    group = checked.mapping(data.get("group"), "group")
    declared = {"dataset": dataset, "protocol": protocol, "condition": condition.label}
    for name, want in declared.items():
        if group.get(name) != want:
            raise ValueError(
                f"group.{name}: {checked.shown(group.get(name))} differs from what the settings declare "
                f"({want!r})"
            )
    records = checked.sequence(data.get("games"), "games", MAX_ENTRY_GAMES)
    parsed = [_game(record, k) for k, record in enumerate(records)]
    _check_games(parsed)
    games = [game for game, _ in parsed]
    complexity = _check_dataset(dataset, parsed)
    runs = settings.get("runs")
    runs = None if runs is None else checked.integer(runs, "settings.runs", 1, MAX_RUNS)
    played = len({g.run for g in games}) or None
    if runs != played:
        raise ValueError(
            f"settings.runs: {runs!r} is not the number of runs the games were played in ({played})"
        )
    behaviour = data.get("behaviour")
    entry = Entry(
        key=checked.text(data.get("key"), "key"),
        director_model=checked.text(settings.get("director_model"), "settings.director_model"),
        builder_model=_optional_text(settings, "builder_model", "settings."),
        kind=ENTRY_FILE,
        dataset=dataset,
        protocol=protocol,
        condition=condition,
        games=games,
        runs=runs,
        errored=checked.count(data.get("errored"), "errored"),
        taxonomy=_taxonomy(data.get("taxonomy")),
        behaviour=None
        if behaviour is None
        else BehaviourCounts.from_dict(behaviour, predates=PANIC_COUNTS if version == 1 else ()),
        judges=_judges(data.get("judges")),
        credit=_credit(data.get("credit"), condition.seats),
        complexity=complexity,
        settings={k: _optional_text(settings, k, "settings.") for k in VERSION_SETTINGS},
        files=_files(data.get("files")),
    )
    _check_numbers(entry, data)
    return entry


def read_entry(path: str | os.PathLike) -> Entry:
    """The checked entry of an entry file (a ``ValueError`` naming the file and the field otherwise).

    The file is read within ``MAX_ENTRY_BYTES``; text that UTF-8 cannot encode (a lone surrogate's JSON
    escape) is made valid here, where it enters (``text.clean.valid_unicode_data``).
    """
    name = os.fspath(path)
    try:
        size = Path(path).stat().st_size
        if size > MAX_ENTRY_BYTES:
            raise ValueError(
                f"{name}: {size:,} bytes is above the limit of {MAX_ENTRY_BYTES:,} bytes "
                f"({MAX_ENTRY_BYTES // 2**20} MiB) for one entry file"
            )
        with Path(path).open("rb") as handle:
            raw = handle.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            raise ValueError(f"{name}: more than {MAX_ENTRY_BYTES:,} bytes; not an entry file")
        text = raw.decode("utf-8")
        data = json.loads(text)
    except RecursionError:
        raise ValueError(f"{name}: not a readable entry file (JSON nested too deep)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{name}: not a readable entry file ({error})") from None
    except ValueError as error:  # the size refusals above, or an integer of more digits than Python converts
        if str(error).startswith(name):
            raise
        raise ValueError(f"{name}: not a readable entry file ({error})") from None
    if holds_surrogate_escape(text):
        data = valid_unicode_data(data)
    try:
        entry = entry_from_data(data)
    except ValueError as error:
        raise ValueError(f"{name}: {error}") from None
    entry.source = Path(path)
    return entry
