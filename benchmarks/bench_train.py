"""Speed and size of the training faces: ``craft-env export --format sft|dpo`` and the text environment.

Run: ``python benchmarks/bench_train.py [--runs 3] [--episodes 60] [--repeat 3]``.

First it plays the benchmark offline (``craft-env run --runs 3``: the
scripted team on the paper's 20 structures, 60 games) into a temporary
directory; that run is the baseline: its games per second and turns per
second. Then:

* export: SFT records of the builder and of the directors, and DPO pairs of
  the builder, from that run (every game replayed through the runner,
  ``craft_env.train.replay``): records per second, the file's size, and the
  export's time as a multiple of the run's own time;
* text environment (``craft_env.text_env``, scripted others, the builder
  copying the first candidate, 20 turns): steps per second, one game at a
  time and ``num_envs=16`` at once, and as a ratio to the run's turns per
  second (the same games played by the scripted team in the runner).

Times are CPU seconds of this process (``time.process_time``; the work is
one thread, so on an idle machine they equal wall-clock seconds, and on a
shared one they are not inflated by waiting for a core); each is the
median of ``--repeat`` runs. The wall-clock total is printed at the end.
"""

from __future__ import annotations

import argparse
import re
import statistics
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
    args = parser.parse_args()
    started = time.perf_counter()
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
    print(f"\nwall clock: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
