"""Speed of ``craft-env leaderboard`` at scale: 50 entries of 60 games each (issue 23: under 10 s).

Run from the repository root::

    python benchmarks/bench_leaderboard.py [--entries 50] [--repeat 3] [--work DIR]

It plays one real 60-game run (the random team, 20 structures x 3 runs,
20 turns; a few seconds), then constructs 50 entries from it, each with its
own seeded perturbation of every game's final progress: as 50 run
directories (copies of the logs, the done markers' final metrics changed)
and as 50 entry files. It times, best of ``--repeat`` after one warm-up:

* the baseline: reading the 50 run directories with the report's reader
  (``report.load_results``, what ``craft-env report`` does);
* the whole board (entries, groups, 10,000-sample paired bootstrap bands,
  structure cards, the HTML) from the run directories, and from the entry files;
* the rank bands alone (one group of 50, 10,000 samples).

Each step's wall-clock time is the best of the repeats, and so is its CPU
time (``time.process_time``: what the step cost this process, steadier
than the wall clock on a machine shared with other jobs). Ratios are of
wall-clock times, against the baseline. The load average before and after
is printed, and the HTML's size (the issue asks for under 5 MB without
replays).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from craft_env.cli import main as cli
from craft_env.eval.results.bands import Scores, rank_bands
from craft_env.eval.leaderboard.board import BoardOptions, build_board
from craft_env.eval.leaderboard.entries import entries_from_path, summarise
from craft_env.eval.leaderboard.entryfile import entry_data
from craft_env.eval.leaderboard.page import render_board
from craft_env.eval.report.report import load_results


def _perturbed_run(template: Path, out: Path, k: int) -> None:
    """A copy of ``template`` (model ``model-k``) whose games' final progress is shifted, seeded."""
    shutil.copytree(template, out)
    config = json.loads((out / "config.json").read_text())
    config["director_model"] = f"model-{k:02d}"
    (out / "config.json").write_text(json.dumps(config))
    rng = np.random.default_rng(k)
    shift = rng.normal(0.0, 0.1)
    for log in sorted(out.glob("run_*/log.jsonl")):
        lines = []
        for raw in log.read_text().splitlines():
            record = json.loads(raw)
            if record.get("kind") == "game" and record.get("event") == "done":
                final = record["final"]
                final["progress"] = float(
                    np.clip(final["progress"] + shift + rng.normal(0.0, 0.05), 0.0, 1.0)
                )
            lines.append(json.dumps(record))
        log.write_text("\n".join(lines) + "\n")


def _entry_files(runs: list[Path], folder: Path) -> list[Path]:
    """Entry files of the perturbed runs (their per-game results, as ``--entry`` writes them)."""
    paths = []
    for run in runs:
        entry = entries_from_path(run)[0]
        entry.summary = summarise(entry.games)
        path = folder / f"{run.name}.entry.json"
        path.write_text(json.dumps(entry_data(entry)))
        paths.append(path)
    return paths


def _best(repeat: int, work) -> tuple[float, float]:
    """The best wall-clock and the best CPU seconds of ``repeat`` runs of ``work``, after one warm-up."""
    work()
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        work()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return min(wall), min(cpu)


def _load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--work", help="a directory to build in (default: a temporary one)")
    args = parser.parse_args()
    root = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="bench-leaderboard-"))
    template = root / "template"
    if not template.exists():
        assert (
            cli(
                [
                    "run",
                    "--out",
                    str(template),
                    "--runs",
                    "3",
                    "--director-model",
                    "random",
                    "--builder-model",
                    "random",
                    "--no-progress",
                    "--no-plots",
                ]
            )
            == 0
        )
    runs = []
    for k in range(args.entries):
        out = root / f"entry-{k:02d}"
        if not out.exists():
            _perturbed_run(template, out, k)
        runs.append(out)
    files_dir = root / "entries"
    files_dir.mkdir(exist_ok=True)
    files = _entry_files(runs, files_dir)
    options = BoardOptions(published=False)
    html: list[str] = []

    def board_from(paths):
        return lambda: html.append(render_board(build_board(paths, options)))

    games = sum(len(e.games) for e in entries_from_path(runs[0])) * len(runs)
    scores = [
        Scores(e.key, e.summary["progress"], e.summary["progress_sem"], e.by_structure)
        for run in runs
        for e in entries_from_path(run)
    ]
    load_before = _load()
    rows = [
        (
            "read the run directories (report.load_results): baseline",
            _best(args.repeat, lambda: load_results(runs)),
        ),
        ("board + HTML from run directories", _best(args.repeat, board_from(runs))),
        ("board + HTML from entry files", _best(args.repeat, board_from(files))),
        ("rank bands alone (10,000 samples)", _best(args.repeat, lambda: rank_bands(scores))),
    ]
    size = len(html[-1].encode("utf-8"))
    print(f"{len(runs)} entries, {games} games ({games // len(runs)} per entry); HTML {size / 1e6:.2f} MB")
    print(f"load average (1, 5, 15 min): {load_before} before, {_load()} after")
    print("| step | best wall (s) | best CPU (s) | ratio to baseline (wall) |")
    print("|---|---|---|---|")
    base = rows[0][1][0]
    for name, (seconds, cpu) in rows:
        print(f"| {name} | {seconds:.2f} | {cpu:.2f} | {seconds / base:.2f} |")


if __name__ == "__main__":
    main()
