"""Saving and loading a trained team: ``team.npz`` (parameters) beside ``team.json`` (config and sizes).

The parameters are the pytree of ``policy.init_params`` with a leading
seed axis (one row per trained seed); each leaf is stored under its path
(``director/h1/w``). Loading rebuilds the pytree from the config and the
sizes and checks every leaf's name and shape, so a file from another
config is refused with the leaf named rather than silently misread.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import jax
import numpy as np

from craft_env.jax.team import policy as pol
from craft_env.jax.team.config import TeamConfig
from craft_env.models.jsonl import write_atomic

FORMAT = "craft-env team"
VERSION = 1


def _leaf_name(path) -> str:
    return "/".join(str(getattr(part, "key", getattr(part, "idx", part))) for part in path)


def flatten(params) -> dict[str, np.ndarray]:
    leaves = jax.tree_util.tree_flatten_with_path(params)[0]
    return {_leaf_name(path): np.asarray(leaf) for path, leaf in leaves}


def save(directory: str | os.PathLike, params, cfg: TeamConfig, shapes: pol.Shapes, extra: dict | None = None) -> Path:
    """Write ``team.npz`` and ``team.json`` into ``directory`` (made if missing); returns the directory."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    arrays = flatten(params)
    tmp = directory / "team.npz.tmp"
    with tmp.open("wb") as handle:
        np.savez(handle, **arrays)
    os.replace(tmp, directory / "team.npz")
    meta = {"format": FORMAT, "version": VERSION, "config": cfg.to_dict(), "shapes": shapes._asdict(),
            "extra": extra or {}}
    write_atomic(directory / "team.json", json.dumps(meta, indent=1) + "\n")
    return directory


def load(directory: str | os.PathLike) -> tuple[dict, TeamConfig, pol.Shapes, dict]:
    """``(params with a leading seed axis, config, shapes, extra)`` from a directory written by ``save``."""
    directory = Path(directory)
    meta = json.loads((directory / "team.json").read_text(encoding="utf-8"))
    if meta.get("format") != FORMAT or meta.get("version") != VERSION:
        raise ValueError(f"team.json: not a {FORMAT} file of version {VERSION}: {directory}")
    cfg = TeamConfig.from_dict(meta["config"])
    shapes = pol.Shapes(**meta["shapes"])
    template = jax.eval_shape(lambda: pol.init_params(jax.random.PRNGKey(0), shapes, cfg))  # shapes only
    with np.load(directory / "team.npz") as stored:
        arrays = {name: stored[name] for name in stored.files}
    paths, treedef = jax.tree_util.tree_flatten_with_path(template)
    misfit = _first_misfit(arrays, paths)
    if misfit is not None:
        name, found, needed = misfit
        if found is None:
            raise ValueError(f"team.npz: missing parameter {name!r}")
        raise ValueError(f"team.npz: parameter {name!r} has shape {found}, the config needs {needed}")
    leaves = [arrays[_leaf_name(path)] for path, _ in paths]
    return jax.tree_util.tree_unflatten(treedef, leaves), cfg, shapes, meta.get("extra", {})


def _first_misfit(arrays: dict[str, np.ndarray], paths) -> tuple[str, tuple | None, tuple] | None:
    """The first leaf of ``paths`` (a template's ``tree_flatten_with_path``) that ``arrays`` (stacked over
    seeds, by leaf name) lacks or holds in another shape: ``(name, its shape or None, the needed shape)``."""
    for path, leaf in paths:
        name = _leaf_name(path)
        found = arrays[name].shape[1:] if name in arrays else None
        if found != leaf.shape:
            return name, found, leaf.shape
    return None


def networks_from(directory: str | os.PathLike, names: tuple[str, ...], cfg: TeamConfig, shapes: pol.Shapes
                  ) -> dict:
    """``{name: that network of the saved team, stacked over cfg's seeds}``: the start of a run that goes
    on from another (``train.train``'s ``start``); seed ``s`` of ``cfg`` takes the saved team's seed ``s``.

    A network the saved team lacks, a leaf whose shape ``cfg`` does not give it, or a seed it was not
    trained with is a ``ValueError`` naming it."""
    params, saved_cfg, _, _ = load(directory)
    template = jax.eval_shape(lambda: pol.init_params(jax.random.PRNGKey(0), shapes, cfg))
    missing = [seed for seed in cfg.seeds if seed not in saved_cfg.seeds]
    if missing:
        raise ValueError(f"{directory}: no seed {missing[0]} in that run (its seeds: "
                         f"{', '.join(map(str, saved_cfg.seeds))})")
    rows = np.asarray([saved_cfg.seeds.index(seed) for seed in cfg.seeds])
    out = {}
    for name in names:
        if name not in params or name not in template:
            raise ValueError(f"{directory}: network {name!r} is not in both that run and this config")
        misfit = _first_misfit(flatten({name: params[name]}),
                               jax.tree_util.tree_flatten_with_path({name: template[name]})[0])
        if misfit is not None:
            key, found, needed = misfit
            found = "nothing" if found is None else found
            raise ValueError(f"{directory}: parameter {key!r} is {found}, this config needs {needed}")
        out[name] = jax.tree_util.tree_map(lambda leaf: np.asarray(leaf)[rows], params[name])
    return out


def seed_params(params, index: int):
    """One seed's parameters out of the stacked ones."""
    return jax.tree_util.tree_map(lambda leaf: leaf[index], params)
