"""Speed of the batched kernels and the vector env, beside ``parallel_env()`` and single-board loops.

Run from the repository root::

    python benchmarks/bench_vector.py [--sizes 1 64 4096 65536] [--threads 1 2] [--seconds 0.3]

For each batch size B and numba thread count:

* ``legal``: batched legal-move masks (``tests/batch_kernels.py``: ``legal_masks``), states/s;
  ``legal 1x1``: a Python loop calling the single-board kernel
  (``rules.fill_legal_mask``) on the same boards.
* ``optimal``: batched oracle optimal-move masks (``tests/batch_kernels.py``: ``optimal_masks``),
  states/s; ``optimal 1x1``: the loop over ``oracle.fill_optimal_mask``.
* ``vector``: full vector-env turns/s, env time only: a director phase and a
  builder phase per turn (all four agents acted, every observation and mask
  written), actions from the scripted directors and a random legal builder
  computed outside the timed calls; ``+policy`` also counts those two batched
  calls. ``parallel_env`` turns/s times only ``env.step`` (two steps per
  turn) with random allowed actions; it does not depend on B or threads.

Inputs are mid-game: the boards and targets of a vector env after a few
turns of scripted directors and a random builder. A time is the best of
``--repeat`` runs of at least ``--seconds`` each; numba is warmed up first.
The machine may be shared: the best-of is the least disturbed run.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from pathlib import Path

import numba
import numpy as np

import craft_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
import batch_kernels  # noqa: E402  (tests/batch_kernels.py: the batched kernels the package does not ship)
from craft_env.core import batch
from craft_env.core.encoding import action_table
from craft_env.core.oracle import fill_optimal_mask
from craft_env.core.rules import fill_legal_mask

GOALS_B4096 = {"legal": 10e6, "optimal": 2e6, "vector": 500e3}


def best_rate(work, items: int, seconds: float, repeat: int) -> float:
    """Best ``items / time`` of ``repeat`` runs, each looping ``work()`` for at least ``seconds``."""
    work()
    best = 0.0
    for _ in range(repeat):
        loops = 0
        start = time.perf_counter()
        while True:
            work()
            loops += 1
            elapsed = time.perf_counter() - start
            if elapsed >= seconds:
                break
        best = max(best, loops * items / elapsed)
    return best


def mid_game(size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    env = craft_env.vector_env(size)
    env.reset(seed=seed)
    for turn in range(7):
        env.step_directors(env.scripted_intents())
        env.step_builder(env.sample_actions(turn))
    return env.boards.copy(), env.targets.copy()


def single_loop(kernel, boards, targets, limit: int = 4096):
    """A Python loop over the single-board kernel on (at most ``limit`` of) the boards."""
    table = action_table(3)
    out = np.empty(table.num_actions, np.int8)
    boards, targets = boards[:limit], targets[:limit]
    if kernel == "legal":
        def work():
            for board in boards:
                fill_legal_mask(board, 3, table.kind, table.cell_a, table.cell_b, out)
    else:
        def work():
            for board, target in zip(boards, targets):
                fill_optimal_mask(board, target, 3, table.pair_of, table.large_offset, table.remove_offset, out)
    return work, len(boards)


def vector_rates(size: int, seconds: float, repeat: int) -> tuple[float, float]:
    env = craft_env.vector_env(size)
    env.reset(seed=1)
    state = {"turn": 0}

    def env_only():
        intents = env.scripted_intents()
        start = time.perf_counter()
        env.step_directors(intents)
        middle = time.perf_counter()
        actions = env.sample_actions(state["turn"])
        resume = time.perf_counter()
        env.step_builder(actions)
        state["turn"] += 1
        return (middle - start) + (time.perf_counter() - resume)

    def with_policy():
        env.step_directors(env.scripted_intents())
        env.step_builder(env.sample_actions(state["turn"]))
        state["turn"] += 1

    for _ in range(3):
        with_policy()
    best_env = 0.0
    for _ in range(repeat):
        spent, turns = 0.0, 0
        while spent < seconds or turns < 3:
            spent += env_only()
            turns += 1
        best_env = max(best_env, turns * size / spent)
    return best_env, best_rate(with_policy, size, seconds, repeat)


def parallel_env_rate(turns: int = 3000, repeat: int = 3) -> float:
    env = craft_env.parallel_env()
    rng = np.random.default_rng(0)
    best = 0.0
    for r in range(repeat):
        observations, _ = env.reset(seed=r)
        spent, played = 0.0, 0
        while played < turns:
            for _ in range(2):
                actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
                start = time.perf_counter()
                observations, *_ = env.step(actions)
                spent += time.perf_counter() - start
            played += 1
            if not env.agents:
                start = time.perf_counter()
                observations, _ = env.reset(seed=played)
                spent += time.perf_counter() - start
        best = max(best, played / spent)
    return best


def fmt(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:.2f}M"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f}k"
    return f"{rate:.0f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 64, 4096, 65536])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    threads = [t for t in args.threads if t <= numba.config.NUMBA_NUM_THREADS]
    print(f"numba {numba.__version__}, threading layer {numba.config.THREADING_LAYER!r}, "
          f"up to {numba.config.NUMBA_NUM_THREADS} threads; parallel drivers from B >= {batch.PARALLEL_MIN_BATCH}")
    parallel = parallel_env_rate()
    print(f"parallel_env(): {fmt(parallel)} turns/s (env.step time only, 2 steps per turn)\n")
    header = (f"{'B':>6} {'thr':>3} | {'legal':>7} {'1x1':>7} {'x':>5} | {'optimal':>7} {'1x1':>7} {'x':>5} | "
              f"{'vector':>7} {'+policy':>7} {'x par':>6}")
    print(header)
    print("-" * len(header))
    results = {}
    for size in args.sizes:
        boards, targets = mid_game(size)
        scratch = batch_kernels.new_scratch(size, 3)
        masks = np.empty((size, action_table(3).num_actions), np.int8)
        counts = np.empty(size, np.int64)
        loop_legal, n_legal = single_loop("legal", boards, targets)
        loop_optimal, n_optimal = single_loop("optimal", boards, targets)
        single_legal = best_rate(loop_legal, n_legal, args.seconds, args.repeat)
        single_optimal = best_rate(loop_optimal, n_optimal, args.seconds, args.repeat)
        legal_work = functools.partial(batch_kernels.legal_masks, boards, masks, scratch)
        optimal_work = functools.partial(batch_kernels.optimal_masks, boards, targets, masks, counts, scratch)
        for count in threads:
            numba.set_num_threads(count)
            legal = best_rate(legal_work, size, args.seconds, args.repeat)
            optimal = best_rate(optimal_work, size, args.seconds, args.repeat)
            vector, vector_policy = vector_rates(size, args.seconds, args.repeat)
            results[size, count] = {"legal": legal, "optimal": optimal, "vector": vector}
            print(f"{size:>6} {count:>3} | {fmt(legal):>7} {fmt(single_legal):>7} {legal / single_legal:>5.0f} | "
                  f"{fmt(optimal):>7} {fmt(single_optimal):>7} {optimal / single_optimal:>5.0f} | "
                  f"{fmt(vector):>7} {fmt(vector_policy):>7} {vector / parallel:>6.0f}", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    if len(threads) > 1:
        print("\nscaling from 1 to", threads[-1], "threads (rate ratio):")
        for size in args.sizes:
            one, many = results[size, threads[0]], results[size, threads[-1]]
            print(f"  B={size:<6} " + "  ".join(f"{k} {many[k] / one[k]:.2f}x" for k in ("legal", "optimal", "vector")))
    key = (4096, 2)
    if key in results:
        print("\ngoals at B=4096 on 2 threads:")
        for name, goal in GOALS_B4096.items():
            rate = results[key][name]
            print(f"  {name:<8} {fmt(rate):>7}/s  goal {fmt(goal)}/s  {'met' if rate >= goal else 'NOT met'}")
        ratio = results[key]["vector"] / parallel
        print(f"  vector / parallel_env {ratio:.0f}x  goal 10x  {'met' if ratio >= 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
