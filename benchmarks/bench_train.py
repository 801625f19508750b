"""Speed and size of the training faces: ``craft-env export --format sft|dpo`` and the text environment.

Run: ``python benchmarks/bench_train.py [--runs 3] [--episodes 60] [--repeat 3] [--workers 1,2]``.

It prints the machine's load average first (the figures are only
comparable at a similar load). Then it plays the benchmark offline
(``craft-env run --runs 3``: the scripted team on the paper's 20
structures, 60 games) into a temporary directory; that run is the
baseline: its games per second and turns per second. Then:

* export: SFT records of the builder and of the directors, and DPO pairs of
  the builder, from that run (every game replayed through the runner,
  ``craft_env.train.replay``): records per second, the file's size, and the
  export's time as a multiple of the run's own time;
* text environment (``craft_env.text_env``, scripted others, the builder
  copying the first candidate, 20 turns): steps per second, one game at a
  time and ``num_envs=16`` at once, and as a ratio to the run's turns per
  second (the same games played by the scripted team in the runner);
* workers (``text_env(num_envs=16, workers=K)`` for each K of ``--workers``):
  steps per second of wall-clock time, and the ratio to K=1; the workers
  are started before the clock starts (start-up is not a per-step cost);
* start-up: a fresh ``craft-env run --runs 1 --structures 0 --no-plots``
  (one game) as a subprocess, its CPU seconds, minus the time its turns
  take at the baseline's rate: the run's fixed cost (imports, numba
  caches, the dataset and its digest, the report).

Times are CPU seconds of this process (``time.process_time``; the work is
one thread, so on an idle machine they equal wall-clock seconds, and on a
shared one they are not inflated by waiting for a core), except the
workers' rows, which are wall-clock (the work is in other processes); each
is the median of ``--repeat`` runs. The wall-clock total is printed at the
end. Pointing ``PYTHONPATH`` at another checkout's ``src`` measures that
version with the same script (rows it cannot play are skipped).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import craft_env
from craft_env.eval.logs.games import read_games, run_dir
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from craft_env.train.export import TRAIN_NAME, export_training_data

CANDIDATE = re.compile(r"^1\. (.+)$", re.MULTILINE)


def median_time(task, repeat: int) -> tuple[float, object]:
    """``(median CPU seconds, last result)`` of ``repeat`` calls of ``task``."""
    times, result = [], None
    for _ in range(repeat):
        started = time.process_time()
        result = task()
        times.append(time.process_time() - started)
    return statistics.median(times), result


def play_run(root: Path, runs: int, repeat: int) -> tuple[Path, float, int, int]:
    """``(run directory, seconds, games, turns)`` of the offline baseline run."""
    counter = iter(range(repeat))

    def once() -> Path:
        out = root / f"run{next(counter)}"
        run_benchmark(RunSettings(out=str(out), runs=runs))
        return out

    seconds, out = median_time(once, repeat)
    games = turns = 0
    for number in range(1, runs + 1):
        for game in read_games(run_dir(out, number) / "log.jsonl").values():
            games += game.status == "done"
            turns += len(game.turns)
    return out, seconds, games, turns


def builder_reply(messages) -> str:
    return f"MOVE: {CANDIDATE.search(messages[-1]['content']).group(1)}\nFOLLOWED: D1"


def worker_steps(episodes: int, num_envs: int, workers: int, repeat: int) -> tuple[float, int]:
    """``(median wall seconds, steps)`` of games ``0 .. episodes - 1``, ``num_envs`` at a time in
    ``workers`` processes started beforehand."""
    times, steps = [], 0
    with craft_env.text_env(num_envs=num_envs, workers=workers) as env:
        for _ in range(repeat):
            steps = 0
            started = time.perf_counter()
            for first in range(0, episodes - episodes % num_envs, num_envs):
                observations, _ = env.reset(seed=first)
                while any(o is not None for o in observations):
                    replies = [None if o is None else builder_reply(o) for o in observations]
                    steps += sum(reply is not None for reply in replies)
                    observations, *_ = env.step(replies)
            times.append(time.perf_counter() - started)
    return statistics.median(times), steps


def startup_seconds(root: Path, repeat: int) -> tuple[float, int]:
    """``(median CPU seconds, turns)`` of a fresh one-game ``craft-env run`` (``--no-plots``)."""
    times, turns = [], 0
    for k in range(repeat):
        out = root / f"startup{k}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "craft_env.cli", "run", "--runs", "1", "--structures", "0", "--no-plots",
             "--no-progress", "--out", str(out)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        turns = sum(len(game.turns) for game in read_games(run_dir(out, 1) / "log.jsonl").values())
    return statistics.median(times), turns


def text_env_steps(episodes: int, num_envs: int | None) -> int:
    """Steps taken playing games ``0 .. episodes - 1`` (``num_envs`` at once, or one at a time)."""
    steps = 0
    if num_envs is None:
        with craft_env.text_env() as env:
            for seed in range(episodes):
                messages, _ = env.reset(seed=seed)
                while messages is not None:
                    messages, *_ = env.step(builder_reply(messages))
                    steps += 1
        return steps
    for first in range(0, episodes, num_envs):
        with craft_env.text_env(num_envs=min(num_envs, episodes - first)) as env:
            observations, _ = env.reset(seed=first)
            while any(o is not None for o in observations):
                replies = [None if o is None else builder_reply(o) for o in observations]
                steps += sum(reply is not None for reply in replies)
                observations, *_ = env.step(replies)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=3, help="runs of the paper's 20 in the baseline (default 3)"
    )
    parser.add_argument("--episodes", type=int, default=60, help="text-env games per row (default 60)")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timings per row; the median is shown (default 3)"
    )
    parser.add_argument(
        "--workers", default="1,2", help="comma-separated worker counts for the workers' rows (default 1,2)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load} on {os.cpu_count()} cores\n")
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        run, run_seconds, games, turns = play_run(root, args.runs, args.repeat)
        print(
            f"baseline: craft-env run --runs {args.runs}: {games} games, {turns} turns, "
            f"{run_seconds:.2f} CPU s "
            f"({games / run_seconds:.1f} games/s, {turns / run_seconds:,.0f} turns/s)\n"
        )
        print("| export | records | CPU s | records/s | file | x run time |")
        print("|---|---|---|---|---|---|")
        for fmt, seat in (("sft", "builder"), ("sft", "directors"), ("dpo", "builder")):
            out = root / f"{fmt}-{seat}"
            seconds, manifest = median_time(
                lambda: export_training_data([run], fmt, out, seat=seat), args.repeat
            )
            records = manifest["records"]["train"]
            size = (out / TRAIN_NAME).stat().st_size
            print(
                f"| {fmt} --seat {seat} | {records:,} | {seconds:.2f} | {records / seconds:,.0f} | "
                f"{size / 1e6:.1f} MB | {seconds / run_seconds:.1f} |"
            )
        print("\n| text env (builder, scripted others) | games | steps | CPU s | steps/s | / run turns/s |")
        print("|---|---|---|---|---|---|")
        for name, num_envs in (("one game at a time", None), ("num_envs=16", 16)):
            seconds, steps = median_time(lambda: text_env_steps(args.episodes, num_envs), args.repeat)
            rate = steps / seconds
            ratio = rate / (turns / run_seconds)
            print(f"| {name} | {args.episodes} | {steps:,} | {seconds:.2f} | {rate:,.0f} | {ratio:.2f} |")
        print("\n| text env, num_envs=16 | workers | steps | wall s | steps/s | x 1 worker |")
        print("|---|---|---|---|---|---|")
        one = None
        for workers in (int(k) for k in args.workers.split(",")):
            try:
                seconds, steps = worker_steps(args.episodes, 16, workers, args.repeat)
            except (TypeError, ValueError) as error:  # a version without workers
                print(f"| (skipped: {error}) | {workers} | | | | |")
                continue
            rate = steps / seconds
            one = rate if one is None else one
            print(f"| {workers} process(es) | {workers} | {steps:,} | {seconds:.2f} | {rate:,.0f} | "
                  f"{rate / one:.2f} |")
        seconds, game_turns = startup_seconds(root, args.repeat)
        fixed = seconds - game_turns / (turns / run_seconds)
        print(
            f"\nstart-up: craft-env run --runs 1 --structures 0 --no-plots: {seconds:.2f} CPU s for "
            f"{game_turns} turns; fixed cost (minus the turns at the baseline's rate): {fixed:.2f} CPU s"
        )
    print(f"\nwall clock: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
