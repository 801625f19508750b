"""Run what users run and print, as JSON, every craft_env kernel numba had to compile (test_precompile.py).

Usage: ``python tests/precompile_workloads.py OUT_DIR``; the caller sets ``NUMBA_CACHE_DIR``.
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import numpy as np
from numba.core import event

compiled: list[str] = []


class _Recorder(event.Listener):
    def on_start(self, ev):
        pass

    def on_end(self, ev):
        function = ev.data["dispatcher"].py_func
        if function.__module__.startswith("craft_env"):
            compiled.append(f"{function.__module__}.{function.__qualname__}")


def _runs(out: Path) -> None:
    from craft_env.cli import main

    for k, extra in enumerate([
        [], ["--oracle-n", "0"], ["--protocol", "paper"], ["--builder-tools"], ["--dataset", "craft"],
        ["--director-model", "scripted/team", "--builder-model", "scripted/team"],
    ]):
        with contextlib.redirect_stdout(io.StringIO()):
            main(["run", "--out", str(out / f"run{k}"), "--structures", "0,1", "--turns", "6", *extra])


def _envs() -> None:
    import craft_env

    for keywords in ({}, {"oracle_n": 3}, {"protocol": "paper"}, {"message_mode": "text"}):
        env = craft_env.env(**keywords)
        env.reset(seed=7)
        for agent in env.agent_iter(10):
            observation, _, terminated, truncated, _ = env.last()
            env.step(None if terminated or truncated else int(np.flatnonzero(observation["action_mask"])[-1]))
        parallel = craft_env.parallel_env(**keywords)
        observations, _ = parallel.reset(seed=8)
        for _ in range(4):
            observations, *_ = parallel.step(
                {a: int(np.flatnonzero(observations[a]["action_mask"])[0]) for a in parallel.agents})
        parallel.state()
    for num_envs in (3, 100):
        vector = craft_env.vector_env(num_envs=num_envs)
        vector.reset(seed=9)
        for step in range(4):
            vector.step(vector.sample_actions(seed=step))
        vector.state()


def _api() -> None:
    import craft_env
    from craft_env import metrics, oracle

    target = craft_env.generate_structure(seed=11)
    board = craft_env.Structure.empty()
    while oracle.distance(board, target):
        metrics.score(board, target)
        board = board.apply(oracle.optimal_moves(board, target)[-1])
    oracle.plan(craft_env.Structure.empty(), target)


if __name__ == "__main__":
    event.register("numba:compile", _Recorder())
    _runs(Path(sys.argv[1]))
    _envs()
    _api()
    print(json.dumps(sorted(set(compiled))))
