"""Report tables of judge results: per-question scores per run directory, agreement, correlations.

Built from the rows of ``eval.report`` (one per run directory, each with
its ``source`` directory) and the judge results found under each
``source/judges``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

from craft_env.eval.judges.agreement import agreement, answer_pairs
from craft_env.eval.judges.questions import FAMILIES, QUESTIONS
from craft_env.eval.judges.scoring import family_stats, load_judged, question_stats, score_table
from craft_env.eval.results.stats import pearson, spearman

Table = tuple[str, list[str], list[list[str]]]


def pm(mean: float, sem: float) -> str:
    """``0.512 ± 0.031``; ``n/a`` for no mean; a lone value when the SEM is undefined."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    if sem is None or (isinstance(sem, float) and math.isnan(sem)):
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {sem:.3f}"


def _by_source(results: Sequence[Any]) -> list[tuple[Any, dict[str, dict[int, list[dict[str, Any]]]]]]:
    """``(row, {judge model: {grader run: records}})`` for each result whose directory was judged."""
    found = []
    for result in results:
        source = getattr(result, "source", None)
        judged = load_judged(Path(source)) if source else {}
        if judged:
            found.append((result, judged))
    return found


def judged_summary(results: Sequence[Any], scoring: str = "default") -> list[dict[str, Any]]:
    """Plain data per judged directory and judge model: question/family stats, PS splits."""
    out = []
    for result, judged in _by_source(results):
        for model, by_run in judged.items():
            splits = {split: {**{q.code: question_stats(by_run, q.code, scoring, split)
                                 for q in QUESTIONS if q.family == "PS"},
                              "PS": family_stats(by_run, "PS", scoring, split)}
                      for split in ("followed", "rejected")}
            out.append({"label": result.label, "judge_model": model, "scoring": scoring,
                        "scores": score_table(by_run, scoring), "ps_splits": splits, "by_run": by_run})
    return out


def _score_table(summary: list[dict[str, Any]], key: str, sem: str) -> list[list[str]]:
    codes = [q.code for q in QUESTIONS] + list(FAMILIES)
    rows = []
    for code in codes:
        cells = []
        for entry in summary:
            stats = entry["scores"].get(code)
            cells.append(pm(stats[key], stats[sem]) if stats else "")
        if any(cells):
            rows.append([code, *cells])
    return rows


def _agreement_rows(summary: list[dict[str, Any]]) -> list[list[str]]:
    rows = []
    models = sorted({e["judge_model"] for e in summary})
    for a, b in combinations(models, 2):
        for family in FAMILIES:
            pairs, means_a, means_b = [], [], []
            for label in dict.fromkeys(e["label"] for e in summary):
                ea = next((e for e in summary if e["label"] == label and e["judge_model"] == a), None)
                eb = next((e for e in summary if e["label"] == label and e["judge_model"] == b), None)
                if ea is None or eb is None or family not in ea["scores"] or family not in eb["scores"]:
                    continue
                first_a = ea["by_run"][min(ea["by_run"])]
                first_b = eb["by_run"][min(eb["by_run"])]
                pairs += answer_pairs(first_a, first_b, family)
                means_a.append(ea["scores"][family]["mean"])
                means_b.append(eb["scores"][family]["mean"])
            if not pairs:
                continue
            found = agreement(pairs)
            rho, p = spearman(means_a, means_b)
            rows.append([f"{a} vs {b}", family, str(found["pairs"]), _f(found["exact"]), _f(found["kappa"]),
                         f"{_f(rho)} (p {_f(p)}, n {len(means_a)})"])
    return rows


def _f(value: float) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    return f"{value:.3f}"


def correlation_rows(results: Sequence[Any], summary: list[dict[str, Any]]) -> list[list[str]]:
    """Table 8: Pearson and Spearman (with p) of features against final progress across run directories."""
    labels = [r.label for r in results]
    progress = [float(r.row["progress"]) for r in results]
    features: dict[str, list[float]] = {"remove gap": [float(r.row["gap"]) for r in results]}
    models = sorted({e["judge_model"] for e in summary})
    for model in models:
        prefix = f"{model} " if len(models) > 1 else ""
        for code in [q.code for q in QUESTIONS] + ["MM"]:
            values = []
            for label in labels:
                entry = next((e for e in summary if e["label"] == label and e["judge_model"] == model), None)
                stats = entry["scores"].get(code) if entry else None
                values.append(float(stats["mean"]) if stats else float("nan"))
            if sum(not math.isnan(v) for v in values) >= 3:
                features[prefix + ("overall MM" if code == "MM" else code)] = values
    rows = []
    for name, values in features.items():
        r, pr = pearson(values, progress)
        rho, ps = spearman(values, progress)
        n = sum(1 for v in values if not math.isnan(v))
        rows.append([name, str(n), f"{_f(r)} (p {_f(pr)})", f"{_f(rho)} (p {_f(ps)})"])
    return rows


def judge_tables(results: Sequence[Any]) -> list[Table]:
    """The report's judge tables for ``results`` (one row per run directory); empty without judge results."""
    summary = judged_summary(results)
    tables: list[Table] = []
    if summary:
        columns = [f"{e['label']} ({e['judge_model']})" for e in summary]
        tables.append(("Judge scores per question (mean ± SEM over judged items; Yes 1, No 0)",
                       ["Question", *columns], _score_table(summary, "mean", "sem_items")))
        if any(len(e["by_run"]) > 1 for e in summary):
            tables.append(("Judge scores per question (mean ± SEM over grader runs)",
                           ["Question", *columns], _score_table(summary, "mean_runs", "sem_runs")))
        split_rows = []
        for code in [q.code for q in QUESTIONS if q.family == "PS"] + ["PS"]:
            cells = []
            for e in summary:
                if "PS" in e["scores"]:
                    for split in ("followed", "rejected"):
                        s = e["ps_splits"][split][code]
                        cells.append(pm(s["mean"], s["sem_items"]))
            if cells:
                split_rows.append([code, *cells])
        if split_rows:
            headers = ["Question"] + [f"{e['label']} ({e['judge_model']}) {split}" for e in summary
                                      if "PS" in e["scores"] for split in ("followed", "rejected")]
            title = "PS by oracle followed / rejected (PS6 left out where followed)"
            tables.append((title, headers, split_rows))
        agreement = _agreement_rows(summary)
        if agreement:
            tables.append(("Judge agreement on the same items (Table 6)",
                           ["Judges", "Family", "Pairs", "Exact", "κ (linear)", "Spearman ρ of run means"],
                           agreement))
    if len(results) > 1:
        tables.append(("Correlation with final progress across run directories (Table 8)",
                       ["Feature", "n", "Pearson r", "Spearman ρ"], correlation_rows(results, summary)))
    return tables
