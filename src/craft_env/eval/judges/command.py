"""The ``craft-env judge`` subcommand: its options and a thin call into ``run.judge``."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from craft_env.eval.judges.questions import parse_families
from craft_env.eval.judges.run import JudgeSettings, interrupted_note, judge
from craft_env.eval.judges.scoring import load_judged, score_table
from craft_env.eval.judges.tables import pm
from craft_env.models.llm import missing_environment
from craft_env.eval.results.terminal import fitted_tables, terminal_console
from craft_env.text.clean import printable


def add_judge_parser(commands: Any) -> None:
    """Register ``judge`` on the CLI's subparsers."""
    judge = commands.add_parser("judge", help="score the directors' messages with SG/MM/PS judges")
    judge.add_argument("dir", metavar="DIR", help="an output directory of craft-env run (or one run_<k>)")
    judge.add_argument("--judge-model", required=True,
                       help="'engine' (exact, offline) or a litellm model, e.g. openai/gpt-4o-mini")
    judge.add_argument("--judges", default="sg,mm,ps", help="which judges: any of sg,mm,ps (default all)")
    judge.add_argument("--runs", type=int, default=1, help="grader runs, independent samples (default 1)")
    judge.add_argument("--turns", type=int, help="judge only turns 1..T of every game (default all)")
    judge.add_argument("--scoring", choices=("default", "paper"), default="default",
                       help="how answers become scores in the printed table (default: Yes 1, No 0)")
    judge.add_argument("--api-base", help="base URL passed to litellm (e.g. a local server)")
    judge.add_argument("--concurrency", type=int, default=8, help="judge calls at once (default 8)")
    judge.add_argument("--timeout", type=float, default=60.0, help="seconds per call (default 60)")
    judge.add_argument("--num-retries", type=int, default=3, help="retries of a failed call (default 3)")
    judge.add_argument("--replay-from", metavar="DIR",
                       help="judge offline from the calls recorded under DIR/judges (a miss is an error)")
    judge.add_argument("--no-progress", action="store_true", help="no progress bar")


def score_rows(out: Any, model: str, scoring: str) -> list[list[str]]:
    by_run = load_judged(out).get(model, {})
    table = score_table(by_run, scoring)
    return [[code, pm(s["mean"], s["sem_items"]), pm(s["mean_runs"], s["sem_runs"]), str(s["n"])]
            for code, s in table.items()]


def cmd_judge(args: argparse.Namespace) -> int:
    """Judge ``args.dir``; print per-question scores; 1 when some calls failed for good."""
    settings = JudgeSettings(
        path=args.dir, judge_model=args.judge_model, families=parse_families(args.judges), runs=args.runs,
        turns=args.turns, concurrency=args.concurrency, timeout=args.timeout, num_retries=args.num_retries,
        api_base=args.api_base, replay_from=args.replay_from,
    )
    if settings.judge_model != "engine" and settings.replay_from is None:
        missing = missing_environment(settings.judge_model, settings.api_base)
        if missing:
            raise ValueError(f"judge-model {settings.judge_model!r} needs {' and '.join(missing)} set in the "
                             "environment (or --api-base for a server that needs no key)")
    console = terminal_console()
    try:
        out, counts = judge(settings, progress=not args.no_progress, console=console)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: what is saved, and that the same command finishes it
        print(f"craft-env: {interrupted_note(settings)}", file=sys.stderr)
        return 130
    rows = score_rows(out, settings.judge_model, args.scoring)
    headers = ["Question", "Mean ± SEM (items)", "Mean ± SEM (grader runs)", "Scored"]
    title = f"Judge {settings.judge_model} on {out} ({args.scoring} scoring)"
    if console is None:
        print(printable(title))
        print(printable("\n".join(" | ".join(r) for r in [headers, *rows])))
    else:
        for table in fitted_tables(console, title, headers, rows):
            console.print(table)
    for c in counts:
        print(f"grader run {c.grader_run}: {c.judged} judged, {c.skipped} already done, {c.unreadable} "
              f"unreadable, {c.errored} failed; {c.calls} calls ({c.cached} replayed), "
              f"{c.prompt_tokens + c.completion_tokens} tokens, ${c.cost:.4f}")
    failed = sum(c.errored for c in counts)
    if failed:
        print(f"{failed} item(s) could not be judged; run the same command again to finish them.")
        return 1
    return 0
