"""Both protocols measured: Table 1 of the scripted and random teams on the paper's 20 structures.

    PYTHONPATH=src python benchmarks/protocol_table.py [--runs 3] [--turns 20] [--out DIR]

Plays every combination of team (scripted, random), protocol (craft,
paper) and oracle (5 candidates, off), ``--runs`` runs of the paper's 20
each, through ``craft-env run``'s own runner, and prints one Markdown row
per combination (pooled over runs): Table 1, completed games (as the
protocol counts them) and how many of the 20 targets the protocol's rules
can finish at all. Rows the installed environment cannot play (an env
without the ``protocol`` keyword) are printed as not run. The table in
``docs/benchmark.md`` ("Both protocols") comes from this script.
"""

from __future__ import annotations

import argparse
import inspect
import math
import tempfile
from pathlib import Path

from craft_env.core.protocol import buildable, get_protocol
from craft_env.datasets import load_eval_set
from craft_env.envs.config import make_config
from craft_env.eval.report.report import load_results
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings

TEAMS = ("scripted", "random")
PROTOCOLS = ("craft", "paper")
ORACLES = (5, 0)
HEADERS = (
    "Team",
    "Protocol",
    "Oracle",
    "Prog.",
    "Comp.",
    "Pos. Acc.",
    "IoU",
    "Fail",
    "REMOVE",
    "Gap",
    "Completed",
    "Finishable targets",
)


def _pm(row: dict, key: str) -> str:
    mean, sem = row[key], row[key + "_sem"]
    return "n/a" if math.isnan(mean) else f"{mean:.3f} ± {sem:.3f}"


def env_plays(protocol: str) -> bool:
    """Whether the installed environment takes this protocol (``craft`` always; others need the keyword)."""
    return protocol == "craft" or "protocol" in inspect.signature(make_config).parameters


def measure(out: Path, team: str, protocol: str, oracle: int, runs: int, turns: int) -> list[str]:
    structures = load_eval_set("paper")
    finishable = f"{sum(buildable(s, get_protocol(protocol)) for s in structures)}/{len(structures)}"
    label = [team, protocol, str(oracle) if oracle else "off"]
    if not env_plays(protocol):
        return label + ["not run: the env has no protocol switch yet"] + [""] * 7 + [finishable]
    settings = RunSettings(
        out=str(out / f"{team}_{protocol}_{oracle or 'off'}"),
        director_model=team,
        builder_model=team,
        dataset="paper",
        protocol=protocol,
        oracle_n=oracle,
        runs=runs,
        turns=turns,
    )
    run_benchmark(settings)
    pooled = [r for r in load_results([settings.out]) if r.pooled or runs == 1][-1]
    row = pooled.row
    completed = round(row["completed"] * row["games"]) if row["games"] else 0
    return (
        label
        + [_pm(row, k) for k in ("progress", "completion", "position_accuracy", "iou", "fail")]
        + [
            f"{row['remove']:.3f}",
            f"{row['gap']:+.3f}",
            f"{completed}/{row['games']}",
            finishable,
        ]
    )


def ban_ceiling(turns: int) -> tuple[float, int, int]:
    """A follower of our exact oracle that skips the moves the paper's ban forbids, on the paper's 20:
    ``(mean final progress, games at progress >= 0.95, games with board == target)`` within ``turns``."""
    from craft_env import Structure, metrics, oracle
    from craft_env.core.protocol import PAPER, banned_reason

    progress, high, exact = [], 0, 0
    for target in load_eval_set("paper"):
        board = Structure.empty()
        for _ in range(turns):
            allowed = [
                m for m in oracle.optimal_moves(board, target) if banned_reason(PAPER, m, board.n) is None
            ]
            if not allowed:
                break
            board = board.apply(allowed[0])
        score = metrics.score(board, target)["progress"]
        progress.append(score)
        high += score >= PAPER.complete_at
        exact += board == target
    return sum(progress) / len(progress), high, exact


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--out", help="keep the runs here (default: a temporary directory)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(args.out or scratch)
        rows = [
            measure(out, t, p, o, args.runs, args.turns) for t in TEAMS for p in PROTOCOLS for o in ORACLES
        ]
    print("| " + " | ".join(HEADERS) + " |")
    print("|" + "---|" * len(HEADERS))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    mean, high, exact = ban_ceiling(args.turns)
    print(
        f"\nExact-oracle follower under the paper's ban, {args.turns} turns: mean progress {mean:.3f}, "
        f"{high}/20 at progress >= 0.95, {exact}/20 equal to the target."
    )


if __name__ == "__main__":
    main()
