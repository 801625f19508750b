"""Training several seeds of one config at once: ``vmap`` over seeds, ``jit`` over chunks of updates.

``train`` runs ``cfg.updates`` updates for every seed of ``cfg.seeds`` in
chunks of at most ``chunk`` updates, all of one size (one compiled program,
called once per chunk); between chunks the
host prints a curve point and keeps the metrics. Throughput is counted
in env turns (one director phase and one builder phase of one env; the
issue's "training turns") of the whole loop: env, policies and updates.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.jax.team.config import TeamConfig
from craft_env.jax.team.ppo import Team

log = logging.getLogger(__name__)
CURVE_KEYS = ("progress", "completion", "completed", "episodes", "director_entropy", "builder_entropy")
#: Curves only some configs have (``imitation_loss``: the directors' cross-entropy on the scripted intents).
OPTIONAL_CURVE_KEYS = ("imitation_loss",)


@dataclass
class Run:
    """One config's trained seeds: stacked params, the curves (``(updates, seeds)`` per key) and timing."""

    cfg: TeamConfig
    params: dict
    curves: dict[str, np.ndarray] = field(default_factory=dict)
    seconds: float = 0.0
    compile_seconds: float = 0.0
    turns: int = 0

    @property
    def turns_per_second(self) -> float:
        """Env turns per second of the whole loop, after the first chunk (which includes compiling)."""
        steady = self.seconds - self.compile_seconds
        chunk_turns = self.turns - self._first_chunk_turns
        return chunk_turns / steady if steady > 0 and chunk_turns > 0 else self.turns / max(self.seconds, 1e-9)

    _first_chunk_turns: int = 0


def train(game, cfg: TeamConfig, chunk: int = 10, report: Callable[[str], None] | None = None,
          start: dict | None = None) -> Run:
    """Train every seed of ``cfg`` (see the module docstring); ``report`` gets the curve lines.

    ``start``: ``{network: its parameters stacked over cfg's seeds}`` (``checkpoint.networks_from``) that
    replace those networks' fresh ones before the first update, e.g. a trained builder and critic that
    the directors then learn to speak to (``builder_lr=0`` keeps that builder as it is)."""
    team = Team(game, cfg)
    # Every call the same size: a last, shorter chunk would compile the whole loop a second time.
    chunk = max(size for size in range(1, min(chunk, cfg.updates) + 1) if cfg.updates % size == 0)
    # One compiled init per seed, the runners stacked: compiling ``vmap(init)`` (orthogonal initialisers
    # under vmap) took minutes on CPU, and running it eagerly one op at a time a minute and a half.
    init = jax.jit(team.init)
    runners = [init(jax.random.PRNGKey(seed)) for seed in cfg.seeds]
    if start:
        runners = [team.restart(runner, {name: jax.tree_util.tree_map(lambda leaf: jnp.asarray(leaf[k]), tree)
                                         for name, tree in start.items()})
                   for k, runner in enumerate(runners)]
    runner = jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *runners)
    step = jax.jit(jax.vmap(team.train_chunk, in_axes=(0, None)), static_argnums=1)
    curves: dict[str, list[np.ndarray]] = {key: [] for key in CURVE_KEYS}
    run = Run(cfg, runner.params)
    done = 0
    started = time.perf_counter()
    while done < cfg.updates:
        size = chunk
        t0 = time.perf_counter()
        runner, metrics = step(runner, size)
        jax.block_until_ready(runner.params)
        elapsed = time.perf_counter() - t0
        if done == 0:
            run.compile_seconds, run._first_chunk_turns = elapsed, size * cfg.turns_per_update * len(cfg.seeds)
        done += size
        for key in CURVE_KEYS:
            values = np.asarray(metrics.get(key, jnp.zeros((len(cfg.seeds), size)))).T  # (size, seeds)
            curves[key].append(values)
        for key in OPTIONAL_CURVE_KEYS:
            if key in metrics:
                curves.setdefault(key, []).append(np.asarray(metrics[key]).T)
        run.turns = done * cfg.turns_per_update * len(cfg.seeds)
        run.seconds = time.perf_counter() - started
        if report is not None:
            report(_curve_line(done, cfg, curves, run))
    run.params = runner.params
    run.curves = {key: np.concatenate(values, axis=0) for key, values in curves.items()}
    return run


def _curve_line(done: int, cfg: TeamConfig, curves, run: Run) -> str:
    last = {key: values[-1][-1] for key, values in curves.items()}
    progress = " ".join(f"{p:.3f}" for p in last["progress"])
    completed = " ".join(f"{c:.1%}" for c in last["completed"])
    imitation = f" imitation {float(last['imitation_loss'][0]):.3f}" if "imitation_loss" in last else ""
    return (f"update {done:>5}/{cfg.updates} turns {run.turns:>12,} {run.seconds:7.1f}s "
            f"progress [{progress}] completed [{completed}] entropy d {float(last['director_entropy'][0]):.2f} "
            f"b {float(last['builder_entropy'][0]):.2f}{imitation}")
