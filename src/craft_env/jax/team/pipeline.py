"""What ``examples/train_team.py`` does after training: curves, the evaluation table, results, the entry."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np

import craft_env
from craft_env.jax.team import checkpoint, report
from craft_env.jax.team.entry import write_team_entry
from craft_env.jax.team.evaluate import LearnedPolicies, play, play_walls_oracle
from craft_env.jax.team.game import intent_actions, intents_offset
from craft_env.jax.team.policy import Shapes
from craft_env.jax.team.speech import HEADER as SPEECH_HEADER
from craft_env.jax.team.speech import SpeechLog

#: Baseline rows: (name, directors, builder).
BASELINES = (("random team", "random", "random"), ("scripted + listener", "scripted", "listener"))
ORACLE = ("scripted + oracle builder", "scripted", "oracle")
#: The reference of perfect speech with nothing guessed (``evaluate.play_walls_oracle``).
WALLS_ORACLE = "oracle builder, walls only"
#: The group of ``examples/train_builder.py``'s saved builders, played with the scripted directors; a row is
#: ``row_name(TORCH_BUILDER, seed, "")``.
TORCH_BUILDER = "train_builder.py builder"


def load_runs(directory: Path) -> dict:
    """``{config: (stacked params, cfg)}`` of every saved team under ``directory``."""
    teams = {}
    for meta in sorted(directory.glob("*/team.json")):
        params, cfg, _, _ = checkpoint.load(meta.parent)
        teams[meta.parent.name] = (params, cfg)
    if not teams:
        raise ValueError(f"--load: no saved team (*/team.json) under {directory}")
    return teams


def save_curves(out: Path, runs: dict) -> None:
    curves = {name: run.curves for name, run in runs.items()}
    report.write_json(out / "curves.json", {
        name: {"turns_per_update": run.cfg.turns_per_update, **{k: v for k, v in run.curves.items()}}
        for name, run in runs.items()})
    report.plot_curves(curves, {name: run.cfg.turns_per_update for name, run in runs.items()}, out / "curves.png")


def _shapes() -> Shapes:
    env = craft_env.vector_env(1)
    return Shapes(len(env.seats), env.num_intents, env.num_actions, env.noop, env.director_dim, env.builder_dim,
                  env.state_dim, intents_offset(env.n, env.height))


def row_name(config: str, seed: int, who: str) -> str:
    return f"{config} seed {seed}{who}"


def _speech_log() -> SpeechLog:
    env = craft_env.vector_env(1)
    return SpeechLog(env.seats, env.n, env.height)


def learned_rows(name: str, params, cfg, seeds: int, speech: list[str]) -> list:
    """The evaluation of every seed of one config: the learned team, and its directors with the listener.

    What learned directors say is added to ``speech`` (``speech.SpeechLog`` rows).
    """
    shapes = _shapes()
    rows = []
    for index, seed in enumerate(cfg.seeds):
        policies = LearnedPolicies(checkpoint.seed_params(params, index), cfg, shapes, intent_actions())
        log = _speech_log()
        rows.append(play(row_name(name, seed, ""), cfg.directors, cfg.builder, seeds, policies, cfg.memory,
                         watch=log.watch))
        if cfg.directors == "learned":
            speech.extend(log.table(row_name(name, seed, "")))
        if cfg.directors == "learned" and cfg.builder == "learned":
            rows.append(play(row_name(name, seed, " (directors) + listener"), "learned", "listener", seeds,
                             policies, cfg.memory))
    return rows


def evaluate_all(teams: dict, out: Path, seeds: int, say: Callable[[str], None] = lambda line: None,
                 entry_configs: tuple[str, ...] = ("team",), builders: dict[str, Callable] | None = None
                 ) -> list[str]:
    """Play every baseline and every saved seed; write ``table.md``, ``results.json`` and an entry file per
    seed of ``entry_configs`` (``<config>-seed<k>.entry.json``); return the table's lines.

    ``builders``: ``{row name: (observations, masks) -> actions}``, builders trained elsewhere
    (``examples/train_builder.py``'s, group ``TORCH_BUILDER``), each played with the scripted directors.
    """
    log = _speech_log()
    baselines = [play(name, d, b, seeds, watch=log.watch if d == "scripted" else None) for name, d, b in BASELINES]
    speech = list(SPEECH_HEADER) + log.table("scripted + listener")
    say("baselines played")
    groups: dict[str, list] = {}
    rows = list(baselines)
    for name, (params, cfg) in teams.items():
        played = learned_rows(name, params, cfg, seeds, speech)
        rows.extend(played)
        groups[name] = [g for g in played if not g.name.endswith("+ listener")]
        listened = [g for g in played if g.name.endswith("+ listener")]
        if listened:
            groups[f"{name} (directors) + listener"] = listened
        say(f"{name}: evaluated")
    if builders:
        groups[TORCH_BUILDER] = [play(name, "scripted", builder, seeds) for name, builder in builders.items()]
        rows.extend(groups[TORCH_BUILDER])
        say(f"{TORCH_BUILDER}: evaluated")
    rows.append(play_walls_oracle(WALLS_ORACLE, seeds))
    rows.append(play(*ORACLE, seeds))
    reference = _reference(baselines, [groups.get(name, []) for name in untalking(teams)])
    lines = [f"Reference: {reference.name}", ""] + report.table(rows, reference) + [""] + report.seed_spread(groups)
    (out / "table.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "speech.md").write_text("\n".join(speech) + "\n", encoding="utf-8")
    report.write_json(out / "results.json", {"reference": reference.name, "rows": report.results_json(rows, reference)})
    for name in entry_configs:
        for games in groups.get(name, []):
            key = f"{games.name.replace(' ', '-')}"
            write_team_entry(games, f"craft-env {key}", out / f"{key}.entry.json")
    return lines


def untalking(teams: dict) -> list[str]:
    """The groups of trained builders with the scripted directors, the reference's candidates: every
    config of ``teams`` (``{name: (params, cfg)}``) whose directors are scripted, and ``TORCH_BUILDER``."""
    return [name for name, (_, cfg) in teams.items() if cfg.directors == "scripted"] + [TORCH_BUILDER]


def _reference(baselines: list, trained: list[list]):
    """The best team that does not learn to talk: the listener, or the best seed of a trained builder with
    the scripted directors (``trained``: the seeds of every config with scripted directors, such as
    ``scripted+builder``, and of ``train_builder.py``'s)."""
    candidates = [g for g in baselines if g.name == "scripted + listener"]
    candidates += [games for seeds in trained for games in seeds]
    return max(candidates, key=lambda g: float(np.mean(g.progress)))
