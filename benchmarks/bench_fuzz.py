"""Fuzz every text parser with many model-like replies: exceptions and the slowest per-character cost.

Run from the repository root::

    python benchmarks/bench_fuzz.py [--inputs 100000] [--seed 0]

Inputs are drawn like the fuzz suite's (``tests/test_fuzz_parsers.py``):
random words of the move and speech vocabularies, JSON moves with extreme
numbers, nested and unclosed tags, fences, mixed case, negations, long
runs of one character and, for one input in five hundred, a reply of 20k
to 1M characters. Every parser reads every input; the table counts
undocumented exceptions (anything but ``ParseError`` where that is
documented) and, over inputs of at least 1000 characters (below that the
fixed cost of a call dominates), the median and the slowest cost per input
character and their ratio: a superlinear parser shows a large ratio.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from test_fuzz_parsers import PARSERS, WORDS  # noqa: E402

EXTREMES = ["1e999", "-1e999", "Infinity", "NaN", "-0.5", "0.9", "1" * 5000, "99999999", "[]", "null"]
LONG = 1000
RUNS = ["(", "{", "[", "<think>", "row ", "1,", "-", "?", "\n", " ", "place ", "<message>", "D1 "]


def reply(rng: random.Random) -> str:
    """One random model-like reply."""
    kind = rng.randrange(8)
    if rng.random() < 0.002:
        return rng.choice(RUNS) * rng.randint(20_000 // 8, 1_000_000 // 8) + rng.choice(WORDS)
    if kind == 0:
        return "".join(chr(rng.randint(0, 0x2FF)) for _ in range(rng.randint(0, 300)))
    if kind == 1:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 80)))
    if kind == 2:
        return "".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))
    if kind == 3:
        numbers = [rng.choice(EXTREMES + ["0", "1", "2"]) for _ in range(rng.randint(0, 3))]
        position = "[" + ",".join(numbers) + "]"
        body = (f'{{"action": "{rng.choice(["place", "remove", "noop", "PLACE"])}", "block": "gs", '
                f'"position": {position}, "layer": {rng.choice(EXTREMES)}}}')
        return rng.choice(["", "```json\n", "Sure: "]) + body + rng.choice(["", "\n```", "}"])
    if kind == 4:
        names = ["think", "message", "move", "question", "THINK"]
        tags = [rng.choice(names) for _ in range(rng.randint(1, 30))]
        closed = "".join(f"</{t}>" for t in reversed(tags)) if rng.random() < 0.5 else ""
        return "".join(f"<{t}>" for t in tags) + rng.choice(["place gs (0,0) L0", "draft", ""]) + closed
    if kind == 5:
        return rng.choice(WORDS) + " " * rng.randint(1000, 20_000) + "x"
    if kind == 6:
        return rng.choice(RUNS) * rng.randint(100, 5000)
    return " ".join(rng.choice(WORDS).upper() for _ in range(rng.randint(0, 30)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    exceptions: Counter = Counter()
    costs: dict[str, list[float]] = {name: [] for name in PARSERS}
    slowest: dict[str, tuple[float, int]] = {name: (0.0, 0) for name in PARSERS}
    characters = 0
    started = time.perf_counter()
    for _ in range(args.inputs):
        text = reply(rng)
        characters += len(text)
        for name, (parse, allowed) in PARSERS.items():
            start = time.perf_counter()
            try:
                parse(text)
            except allowed:
                pass
            except Exception as error:  # noqa: BLE001 - counting exactly these is the point
                exceptions[(name, type(error).__name__)] += 1
            elapsed = time.perf_counter() - start
            per_char = elapsed / max(len(text), 1)
            if len(text) >= LONG:
                costs[name].append(per_char)
            if len(text) >= LONG and per_char > slowest[name][0]:
                slowest[name] = (per_char, len(text))
    print(f"{args.inputs} inputs, {characters / 1e6:.1f} M characters, {time.perf_counter() - started:.0f} s")
    print("| parser | undocumented exceptions | median ns/char | slowest ns/char (input length) | ratio |")
    print("|---|---|---|---|---|")
    for name in PARSERS:
        raised = sum(count for (who, _), count in exceptions.items() if who == name)
        median = statistics.median(costs[name]) if costs[name] else 0.0
        worst, length = slowest[name]
        ratio = worst / median if median else float("nan")
        print(f"| {name} | {raised} | {median * 1e9:.0f} | {worst * 1e9:.0f} ({length}) | {ratio:.0f} |")
    for (name, kind), count in sorted(exceptions.items()):
        print(f"{name}: {count} x {kind}")


if __name__ == "__main__":
    main()
