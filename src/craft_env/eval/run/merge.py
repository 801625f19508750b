"""``craft-env merge SHARD_DIR... -o RUN_DIR``: the shards of one run (``run --shard``) joined into one run.

The merged directory is an ordinary run directory (docs/benchmark.md,
"Output"), so ``report``, ``replay``, ``judge``, ``export``, the leaderboard
and ``run --resume`` read it as they read a run played on one machine:

* ``config.json``: the shards' common settings without a ``shard``, the
  earliest shard's ``created``, and where it came from under
  ``merged_from`` (each shard's directory, shard, games and ``created``);
* ``run_<k>/log.jsonl``: every line the shards logged for the games of run
  k, games in structure order, each game's lines in the order its shard
  wrote them (earlier attempts included, as a resumed run keeps them);
* ``run_<k>/summary.json``: written by the runner's own ``write_summary``
  (its ``seconds_this_session`` is the shards' sum);
* ``cache.jsonl``: the union of the shards' recorded model calls (the first
  shard's answer wins where two shards recorded the same request).

Merging refuses (``ValueError`` naming the field or the games): shards whose
result-changing settings (``RESULT_FIELDS``) or package versions differ; two
shards holding the same game, or a shard holding a game that is not its
own; and games that no shard holds, unless ``allow_missing``: those are then
left unplayed, counted as errored in the summaries and played by
``craft-env run --resume --out RUN_DIR``. One writer per run directory
(``lock``): the merge holds the lock of RUN_DIR and of every shard while it
works, so a shard still being played is refused, not merged half way.
"""

from __future__ import annotations

import json
import logging
import os
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from craft_env.core.views import DEFAULT_SEATS
from craft_env.datasets import EVAL_SETS, load_dataset, structures_sha256
from craft_env.eval.logs.games import CACHE_NAME, CONFIG_NAME, LOG_NAME, SUMMARY_NAME, run_dir
from craft_env.eval.run.lock import LOCK_NAME, RunLock
from craft_env.eval.run.runner import (
    CREATED_FORMAT,
    GameSpec,
    game_specs,
    read_saved_config,
    write_json,
    write_summary,
)
from craft_env.eval.run.settings import RESULT_FIELDS, RunSettings
from craft_env.eval.run.shard import Shard, owner_of, run_games
from craft_env.models.cache import ReplayCache
from craft_env.models.jsonl import AppendOnlyJsonl, read_jsonl
from craft_env.models.redact import Redactor

log = logging.getLogger(__name__)

#: What shards must agree on: the settings that change results, and the package that played them.
AGREED_FIELDS = (*(name for name in RESULT_FIELDS if name != "shard"), "craft_env_version")
#: How many games an error message names before it only counts the rest.
NAMED_GAMES = 5

Game = tuple[int, int]


@dataclass
class ShardDir:
    """One shard's directory as merge reads it: its config and every log line of each of its games."""

    path: Path
    config: dict[str, Any]
    lines: dict[Game, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return os.fspath(self.path)

    @property
    def shard(self) -> Shard | None:
        value = self.config.get("shard")
        return None if value is None else Shard.parse(value)

    def seconds(self, run: int) -> float:
        """The playing time its summary of run ``run`` reports (0 without one)."""
        path = run_dir(self.path, run) / SUMMARY_NAME
        try:
            return float(json.loads(path.read_text(encoding="utf-8")).get("seconds_this_session") or 0.0)
        except (OSError, ValueError, AttributeError, TypeError):
            return 0.0


@dataclass
class MergeResult:
    """What ``merge_shards`` wrote: the run directory, its games, and what the merge left for later."""

    out: Path
    shards: int
    games: int
    missing: list[GameSpec]
    unfinished: int
    cache_conflicts: int


def _read_config(path: Path) -> dict[str, Any]:
    if not path.is_dir():
        raise ValueError(f"shards: {os.fspath(path)!r} is not a directory")
    if not (path / CONFIG_NAME).exists():
        raise ValueError(f"shards: {os.fspath(path)!r} holds no run ({CONFIG_NAME} missing)")
    return read_saved_config(path / CONFIG_NAME)


def _read_lines(path: Path) -> dict[Game, list[dict[str, Any]]]:
    """Every log line of each game under ``path``, keyed as ``logs.read_games`` keys games."""
    lines: dict[Game, list[dict[str, Any]]] = {}
    for log_path in sorted(path.glob(f"run_*/{LOG_NAME}")):
        for record in read_jsonl(log_path):
            try:
                game = (int(record["run"]), int(record["structure_index"]))
            except (KeyError, TypeError, ValueError):
                continue
            lines.setdefault(game, []).append(record)
    return lines


def _agreed(config: dict[str, Any], name: str) -> Any:
    """A config's value of ``name`` as shards compare it (a file dataset by its content when recorded)."""
    if name == "seats":
        return list(config.get("seats") or DEFAULT_SEATS)
    if name == "dataset" and config.get("dataset") not in EVAL_SETS and config.get("dataset_sha256"):
        return f"a structures file with sha256 {config['dataset_sha256']}"
    return config.get(name)


def check_agreement(shards: list[ShardDir]) -> None:
    """``ValueError`` naming the first setting two shards disagree on."""
    first = shards[0]
    for other in shards[1:]:
        for name in AGREED_FIELDS:
            if _agreed(first.config, name) != _agreed(other.config, name):
                raise ValueError(
                    f"{name}: the shards were played with different settings: {first.name!r} has "
                    f"{_agreed(first.config, name)!r}, {other.name!r} has {_agreed(other.config, name)!r}"
                )


def _local_dataset(shards: list[ShardDir]) -> str:
    """The dataset the shards played, as this machine can read it (a bundled name, or a file here)."""
    dataset = shards[0].config.get("dataset") or "craft"
    if dataset in EVAL_SETS:
        return dataset
    digest = shards[0].config.get("dataset_sha256")
    for path in dict.fromkeys(str(s.config.get("dataset")) for s in shards):
        if Path(path).is_file() and (digest is None or structures_sha256(load_dataset(path)) == digest):
            return path
    raise ValueError(
        f"dataset: the shards played {dataset!r}, which is not on this machine (with the content they played); "
        "merge where that file is"
    )


def merged_settings(shards: list[ShardDir], out: Path) -> RunSettings:
    """The settings of the whole run: the shards' agreed settings, without a shard."""
    known = {k: v for k, v in shards[0].config.items() if k in RunSettings.__dataclass_fields__}
    known.update(out=os.fspath(out), shard=None, dataset=_local_dataset(shards))
    return RunSettings.from_dict(known)


def _describe(games: list[Game], specs: dict[Game, GameSpec]) -> str:
    named = [f"run {run} {specs[(run, index)].structure_id}" for run, index in games[:NAMED_GAMES]]
    more = len(games) - NAMED_GAMES
    return ", ".join(named) + (f" and {more} more" if more > 0 else "")


def check_games(shards: list[ShardDir], settings: RunSettings, specs: dict[Game, GameSpec]) -> list[Game]:
    """Refuse foreign and overlapping games; return the run's games that no shard holds, in order."""
    games = run_games(settings.runs, settings.selected())
    holder: dict[Game, ShardDir] = {}
    for shard in shards:
        own = shard.shard
        allowed = set(games if own is None else own.take(games))
        for game in sorted(shard.lines):
            if game not in specs:
                raise ValueError(
                    f"shards: {shard.name!r} holds run {game[0]} structure index {game[1]}, "
                    "which is not a game of its settings"
                )
            if game not in allowed:
                raise ValueError(
                    f"shards: {shard.name!r} is shard {own} but holds {_describe([game], specs)}, "
                    f"a game of shard {owner_of(game, games, own.count)}"
                )
        both = sorted(game for game in shard.lines if game in holder)
        if both:
            raise ValueError(
                f"overlap: {holder[both[0]].name!r} and {shard.name!r} both hold {_describe(both, specs)}; "
                "give each game's shard once"
            )
        holder.update(dict.fromkeys(shard.lines, shard))
    return [game for game in specs if game not in holder]


def _missing_message(missing: list[Game], shards: list[ShardDir], specs: dict[Game, GameSpec]) -> str:
    counts = {s.shard.count for s in shards if s.shard is not None}
    absent = ""
    if len(counts) == 1 and all(s.shard is not None for s in shards):
        count = counts.pop()
        given = {s.shard.index for s in shards}
        lost = [f"{i}/{count}" for i in range(1, count + 1) if i not in given]
        if lost:
            absent = f" (shard {', '.join(lost)} {'is' if len(lost) == 1 else 'are'} not among them)"
    return (
        f"missing: {len(missing)} game(s) of the run are in none of the shards given{absent}: "
        f"{_describe(missing, specs)}; merge their shards too, or pass --allow-missing to merge without "
        "them (they are then counted as unfinished, and craft-env run --resume --out RUN_DIR plays them)"
    )


def _moment(text: str) -> datetime | None:
    """A ``created`` time as the runner writes it (``%Y-%m-%dT%H:%M:%S%z``), or None."""
    try:
        return datetime.strptime(text, CREATED_FORMAT)
    except (TypeError, ValueError):
        return None


def _earliest(created: list[str]) -> str:
    """The earliest of the shards' ``created`` times (the first given when none can be read)."""
    dated = [(moment, text) for text in created if (moment := _moment(text)) is not None]
    return min(dated)[1] if dated else (created[0] if created else time.strftime(CREATED_FORMAT))


def _merge_caches(shards: list[ShardDir], out: Path, redactor: Redactor) -> int:
    """Write the union of the shards' recorded calls; return how many requests two shards answered differently."""
    sources = [s.path / CACHE_NAME for s in shards if (s.path / CACHE_NAME).exists()]
    if not sources:
        return 0
    cache = ReplayCache(out / CACHE_NAME, redactor)
    conflicts = 0
    try:
        for source in sources:
            for record in read_jsonl(source):
                if not isinstance(record.get("key"), str) or not isinstance(record.get("text"), str):
                    continue
                kept = cache.get(record["key"])
                conflicts += kept is not None and kept["text"] != record["text"]
                cache.put(record)
    finally:
        cache.close()
    return conflicts


def _lock_shard(path: Path) -> RunLock | None:
    """The shard's lock, so that a shard still being played is refused; a read-only copy needs none."""
    try:
        return RunLock(path)
    except PermissionError:
        log.info("%s is read-only: nobody plays there, merged without its lock", os.fspath(path))
        return None


def _check_output(out: Path, shards: list[Path]) -> None:
    if any(out.resolve() == shard.resolve() for shard in shards):
        raise ValueError(f"output: {os.fspath(out)!r} is one of the shards; merge into a new directory")
    if (out / CONFIG_NAME).exists():
        raise ValueError(f"output: {os.fspath(out)!r} already holds a run; merge into a new directory")
    if out.exists() and (not out.is_dir() or any(p.name != LOCK_NAME for p in out.iterdir())):
        raise ValueError(f"output: {os.fspath(out)!r} is not an empty directory; merge into a new one")


def merge_shards(
    paths: list[str | os.PathLike],
    out: str | os.PathLike,
    allow_missing: bool = False,
    redactor: Redactor | None = None,
) -> MergeResult:
    """Join the shard directories ``paths`` into the run directory ``out`` (see the module docstring)."""
    redactor = redactor or Redactor()
    out = Path(out)
    sources = [Path(p) for p in paths]
    if not sources:
        raise ValueError("shards: expected at least one shard directory")
    twice = [p for i, p in enumerate(sources) if any(p.resolve() == q.resolve() for q in sources[:i])]
    if twice:
        raise ValueError(f"shards: {os.fspath(twice[0])!r} is given twice")
    shards = [ShardDir(path, _read_config(path)) for path in sources]
    _check_output(out, sources)
    check_agreement(shards)
    locks = []
    try:
        locks += [lock for shard in shards if (lock := _lock_shard(shard.path)) is not None]
        for shard in shards:
            shard.lines = _read_lines(shard.path)
            if (shard.path / "judges").is_dir():
                log.warning("%s holds judge results; they are not merged: run craft-env judge on %s",
                            shard.name, os.fspath(out))
        settings = merged_settings(shards, out)
        specs = {(spec.run, spec.index): spec for run in range(1, settings.runs + 1)
                 for spec in game_specs(settings, run)}
        missing = check_games(shards, settings, specs)
        if missing and not allow_missing:
            raise ValueError(_missing_message(missing, shards, specs))
        locks.append(RunLock(out))
        _check_output(out, sources)  # again, now that no other process can write there
        return _write(shards, settings, specs, [specs[game] for game in missing], redactor)
    finally:
        for lock in locks:
            lock.release()


def _write(
    shards: list[ShardDir],
    settings: RunSettings,
    specs: dict[Game, GameSpec],
    missing: list[GameSpec],
    redactor: Redactor,
) -> MergeResult:
    """Logs, cache and summaries first, ``config.json`` last: a directory without it holds no run yet."""
    out = Path(settings.out)
    lines = {game: records for shard in shards for game, records in shard.lines.items()}
    unfinished = 0
    for run in range(1, settings.runs + 1):
        run_specs = [spec for (game_run, _), spec in specs.items() if game_run == run]
        with AppendOnlyJsonl(run_dir(out, run) / LOG_NAME, redactor) as writer:
            for spec in run_specs:
                for record in lines.get((run, spec.index), ()):
                    writer.write(record)
        seconds = sum(shard.seconds(run) for shard in shards)
        summary = write_summary(settings, run, run_specs, redactor, seconds)
        unfinished += sum(1 for spec in run_specs if (run, spec.index) in lines) - summary["done"]
    conflicts = _merge_caches(shards, out, redactor)
    if conflicts:
        log.warning(
            "%d recorded request(s) were answered differently in two shards; the merged cache keeps the first "
            "answer, so --replay-from %s may not reproduce the games of the other", conflicts, os.fspath(out)
        )
    config = settings.to_dict()
    first = shards[0].config
    config["craft_env_version"] = first.get("craft_env_version")
    config["created"] = _earliest([str(s.config.get("created")) for s in shards if s.config.get("created")])
    if first.get("dataset_sha256"):
        config["dataset_sha256"] = first["dataset_sha256"]
    config["merged_from"] = [
        {"dir": shard.name, "shard": shard.config.get("shard"), "games": len(shard.lines),
         "created": shard.config.get("created")}
        for shard in shards
    ]
    config["merged"] = time.strftime(CREATED_FORMAT)
    write_json(out / CONFIG_NAME, config, redactor)
    return MergeResult(out, len(shards), len(specs), missing, unfinished, conflicts)
