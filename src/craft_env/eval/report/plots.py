"""PNG plots of a report: progress per turn, and attempted vs prescribed removals.

matplotlib is imported here only, lazily, with the non-interactive Agg
backend; without it the plots are skipped with a logged warning and the
report is still written.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from craft_env.eval.results.diagnostics import diagnostics_row, seated
from craft_env.eval.judges.questions import QUESTIONS
from craft_env.eval.judges.tables import judged_summary

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
    if axis.get_legend_handles_labels()[0]:  # a run with no finished game draws no curve to name
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


def draw_diagnostic_plots(results: list[Any], folder: Path) -> list[Path]:
    """``outcomes.png`` and ``lambda.png`` per row, ``judges.png`` per judged directory; the files written."""
    plt = _pyplot()
    if plt is None or not results:
        return []

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    labels = [r.label for r in results]
    rows = [diagnostics_row(r.games, r.seats) for r in results]
    seats = seated(results)
    positions = list(range(len(results)))

    figure, axis = plt.subplots(figsize=(max(5, 1.4 * len(results) + 2), 4))
    bottom = [0.0] * len(results)
    parts = (("followed", "oracle followed"), ("rejected", "oracle rejected"), ("no_oracle", "no oracle"))
    for key, name in parts:
        values = [0.0 if v != v else v for v in (row["outcomes"][key] for row in rows)]
        axis.bar(positions, values, bottom=bottom, label=name)
        bottom = [b + v for b, v in zip(bottom, values)]
    axis.set_xticks(positions, labels, rotation=20, ha="right", fontsize="small")
    written.append(_save(figure, axis, folder / "outcomes.png", "Outcome rates", "fraction of turns", 1.02))

    figure, axis = plt.subplots(figsize=(max(5, 1.4 * len(results) + 2), 4))
    width = 0.8 / len(seats)
    for k, seat in enumerate(seats):
        values = [row["lambda"].get(f"lambda_{seat}", 0.0) for row in rows]
        axis.bar([p + (k - (len(seats) - 1) / 2) * width for p in positions],
                 [0.0 if v != v else v for v in values], width, label=f"λ_{seat}")
    if len({r.seats for r in results}) == 1:  # an even share, when every row seats the same directors
        axis.axhline(1 / len(seats), color="black", linewidth=0.8, linestyle="--")
    axis.set_xticks(positions, labels, rotation=20, ha="right", fontsize="small")
    written.append(_save(figure, axis, folder / "lambda.png", "Credit λ per director",
                         "credit share on oracle-correct turns", 1.02))

    summary = judged_summary(results)
    if summary:
        codes = [q.code for q in QUESTIONS]
        figure, axis = plt.subplots(figsize=(12, 4.5))
        width = 0.8 / len(summary)
        for k, entry in enumerate(summary):
            means = [entry["scores"].get(c, {}).get("mean", float("nan")) for c in codes]
            sems = [entry["scores"].get(c, {}).get("sem_items", float("nan")) for c in codes]
            axis.bar([i + (k - (len(summary) - 1) / 2) * width for i in range(len(codes))],
                     [0.0 if m != m else m for m in means], width,
                     yerr=[0.0 if s != s else s for s in sems], capsize=2,
                     label=f"{entry['label']} ({entry['judge_model']})")
        axis.set_xticks(range(len(codes)), codes, fontsize="small")
        written.append(_save(figure, axis, folder / "judges.png", "Judge scores per question",
                             "mean score ± SEM (Yes 1, No 0)", 1.05, legend="x-small"))
    return written


def _save(figure: Any, axis: Any, path: Path, title: str, ylabel: str, top: float, legend: str = "small") -> Path:
    """Label a diagnostic bar plot (title, y axis from 0 to ``top``, legend), write it to ``path``, close it."""
    axis.set_ylabel(ylabel)
    axis.set_ylim(0, top)
    axis.set_title(title)
    axis.legend(fontsize=legend)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    _pyplot().close(figure)
    return path
