"""Train CRAFT teams (directors and builder) with multi-agent PPO on the JAX game, the whole loop jitted.

Each *config* (below) trains all its seeds at once under ``vmap``, for a
fixed number of updates; then every team plays the same evaluation
(``craft_env.jax.team.evaluate``: the bundled set, 20 structures x 10
seeds, greedy, no oracle, 20 turns) beside the baselines, and the run
writes into ``--out``:

* ``<config>/team.npz`` + ``team.json``: the trained parameters (every seed), saved as soon as they exist;
* ``curves.png`` and ``curves.json``: progress and completion of training episodes against env turns;
* ``table.md`` and ``results.json``: the evaluation table (progress ± SE, completion, completed %,
  turns, the paired difference to the reference team with its 95% interval) and the seeds' spread;
* ``team.entry.json``: the best learned team as a leaderboard entry (``craft-env leaderboard``).

Presets (``--preset``): ``ci`` (about a minute on CPU), ``cpu`` (under ten
minutes on 2 cores), ``gpu`` (the docs' table: six configs x 3 seeds,
an estimated six minutes on one H200, not yet timed with all six), ``gpu-ablations`` (IPPO, no memory, one
director network per seat; 3 seeds each). Run from the repository root::

    python examples/train_team.py --preset cpu --out runs/team
    python examples/train_team.py --preset gpu --out runs/team-gpu
    python examples/train_team.py --load runs/team --out runs/team-eval   # evaluate saved teams again
    python examples/train_team.py --baselines-only --torch-builder b0.pt --torch-builder b1.pt --out runs/tb

``--builder-from DIR`` starts every config's builder (and its critic) from
a saved config of an earlier run (``DIR`` is ``<out>/<config>``; seed
``s`` from that run's seed ``s``): with ``team-best-response``, whose
builder stays frozen, the directors learn to speak to a trained builder::

    python examples/train_team.py --configs scripted+builder --seeds 0,1,2 --updates 400 --out runs/sb
    python examples/train_team.py --configs team-best-response --seeds 0,1,2 --updates 200 \
        --builder-from runs/sb/scripted+builder --out runs/br

``--torch-builder PATH`` (once per file) adds a builder saved by
``examples/train_builder.py --save PATH`` to the evaluation: a row
``train_builder.py builder seed N`` with the scripted directors, a candidate
for the reference. It needs torch (imported only then). ``--baselines-only``
trains and loads no team: the baselines and those rows alone.

Needs jax and optax (``pip install -e ".[jax]"``).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import traceback
from collections.abc import Sequence
from pathlib import Path

_GPU = {"num_envs": 2048, "rollout": 20, "updates": 100, "hidden": 256, "minibatches": 8, "seeds": (0, 1, 2)}
PRESETS = {
    # name: (config names, shared settings)
    "ci": (("team",), {"num_envs": 64, "rollout": 20, "updates": 12, "hidden": 64, "minibatches": 2, "epochs": 2,
                       "seeds": (0, 1), "memory": 1}),
    "cpu": (("team", "directors+listener", "scripted+builder"),
            {"num_envs": 128, "rollout": 20, "updates": 80, "hidden": 128, "minibatches": 4, "seeds": (0,)}),
    "gpu": (("team", "team-no-prior", "team-imitate", "team-scripted-start-slow", "directors+listener",
             "scripted+builder"), _GPU),
    "gpu-ablations": (("team-ippo", "team-no-memory", "team-separate"), _GPU),
}

#: What each config changes from the preset's settings.
CONFIGS = {
    "team": {},
    "team-ippo": {"critic": "independent"},
    "team-no-memory": {"memory": 0},
    "team-no-prior": {"prior": 0.0, "speaker_prior": 0.0},
    "team-separate": {"share_directors": False},
    "team-imitate": {"imitate": 0.5, "script_pull": 1.0},
    "team-imitate-no-pull": {"imitate": 0.5},
    "team-imitate-only": {"imitate": 0.99},
    "team-scripted-start": {"script_prior": 8.0, "speaker_prior": 0.0},
    "team-scripted-start-no-entropy": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0},
    "team-scripted-start-slow": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                                 "director_lr": 5e-5},
    "team-scripted-start-followed": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                                     "director_credit": "followed"},
    # The scripted start speaking to a frozen builder: give it a trained one with --builder-from.
    "team-best-response": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                           "builder_lr": 0.0},
    "team-best-response-greedy": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                                  "builder_lr": 0.0, "greedy_builder": True},
    # Each director credited with the difference its own intent made (replays of the builder's phase).
    "team-best-response-counterfactual": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                                          "builder_lr": 0.0, "director_credit": "counterfactual"},
    # The same credit over later turns too: each replay valued by the central critic after its move.
    "team-best-response-counterfactual-future": {"script_prior": 8.0, "speaker_prior": 0.0,
                                                 "director_entropy": 0.0, "builder_lr": 0.0,
                                                 "director_credit": "counterfactual", "gamma": 0.9},
    "team-scripted-start-counterfactual": {"script_prior": 8.0, "speaker_prior": 0.0, "director_entropy": 0.0,
                                           "director_credit": "counterfactual"},
    "team-counterfactual": {"director_credit": "counterfactual"},
    "directors+listener": {"builder": "listener"},
    "scripted+builder": {"directors": "scripted"},
    "scripted+builder-memory4": {"directors": "scripted", "memory": 4},
}


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--out", required=True, help="output directory (made if missing)")
    parser.add_argument("--configs", default=None,
                        help=f"comma-separated configs instead of the preset's ({', '.join(CONFIGS)})")
    parser.add_argument("--seeds", default=None, help="comma-separated training seeds, e.g. 0,1,2")
    parser.add_argument("--updates", type=int, default=None, help="PPO updates per seed")
    parser.add_argument("--num-envs", type=int, default=None, help="envs per seed")
    parser.add_argument("--hidden", type=int, default=None, help="hidden units of every network")
    parser.add_argument("--chunk", type=int, default=10, help="updates per compiled call (one curve point)")
    parser.add_argument("--eval-seeds", type=int, default=10, help="games per bundled structure")
    parser.add_argument("--load", default=None, help="evaluate the teams saved in this run directory instead")
    parser.add_argument("--baselines-only", action="store_true",
                        help="train and load no team; evaluate the baselines (and --torch-builder rows)")
    parser.add_argument("--builder-from", default=None, metavar="DIR",
                        help="start every config's builder and critic from this saved config (<out>/<config> "
                             "of an earlier run; seed s from its seed s)")
    parser.add_argument("--torch-builder", action="append", default=[], metavar="PATH",
                        help="a builder saved by examples/train_builder.py --save, played with the scripted "
                             "directors (repeat for several seeds; needs torch)")
    return parser.parse_args(argv)


def _check(args: argparse.Namespace) -> None:
    for name, value in (("updates", args.updates), ("num-envs", args.num_envs), ("hidden", args.hidden),
                        ("chunk", args.chunk), ("eval-seeds", args.eval_seeds)):
        if value is not None and value < 1:
            raise SystemExit(_usage(f"--{name}: must be a positive int, got {value}"))
    if args.configs is not None:
        unknown = [c for c in args.configs.split(",") if c not in CONFIGS]
        if unknown:
            raise SystemExit(_usage(f"--configs: unknown config {unknown[0]!r}; known: {', '.join(CONFIGS)}"))
    if args.baselines_only and args.load:
        raise SystemExit(_usage("--baselines-only and --load: give one of them"))
    if args.builder_from is not None and (args.load or args.baselines_only):
        raise SystemExit(_usage("--builder-from: only when training (not with --load or --baselines-only)"))
    if args.builder_from is not None and not (Path(args.builder_from) / "team.json").is_file():
        raise SystemExit(_usage(f"--builder-from: no saved team (team.json) in {args.builder_from}"))
    missing = [path for path in args.torch_builder if not Path(path).is_file()]
    if missing:
        raise SystemExit(_usage(f"--torch-builder: no file {missing[0]}"))


def _usage(message: str) -> int:
    print(f"train_team.py: error: {message}", file=sys.stderr)
    return 2


def configs_of(args: argparse.Namespace):
    """``{name: TeamConfig}`` for the preset, with the command line's overrides."""
    from craft_env.jax.team.config import TeamConfig

    names, shared = PRESETS[args.preset]
    shared = dict(shared)
    if args.seeds is not None:
        try:
            shared["seeds"] = tuple(int(s) for s in args.seeds.split(","))
        except ValueError:
            raise ValueError(f"--seeds: expected comma-separated ints, got {args.seeds!r}") from None
    if args.updates is not None:
        shared["updates"] = args.updates
    if args.num_envs is not None:
        shared["num_envs"] = args.num_envs
    if args.hidden is not None:
        shared["hidden"] = args.hidden
    if args.configs is not None:
        names = tuple(args.configs.split(","))
    return {name: TeamConfig(**{**shared, **CONFIGS[name]}) for name in names}


def say(line: str) -> None:
    print(line, flush=True)


def torch_builders(paths: Sequence[str]) -> dict:
    """``{row name: (observations, masks) -> actions}`` of the builders ``train_builder.py --save`` wrote.

    torch is imported here (through ``train_builder.load_trainer``, which
    says how to install it), so that the rest of this script runs without it.
    """
    import importlib.util

    from craft_env.jax.team.pipeline import TORCH_BUILDER, row_name

    script = Path(__file__).with_name("train_builder.py")
    spec = importlib.util.spec_from_file_location("craft_train_builder", script)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    trainer = example.load_trainer()
    builders = {}
    for path in paths:
        try:
            model, saved = trainer.load_builder(path)
        except (ValueError, OSError, RuntimeError, KeyError) as error:
            raise SystemExit(_usage(f"--torch-builder: {error}")) from None
        name = row_name(TORCH_BUILDER, saved["training"]["seed"], "")
        if name in builders:
            raise SystemExit(_usage(f"--torch-builder {path}: a second builder of {name!r}"))
        builders[name] = trainer.greedy_policy(model, saved["layout"]["noop"])
    return builders


def started_networks(cfg) -> tuple[str, ...]:
    """The networks ``--builder-from`` copies into a config: the builder and the critic that judges it."""
    return ("builder", "critic") if cfg.critic == "central" else ("builder", "builder_critic")


def train_all(configs, out: Path, chunk: int, builder_from: str | None = None):
    """Train every config, saving each one's parameters at once; returns ``{name: Run}``.

    ``builder_from``: a saved config whose builder and critic every config starts from."""
    import jax

    from craft_env.jax.team import checkpoint
    from craft_env.jax.team.game import jax_game
    from craft_env.jax.team.policy import shapes_of
    from craft_env.jax.team.train import train

    device = jax.devices()[0]
    say(f"jax {jax.__version__} on {device.platform}: {getattr(device, 'device_kind', device)}")
    runs, speed = {}, {}
    for name, cfg in configs.items():
        game = jax_game(max_turns=cfg.max_turns, reward=cfg.reward)
        say(f"== {name}: {len(cfg.seeds)} seed(s) x {cfg.updates} updates x {cfg.turns_per_update:,} turns")
        start = None
        if builder_from is not None:
            try:
                start = checkpoint.networks_from(builder_from, started_networks(cfg), cfg, shapes_of(game))
            except ValueError as error:  # the saved team does not fit this config: nothing can train from it
                raise SystemExit(_usage(f"--builder-from: {error}")) from None
            say(f"== {name}: {', '.join(start)} from {builder_from}")
        try:
            run = train(game, cfg, chunk=chunk, report=say, start=start)
        except Exception:  # noqa: BLE001 - one config's fault costs that config only
            say(f"== {name}: training failed\n" + traceback.format_exc())
            continue
        checkpoint.save(out / name, run.params, cfg, shapes_of(game),
                        extra={"turns_per_second": run.turns_per_second, "seconds": run.seconds,
                               "compile_seconds": run.compile_seconds, "turns": run.turns,
                               "builder_from": builder_from})
        say(f"== {name}: {run.turns:,} turns in {run.seconds:.1f}s ({run.compile_seconds:.1f}s first chunk, "
            f"compiling included): {run.turns_per_second:,.0f} turns/s of the whole loop; saved {out / name}")
        runs[name] = run
        speed[name] = {"device": f"{device.platform}: {getattr(device, 'device_kind', device)}", "turns": run.turns,
                       "seconds": run.seconds, "first_chunk_seconds": run.compile_seconds,
                       "turns_per_second": run.turns_per_second, "seeds": len(cfg.seeds), "num_envs": cfg.num_envs}
        (out / "speed.json").write_text(json.dumps(speed, indent=1) + "\n", encoding="utf-8")
    return runs


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    _check(args)
    try:
        configs = None if args.load or args.baselines_only else configs_of(args)
    except ValueError as error:
        raise SystemExit(_usage(str(error))) from None
    builders = torch_builders(args.torch_builder) if args.torch_builder else {}
    logging.basicConfig(level=logging.WARNING)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    from craft_env.jax.team import pipeline

    if args.baselines_only:
        teams = {}
    elif args.load:
        teams = pipeline.load_runs(Path(args.load))
    else:
        (out / "config.json").write_text(json.dumps(
            {"preset": args.preset, "configs": {k: v.to_dict() for k, v in configs.items()},
             "builder_from": args.builder_from}, indent=1) + "\n")
        started = time.perf_counter()
        runs = train_all(configs, out, args.chunk, args.builder_from)
        say(f"training done in {time.perf_counter() - started:.1f}s")
        if not runs:
            return 1
        teams = {name: (run.params, run.cfg) for name, run in runs.items()}
        try:
            pipeline.save_curves(out, runs)
        except Exception:  # noqa: BLE001 - a plotting fault must not cost the evaluation
            say("curves: failed\n" + traceback.format_exc())
    try:
        lines = pipeline.evaluate_all(teams, out, args.eval_seeds, say, builders=builders)
    except Exception:  # noqa: BLE001 - the saved parameters stay; the fault is reported
        say("evaluation: failed\n" + traceback.format_exc())
        return 1
    say("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
