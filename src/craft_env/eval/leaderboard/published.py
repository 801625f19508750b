"""The paper's published Table 1 rows, as reference entries (docs/leaderboard.md, "Published rows").

``paper_table1.json`` beside this module holds the rows and values of the
paper's Table 1 exactly as the paper's text has them, with the citation:
the six frontier models (its open-weight rows are not in the text), mean
and SEM of Prog., Comp., Pos. Acc., IoU and Fail, and REMOVE and Gap
(printed without a sign). Nothing is filled in: a published entry has no
games, so its per-structure, complexity, taxonomy and behaviour cells are
empty, and its builder is not named (Table 1 does not name it).

They sit in the group of the paper's protocol on the paper's 20 structures
under the paper's condition (oracle 5, no tools, 20 turns).
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from craft_env.eval.leaderboard.entries import PUBLISHED, Condition, Entry

DATA_FILE = "paper_table1.json"
VALUES = ("progress", "completion", "position_accuracy", "iou", "fail")
PLAIN = ("remove", "gap")


def published_table() -> dict[str, Any]:
    """The shipped data file as plain data (citation, condition and rows)."""
    text = (resources.files("craft_env.eval.leaderboard") / DATA_FILE).read_text(encoding="utf-8")
    return json.loads(text)


def published_entries() -> list[Entry]:
    """One entry per published row, tagged ``published`` and with the paper's grouping."""
    table = published_table()
    condition = Condition(**{**table["condition"], "start": "empty"})
    entries = []
    for row in table["rows"]:
        summary: dict[str, Any] = {"games": table["games"]}
        for name in VALUES:
            summary[name], summary[name + "_sem"] = row[name], row[name + "_sem"]
        for name in PLAIN:
            summary[name] = row[name]
        entries.append(
            Entry(
                key=f"published/{row['model']}",
                director_model=row["model"],
                builder_model=None,
                kind=PUBLISHED,
                dataset=table["dataset"],
                protocol=table["protocol"],
                condition=condition,
                tags=[PUBLISHED, row["group"]],
                summary=summary,
                citation=table["citation"],
            )
        )
    return entries
