"""``craft-env``: the command line (run, report, generate). No logic of its own.

* ``craft-env run``: play the benchmark (scripted team on the bundled set by
  default, any litellm model with ``--director-model``/``--builder-model``),
  write logs under ``runs/<timestamp>/`` and print the paper's Table 1.
* ``craft-env report DIR [DIR...]``: the tables and plots from logs alone.
* ``craft-env run --shard I/N`` plays one shard of a run; ``craft-env merge
  SHARD_DIR... -o RUN_DIR`` joins the shards into one run (``eval.run.merge``).
* ``craft-env judge DIR --judge-model M``: SG/MM/PS judge scores (docs/judges.md).
* ``craft-env generate --n 100 --seed 0 -o structures.json``: structures in
  the paper's JSON format.
* ``craft-env play --seat builder|D1|D2|D3``: a person at one seat in the
  terminal, logged like a run (``eval.play``).
* ``craft-env serve``: the game in the browser, any seat a person, a model or
  an agent, every game logged like a run (``web``).
* ``craft-env replay DIR [DIR...] -o replay.html``: every game in one HTML page.
* ``craft-env transcript DIR --game ID``: one game as a Markdown table.
* ``craft-env leaderboard PATH... -o board.html``: every run beside the
  paper's published rows, with rank bands (docs/leaderboard.md).

Each subcommand imports what it runs when it runs, so the command line
starts without loading the runner, the judges or the report (the one
module allowed such imports: ``tests/test_imports.py``).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROG = "craft-env"
# Options of ``run`` that decide results: on --resume they come from config.json.
_RESUMABLE = {
    "director_model": "director-model",
    "builder_model": "builder-model",
    "structures": "structures",
    "dataset": "dataset",
    "runs": "runs",
    "turns": "turns",
    "oracle_n": "oracle-n",
    "start": "start",
    "seed": "seed",
    "director_order": "director-order",
    "temperature": "temperature",
    "max_tokens": "max-tokens",
    "protocol": "protocol",
    "builder_tools": "builder-tools",
    "max_tool_calls": "max-tool-calls",
    "seats": "seats",
    "shard": "shard",
}
_DEFAULTS = {
    "director_model": "scripted",
    "builder_model": "scripted",
    "structures": "all",
    "runs": 1,
    "turns": 20,
    "oracle_n": 5,
    "start": "empty",
    "seed": 0,
    "director_order": "random",
    "dataset": "paper",
    "protocol": "craft",
}


def build_parser() -> argparse.ArgumentParser:
    """The whole command line: every subcommand and its options (read by the docs test too).

    Subcommands are added in the order ``--help`` lists them, one function per group of them.
    """
    parser = argparse.ArgumentParser(
        prog=PROG, description="CRAFT: the multi-director block-building benchmark."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log games (-v) and turns (-vv)")
    parser.add_argument("--version", action="version", version=f"{PROG} {_version()}")
    commands = _subcommands(parser)
    _add_run_parser(commands)
    _add_report_parsers(commands)
    _add_paper_log_parsers(commands)
    _add_judged_parsers(commands)
    _add_setup_parsers(commands)
    _add_play_parser(commands)
    _add_serve_parser(commands)
    _add_replay_parsers(commands)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> Any:
    """The subparsers of ``parser``, whose ``add_parser`` gives every subcommand ``-v`` after its name too."""
    verbose = argparse.ArgumentParser(add_help=False)
    verbose.add_argument(
        "-v", "--verbose", dest="sub_verbose", action="count", default=0, help=argparse.SUPPRESS
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_parser = commands.add_parser

    def with_verbose(name: str, **options: Any) -> argparse.ArgumentParser:
        return add_parser(name, parents=[verbose, *options.pop("parents", [])], **options)

    commands.add_parser = with_verbose
    return commands


def _add_run_parser(commands: Any) -> None:
    """``run``: play the benchmark; the options that decide results are resumable (``_RESUMABLE``)."""
    run = commands.add_parser("run", help="play the benchmark and print Table 1")
    run.add_argument(
        "--director-model", help="'scripted' (default), 'random', or a litellm model, e.g. openai/gpt-4o-mini"
    )
    run.add_argument("--builder-model", help="'scripted' (default), 'random', or a litellm model")
    run.add_argument("--api-base", help="base URL passed to litellm for both roles (e.g. a local server)")
    run.add_argument("--structures", help="'all' (default) or comma-separated indices, e.g. 0,3,7")
    run.add_argument(
        "--dataset",
        help="'paper' (default: the paper's 20), 'craft' (our generated 20) or a structures JSON file",
    )
    run.add_argument("--protocol", choices=("craft", "paper"), help="rules of play (default craft)")
    run.add_argument(
        "--builder-tools", action="store_true", default=None, help="give the builder the simulate_move tool"
    )
    run.add_argument("--max-tool-calls", type=int, help="simulate_move calls per builder turn (default 3)")
    run.add_argument("--runs", type=int, help="independent runs of every structure (default 1)")
    run.add_argument("--turns", type=int, help="turns per game (default 20)")
    run.add_argument(
        "--oracle-n", type=int, help="candidate moves shown to the builder; 0 = no oracle (default 5)"
    )
    run.add_argument(
        "--seats", help="the seated directors, comma-separated from D0 (near), D1, D2, D3 (default D1,D2,D3)"
    )
    run.add_argument(
        "--start",
        help="starting board: empty (default), first_layer, first_two_layers, wall_D0..3 (a seated wall)",
    )
    run.add_argument("--director-order", choices=("random", "fixed"), help="speaking order (default random)")
    run.add_argument("--seed", type=int, help="base seed of every game (default 0)")
    run.add_argument("--temperature", type=float, help="sampling temperature passed to the models")
    run.add_argument("--max-tokens", type=int, help="reply length cap passed to the models")
    run.add_argument("--concurrency", type=int, default=8, help="games played at once (default 8)")
    run.add_argument("--timeout", type=float, default=60.0, help="seconds per model call (default 60)")
    run.add_argument("--num-retries", type=int, default=3, help="retries of a failed model call (default 3)")
    run.add_argument("--out", help="output directory (default runs/<timestamp>)")
    run.add_argument(
        "--resume", action="store_true", help="finish the run in --out (settings from its config.json)"
    )
    run.add_argument(
        "--replay-from",
        metavar="DIR",
        help="re-run offline from the model calls recorded in DIR (a miss is an error, not a call)",
    )
    run.add_argument(
        "--max-cost", type=float, metavar="USD",
        help="send no model call whose estimated cost would take the run's spend above USD "
        "(games then error; resumable; docs/robustness.md)",
    )
    run.add_argument(
        "--price-per-token", metavar="PROMPT[,COMPLETION]",
        help="US dollars per token of a model litellm cannot price, e.g. 1.5e-7,6e-7 (needed with --max-cost)",
    )
    run.add_argument(
        "--log-prompts", action="store_true", help="store the messages sent with each call in cache.jsonl"
    )
    run.add_argument(
        "--dry-run", action="store_true", help="print games, calls, tokens and cost estimates; play nothing"
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    run.add_argument(
        "--shard", type=_shard, metavar="I/N",
        help="play only shard I of N (every game is in exactly one shard); join them with craft-env merge",
    )


def _add_report_parsers(commands: Any) -> None:
    """``report`` (tables and plots from logs) and ``merge`` (a sharded run's shards into one run)."""
    report = commands.add_parser("report", help="Table 1, extras, taxonomy and plots from run logs")
    report.add_argument(
        "dirs", nargs="+", metavar="DIR", help="output directories of craft-env run, or paper result logs"
    )
    report.add_argument(
        "--out", help="where to write report.md/report.json/plots (default: the DIR, or craft_report)"
    )
    report.add_argument("--no-plots", action="store_true", help="skip the PNG plots")

    merge = commands.add_parser("merge", help="the shard directories of one run (run --shard) -> one run")
    merge.add_argument("shards", nargs="+", metavar="SHARD_DIR", help="output directories of craft-env run --shard")
    merge.add_argument("-o", "--output", required=True, metavar="RUN_DIR", help="the run directory to write")
    merge.add_argument(
        "--allow-missing", action="store_true",
        help="merge even if games are missing (they count as unfinished; run --resume --out RUN_DIR plays them)",
    )
    merge.add_argument("--no-plots", action="store_true", help="skip the PNG plots")


def _add_paper_log_parsers(commands: Any) -> None:
    """``import`` and ``export``: the paper's result logs in and out, and the training data out."""
    from craft_env.train.options import add_training_export_options

    paper_in = commands.add_parser("import", help="paper result logs -> our run directory (replayed)")
    paper_in.add_argument("path", help="a paper result JSON file or a directory of them")
    paper_in.add_argument("-o", "--output", required=True, help="the run directory to write")
    paper_out = commands.add_parser(
        "export", help="run directories -> the paper's result logs, or SFT/DPO training data (docs/train.md)"
    )
    paper_out.add_argument("dirs", nargs="+", metavar="DIR", help="output directories of craft-env run")
    paper_out.add_argument(
        "--format", choices=("paper", "sft", "dpo"), default="paper",
        help="paper: the paper's result logs (one DIR); sft / dpo: TRL's conversational JSONL",
    )
    paper_out.add_argument("-o", "--output", required=True, help="the directory to write")
    add_training_export_options(paper_out)


def _add_judged_parsers(commands: Any) -> None:
    """``judge`` and ``leaderboard``, whose options their own packages define (``eval.judges``,
    ``eval.leaderboard``)."""
    from craft_env.eval.judges.command import add_judge_parser

    add_judge_parser(commands)
    from craft_env.eval.leaderboard.options import add_leaderboard_parser

    add_leaderboard_parser(commands)


def _add_setup_parsers(commands: Any) -> None:
    """``generate`` (structures in the paper's JSON) and ``compile`` (the numba kernels ahead of time)."""
    generate = commands.add_parser("generate", help="write generated structures in the paper's JSON format")
    generate.add_argument("--n", type=int, default=100, help="how many structures (default 100)")
    generate.add_argument("--seed", type=int, default=0, help="seed of the first structure (default 0)")
    generate.add_argument(
        "-o", "--output", default="structures.json", help="output file (default structures.json)"
    )
    compile_ = commands.add_parser(
        "compile", help="compile the numba kernels ahead of time (an editable install already does)"
    )
    compile_.add_argument(
        "groups", nargs="*", metavar="GROUP", help="some of envs, api, vector (default: all)"
    )


def _add_play_parser(commands: Any) -> None:
    """``play``: a person at one seat of a game in the terminal."""
    play = commands.add_parser("play", help="take one seat of a game yourself, in the terminal")
    play.add_argument("--seat", required=True, help="your seat: builder or one of the seated directors")
    play.add_argument("--seats", help="the seated directors, e.g. D0,D1,D2,D3 (default D1,D2,D3)")
    play.add_argument("--structure", type=int, default=0, help="index of the structure (default 0)")
    play.add_argument("--dataset", help="a structures JSON file (default: the bundled set)")
    play.add_argument("--others", default="scripted", help="the other seats: 'scripted' (default) or a model")
    play.add_argument("--api-base", help="base URL passed to litellm (e.g. a local server)")
    play.add_argument("--turns", type=int, default=20, help="turns in the game (default 20)")
    play.add_argument("--oracle-n", type=int, default=5, help="candidates shown to the builder; 0 = none")
    play.add_argument("--seed", type=int, default=0, help="base seed of the game (default 0)")
    play.add_argument("--out", help="output directory (default runs/play-<timestamp>)")


def _add_serve_parser(commands: Any) -> None:
    """``serve``: the game in the browser (docs/serve.md)."""
    serve = commands.add_parser("serve", help="play in the browser: people, models and agents at any seat")
    serve.add_argument("--out", default="runs/serve", help="folder of the games' run directories (default runs/serve)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8765, help="port (default 8765; 0: any free port)")
    serve.add_argument("--api-base", help="base URL passed to litellm for model seats")
    serve.add_argument("--model", action="append", default=[], metavar="MODEL",
                       help="a litellm model offered in the organiser's form (repeatable)")
    serve.add_argument("--max-games", type=int, default=500, help="games the server holds at most (default 500)")
    serve.add_argument("--dataset", action="append", default=[], metavar="FILE",
                       help="a structures file offered beside the bundled sets (repeatable)")


def _add_replay_parsers(commands: Any) -> None:
    """``replay`` (every game in one HTML page) and ``transcript`` (one game as Markdown)."""
    replay = commands.add_parser("replay", help="every logged game in one self-contained HTML page")
    replay.add_argument("dirs", nargs="+", metavar="DIR", help="output directories of craft-env run")
    replay.add_argument("-o", "--output", default="replay.html", help="the HTML file (default replay.html)")

    transcript = commands.add_parser("transcript", help="one game turn by turn as Markdown (paper Table 11)")
    transcript.add_argument("dir", metavar="DIR", help="an output directory of craft-env run (or a run_<k>)")
    transcript.add_argument(
        "--game", required=True, metavar="ID", help="structure id or index: structure_003, 2, run_2/structure_003"
    )
    transcript.add_argument("--turns", metavar="A-B", help="only turns A to B (e.g. 5-9, or 7)")
    transcript.add_argument("-o", "--output", help="write the Markdown here instead of printing it")


def _version() -> str:
    from craft_env import __version__

    return __version__


def _shard(text: str) -> str:
    """``--shard I/N``, checked as argparse reads it (its error names the option)."""
    from craft_env.eval.run.shard import canonical_shard

    try:
        return canonical_shard(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("shard: ")) from None


class UsageError(ValueError):
    """A bad command line; printed as one line."""


def _settings(args: argparse.Namespace) -> Any:
    from craft_env.eval.run.runner import load_settings
    from craft_env.eval.run.settings import RESULT_FIELDS, RunSettings

    given = {field: getattr(args, field) for field in _RESUMABLE if getattr(args, field) is not None}
    common = {
        "api_base": args.api_base,
        "concurrency": args.concurrency,
        "timeout": args.timeout,
        "num_retries": args.num_retries,
        "max_cost": args.max_cost,
        "price_per_token": args.price_per_token,
        "log_prompts": args.log_prompts,
    }
    if args.resume:
        if not args.out:
            raise UsageError("--resume needs --out DIR, the run to finish")
        saved = load_settings(args.out)
        _agree(given, saved, "the run being resumed", "drop it or start a new --out")
        for key, value in common.items():
            setattr(saved, key, value)
        saved.__post_init__()
        return saved
    out = args.out or str(Path("runs") / time.strftime("%Y%m%d-%H%M%S"))
    if args.replay_from:
        # A replay plays what the source run played: its models and every result-changing setting,
        # unless a flag says otherwise (then the calls it needs are misses, and its games error).
        source = load_settings(args.replay_from)
        values = {field: getattr(source, field) for field in RESULT_FIELDS}
        return RunSettings(out=out, **{**values, **given}, **common, replay_only=True)
    values = {**_DEFAULTS, **given}
    return RunSettings(out=out, **values, **common)


def _agree(given: dict[str, Any], saved: Any, what: str, advice: str) -> None:
    """Refuse a result-changing option that differs from the saved run's."""
    from craft_env.eval.run.settings import RunSettings

    for field, value in given.items():
        wanted = getattr(RunSettings(out=saved.out, **{field: value}), field)
        if wanted != getattr(saved, field):
            raise UsageError(
                f"--{_RESUMABLE[field]}: {value!r} differs from {what} ({getattr(saved, field)!r}); {advice}"
            )


def _check_models(settings: Any) -> None:
    """Every model string names a provider litellm knows and has its key, before any game starts."""
    from craft_env.eval.run.settings import is_model
    from craft_env.models.cost import price_check
    from craft_env.models.llm import check_model, import_litellm

    models = {settings.director_model, settings.builder_model}
    for model in sorted(m for m in models if is_model(m)):
        try:
            check_model(model, settings.api_base)
            warning = price_check(import_litellm(), model, settings.max_cost, settings.token_price)
        except ValueError as error:
            raise UsageError(str(error)) from None
        if warning:  # a model litellm cannot price: said at start, not discovered in the bill
            print(f"{PROG}: warning: {warning}", file=sys.stderr)


def _print_errors(summaries: list[dict[str, Any]], limit: int = 5) -> None:
    """The cause of each errored game, on the terminal (the first few; all are in summary.json)."""
    from craft_env.text.clean import printable

    errors = [(s["run"], e) for s in summaries for e in s.get("errors", [])]
    for run, error in errors[:limit]:
        cause = error.get("error") or "unfinished"
        print(printable(f"  run {run} {error.get('structure_id')}: {cause}"), file=sys.stderr)
    if len(errors) > limit:
        print(f"  ... and {len(errors) - limit} more (see summary.json)", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    from craft_env.core.jit import load_caches_lean
    from craft_env.eval.report.report import print_tables, write_report
    from craft_env.eval.results.terminal import terminal_console
    from craft_env.eval.run.runner import interrupted_note, run_benchmark, seed_cache
    from craft_env.models.jsonl import LogWriteError

    settings = _settings(args)
    if args.dry_run:
        from craft_env.eval.run.dryrun import describe, estimate

        print(describe(estimate(settings)))
        return 0
    if args.replay_from:
        if args.resume:
            raise UsageError("--replay-from starts a new run; it cannot be combined with --resume")
        if (Path(settings.out) / "config.json").exists():
            raise UsageError(f"--out: {settings.out!r} already holds a run; replay into a new directory")
    if getattr(args, "own_process", False):  # cached kernels without numba's registry (core.jit)
        load_caches_lean()
    console = terminal_console()
    started = time.perf_counter()
    try:
        if args.replay_from:
            seed_cache(settings.out, args.replay_from)
        else:
            _check_models(settings)
        summaries = run_benchmark(settings, resume=args.resume, progress=not args.no_progress, console=console)
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM (main)
        print(f"{PROG}: {interrupted_note(settings.out)}", file=sys.stderr)
        return 130
    except LogWriteError as error:  # a full disk: a fault like a killed process
        print(f"{PROG}: {interrupted_note(settings.out, f'stopped: {error}')}", file=sys.stderr)
        return 1
    elapsed = time.perf_counter() - started
    results, target = write_report([settings.out], plots=not args.no_plots)
    print_tables(results, console)
    errored = sum(s["errored"] for s in summaries)
    print(f"Logs and report in {target} ({elapsed:.1f} s).")
    if errored:
        print(f"{errored} game(s) errored; run again with --resume --out {settings.out} to finish them.")
        _print_errors(summaries)
        return 1
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from craft_env.eval.report.report import print_tables, write_report

    results, target = write_report(args.dirs, args.out, plots=not args.no_plots)
    print_tables(results)
    print(f"Report written to {target / 'report.md'}")
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from craft_env.eval.report.report import print_tables, write_report
    from craft_env.eval.run.merge import merge_shards

    merged = merge_shards(args.shards, args.output, allow_missing=args.allow_missing)
    results, target = write_report([merged.out], plots=not args.no_plots)
    print_tables(results)
    print(f"Merged {merged.shards} shard(s) into {target}: {merged.games} game(s).")
    if merged.missing:
        print(f"{len(merged.missing)} game(s) were in no shard and are left unplayed; play them with "
              f"craft-env run --resume --out {target}")
    if merged.unfinished:
        print(f"{merged.unfinished} game(s) did not finish in their shard; finish them with "
              f"craft-env run --resume --out {target}")
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from craft_env.datasets import generate_structures, save_structures
    from craft_env.eval.logs.outputs import output_file

    if not 1 <= args.n <= 1_000_000:
        raise UsageError(f"--n: expected a number of structures from 1 to 1,000,000, got {args.n}")
    if args.seed < 0:
        raise UsageError(f"--seed: expected a non-negative int, got {args.seed}")
    output_file(args.output, "--output")
    structures = generate_structures(args.n, args.seed)
    save_structures(structures, args.output)
    print(f"Wrote {len(structures)} structures to {args.output}")
    return 0


def cmd_compile(args: argparse.Namespace) -> int:
    from craft_env.precompile import GROUPS, compile_and_report

    compile_and_report(args.groups or GROUPS)
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    from craft_env.eval.judges.command import cmd_judge as run_judge

    return run_judge(args)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from craft_env.eval.leaderboard.command import cmd_leaderboard as run_leaderboard

    return run_leaderboard(args)


def cmd_play(args: argparse.Namespace) -> int:
    from craft_env.eval.run.play import play, play_settings

    settings = play_settings(
        args.seat, args.structure, args.others, args.out, dataset=args.dataset, api_base=args.api_base,
        turns=args.turns, oracle_n=args.oracle_n, seed=args.seed,
        **({} if args.seats is None else {"seats": args.seats}),
    )
    _check_models(settings)
    play(settings)
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from craft_env.web.serve import check_datasets, check_options, serve

    check_options(args.host, args.port, args.max_games, args.out)
    serve(args.out, host=args.host, port=args.port, api_base=args.api_base, models=tuple(args.model),
          max_games=args.max_games, datasets=check_datasets(tuple(args.dataset)))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    from craft_env.eval.logs.outputs import output_file
    from craft_env.eval.replay.page import write_replay

    path, games = write_replay(args.dirs, output_file(args.output, "--output"))
    print(f"Wrote {games} game(s) to {path}")
    return 0


def cmd_transcript(args: argparse.Namespace) -> int:
    from craft_env.eval.logs.outputs import output_file
    from craft_env.eval.replay.transcript import game_transcript
    from craft_env.text.clean import printable

    if args.output:
        output_file(args.output, "--output")
    text = game_transcript(args.dir, args.game, args.turns)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
        print(f"Wrote {args.output}")
    else:
        print(printable(text), end="")
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from craft_env.eval.logs.outputs import output_dir
    from craft_env.eval.logs.paperlogs import import_paper_files, nothing_imported
    from craft_env.text.clean import printable

    result = import_paper_files(args.path, output_dir(args.output, "--output"))
    for failure in result.failures:
        print(printable(f"{PROG}: skipped {failure}"), file=sys.stderr)
    if not result.written:
        raise UsageError(nothing_imported(args.path, result.failures))
    command = str(result.written[0]) if len(result.written) == 1 else f"{args.output}/*"
    print(f"Imported {result.games} game(s) into {', '.join(str(p) for p in result.written)}; "
          f"read with craft-env report {command}")
    if result.failures:
        print(f"{len({f.path for f in result.failures})} file(s) could not be imported, in whole or in part "
              "(listed above).")
        return 1
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    if args.format != "paper":
        from craft_env.core.jit import load_caches_lean
        from craft_env.train.export import cmd_training_export

        if getattr(args, "own_process", False):  # cached kernels without numba's registry (core.jit)
            load_caches_lean()
        return cmd_training_export(args)
    from craft_env.eval.logs.outputs import output_dir
    from craft_env.eval.logs.paperlogs import export_paper_logs

    if len(args.dirs) != 1:
        raise UsageError("export --format paper takes one run directory")
    written = export_paper_logs(args.dirs[0], output_dir(args.output, "--output"))
    print(f"Wrote {len(written)} game file(s) in the paper's format under {args.output}")
    return 0


COMMANDS = {
    "run": cmd_run,
    "report": cmd_report,
    "merge": cmd_merge,
    "generate": cmd_generate,
    "play": cmd_play,
    "serve": cmd_serve,
    "replay": cmd_replay,
    "transcript": cmd_transcript,
    "import": cmd_import,
    "export": cmd_export,
    "judge": cmd_judge,
    "leaderboard": cmd_leaderboard,
    "compile": cmd_compile,
}


def _terminate(signum: int, frame: Any) -> None:
    """SIGTERM (schedulers, ``docker stop``) does what Ctrl-C does: the SIGINT handler in force runs."""
    handler = signal.getsignal(signal.SIGINT)
    if not callable(handler):
        raise KeyboardInterrupt
    handler(signal.SIGINT, frame)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``craft-env`` console script."""
    own_process = argv is None  # the console script or python -m: the process is the command's own
    with _imports_uncollected(own_process):
        args = build_parser().parse_args(argv)
    args.own_process = own_process
    from craft_env.models.redact import redact
    from craft_env.text.clean import PrintableFormatter, printable

    handler = logging.StreamHandler()  # log lines may quote model text: control characters escaped
    handler.setFormatter(PrintableFormatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.WARNING, handlers=[handler])
    verbose = args.verbose + getattr(args, "sub_verbose", 0)
    if verbose:
        logging.getLogger("craft_env").setLevel(logging.DEBUG if verbose > 1 else logging.INFO)
    in_main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if in_main_thread else None
    try:
        with warnings.catch_warnings():
            # An interrupt abandons calls in flight; their never-awaited coroutines are no news.
            warnings.filterwarnings("ignore", message="coroutine .* was never awaited", category=RuntimeWarning)
            return COMMANDS[args.command](args)
    except (UsageError, ValueError) as error:
        print(f"{PROG}: error: {printable(redact(str(error)))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # the commands that can be finished later say how themselves
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    except OSError as error:  # the system refused (a full disk, a permission): one line, not a traceback
        print(f"{PROG}: error: {printable(redact(str(error)))}", file=sys.stderr)
        return 1
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)
        if args.own_process:  # the process ends now
            _leave_the_heap_to_the_system()


@contextlib.contextmanager
def _imports_uncollected(own_process: bool) -> Iterator[None]:
    """In the command's own process, no garbage collection while the command line's modules import; their
    objects frozen after (``gc.freeze``).

    Building the parser imports nearly everything a command runs (numpy,
    numba, the runner): some 50,000 objects that live as long as the
    process, which Python's collector would walk again and again as they
    arrive (about 0.03 CPU s of a one-game run) and once more at exit.
    Frozen, the collector leaves them alone; the thousand-odd objects that
    were garbage already stay in memory until the process ends. Not for
    ``main(argv)`` called inside a program of someone else's.
    """
    if not own_process or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def _leave_the_heap_to_the_system() -> None:
    """Collect the garbage (its finalizers run), then freeze what is left (``gc.freeze``).

    The process is about to end; its last act would be the interpreter's
    final collections freeing numba's typing tables and every module's
    objects one by one: about 0.25 CPU s after a one-game run, a fifth of
    it. Frozen objects are not collected, so the operating system takes the
    memory back instead. Not for ``main(argv)`` called inside a program of
    someone else's, whose objects would then never be collected.
    """
    gc.collect()
    gc.freeze()


if __name__ == "__main__":
    sys.exit(main())
