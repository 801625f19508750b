"""``craft-env report``: Table 1, extras and the failure taxonomy from logs alone.

Give it output directories of ``craft-env run`` (or single ``run_<k>``
directories); every run becomes a row, side by side, and an output
directory with several runs also gets a pooled row. It prints the tables
in the terminal (rich), writes them as Markdown (``report.md``) and JSON
(``report.json``), and draws PNG plots (``plots.py``) when matplotlib is
installed.
"""

from __future__ import annotations

import json
import logging
import math
import os
from pathlib import Path
from typing import Any

from craft_env.eval.results.diagnostics import diagnostic_tables as team_tables
from craft_env.eval.results.diagnostics import diagnostics_row
from craft_env.eval.judges.tables import judge_tables, judged_summary
from craft_env.eval.logs.games import LOG_NAME, GameLog, read_config, read_games, run_dirs
from craft_env.eval.logs.paperlogs import is_paper_log_path
from craft_env.eval.report.plots import draw_diagnostic_plots, draw_plots
from craft_env.eval.results.results import RunResult, paper_results
from craft_env.models.jsonl import json_safe
from craft_env.eval.results.table import progress_curve, remove_curves
from craft_env.eval.results.taxonomy import CATEGORIES
from craft_env.eval.results.terminal import fitted_tables, terminal_console
from craft_env.text.clean import printable

log = logging.getLogger(__name__)

TABLE1 = (
    ("Prog.", "progress"),
    ("Comp.", "completion"),
    ("Pos. Acc.", "position_accuracy"),
    ("IoU", "iou"),
    ("Fail", "fail"),
)
TAXONOMY_HEADERS = ("Correct", "Layer", "Span", "Wrong colour", "Wrong pos.", "Other")


def load_results(paths: list[str | os.PathLike]) -> list[RunResult]:
    """Rows for every run under ``paths`` (plus a pooled row per directory with several runs)."""
    results: list[RunResult] = []
    for raw in paths:
        path = Path(raw)
        if is_paper_log_path(path):
            results += paper_results(path)
            continue
        if not path.is_dir():
            raise ValueError(f"report: {os.fspath(raw)!r} is not a directory")
        runs = run_dirs(path)
        if not runs:
            raise ValueError(f"report: no run logs (run_<k>/{LOG_NAME}) under {os.fspath(raw)!r}")
        single_run_dir = runs == [path]
        out = path.parent if single_run_dir else path
        config = read_config(out)
        max_turns = int(config.get("turns", 20))
        pooled_games: list[GameLog] = []
        pooled_errored = 0
        for run in runs:
            games = list(read_games(run / LOG_NAME).values())
            done = sorted((g for g in games if g.status == "done"), key=lambda g: g.structure_index)
            errored = sum(1 for g in games if g.status != "done")
            label = f"{out.name}/{run.name}"
            results.append(RunResult(label, config, done, errored, max_turns, source=os.fspath(out)))
            pooled_games += done
            pooled_errored += errored
        if len(runs) > 1:
            results.append(
                RunResult(f"{out.name}/all", config, pooled_games, pooled_errored, max_turns, True,
                          source=os.fspath(out))
            )
    return results


def primary(results: list[RunResult]) -> list[RunResult]:
    """The rows to plot: pooled rows where a directory has several runs, else the single runs."""
    pooled_dirs = {r.label.rsplit("/", 1)[0] for r in results if r.pooled}
    return [r for r in results if r.pooled or r.label.rsplit("/", 1)[0] not in pooled_dirs]


def _pm(mean: float, sem: float) -> str:
    if math.isnan(mean):
        return "n/a"
    return f"{mean:.3f} ± n/a" if math.isnan(sem) else f"{mean:.3f} ± {sem:.3f}"


def _num(value: float, signed: bool = False) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "n/a"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def table1_cells(result: RunResult) -> list[str]:
    row = result.row
    cells = [_pm(row[key], row[key + "_sem"]) for _, key in TABLE1]
    return cells + [_num(row["remove"]), _num(row["gap"], signed=True)]


def extras_cells(result: RunResult) -> list[str]:
    row = result.row
    unbuildable = row.get("unbuildable")
    return [
        result.protocol,
        str(row["games"]),
        str(row["errored"]),
        _num(row["completed"]),
        f"{row['mean_turns']:.1f}" if not math.isnan(row["mean_turns"]) else "n/a",
        "?" if unbuildable is None else str(unbuildable),
        _num(row["followed_oracle"]),
        _num(row["remove_prescribed"]),
        _num(row["tool_calls_per_turn"]),
        str(row["calls"]),
        str(row["prompt_tokens"] + row["completion_tokens"]),
        f"{row['cost']:.4f}",
    ]


def taxonomy_cells(result: RunResult) -> list[str]:
    found = result.row["taxonomy"]
    return [_num(found[name]) for name in CATEGORIES] + [str(found["turns"])]


TABLE1_HEADERS = ["Run", "Directors", "Builder", "Oracle", *[name for name, _ in TABLE1], "REMOVE", "Gap"]
EXTRAS_HEADERS = [
    "Run",
    "Protocol",
    "Games",
    "Errored",
    "Completed",
    "Turns/game",
    "Unbuildable",
    "Oracle followed",
    "Remove prescribed",
    "Tool calls/turn",
    "Calls",
    "Tokens",
    "Cost ($)",
]
TAXONOMY_TABLE_HEADERS = ["Run", *TAXONOMY_HEADERS, "Oracle turns"]


def _tables(results: list[RunResult]) -> list[tuple[str, list[str], list[list[str]]]]:
    return [
        (
            "Table 1: task performance after the last turn (mean ± SEM over games)",
            TABLE1_HEADERS,
            [[r.label, r.director_model, r.builder_model, r.oracle, *table1_cells(r)] for r in results],
        ),
        ("Games, oracle use and spend", EXTRAS_HEADERS, [[r.label, *extras_cells(r)] for r in results]),
        (
            "Failure taxonomy (fraction of turns where the oracle offered moves)",
            TAXONOMY_TABLE_HEADERS,
            [[r.label, *taxonomy_cells(r)] for r in results],
        ),
        *diagnostic_tables(results),
    ]


def disagreements(results: list[RunResult]) -> list[dict[str, Any]]:
    """Every place where a replayed log (``eval.paperlogs``) disagrees with what it logged."""
    found = []
    for result in results:
        if result.pooled:
            continue
        for game in result.games:
            found += (game.marker or {}).get("replay_disagreements") or []
            for turn in game.turns:
                found += turn.get("replay_disagreements") or []
    return found


def replayed_illegal(results: list[RunResult]) -> list[tuple[str, int, str, str]]:
    """``(game, turn, move, reason)`` of every move of a replayed paper log that the protocol rejects."""
    return [
        (game.structure_id or "?", int(turn.get("turn_number", 0)), str(turn.get("move")),
         str(turn.get("reason")))
        for result in results
        if result.config.get("source") == "paper logs" and not result.pooled
        for game in result.games
        for turn in game.turns
        if not turn.get("legal", True)
    ]


def _short(value: Any) -> str:
    text = json.dumps(value, sort_keys=True) if not isinstance(value, str) else value
    return (text if len(text) <= 120 else text[:117] + "...").replace("|", "\\|")
def diagnostic_tables(results: list[RunResult]) -> list[tuple[str, list[str], list[list[str]]]]:
    """λ, outcome and remove rates per row; judge scores, agreement and correlations per run directory."""
    return [*team_tables(results), *judge_tables(primary(results))]


def markdown(results: list[RunResult]) -> str:
    """The report as Markdown (three tables, replay disagreements if any, and a legend)."""
    lines = ["# CRAFT report", ""]
    for title, headers, rows in _tables(results):
        lines += [f"## {title}", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        lines += ["| " + " | ".join(cells) + " |" for cells in rows]
        lines.append("")
    found = disagreements(results)
    if found:
        lines += [f"## Replay disagreements ({len(found)})", "",
                  "| Game | Turn | Field | Logged | Replayed |", "|---|---|---|---|---|"]
        lines += [
            f"| {d['game']} | {d['turn']} | {d['field']} | {_short(d['logged'])} | {_short(d['replayed'])} |"
            for d in found
        ]
        lines.append("")
    illegal = replayed_illegal(results)
    if illegal:
        lines += [f"## Moves the protocol rejects in replayed logs ({len(illegal)})", "",
                  "| Game | Turn | Move | Reason |", "|---|---|---|---|"]
        lines += [f"| {g} | {t} | {m} | {_short(r)} |" for g, t, m, r in illegal]
        lines.append("")
    lines += [
        "Prog. is the mean of Comp., Pos. Acc. and IoU (the paper's set-based metrics). Fail is the "
        "per-game rate of turns whose move failed. REMOVE is the rate of turns with an attempted "
        "removal, Gap that rate minus the rate of turns where the oracle prescribed one (signed; "
        "positive: over-removal). Errored games are left out of every number and counted apart. "
        "Completed follows each run's protocol (craft: board == target; paper: progress >= 0.95); "
        "Unbuildable counts the games' targets that the protocol's own rules cannot finish (paper: a "
        "large block touching a hidden cell).",
        "",
    ]
    return "\n".join(lines)


def print_tables(results: list[RunResult], console: Any = None) -> None:
    """The three tables in the terminal (rich; plain Markdown when rich is not installed)."""
    console = console or terminal_console()
    if console is None:
        print(printable(markdown(results)))
        return
    for title, headers, rows in _tables(results):
        for table in fitted_tables(console, title, headers, rows):
            console.print(table)


def as_json(results: list[RunResult]) -> list[dict[str, Any]]:
    """Rows as plain data (NaN becomes null)."""

    def clean(value: Any) -> Any:
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        return value

    return [
        {
            "label": r.label,
            "director_model": r.director_model,
            "builder_model": r.builder_model,
            "oracle_n": r.config.get("oracle_n"),
            "protocol": r.protocol,
            "seats": list(r.seats),
            "pooled": r.pooled,
            **clean(r.row),
            "progress_curve": [clean(list(p)) for p in progress_curve(r.games, r.max_turns)],
        }
        for r in results
    ]


def write_report(
    paths: list[str | os.PathLike], out: str | os.PathLike | None = None, plots: bool = True
) -> tuple[list[RunResult], Path]:
    """Load ``paths``; write ``report.md``, ``report.json`` and plots into ``out``; return rows, ``out``."""
    results = load_results(paths)
    single = len(paths) == 1 and Path(paths[0]).is_dir()
    target = Path(out) if out is not None else (Path(paths[0]) if single else Path("craft_report"))
    target.mkdir(parents=True, exist_ok=True)
    (target / "report.md").write_text(markdown(results), encoding="utf-8")
    (target / "report.json").write_text(json.dumps(as_json(results), indent=2) + "\n", encoding="utf-8")
    found = disagreements(results)
    if found:
        (target / "disagreements.json").write_text(json.dumps(found, indent=2) + "\n", encoding="utf-8")
    (target / "diagnostics.json").write_text(json.dumps(diagnostics_json(results), indent=2) + "\n",
                                             encoding="utf-8")
    if plots:

        draw_plots(primary(results), target / "plots", curves=(progress_curve, remove_curves))
        draw_diagnostic_plots(primary(results), target / "plots")
    return results, target


def diagnostics_json(results: list[RunResult]) -> dict[str, Any]:
    """λ and rates per row, and judge scores per run directory (both scorings), as plain data."""
    judged = [
        {key: value for key, value in entry.items() if key != "by_run"}
        for scoring in ("default", "paper")
        for entry in judged_summary(primary(results), scoring)
    ]
    rows = [{"label": r.label, **diagnostics_row(r.games, r.seats)} for r in results]
    return json_safe({"rows": rows, "judges": judged})
