"""Compile the numba kernels ahead of time, into numba's on-disk cache (``docs/environment.md#cold-start``).

A fresh install has no compiled kernels: numba compiles each one the first
time it runs (about 45 s of CPU for ``craft-env run``, 50 s more for the
vector env), which would make the first run of every new user slow.
``craft-env compile`` and the editable install's build step (``build_backend/``
in the repository) run this module instead, so that the first run only
loads kernels from the cache.

It does not list kernels and signatures by hand: it plays the workloads
that use them (short episodes on each env, protocol and oracle condition,
the scripted team's choice, the public ``Structure``/oracle/metrics calls
and the vector env's drivers), through the same code paths a user's run
takes, so numba compiles each kernel for exactly the argument types those
paths pass. ``tests/test_precompile.py`` checks that a fresh process
compiles nothing after it.

Groups: ``envs`` (``craft_env.env()``, ``parallel_env()``, text mode, the
scripted team: what ``craft-env run`` needs), ``api`` (the core's public
functions) and ``vector`` (``craft_env.vector_env()``, serial and
``prange`` drivers). Run ``python -m craft_env.precompile [GROUP ...]``.

It prints one line of seconds per group, then a ``total`` line saying how
many kernels numba compiled (numba's ``numba:compile`` events) and so
whether the cache was already current: the editable install's build step
shows that line (``docs/rl.md``, "Preparing a node"). With ``--progress``
it first prints ``progress: K/KERNELS`` each time a kernel is compiled:
``KERNELS`` is how many an empty cache compiles (``tests/test_precompile.py``
checks it), so the build step can show how far the compile is.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Callable, Iterable

import numpy as np
from numba.core import event

from craft_env.core import metrics, oracle, views
from craft_env.agents.scripted import ScriptedDirector
from craft_env.core.batch import PARALLEL_MIN_BATCH
from craft_env.core.board import Structure
from craft_env.core.generator import generate_structure
from craft_env.core.rules import landing_layer_at
from craft_env.envs.craft import parallel_env, raw_env
from craft_env.envs.vector import vector_env

_log = logging.getLogger("craft_env")

#: How many kernels the workloads compile into an empty cache (``tests/test_precompile.py`` checks it).
KERNELS = 73


def _first_allowed(mask: np.ndarray, last: bool = False) -> int:
    allowed = np.flatnonzero(mask)
    return int(allowed[-1] if last else allowed[0])


def _play_envs() -> None:
    """Short episodes on the AEC and Parallel envs under every switch that changes a kernel's types.

    The directors of the AEC episodes choose as the scripted team's do (``core.scripted``).
    """
    director = ScriptedDirector()
    for keywords in ({}, {"oracle_n": 5}, {"protocol": "paper"}, {"message_mode": "text", "oracle_n": 5}):
        aec = raw_env(**keywords)
        aec.reset(seed=1)
        for step, agent in enumerate(aec.agent_iter(12)):
            observation, _, terminated, truncated, _ = aec.last()
            if terminated or truncated:
                action = None
            elif agent in aec.seat_of:
                action, _ = director.choose(observation["observation"], observation["action_mask"],
                                            aec.seat_of[agent], aec.game.n, aec.game.height)
            else:
                action = _first_allowed(observation["action_mask"], bool(step % 2))
            aec.step(action)
        aec.state()
        parallel = parallel_env(**keywords)
        observations, _ = parallel.reset(seed=2)
        for _ in range(6):
            if not parallel.agents:
                break
            actions = {a: _first_allowed(observations[a]["action_mask"], True) for a in parallel.agents}
            observations, *_ = parallel.step(actions)
        parallel.state()


def _use_api() -> None:
    """The core's public functions on ``Structure`` objects, and the rules the runner reads from Python."""
    target = generate_structure(seed=4)
    board = Structure.empty()
    for _ in range(3):
        moves = oracle.optimal_moves(board, target)
        oracle.optimal_mask(board, target)
        oracle.distance(board, target)
        metrics.score(board, target)
        board.legal_moves()
        board.legal_mask()
        board = board.apply(moves[0])
    oracle.plan(board, target)
    board.apply_action(board.legal_moves()[0].to_action(board.n))
    views.director_views(target)
    target.to_dict()
    target.partner(0, 0, 0)
    landing_layer_at(0, 0)


def _play_vector() -> None:
    """The vector env's drivers: serial, and ``prange`` for the builder phase from its threshold."""
    for num_envs in (2, PARALLEL_MIN_BATCH["builder"]):
        env = vector_env(num_envs=num_envs, oracle_n=5)
        env.reset(seed=5)
        for step in range(4):
            if env.builder_phase:
                env.step(env.sample_actions(seed=step))
            else:
                env.step(env.scripted_intents())
        env.state()


WORKLOADS: dict[str, Callable[[], None]] = {"envs": _play_envs, "api": _use_api, "vector": _play_vector}
GROUPS = tuple(WORKLOADS)


class _CompileCounter(event.Listener):
    """Counts the craft_env kernels numba compiles (a kernel loaded from its cache is no event)."""

    def __init__(self, on_compiled: Callable[[int], None] | None = None) -> None:
        self.compiled = 0
        self._on_compiled = on_compiled

    def on_start(self, ev: event.Event) -> None:
        pass

    def on_end(self, ev: event.Event) -> None:
        if ev.data["dispatcher"].py_func.__module__.startswith("craft_env"):
            self.compiled += 1
            if self._on_compiled is not None:
                self._on_compiled(self.compiled)


def compile_kernels(
    groups: Iterable[str] = GROUPS, on_compiled: Callable[[int], None] | None = None
) -> tuple[dict[str, float], int]:
    """Run each group's workload (compiling what the cache lacks).

    Returns the seconds per group and how many kernels numba compiled (0:
    the cache was current); ``on_compiled(count)`` runs after each one.
    """
    groups = list(groups)
    unknown = [g for g in groups if g not in WORKLOADS]
    if unknown:
        raise ValueError(f"groups: unknown group(s) {unknown!r}; expected some of {', '.join(GROUPS)}")
    seconds = {}
    counter = _CompileCounter(on_compiled)
    with event.install_listener("numba:compile", counter):
        for group in groups:
            start = time.perf_counter()
            WORKLOADS[group]()
            seconds[group] = time.perf_counter() - start
            _log.info("compiled %s in %.1f s", group, seconds[group])
    return seconds, counter.compiled


def _print_progress(compiled: int) -> None:
    print(f"progress: {compiled}/{max(KERNELS, compiled)}", flush=True)


def compile_and_report(groups: Iterable[str] = GROUPS, progress: bool = False) -> None:
    """``compile_kernels``, printing a line of seconds per group and a ``total`` line (``craft-env compile``);
    with ``progress``, a ``progress: K/N`` line per kernel compiled first."""
    seconds, compiled = compile_kernels(groups, _print_progress if progress else None)
    for group, taken in seconds.items():
        print(f"{group}: {taken:.1f} s")
    total = sum(seconds.values())
    state = f"{compiled} kernels compiled" if compiled else "kernels current, nothing compiled"
    print(f"total: {total:.1f} s, {state}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m craft_env.precompile", description=__doc__.splitlines()[0])
    parser.add_argument("groups", nargs="*", default=list(GROUPS), help=f"some of {', '.join(GROUPS)}")
    parser.add_argument("--progress", action="store_true", help="print progress: K/N as kernels compile")
    args = parser.parse_args(argv)
    try:
        compile_and_report(args.groups, args.progress)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())
