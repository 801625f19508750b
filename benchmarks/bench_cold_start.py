"""Cold start: the first ``craft-env run`` with no compiled kernels, and after compiling them ahead of time.

Run: ``python benchmarks/bench_cold_start.py [--structures 0,1,2]``.

Each row is a fresh process with ``NUMBA_CACHE_DIR`` pointing at its own
directory, so the installed package's caches play no part:

* ``cold run``: ``craft-env run`` into an empty cache (numba compiles every kernel it needs);
* ``craft-env compile``: ``python -m craft_env.precompile`` into a second empty cache;
* ``first run after compile``: ``craft-env run`` on that cache (what a user's
  first run after ``pip install -e .`` is);
* ``warm run``: the same again.

The ratio column is each row's wall time over the warm run's; the goal is
that the first run after compiling stays within 5 s of a warm run.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(args: list[str], cache: Path, out: Path | None = None) -> float:
    """Wall seconds of ``python args...`` with numba's cache in ``cache`` (output discarded)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    if out is not None:
        shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, *args], env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--structures", default=None, help="structures to play (default: the whole set)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        run = ["-m", "craft_env.cli", "run", "--no-plots", "--out", str(root / "out")]
        if args.structures:
            run += ["--structures", args.structures]
        rows = [("cold run", timed(run, root / "cold", root / "out"))]
        rows.append(("craft-env compile", timed(["-m", "craft_env.precompile"], root / "ahead")))
        rows.append(("first run after compile", timed(run, root / "ahead", root / "out")))
        rows.append(("warm run", timed(run, root / "ahead", root / "out")))
    warm = rows[-1][1]
    print(f"{'':26} {'wall s':>8} {'x warm':>7}")
    for name, seconds in rows:
        print(f"{name:26} {seconds:8.1f} {seconds / warm:7.2f}")
    gap = rows[2][1] - warm
    print(f"first run after compile - warm run: {gap:+.1f} s (goal: at most +5 s)")


if __name__ == "__main__":
    main()
