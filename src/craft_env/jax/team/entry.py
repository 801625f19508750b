"""A learned team as a leaderboard entry file (docs/leaderboard.md, "Entry files").

The entry holds the team's per-game results on the evaluation episodes
(``team.evaluate``: the bundled ``craft`` set, no oracle, 20 turns), one
*run* per evaluation seed, so the board bootstraps it paired with every
other entry on the same set. ``craft-env leaderboard team.entry.json``
shows it; the file is read back with the board's own checks before this
returns.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import craft_env
from craft_env.eval.leaderboard.entries import ENTRY_FILE, Condition, Entry, GameResult
from craft_env.eval.leaderboard.entryfile import entry_data, read_entry
from craft_env.eval.leaderboard.targets import complexity_of
from craft_env.jax.team.evaluate import MAX_TURNS, Games
from craft_env.models.jsonl import write_atomic

DATASET = "craft"


def game_results(games: Games) -> list[GameResult]:
    """One ``GameResult`` per evaluation game (game ``i``: structure ``i % 20``, run ``i // 20``)."""
    count = len(games.structures)
    extra = games.extra or {}
    out = []
    for i, progress in enumerate(games.progress):
        out.append(GameResult(
            structure=games.structures[i % count], index=i % count, run=i // count, progress=float(progress),
            completion=float(games.completion[i]), position_accuracy=float(extra["position_accuracy"][i]),
            iou=float(extra["iou"][i]), turns=int(games.turns[i]), failed=int(extra["failed"][i]),
            removes=int(extra["removes"][i]), removes_prescribed=int(extra["removes_prescribed"][i]),
            followed=int(extra["followed"][i]), completed=bool(games.completion[i] >= 1.0)))
    return out


def write_team_entry(games: Games, key: str, output: str | os.PathLike, model: str = "craft-env team (PPO)") -> Entry:
    """Write ``games`` as an entry file at ``output`` and return it as the board reads it back."""
    results = game_results(games)
    structures = craft_env.load_eval_set()
    protocol = craft_env.vector_env(1).config.protocol.name
    entry = Entry(
        key=key, director_model=model, builder_model=model, kind=ENTRY_FILE, dataset=DATASET, protocol=protocol,
        condition=Condition(oracle_n=0, turns=MAX_TURNS), games=results, runs=len({g.run for g in results}),
        complexity={games.structures[i]: complexity_of(s) for i, s in enumerate(structures)},
        settings={"craft_env_version": craft_env.__version__, "prompt_version": None},
    )
    text = json.dumps(entry_data(entry), indent=1, ensure_ascii=True, allow_nan=False) + "\n"
    Path(output).parent.mkdir(parents=True, exist_ok=True)
    write_atomic(output, text)
    return read_entry(output)
