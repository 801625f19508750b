"""Speed of the core engine, called from Python on ``Structure`` objects, beside the reference model.

Run from the repository root::

    python benchmarks/bench_core.py [--pairs 200] [--repeat 5] [--n 3] [--height 3]

Inputs are realistic: targets from ``generate_structure`` and mid-game boards
(a random prefix of the oracle's plan for the target, then a few random
legal moves, i.e. mistakes). Each row times the same work on the same
inputs both ways: the engine through its public Python API, and the
pure-Python reference model of ``tests/reference_model.py``. A time is the
best of ``--repeat`` runs of a loop over all inputs, in microseconds per
call; numba is warmed up first. Goals (issue 2) are for the default board.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

import reference_model as ref  # noqa: E402

from craft_env import Structure, generate_structure, metrics, oracle  # noqa: E402

GOALS_US = {"optimal_moves": 5.0, "distance": 2.0, "generate_structure": 10.0}


def mid_game_pairs(count: int, n: int, height: int, seed: int = 0) -> list[tuple[Structure, Structure]]:
    rng = random.Random(seed)
    pairs = []
    for k in range(count):
        target = generate_structure(10_000 + k, n, height)
        board = Structure.empty(n, height)
        steps = oracle.plan(board, target)
        for move in steps[: rng.randint(0, len(steps))]:
            board = board.apply(move)
        for _ in range(rng.choice((0, 0, 1, 2, 3))):
            board = board.apply(rng.choice(board.legal_moves()))
        pairs.append((board, target))
    return pairs


def per_call_us(function, inputs: list, repeat: int, min_seconds: float = 0.05) -> float:
    """Best-of-``repeat`` microseconds per call of ``function(*item)`` over ``inputs``."""
    loops = 1
    while True:
        start = time.perf_counter()
        for _ in range(loops):
            for item in inputs:
                function(*item)
        if time.perf_counter() - start >= min_seconds:
            break
        loops *= 2
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            for item in inputs:
                function(*item)
        best = min(best, time.perf_counter() - start)
    return best / (loops * len(inputs)) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=200, help="number of (board, target) inputs")
    parser.add_argument("--repeat", type=int, default=5, help="timing runs per row (best is kept)")
    parser.add_argument("--n", type=int, default=3)
    parser.add_argument("--height", type=int, default=3)
    args = parser.parse_args()

    pairs = mid_game_pairs(args.pairs, args.n, args.height)
    model_pairs = [(ref.RefBoard.from_structure(b), ref.RefBoard.from_structure(t)) for b, t in pairs]
    move_rng = random.Random(1)
    moves = [(b, move_rng.choice(b.legal_moves())) for b, _ in pairs]
    model_moves = [(m, ref.from_engine_move(mv)) for (_, mv), m in zip(moves, (p[0] for p in model_pairs))]
    actions = [(b, mv.to_action(b.n)) for b, mv in moves]
    seeds = [(seed, args.n, args.height) for seed in range(len(pairs))]
    model_seeds = [(random.Random(seed), args.n, args.height) for seed in range(len(pairs))]
    few = max(1, len(pairs) // 10)  # the brute-force model oracle is slow; fewer inputs suffice

    rows = [
        ("legal_mask", lambda b: b.legal_mask(), [(b,) for b, _ in pairs],
         lambda m: m.legal_moves(), [(m,) for m, _ in model_pairs]),
        ("legal_moves", lambda b: b.legal_moves(), [(b,) for b, _ in pairs],
         lambda m: m.legal_moves(), [(m,) for m, _ in model_pairs]),
        ("apply", Structure.apply, moves, ref.RefBoard.apply, model_moves),
        ("apply_action", Structure.apply_action, actions, ref.RefBoard.apply, model_moves),
        ("distance", oracle.distance, pairs, ref.distance, model_pairs),
        ("optimal_moves", oracle.optimal_moves, pairs, ref.optimal_moves, model_pairs[:few]),
        ("score", metrics.score, pairs, ref.score, model_pairs),
        ("generate_structure", generate_structure, seeds, ref.generate, model_seeds),
    ]

    for _, engine, inputs, _, _ in rows:  # numba compile / cache load
        engine(*inputs[0])

    print(f"core engine vs reference model, {args.n}x{args.n}x{args.height}, {len(pairs)} mid-game inputs, "
          f"best of {args.repeat}, Python {sys.version.split()[0]}")
    header = f"{'operation':<20} {'engine us':>10} {'model us':>10} {'model/engine':>13} {'goal us':>8}  ok"
    print(header)
    print("-" * len(header))
    missed = []
    for name, engine, inputs, model, model_inputs in rows:
        engine_us = per_call_us(engine, inputs, args.repeat)
        model_us = per_call_us(model, model_inputs, args.repeat)
        goal = GOALS_US.get(name)
        ok = "" if goal is None else ("yes" if engine_us <= goal else "NO")
        if ok == "NO":
            missed.append(name)
        goal_text = "" if goal is None else f"{goal:.1f}"
        ratio = model_us / engine_us
        print(f"{name:<20} {engine_us:>10.2f} {model_us:>10.1f} {ratio:>12.0f}x {goal_text:>8}  {ok}")
    if missed:
        print(f"missed goals: {', '.join(missed)}")


if __name__ == "__main__":
    main()
