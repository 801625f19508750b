"""Judge results read back and scored: per question, per family, per split, per grader run.

Two scorings (docs/judges.md):

* ``"default"``: Yes 1, No 0; Unclear, N/A, a missing answer and an
  unreadable reply are not scores but are counted apart;
* ``"paper"`` (the paper's judge code): for SG and MM anything but Yes
  or No (Unclear, N/A, missing) is 0.5; for PS Unclear is 0.5 and N/A or a
  missing answer is left out; an unreadable reply is left out everywhere.

Means come with two SEMs: over judged items (all grader runs pooled) and
over grader runs (the SEM of the per-run means, the paper's).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from craft_env.models.jsonl import read_jsonl
from craft_env.eval.judges.questions import PS, QUESTIONS, family_questions
from craft_env.eval.judges.run import JUDGES_DIR
from craft_env.eval.results.stats import mean_sem

SCORINGS = ("default", "paper")
COUNTED = ("Yes", "No", "Unclear", "N/A", "missing", "unreadable")


def check_scoring(scoring: str) -> str:
    if scoring not in SCORINGS:
        raise ValueError(f"scoring: expected one of {', '.join(SCORINGS)}, got {scoring!r}")
    return scoring


def answer_of(record: dict[str, Any], code: str) -> str:
    """``"Yes"``/``"No"``/``"Unclear"``/``"N/A"``, ``"missing"`` or ``"unreadable"`` for one question."""
    if record.get("unreadable") or not isinstance(record.get("answers"), dict):
        return "unreadable"
    entry = record["answers"].get(code)
    if isinstance(entry, dict) and entry.get("answer") in ("Yes", "No", "Unclear", "N/A"):
        return entry["answer"]
    return "missing"


def score(family: str, answer: str, scoring: str = "default") -> float | None:
    """The numeric score of one answer (``None``: not a score under ``scoring``)."""
    if answer == "Yes":
        return 1.0
    if answer == "No":
        return 0.0
    if scoring == "default" or answer == "unreadable":
        return None
    if family == PS:
        return 0.5 if answer == "Unclear" else None
    return 0.5


def load_judged(out: str | Path) -> dict[str, dict[int, list[dict[str, Any]]]]:
    """``{judge model: {grader run: records}}`` under ``out/judges`` (one record per item key)."""
    root = Path(out) / JUDGES_DIR
    found: dict[str, dict[int, list[dict[str, Any]]]] = {}
    if not root.is_dir():
        return found
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        for path in sorted(folder.glob("run_*.jsonl")):
            suffix = path.stem.split("_", 1)[1]
            if not suffix.isdigit():
                continue
            seen: set[str] = set()
            records = []
            for record in read_jsonl(path):
                key = record.get("key")
                if key and key not in seen:
                    seen.add(key)
                    records.append(record)
            if records:
                model = str(records[0].get("judge_model") or folder.name)
                found.setdefault(model, {})[int(suffix)] = records
    return found


def _followed(record: dict[str, Any]) -> bool:
    """The oracle offered moves and the builder played one (PS6 does not apply then)."""
    return bool(record.get("oracle_available")) and bool(record.get("followed_oracle"))


def _split_filter(split: str) -> Callable[[dict[str, Any]], bool]:
    if split == "followed":
        return _followed
    if split == "rejected":
        return lambda r: bool(r.get("oracle_available")) and not r.get("followed_oracle")
    if split == "no_oracle":
        return lambda r: not r.get("oracle_available")
    return lambda r: True


def _stats(per_run: dict[int, list[float]], counts: dict[str, int]) -> dict[str, Any]:
    pooled = [v for values in per_run.values() for v in values]
    mean, sem_items = mean_sem(pooled)
    run_means = [sum(v) / len(v) for v in per_run.values() if v]
    mean_runs, sem_runs = mean_sem(run_means)
    return {"mean": mean, "sem_items": sem_items, "n": len(pooled), "mean_runs": mean_runs,
            "sem_runs": sem_runs, "runs": len(run_means), "counts": counts}


def question_stats(
    by_run: dict[int, list[dict[str, Any]]], code: str, scoring: str = "default", split: str = "all"
) -> dict[str, Any]:
    """Mean ± SEM of one question (PS6 leaves out followed turns, as the paper does)."""
    family = code[:2]
    keep = _split_filter(split)
    counts = dict.fromkeys(COUNTED, 0)
    per_run: dict[int, list[float]] = {}
    for run, records in by_run.items():
        values = per_run.setdefault(run, [])
        for record in records:
            if record.get("family") == family and keep(record):
                values += _item_scores(record, family, (code,), scoring, counts)
    return _stats(per_run, counts)


def family_stats(
    by_run: dict[int, list[dict[str, Any]]], family: str, scoring: str = "default", split: str = "all"
) -> dict[str, Any]:
    """Mean ± SEM over items of each item's mean score on the family's questions."""
    keep = _split_filter(split)
    codes = [q.code for q in family_questions(family)]
    counts = dict.fromkeys(COUNTED, 0)
    per_run: dict[int, list[float]] = {}
    for run, records in by_run.items():
        values = per_run.setdefault(run, [])
        for record in records:
            if record.get("family") == family and keep(record):
                scores = _item_scores(record, family, codes, scoring, counts)
                if scores:
                    values.append(sum(scores) / len(scores))
    return _stats(per_run, counts)


def _item_scores(
    record: dict[str, Any], family: str, codes: Iterable[str], scoring: str, counts: dict[str, int]
) -> list[float]:
    """One judged item's scores on ``codes`` (PS6 left out on followed turns), counting every answer."""
    scores = []
    for code in codes:
        if code == "PS6" and _followed(record):
            continue
        answer = answer_of(record, code)
        counts[answer] += 1
        value = score(family, answer, scoring)
        if value is not None:
            scores.append(value)
    return scores


def score_table(
    by_run: dict[int, list[dict[str, Any]]], scoring: str = "default", codes: Iterable[str] | None = None
) -> dict[str, dict[str, Any]]:
    """Per question code and per family (``"SG"`` ...) their stats, for every family judged."""
    check_scoring(scoring)
    families = {r.get("family") for records in by_run.values() for r in records}
    out: dict[str, dict[str, Any]] = {}
    for question in QUESTIONS:
        if question.family in families and (codes is None or question.code in codes):
            out[question.code] = question_stats(by_run, question.code, scoring)
    for family in ("SG", "MM", "PS"):
        if family in families:
            out[family] = family_stats(by_run, family, scoring)
    return out


def is_nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)
