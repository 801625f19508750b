"""Judge-vs-judge agreement on the same items (the paper's Table 6).

Pairs are the (item, question) answers both judges gave (grader run 1 of
each; missing answers and unreadable replies are left out). Exact agreement
compares the four answers as labels; the linearly weighted kappa codes them
on an ordinal scale No 0 < Unclear = N/A 1 < Yes 2 (the paper leaves this
coding open; docs/judges.md). Spearman rho compares the two judges' mean
scores across run directories.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from craft_env.eval.judges.scoring import answer_of
from craft_env.eval.judges.questions import family_questions
from craft_env.eval.results.stats import NAN, weighted_kappa

ORDINAL = {"No": 0, "Unclear": 1, "N/A": 1, "Yes": 2}


def answer_pairs(
    a: Iterable[dict[str, Any]], b: Iterable[dict[str, Any]], family: str
) -> list[tuple[str, str]]:
    """The (judge a, judge b) answers to every question of ``family`` on items both judged."""
    theirs = {r["key"]: r for r in b if r.get("family") == family}
    pairs = []
    for record in a:
        other = theirs.get(record.get("key"))
        if record.get("family") != family or other is None:
            continue
        for question in family_questions(family):
            x, y = answer_of(record, question.code), answer_of(other, question.code)
            if x in ORDINAL and y in ORDINAL:
                pairs.append((x, y))
    return pairs


def agreement(pairs: list[tuple[str, str]]) -> dict[str, Any]:
    """``{"pairs", "exact", "kappa"}`` for answer pairs (NaN when there are none)."""
    if not pairs:
        return {"pairs": 0, "exact": NAN, "kappa": NAN}
    exact = sum(x == y for x, y in pairs) / len(pairs)
    kappa = weighted_kappa([ORDINAL[x] for x, _ in pairs], [ORDINAL[y] for _, y in pairs], 3)
    return {"pairs": len(pairs), "exact": exact, "kappa": kappa}
