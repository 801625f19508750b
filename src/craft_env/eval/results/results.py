"""One row of ``craft-env report``: a run's (or pooled runs') games, labelled, and their Table 1 row.

Made by the report (``eval.report``, from run directories) and, for the
paper's result logs (``eval.logs.paperlogs``), by ``paper_results``: one per
condition and model pair.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from craft_env.core.protocol import Protocol, buildable, get_protocol
from craft_env.core.views import DEFAULT_SEATS
from craft_env.datasets import load_dataset
from craft_env.eval.logs.games import GameLog
from craft_env.eval.logs.paperlogs import game_logs, group_config, group_games, read_paper_games
from craft_env.eval.results.table import table_row


@dataclass
class RunResult:
    """One row of the report: a run (or several pooled) of one output directory.

    ``row`` (Table 1 and its extras) is computed on first use: a reader that
    wants only the games (the leaderboard, for the pooled runs) does not pay
    for the rows of every single run.
    """

    label: str
    config: dict[str, Any]
    games: list[GameLog]
    errored: int
    max_turns: int
    pooled: bool = False
    source: str | None = None

    def __post_init__(self) -> None:
        self.rules = get_protocol(self.config.get("protocol", "craft"), "config.protocol")

    @cached_property
    def row(self) -> dict[str, Any]:
        row = table_row(self.games, self.errored, self.rules)
        row["unbuildable"] = unbuildable_targets(self.config, self.games, self.rules)
        return row

    @property
    def protocol(self) -> str:
        return self.rules.name

    @property
    def seats(self) -> tuple[str, ...]:
        """The seated directors (``DEFAULT_SEATS`` for runs saved before seats were configurable)."""
        return tuple(self.config.get("seats") or DEFAULT_SEATS)

    @property
    def director_model(self) -> str:
        """The directors' model, with the seats when they are not the default (Table 1's Directors)."""
        model = str(self.config.get("director_model", "?"))
        person = self.config.get("person")  # craft-env play: a person at one seat
        if person in self.seats:
            model = f"{model} + person at {person}"
        return model if self.seats == DEFAULT_SEATS else f"{model} (seats {','.join(self.seats)})"

    @property
    def builder_model(self) -> str:
        if self.config.get("person") == "builder":
            return "person"
        return str(self.config.get("builder_model", "?"))

    @property
    def oracle(self) -> str:
        n = self.config.get("oracle_n")
        return "?" if n is None else (str(n) if n else "off")


def unbuildable_targets(config: dict[str, Any], games: list[GameLog], rules: Protocol) -> int | None:
    """How many of the games' targets ``rules`` (the run's protocol) cannot build (``None`` if the set is unreadable)."""

    if config.get("source") == "paper logs":  # counted from the logged targets (eval.paperlogs)
        return None
    try:
        if not rules.hidden_span_ban:
            return 0
        structures = load_dataset(config.get("dataset") or "craft")
    except (OSError, ValueError):
        return None
    indices = sorted({g.structure_index for g in games})
    return sum(1 for i in indices if i < len(structures) and not buildable(structures[i], rules))


def paper_results(path: str | os.PathLike) -> list[RunResult]:
    """Report rows (``results.RunResult``) for the paper logs under ``path``: one per (condition, director,
    builder), pooled over runs, with the replay's disagreements."""
    results = []
    for (condition, director, builder), games in group_games(read_paper_games(path)).items():
        config = group_config(games)
        result = RunResult(f"{condition}/{director}_{builder}", config, game_logs(games), 0, config["turns"])
        result.row["unbuildable"] = sum(1 for g in games if not buildable(g.target, g.protocol))
        results.append(result)
    return results
