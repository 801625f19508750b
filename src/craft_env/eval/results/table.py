"""The paper's Table 1 and per-turn curves, computed from game logs alone.

For a set of finished games (one run, or several pooled):

* ``progress``, ``completion``, ``position_accuracy``, ``iou``: mean and
  standard error over games of the value after the last turn played;
* ``fail``: mean over games of the fraction of turns whose move failed
  (illegal or unreadable), with its standard error;
* ``remove``: attempted-remove rate over all turns (pooled);
* ``gap``: ``remove`` minus the rate of turns where the oracle prescribed a
  removal (signed);
* extras: games, errored games, completed fraction (as the run's protocol
  counts it: board == target, or progress >= 0.95 under ``paper``), mean
  turns, oracle adherence, tool calls per turn, calls, tokens and cost.

Curves: progress after turn t for t = 1..T (a game that ended early keeps
its final value), and attempted/prescribed remove rates per turn among the
games that played that turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from craft_env.core.protocol import CRAFT, Protocol, is_completed
from craft_env.eval.logs.games import GameLog
from craft_env.eval.results.stats import mean_sem
from craft_env.eval.results.taxonomy import taxonomy

METRICS = ("progress", "completion", "position_accuracy", "iou")


def final_metrics(game: GameLog) -> dict[str, float]:
    """The game's metrics after its last turn: the done marker's ``final``, else the last turn line's.

    The marker is written after the last turn, so it holds the end of the
    game even when that turn's line is unreadable (``logs.read_games``
    skips it).
    """
    final = (game.marker or {}).get("final")
    if isinstance(final, dict) and final:
        return dict(final)
    return dict(game.turns[-1]["progress_data"]) if game.turns else {}


def _rate(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else float("nan")


def table_row(games: Sequence[GameLog], errored: int = 0, rules: Protocol = CRAFT) -> dict[str, Any]:
    """Table 1 for ``games`` (finished games only) played under ``rules``, with extras (see the module docstring)."""
    row: dict[str, Any] = {"games": len(games), "errored": errored, "protocol": rules.name}
    finals = [final_metrics(g) for g in games]
    for name in METRICS:
        row[name], row[name + "_sem"] = mean_sem([f.get(name, float("nan")) for f in finals])
    fails = [_rate([not t["legal"] for t in g.turns]) for g in games if g.turns]
    row["fail"], row["fail_sem"] = mean_sem(fails)
    turns = [t for g in games for t in g.turns]
    row["turns"] = len(turns)
    row["remove"] = _rate([bool(t["remove_attempted"]) for t in turns])
    row["remove_prescribed"] = _rate([bool(t["remove_prescribed"]) for t in turns])
    row["gap"] = row["remove"] - row["remove_prescribed"]
    row["followed_oracle"] = _rate([bool(t["followed_oracle"]) for t in turns])
    row["completed"] = _rate(
        [
            is_completed(
                rules,
                f.get("progress", 0.0),
                f.get("completion", 0.0) >= 1.0 and f.get("voxel_iou", 0.0) >= 1.0,
            )
            for f in finals
        ]
    )
    row["tool_calls_per_turn"] = (
        sum(len(t.get("tool_calls") or ()) for t in turns) / len(turns) if turns else float("nan")
    )
    row["mean_turns"] = len(turns) / len(games) if games else float("nan")
    row["calls"] = sum(int(t.get("calls", 0)) for t in turns)
    row["prompt_tokens"] = sum(int(t.get("tokens", {}).get("prompt", 0)) for t in turns)
    row["completion_tokens"] = sum(int(t.get("tokens", {}).get("completion", 0)) for t in turns)
    row["cost"] = sum(float(t.get("cost", 0.0)) for t in turns)
    row["taxonomy"] = taxonomy(turns)
    return row


def progress_curve(games: Sequence[GameLog], max_turns: int) -> list[tuple[float, float]]:
    """``(mean, sem)`` of progress after each turn 1..``max_turns`` (early finishers carry forward)."""
    series = []
    for game in games:
        values = [t["progress_data"]["progress"] for t in game.turns]
        if not values:
            values = [final_metrics(game).get("progress", 0.0)]
        series.append(values + [values[-1]] * (max_turns - len(values)))
    return [mean_sem([s[t] for s in series]) for t in range(max_turns)] if series else []


def remove_curves(games: Sequence[GameLog], max_turns: int) -> tuple[list[float], list[float]]:
    """Attempted and prescribed remove rates per turn, among the games that played that turn."""
    attempted, prescribed = [], []
    for index in range(max_turns):
        played = [g.turns[index] for g in games if len(g.turns) > index]
        attempted.append(_rate([bool(t["remove_attempted"]) for t in played]))
        prescribed.append(_rate([bool(t["remove_prescribed"]) for t in played]))
    return attempted, prescribed
