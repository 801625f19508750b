"""The evaluation table, the learning-curve PNGs and the results file of a training run.

The table has one row per team (random, scripted directors + listener,
each trained seed of each config, each builder of ``train_builder.py``
given with ``--torch-builder``, oracle) with progress ± SE over the
200 games, completion, completed %, turns and the paired difference in
progress to the reference team (the best team that does not learn to
talk: scripted directors with the listener or a trained builder) with its
95% paired-bootstrap interval; then one line per config: the mean over
seeds and their spread (min..max).
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from craft_env.jax.team.evaluate import Games, paired_difference

HEADER = "| team | progress | completion | completed | turns | Δ progress vs reference (95% CI) |"


def _diff_cell(games: Games, reference: Games | None) -> str:
    if reference is None or games.name == reference.name:
        return "reference" if reference is not None and games.name == reference.name else ""
    iv = paired_difference(games, reference)
    return f"{iv.diff:+.3f} [{iv.low:+.3f}, {iv.high:+.3f}]"


def table(rows: list[Games], reference: Games | None) -> list[str]:
    """Markdown lines: one row per team (module docstring)."""
    lines = [HEADER, "|---|---|---|---|---|---|"]
    for games in rows:
        s = games.summary()
        lines.append(f"| {games.name} | {s['progress']:.3f} ± {s['se']:.3f} | {s['completion']:.3f} | "
                     f"{s['completed']:.1%} | {s['turns']:.1f} | {_diff_cell(games, reference)} |")
    return lines


def seed_spread(groups: dict[str, list[Games]]) -> list[str]:
    """Markdown lines: per config, the mean progress over its seeds and the spread."""
    lines = ["| config | seeds | progress (mean of seeds) | min..max | completed (mean) |", "|---|---|---|---|---|"]
    for name, runs in groups.items():
        progress = [g.summary()["progress"] for g in runs]
        completed = [g.summary()["completed"] for g in runs]
        lines.append(f"| {name} | {len(runs)} | {np.mean(progress):.3f} | {min(progress):.3f}..{max(progress):.3f} "
                     f"| {np.mean(completed):.1%} |")
    return lines


def results_json(rows: list[Games], reference: Games | None) -> dict:
    out = {}
    for games in rows:
        entry = games.summary()
        if reference is not None and games.name != reference.name:
            iv = paired_difference(games, reference)
            entry["vs_reference"] = {"reference": reference.name, "diff": iv.diff, "low": iv.low,
                                     "high": iv.high, "method": iv.method}
        entry["per_game_progress"] = [float(x) for x in games.progress]
        out[games.name] = entry
    return out


def plot_curves(curves: dict[str, dict[str, np.ndarray]], turns_per_update: dict[str, int], path: Path) -> None:
    """Progress and completed share of the episodes that ended during training, against env turns."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for c, (name, curve) in enumerate(curves.items()):
        x = (np.arange(curve["progress"].shape[0]) + 1) * turns_per_update[name]
        for s in range(curve["progress"].shape[1]):
            label = name if s == 0 else None
            axes[0].plot(x, curve["progress"][:, s], color=f"C{c}", alpha=0.8, lw=1, label=label)
            axes[1].plot(x, curve["completed"][:, s], color=f"C{c}", alpha=0.8, lw=1, label=label)
    for ax, title in zip(axes, ("progress", "completed games")):
        ax.set_xlabel("env turns (per seed)")
        ax.set_title(f"{title} of training episodes (one line per seed)")
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)
    plt.close(fig)


def write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data, indent=1, default=_plain) + "\n", encoding="utf-8")


def _plain(value):
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (np.floating, np.integer)):
        return value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    raise TypeError(f"not JSON: {type(value).__name__}")
