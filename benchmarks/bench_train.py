"""Speed and size of the training faces: ``craft-env export --format sft|dpo`` and the text environment.

Run: ``python benchmarks/bench_train.py [--runs 3] [--episodes 60] [--repeat 3] [--workers 0,1,2]``.

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
* workers (``text_env(num_envs=64, workers=K)`` for each K of ``--workers``,
  0 meaning the games in this process; 320 games, about 5,300 steps): steps
  per second of wall-clock time and the ratio to K=1; the CPU microseconds
  per step of this process and of the workers together; and the rate the
  CPU time allows (steps over this process's CPU time plus, per call, the
  busiest worker's: what wall-clock gives with a core for each process and
  nothing else running, so it can be read on a shared machine) with its
  ratio to K=1; then the same rows with ``turn_records=False`` (no run-log
  records in ``info``, most of what the caller unpacks per step). A row
  says "pinned" when its workers were pinned to cores (``train.workers``,
  "Pinning": two workers on a 2-core machine are). Beside them, in the same
  rounds, the same split without the pipe and the caller (``alone_steps``):
  the same games dealt out the same way, each share played in a process of
  its own, and its ratio to one such process; the workers' ratio falls
  short of it by what the pipe and the caller cost. It can pass K: a
  process that holds fewer games plays each step faster (a smaller heap:
  docs/train.md, "Measured"), and processes that share nothing still slow
  each other on a shared machine. The
  workers are started, and a first reset is played, before the clock
  starts (start-up is not a per-step cost), and each
  timing starts after a full garbage collection; the replies are
  ``builder_reply``'s, found more cheaply (``first_candidate``);
* start-up: a fresh ``craft-env run --runs 1 --structures 0 --no-plots``
  (one game) as a subprocess, its CPU seconds, minus the time its turns
  take at the baseline's rate: the run's fixed cost (imports, numba
  caches, the dataset and its digest, the report, the process's exit),
  after one untimed run (``startup_seconds``).

Times are CPU seconds of this process (``time.process_time``; the work is
one thread, so on an idle machine they equal wall-clock seconds, and on a
shared one they are not inflated by waiting for a core), except the
workers' rows, which give both (the work is in other processes); each
is the median of ``--repeat`` runs. The workers' rows are timed in rounds,
each row once per round, and a ratio to K=1 is the median of the rounds'
ratios (each against the K=1 timing of its own round) with their range:
on a shared machine the load drifts over the minute the rows take, and a
ratio of two medians timed minutes apart would carry that drift. The
wall-clock total is printed at the end. Pointing ``PYTHONPATH`` at another checkout's ``src`` measures that
version with the same script (rows it cannot play are skipped).
"""

from __future__ import annotations

import argparse
import gc
import multiprocessing
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

try:
    from craft_env.train.workers import usable_cores, worker_cores
except ImportError:  # a version without workers (PYTHONPATH at an older checkout): nothing is pinned
    usable_cores = worker_cores = None

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


def first_candidate(messages) -> str:
    """``builder_reply``'s reply, its candidate found from the prompt's end (the list of candidates
    closes it) without a regular expression: under 1 µs a step instead of 10.

    The workers' rows measure how the environment's work spreads over processes, and the caller's
    own time per step is part of what does not spread: a stand-in agent that costs more than it needs
    to would hide the environment's share (the rows print what the replies cost)."""
    content = messages[-1]["content"]
    start = content.rfind("\n1. ") + 4
    end = content.find("\n", start)
    return f"MOVE: {content[start:] if end < 0 else content[start:end]}\nFOLLOWED: D1"


def worker_steps(games: int, num_envs: int, workers: int, records: bool = True) -> dict[str, float]:
    """One timing of games ``0 .. games - 1`` played ``num_envs`` at a time in ``workers`` processes
    (0: in this process; ``records=False``: ``turn_records=False``): ``steps``, ``wall`` seconds, this
    process's ``parent`` CPU seconds, of which ``replies`` making the replies (``first_candidate``), the
    workers' CPU seconds (``workers``), ``critical``: the sum over calls of the busiest worker's CPU
    seconds in that call, and ``pinned``: how many workers were pinned to a core. The processes
    are started, and a first reset played, before the clock starts: neither is a per-step cost."""
    options = {"num_envs": num_envs} if workers == 0 else {"num_envs": num_envs, "workers": workers}
    if not records:
        options["turn_records"] = False
    steps, critical, replying = 0, 0.0, 0.0
    with craft_env.text_env(**options) as env:
        env.reset(seed=games)

        def reading() -> list[float]:
            return list(getattr(env, "cpu_seconds", []))

        def call(method, *arguments):
            nonlocal critical
            before = reading()
            result = method(*arguments)
            critical += max((b - a for a, b in zip(before, reading())), default=0.0)
            return result

        workers_before = reading()
        gc.collect()  # every row starts with nothing pending (the note under the table)
        parent, wall = time.process_time(), time.perf_counter()
        for first in range(0, games - games % num_envs, num_envs):
            observations, _ = call(env.reset, first)
            while any(o is not None for o in observations):
                replying -= time.process_time()
                replies = [None if o is None else first_candidate(o) for o in observations]
                replying += time.process_time()
                steps += sum(reply is not None for reply in replies)
                observations, *_ = call(env.step, replies)
        wall, parent = time.perf_counter() - wall, time.process_time() - parent
        spent = sum(b - a for a, b in zip(workers_before, reading()))
        pinned = sum(core is not None for core in getattr(env, "cores", []))
    figures = {"steps": steps, "wall": wall, "parent": parent, "replies": replying, "workers": spent}
    return {**figures, "critical": critical, "pinned": pinned}


def _play_alone(first_game: int, count: int, games: int, num_envs: int, core, start, answer) -> None:
    """One process of ``alone_steps``: its ``count`` games of every batch of ``num_envs``, in this process
    (pinned to ``core`` unless None), from when ``start`` (a barrier) opens; sends ``steps``."""
    if core is not None:
        os.sched_setaffinity(0, {core})
    steps = 0
    with craft_env.text_env(num_envs=count) as env:
        env.reset(seed=games)
        start.wait()
        for first in range(0, games - games % num_envs, num_envs):
            observations, _ = env.reset(seed=first + first_game)
            while any(o is not None for o in observations):
                replies = [None if o is None else first_candidate(o) for o in observations]
                steps += sum(reply is not None for reply in replies)
                observations, *_ = env.step(replies)
    answer.send(steps)


def alone_steps(games: int, num_envs: int, processes: int) -> dict[str, float]:
    """The workers' rows without the pipe and the caller: the same games, each batch of ``num_envs``
    dealt out as ``text_env(workers=processes)`` deals it, but each share played by a process of its
    own (pinned as those workers are; the module docstring says why its ratio can pass K). ``steps``
    and ``wall`` seconds, from the moment all have set up until the last is done."""
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(processes + 1)
    share, extra = divmod(num_envs, processes)
    cores = worker_cores(processes, usable_cores()) if worker_cores else [None] * processes
    children, ends, first = [], [], 0
    for number in range(processes):
        count = share + (number < extra)
        mine, theirs = context.Pipe(duplex=False)
        child = context.Process(target=_play_alone, args=(first, count, games, num_envs, cores[number], start,
                                                          theirs))
        child.start()
        children.append(child)
        ends.append(mine)
        first += count
    start.wait()
    wall = time.perf_counter()
    steps = sum(end.recv() for end in ends)
    wall = time.perf_counter() - wall
    for child in children:
        child.join()
    return {"steps": steps, "wall": wall}


def median_of(values) -> float | None:
    """The median of ``values``, None where any is None (a row without a CPU-bound figure)."""
    values = list(values)
    return None if any(v is None for v in values) else statistics.median(values)


def ratio_text(ratios: list[float]) -> str:
    """Paired ratios (one per round) as their median, with their range where there are several."""
    if len(ratios) == 1:
        return f"{ratios[0]:.2f}"
    return f"{statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})"


def startup_seconds(root: Path, repeat: int) -> tuple[float, int]:
    """``(median CPU seconds, turns)`` of a fresh one-game ``craft-env run`` (``--no-plots``).

    One untimed run first, as an installed package has run before: it fills numba's caches if a
    source changed since, and writes Python's bytecode caches (pip writes them at install; with
    ``PYTHONDONTWRITEBYTECODE`` set, as in some containers, every run would compile the package's
    80-odd modules again, about 0.1 CPU s), so the runs are given an environment without it."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    times, turns = [], 0
    for k in range(-1, repeat):
        out = root / f"startup{k + 1}"
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            [sys.executable, "-m", "craft_env.cli", "run", "--runs", "1", "--structures", "0", "--no-plots",
             "--no-progress", "--out", str(out)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment,
        )
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if k >= 0:
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
        "--workers",
        default="0,1,2",
        help="comma-separated worker counts for the workers' rows, 0 for in-process (default 0,1,2)",
    )
    parser.add_argument(
        "--worker-envs", type=int, default=64, help="num_envs of the workers' rows (default 64)"
    )
    parser.add_argument(
        "--worker-games",
        type=int,
        default=320,
        help="games per workers' row (default 320: about 5,300 steps)",
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
        print(
            f"\n| text env, num_envs={args.worker_envs}, {args.worker_games} games | steps | wall s | "
            "steps/s | x 1 worker (per round: median, range) | parent CPU µs/step | workers' CPU µs/step | "
            "CPU-bound steps/s | x 1 worker (per round) |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
        counts = [int(k) for k in args.workers.split(",")]
        keys = [(k, True) for k in counts] + [(k, False) for k in counts]
        timings: dict[tuple[int, bool], list[dict[str, float]]] = {}
        ceiling: dict[int, list[dict[str, float]]] = {}
        for _ in range(args.repeat):  # rounds: every row once per round, so drift hits all rows alike
            for workers, records in list(keys):
                try:
                    timing = worker_steps(args.worker_games, args.worker_envs, workers, records)
                except (TypeError, ValueError) as error:  # a version without workers or turn_records
                    print(f"| (skipped: {error}) | {workers} | | | | | | | |")
                    keys.remove((workers, records))
                    continue
                wall, critical, parent = timing["wall"], timing["critical"], timing["parent"]
                timing["rate"] = timing["steps"] / wall
                measured = workers == 0 or critical > 0  # a version without cpu_seconds: not
                timing["bound"] = timing["steps"] / (parent + critical) if measured else None
                timings.setdefault((workers, records), []).append(timing)
            for processes in sorted({k for k in counts if k > 0}):
                alone = alone_steps(args.worker_games, args.worker_envs, processes)
                ceiling.setdefault(processes, []).append(alone)
        rows = {key: {name: median_of(t[name] for t in timings[key]) for name in timings[key][0]}
                for key in keys}
        for workers, records in keys:
            row, ones = rows[workers, records], timings.get((1, records))
            steps, bound = row["steps"], row["bound"]
            name = "in this process" if workers == 0 else f"{workers} worker process(es)"
            name += ", pinned" if row["pinned"] else ""
            name += "" if records else ", turn_records=False"
            ratio = bound_ratio = ""
            if ones:
                pairs = list(zip(timings[workers, records], ones))
                ratio = ratio_text([mine["rate"] / one["rate"] for mine, one in pairs])
                if bound is not None and ones[0]["bound"] is not None:
                    bound_ratio = ratio_text([mine["bound"] / one["bound"] for mine, one in pairs])
            bound_text = "" if bound is None else f"{bound:,.0f}"
            print(
                f"| {name} | {steps:,.0f} | {row['wall']:.2f} | {row['rate']:,.0f} | {ratio} | "
                f"{row['parent'] / steps * 1e6:.0f} | {row['workers'] / steps * 1e6:.0f} | {bound_text} | "
                f"{bound_ratio} |"
            )
        print("\n| the same games, each share in a process of its own (no pipe, no caller) | steps | "
              "wall s | steps/s | x 1 process (per round: median, range) |")
        print("|---|---|---|---|---|")
        for processes, alone in sorted(ceiling.items()):
            steps, wall = alone[0]["steps"], statistics.median(t["wall"] for t in alone)
            pairs = list(zip(alone, ceiling.get(1, [])))
            ratio = ratio_text([one["wall"] / mine["wall"] for mine, one in pairs]) if pairs else ""
            print(f"| {processes} process(es) | {steps:,} | {wall:.2f} | {steps / wall:,.0f} | {ratio} |")
        replies = statistics.median(row["replies"] / row["steps"] for row in rows.values()) if rows else 0.0
        print(
            "\n(CPU-bound: steps over the parent's CPU time plus, per call, the busiest worker's: the rate "
            "with a core for each process and nothing else running; in this process: its CPU time alone. "
            f"The parent's CPU includes the stand-in agent's replies, {replies * 1e6:.1f} µs/step. Each row "
            "starts after a full garbage collection, so whether one of this heap's (about 40 ms) falls inside "
            "a row does not decide its figure; a long-running caller pays them, the more the more objects it "
            "is handed or makes per step.)"
        )
        seconds, game_turns = startup_seconds(root, args.repeat)
        fixed = seconds - game_turns / (turns / run_seconds)
        print(
            f"\nstart-up: craft-env run --runs 1 --structures 0 --no-plots: {seconds:.2f} CPU s for "
            f"{game_turns} turns; fixed cost (minus the turns at the baseline's rate): {fixed:.2f} CPU s"
        )
    print(f"\nwall clock: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
