"""PNG plots of a report: progress per turn, and attempted vs prescribed removals.

matplotlib is imported here only, lazily, with the non-interactive Agg
backend; without it the plots are skipped with a logged warning and the
report is still written.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def _pyplot() -> Any | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log.warning("matplotlib is not installed: skipping plots (pip install matplotlib)")
        return None
    return plt


def draw_plots(results: list[Any], folder: Path, curves: tuple[Any, Any]) -> list[Path]:
    """Draw ``progress.png`` and ``removes.png`` for ``results`` into ``folder``; return the files written."""
    plt = _pyplot()
    if plt is None or not results:
        return []
    from matplotlib.ticker import MaxNLocator

    progress_curve, remove_curves = curves
    folder.mkdir(parents=True, exist_ok=True)
    written = []

    figure, axis = plt.subplots(figsize=(7, 4.5))
    for result in results:
        curve = progress_curve(result.games, result.max_turns)
        if not curve:
            continue
        turns = list(range(1, len(curve) + 1))
        means = [m for m, _ in curve]
        sems = [s for _, s in curve]
        axis.plot(turns, means, label=result.label)
        axis.fill_between(
            turns, [m - s for m, s in zip(means, sems)], [m + s for m, s in zip(means, sems)], alpha=0.2
        )
    axis.set_xlabel("turn")
    axis.xaxis.set_major_locator(MaxNLocator(integer=True))
    axis.set_ylabel("progress (mean ± SEM over games)")
    axis.set_ylim(0, 1.02)
    axis.set_title("Progress per turn")
    axis.legend(fontsize="small")
    figure.tight_layout()
    path = folder / "progress.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    written.append(path)

    columns = min(3, len(results))
    rows = (len(results) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(4.5 * columns, 3.4 * rows), squeeze=False)
    for axis, result in zip(axes.flat, results):
        attempted, prescribed = remove_curves(result.games, result.max_turns)
        turns = list(range(1, len(attempted) + 1))
        axis.plot(turns, prescribed, color="black", label="oracle prescribed")
        axis.plot(turns, attempted, color="tab:blue", label="attempted")
        axis.fill_between(
            turns,
            prescribed,
            attempted,
            where=[a >= p for a, p in zip(attempted, prescribed)],
            color="tab:orange",
            alpha=0.3,
            interpolate=True,
        )
        axis.fill_between(
            turns,
            prescribed,
            attempted,
            where=[a < p for a, p in zip(attempted, prescribed)],
            color="tab:green",
            alpha=0.3,
            interpolate=True,
        )
        row = result.row
        axis.set_title(
            f"{result.label}\ngap {row['gap']:+.3f}, progress {row['progress']:.3f}", fontsize="small"
        )
        axis.set_xlabel("turn")
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))
        axis.set_ylabel("remove rate")
        axis.set_ylim(-0.02, 1.02)
        axis.legend(fontsize="x-small")
    for axis in list(axes.flat)[len(results) :]:
        axis.set_visible(False)
    figure.tight_layout()
    path = folder / "removes.png"
    figure.savefig(path, dpi=110)
    plt.close(figure)
    written.append(path)
    return written
