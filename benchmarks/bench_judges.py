"""Speed of the engine judge on a whole run directory (issue 11: all turns of a 60-game run in seconds).

Run from the repository root on the output of ``craft-env run``::

    craft-env run --runs 3 --out runs/j60        # 60 games (20 structures x 3 runs)
    python benchmarks/bench_judges.py runs/j60 [--repeat 3]

It times, best of ``--repeat`` after one warm-up pass (numba kernels and
imports loaded): reading the logs into judged items (``items.load_items``,
all three families) and answering every item with the engine judge
(``engine.engine_answers``, its caches cleared first). The judge's own
writing of results is I/O and not timed here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from craft_env.eval.judges import engine  # noqa: E402
from craft_env.eval.judges.items import load_items  # noqa: E402
from craft_env.eval.judges.questions import FAMILIES  # noqa: E402


def _clear() -> None:
    for cached in (engine._intents, engine._moves_named, engine.optimal_set):
        cached.cache_clear()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dir", help="an output directory of craft-env run")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    _, items = load_items(args.dir, FAMILIES)
    for item in items:
        engine.engine_answers(item)
    load_times, judge_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        _, items = load_items(args.dir, FAMILIES)
        load_times.append(time.perf_counter() - start)
        _clear()
        start = time.perf_counter()
        for item in items:
            engine.engine_answers(item)
        judge_times.append(time.perf_counter() - start)
    games = len({(i.game_run, i.structure_index) for i in items})
    turns = len({(i.game_run, i.structure_index, i.turn) for i in items})
    print(f"{games} games, {turns} turns, {len(items)} judged items")
    print("| step | best (s) | per item (us) |")
    print("|---|---|---|")
    print(f"| read logs into items | {min(load_times):.3f} | {1e6 * min(load_times) / len(items):.0f} |")
    best = min(judge_times)
    print(f"| engine judge, every item | {best:.3f} | {1e6 * best / len(items):.0f} |")


if __name__ == "__main__":
    main()
