"""``craft-env export DIR [DIR ...] --format sft|dpo -o OUT``: training data from run directories.

Every finished game of every run in the directories is replayed
(``replay``), each seat turn of the chosen seats becomes an SFT record
(``sft``; those ``--keep`` selects, ``outcome``) or gives preference pairs
(``dpo``), and the records are written as JSON Lines:

    OUT/train.jsonl    every record, or the training targets' with a split
    OUT/valid.jsonl    with ``--split-by structure``: the validation targets' (``split``)
    OUT/export.json    what was exported: options, sources, counts

Nothing is written when a directory cannot be exported (``ValueError``
naming it and why): a run whose prompts cannot be rebuilt, a bad option, an
``OUT`` holding anything but a previous export (``output``, checked before
the replay). A finished game whose log cannot be replayed (a torn or
unreadable line, a field of the wrong type, ``logged``; a replay that
departs from the log) is skipped with a warning naming the run, the game
and the log line, and listed under ``skipped`` in ``export.json``; when
every game is skipped, nothing is written. The files are written whole
(``output``): a refused write leaves the previous export as it was.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from craft_env.agents.prompts import PROMPT_VERSION
from craft_env.core.views import ALL_SEATS
from craft_env.eval.logs.games import GameLog
from craft_env.models.jsonl import dumps
from craft_env.train.clients import BUILDER
from craft_env.train.dpo import builder_pair, director_pairs
from craft_env.train.logged import LogFault, check_game, fault_line
from craft_env.train.options import FORMATS, KEEP_RULES, SEATS, SPLIT_BY
from craft_env.train.outcome import kept, turn_outcome
from craft_env.train.output import check_output, write_output
from craft_env.train.replay import LoggedRun, SeatTurn, finished_games, open_run, replay_seats
from craft_env.train.sft import sft_record
from craft_env.train.split import target_key, validation_targets

TRAIN_NAME = "train.jsonl"
VALID_NAME = "valid.jsonl"
MANIFEST_NAME = "export.json"
#: Every file an export writes.
OUTPUT_NAMES = (TRAIN_NAME, VALID_NAME, MANIFEST_NAME)

log = logging.getLogger(__name__)


def _seats(seat: str) -> tuple[str, ...]:
    if seat not in SEATS:
        raise ValueError(f"seat: expected one of {', '.join(SEATS)}, got {seat!r}")
    return ALL_SEATS if seat == "directors" else (seat,)


def _check_options(fmt: str, keep: str, split_by: str | None, seed: int) -> None:
    if fmt not in FORMATS:
        raise ValueError(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if keep not in KEEP_RULES:
        raise ValueError(f"keep: expected one of {', '.join(KEEP_RULES)}, got {keep!r}")
    if fmt == "dpo" and keep != "all":
        raise ValueError(f"keep: selects SFT turns; --format dpo pairs every turn, got {keep!r}")
    if split_by is not None and split_by not in SPLIT_BY:
        raise ValueError(f"split_by: expected one of {', '.join(SPLIT_BY)}, got {split_by!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed: expected an int, got {seed!r}")


def _skipped(run: LoggedRun, log_path: Path, game: GameLog, error: Exception) -> dict[str, Any]:
    """What ``export.json`` says of a skipped game (and the warning names)."""
    line = fault_line(log_path, game, error.turn if isinstance(error, LogFault) else None)
    place = os.fspath(log_path.relative_to(run.path)) + ("" if line is None else f":{line}")
    reason = str(error)
    game_id = str(game.structure_id)
    found = {"source": run.name, "run": game.run, "game": game_id, "line": place, "reason": reason}
    log.warning("%s run %d %s (%s): game skipped: %s", run.name, game.run, game.structure_id, place, reason)
    return found


def _with_outcomes(
    turns: list[SeatTurn], records: list[dict[str, Any]]
) -> Iterator[tuple[SeatTurn, dict[str, Any]]]:
    """A game's seat turns with their outcomes: one per turn record (a turn's directors share it), each
    chained to the game's record of the turn before (``outcome.turn_change``; ``records``: the game's)."""
    before = {int(record["turn_number"]) + 1: record for record in records}
    outcomes: dict[int, dict[str, Any]] = {}
    for turn in turns:
        outcome = outcomes.get(id(turn.record))
        if outcome is None:
            previous = before.get(int(turn.record["turn_number"]))
            outcome = outcomes[id(turn.record)] = turn_outcome(turn, previous)
        yield turn, dict(outcome)


def _replayed(
    run: LoggedRun, seats: tuple[str, ...], skipped: list[dict[str, Any]]
) -> Iterator[tuple[list[tuple[SeatTurn, dict[str, Any]]], int]]:
    """Per finished game of the run: the seat turns of ``seats`` with their outcomes, and how many seat
    turns the replay played; a game whose log cannot be replayed is added to ``skipped`` instead."""
    for log_path, game, spec in finished_games(run):
        try:
            check_game(game)
            turns, played = replay_seats(run, game, spec, seats)
            turns = list(_with_outcomes(turns, game.turns))
        except (ValueError, LookupError) as error:
            skipped.append(_skipped(run, log_path, game, error))
            continue
        yield turns, played


def training_records(
    dirs: list[str | os.PathLike],
    fmt: str,
    seat: str = BUILDER,
    keep: str = "all",
    seed: int = 0,
    with_think: bool = False,
    skipped: list[dict[str, Any]] | None = None,
) -> tuple[list[tuple[SeatTurn, dict[str, Any]]], Counter]:
    """``([(seat turn, record)], counts)`` for the directories (see the module docstring); a game that cannot
    be replayed is listed in ``skipped``."""
    seats = _seats(seat)
    _check_options(fmt, keep, None, seed)
    skipped = [] if skipped is None else skipped
    runs = [open_run(path) for path in dirs]
    counts: Counter = Counter()
    records: list[tuple[SeatTurn, dict[str, Any]]] = []
    director_turns: list[tuple[SeatTurn, dict[str, Any]]] = []
    for run in runs:
        for turns, played in _replayed(run, seats, skipped):
            counts["seat turns replayed"] += played
            for turn, outcome in turns:
                counts[f"prompts {turn.prompt}"] += 1
                if fmt == "sft":
                    if kept(turn, outcome, keep):
                        records.append((turn, sft_record(turn, outcome, with_think)))
                elif turn.seat == BUILDER:
                    pair = builder_pair(turn, outcome, seed, with_think)
                    if pair is not None:
                        records.append((turn, pair))
                else:
                    director_turns.append((turn, outcome))
    records.extend(director_pairs(director_turns, with_think))
    for _, record in records:
        counts[f"pairs {record['meta']['pair']['kind']}" if fmt == "dpo" else "records"] += 1
    return records, counts


def _lines(records: list[dict[str, Any]]) -> Iterator[str]:
    for record in records:
        yield dumps(record) + "\n"


def _target_keys(targets) -> dict[int, str]:
    """``target_key`` of each target by ``id``; made once per distinct target (cells and labels), not per
    record (a game's records each hold its target)."""
    keys: dict[int, str] = {}
    made: dict[tuple, str] = {}
    for target in targets:
        if id(target) not in keys:
            label = (target, target.id, target.complexity)
            key = made.get(label)
            if key is None:
                key = made[label] = target_key(target)
            keys[id(target)] = key
    return keys


def export_training_data(
    dirs: list[str | os.PathLike],
    fmt: str,
    out: str | os.PathLike,
    seat: str = BUILDER,
    keep: str = "all",
    split_by: str | None = None,
    valid: float = 0.2,
    seed: int = 0,
    with_think: bool = False,
) -> dict[str, Any]:
    """Write ``OUT/train.jsonl`` (and ``valid.jsonl``) and ``OUT/export.json``; return the manifest."""
    _check_options(fmt, keep, split_by, seed)
    if split_by is not None:
        validation_targets(set(), valid, seed)  # a bad fraction fails before any replay
    out = check_output(out, OUTPUT_NAMES)
    skipped: list[dict[str, Any]] = []
    records, counts = training_records(dirs, fmt, seat, keep, seed, with_think, skipped)
    if skipped and not counts["seat turns replayed"]:
        first = skipped[0]
        raise ValueError(
            f"{first['source']}: every finished game was skipped; nothing to export (first: "
            f"run {first['run']} {first['game']} at {first['line']}: {first['reason']})"
        )
    keys = _target_keys(turn.target for turn, _ in records)
    held_out = validation_targets(set(keys.values()), valid, seed) if split_by else set()
    train = [record for turn, record in records if keys[id(turn.target)] not in held_out]
    valid_records = [record for turn, record in records if keys[id(turn.target)] in held_out]
    manifest = {
        "format": fmt,
        "seat": seat,
        "keep": keep,
        "with_think": with_think,
        "split_by": split_by,
        "valid": valid if split_by else None,
        "seed": seed,
        "prompt_version": PROMPT_VERSION,
        "sources": [Path(path).name for path in dirs],
        "records": {"train": len(train), **({"valid": len(valid_records)} if split_by else {})},
        "targets": {
            "train": len({keys[id(t.target)] for t, _ in records} - held_out),
            **({"valid": len(held_out)} if split_by else {}),
        },
        "counts": dict(sorted(counts.items())),
        "skipped": skipped,
    }
    files = {TRAIN_NAME: _lines(train), **({VALID_NAME: _lines(valid_records)} if split_by else {})}
    write_output(out, files, (MANIFEST_NAME, json.dumps(manifest, indent=2) + "\n"), OUTPUT_NAMES)
    return manifest


def cmd_training_export(args: argparse.Namespace) -> int:
    """``craft-env export --format sft|dpo`` (options: ``options.add_training_export_options``)."""
    manifest = export_training_data(
        args.dirs,
        args.format,
        args.output,
        seat=args.seat,
        keep=args.keep,
        split_by=args.split_by,
        valid=args.valid,
        seed=args.seed,
        with_think=args.with_think,
    )
    counts = manifest["records"]
    split = f", {counts['valid']} in {VALID_NAME}" if "valid" in counts else ""
    print(f"Wrote {counts['train']} {args.format} record(s) in {Path(args.output) / TRAIN_NAME}{split}")
    if manifest["skipped"]:
        print(f"Skipped {len(manifest['skipped'])} game(s) whose log cannot be replayed (listed above and "
              f"in {Path(args.output) / MANIFEST_NAME})")
    return 0
