"""Speed of the JAX game (``craft_env.jax``) by batch size, beside ``vector_env`` on the same machine.

Run from the repository root::

    python benchmarks/bench_jax.py [--sizes 1024 65536 1048576] [--turns 64] [--quick]
    python benchmarks/bench_jax.py --verify 10000000 [--verify-batch 4096]

Measured the way docs/jax.md's peer table was: random legal actions for
every agent, sampled inside the same jitted ``lax.scan`` as the env, the
whole loop on one device. A turn is two steps (the directors', then the
builder's); turns/s counts builder steps. Two loops per batch size:

* ``phases``: the phase functions (``step_directors_batch``,
  ``step_builder_batch``), for loops that know the phase;
* ``step``: JaxMARL's generic ``step`` under ``vmap``, twice per turn
  (each call computes both phases and keeps the right one).

Compile time (first call of the jitted loop) is reported apart from the
timed runs (best of ``--repeat``). Keep ``--turns`` at least ``max_turns``
(20): every timed run then holds the new episodes its envs start (a run
of only mid-episode turns would leave the generator out and read high). ``vector_env`` is timed with random
legal actions (its ``sample_actions``), env time only, as
``benchmarks/bench_vector.py`` does; the ratio column is JAX over it.
Observations are computed by the env; a loop that does not read them lets
XLA drop them, as in the peers' loops (``--read-obs`` folds them into the
loop's carry so they are computed, the cost a policy reading them pays).

``--verify N`` plays at least ``N`` turns of random legal and adversarial
actions on ``vector_env`` and the JAX game side by side and compares every
observation, mask, reward, flag and info after every step (the CI tests'
comparison, ``tests/test_jax_game.py``, at scale); it prints the count.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp

from craft_env.jax import make

QUICK_SIZES = (1024, 4096)
SIZES = (1024, 4096, 16384, 65536, 262144, 1048576)


def machine() -> str:
    device = jax.devices()[0]
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            cpu = next(line.split(":", 1)[1].strip() for line in info if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return f"jax {jax.__version__} on {device.platform} ({device.device_kind}); {os.cpu_count()} CPU cores ({cpu})"


def _sample(key: jax.Array, mask: jax.Array) -> jax.Array:
    """A uniformly random allowed id per row of the bool ``mask`` (..., n)."""
    noise = jax.random.uniform(key, mask.shape)
    return jnp.argmax(jnp.where(mask, noise, -1.0), axis=-1).astype(jnp.int32)


def phase_loop(env, turns: int, read_obs: bool):
    """A jitted ``lax.scan`` of ``turns`` turns with the phase functions; returns (states, checksum)."""

    def turn(carry, key):
        states, total = carry
        k1, k2 = jax.random.split(key)
        masks = jax.vmap(env.get_avail_actions)(states)
        intents = _sample(k1, jnp.stack([masks[a] for a in env.directors], axis=1))
        obs, states, rewards, dones, _ = env.step_directors_batch(states, intents)
        total = total + (_fold(obs) if read_obs else 0.0)
        masks = jax.vmap(env.get_avail_actions)(states)
        actions = _sample(k2, masks["builder"])
        obs, states, rewards, dones, _ = env.step_builder_batch(states, actions)
        total = total + jnp.sum(rewards["builder"]) + (_fold(obs) if read_obs else 0.0)
        return (states, total), None

    def run(states, key):
        (states, total), _ = jax.lax.scan(turn, (states, jnp.float32(0)), jax.random.split(key, turns))
        return states, total

    return jax.jit(run)


def step_loop(env, turns: int, read_obs: bool):
    """A jitted ``lax.scan`` of ``turns`` turns of ``vmap(env.step)`` (two calls per turn)."""
    step = jax.vmap(env.step)

    def phase(carry, key):
        states, total = carry
        k1, k2 = jax.random.split(key)
        masks = jax.vmap(env.get_avail_actions)(states)
        actions = {agent: _sample(jax.random.fold_in(k1, i), masks[agent]) for i, agent in enumerate(env.agents)}
        obs, states, rewards, dones, _ = step(jax.random.split(k2, states.turn.shape[0]), states, actions)
        total = total + jnp.sum(rewards["builder"]) + (_fold(obs) if read_obs else 0.0)
        return (states, total), None

    def run(states, key):
        (states, total), _ = jax.lax.scan(phase, (states, jnp.float32(0)), jax.random.split(key, 2 * turns))
        return states, total

    return jax.jit(run)


def _fold(obs: dict) -> jax.Array:
    return sum(jnp.sum(value) for value in obs.values())


def time_loop(make_loop, env, size: int, turns: int, repeat: int, read_obs: bool) -> tuple[float, float]:
    """(compile seconds, best turns/s) of one loop at batch ``size``."""
    _, states = env.reset_batch(0, size)
    loop = make_loop(env, turns, read_obs)
    key = jax.random.key(1)
    start = time.perf_counter()
    compiled = loop.lower(states, key).compile()
    compile_s = time.perf_counter() - start
    states, total = compiled(states, key)
    jax.block_until_ready(total)
    best = 0.0
    for r in range(repeat):
        start = time.perf_counter()
        states, total = compiled(states, jax.random.key(2 + r))
        jax.block_until_ready(total)
        best = max(best, size * turns / (time.perf_counter() - start))
    return compile_s, best


def vector_rate(size: int, seconds: float) -> float | None:
    """``vector_env`` turns/s with random legal actions, env time only (None without its dependencies)."""
    try:
        import craft_env
        env = craft_env.vector_env(size)
    except ImportError as error:
        print(f"vector_env skipped: {error}", file=sys.stderr)
        return None
    env.reset(seed=1)
    spent, turns = 0.0, 0
    while spent < seconds or turns < 3:
        intents = env.sample_actions(2 * turns)
        start = time.perf_counter()
        env.step_directors(intents)
        middle = time.perf_counter()
        actions = env.sample_actions(2 * turns + 1)
        resume = time.perf_counter()
        env.step_builder(actions)
        spent += (middle - start) + (time.perf_counter() - resume)
        turns += 1
    return turns * size / spent


def fmt(rate: float | None) -> str:
    if rate is None:
        return "-"
    return f"{rate / 1e6:.2f} M" if rate >= 1e5 else f"{rate / 1e3:.1f} k"


def bench(args: argparse.Namespace) -> None:
    env = make()
    print(machine())
    baseline = vector_rate(args.vector_batch, args.seconds)
    print(f"vector_env, batch {args.vector_batch}, random legal actions, env time only: {fmt(baseline)} turns/s "
          f"(numba threads: {os.environ.get('NUMBA_NUM_THREADS', 'all cores')})")
    print(f"{'batch':>9} {'loop':>7} {'compile s':>10} {'turns/s':>10} {'x vector_env':>13}")
    loops = {"phases": phase_loop, "step": step_loop}
    for size in args.sizes:
        for name in args.loops:
            compile_s, rate = time_loop(loops[name], env, size, args.turns, args.repeat, args.read_obs)
            ratio = f"{rate / baseline:.1f}" if baseline else "-"
            print(f"{size:>9} {name:>7} {compile_s:>10.1f} {fmt(rate):>10} {ratio:>13}", flush=True)


def verify(turns: int, batch: int) -> None:
    """Play ``turns`` turns side by side and compare everything (``tests/test_jax_game.py``'s ``play``)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    import test_jax_game

    pair = test_jax_game.Pair(batch)
    played, seed = 0, 0
    start = time.perf_counter()
    while played < turns:
        chunk = 200
        test_jax_game.play(pair, seed, chunk, "random" if seed % 3 else "scripted")
        played += chunk * batch
        seed += 1
        print(f"{played:,} turns equal ({time.perf_counter() - start:.0f} s)", flush=True)
    print(f"verified: {played:,} turns (batch {batch}), every step equal to vector_env")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--turns", type=int, default=32, help="turns per timed loop")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--loops", nargs="+", default=["phases", "step"], choices=["phases", "step"])
    parser.add_argument("--read-obs", action="store_true", help="fold every observation into the loop's carry")
    parser.add_argument("--vector-batch", type=int, default=4096)
    parser.add_argument("--seconds", type=float, default=1.0, help="vector_env timing length")
    parser.add_argument("--quick", action="store_true", help="small sizes, few turns (about a minute on CPU)")
    parser.add_argument("--verify", type=int, default=0, metavar="TURNS")
    parser.add_argument("--verify-batch", type=int, default=4096)
    args = parser.parse_args()
    if args.verify:
        verify(args.verify, args.verify_batch)
        return
    if args.quick:
        args.sizes = args.sizes or list(QUICK_SIZES)
        args.turns, args.repeat, args.seconds, args.loops = 24, 1, 0.3, ["phases"]
    args.sizes = args.sizes or list(SIZES)
    bench(args)


if __name__ == "__main__":
    main()
