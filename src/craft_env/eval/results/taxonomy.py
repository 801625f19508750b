"""The failure taxonomy (``docs/rules.md#failure-taxonomy``, the paper's Table 3) on logged moves.

Computed from log lines alone, on turns where the oracle offered moves:

* ``correct``: the builder's move was optimal;
* ``layer``: right cell(s) and block, wrong layer;
* ``span``: right colour on a right cell, wrong size or wrong partner of a
  large block;
* ``wrong_colour``: right cell(s) and size, wrong colour;
* ``wrong_position``: right block, wrong cell;
* ``other``: anything else (questions, unreadable replies, a removal where
  a placement was due, ...).

A non-optimal move is compared with every offered move and gets the most
specific category any of them supports (the order above).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

CATEGORIES = ("correct", "layer", "span", "wrong_colour", "wrong_position", "other")
_RANK = {name: rank for rank, name in enumerate(CATEGORIES)}


def _cells(move: dict[str, Any]) -> frozenset[str]:
    cells = {move.get("position")}
    if move.get("span_to"):
        cells.add(move["span_to"])
    return frozenset(c for c in cells if c)


def compare(move: dict[str, Any], offered: dict[str, Any]) -> str:
    """The category of a non-optimal ``move`` judged against one ``offered`` move."""
    action = move.get("action")
    if action != offered.get("action") or action not in ("place", "remove"):
        return "other"
    if action == "remove":
        return "layer" if move.get("position") == offered.get("position") else "wrong_position"
    block, want = move.get("block") or "", offered.get("block") or ""
    cells, want_cells = _cells(move), _cells(offered)
    if block == want and cells == want_cells:
        return "layer"
    if block[:1] == want[:1] and cells & want_cells:
        return "span"
    if block[1:] == want[1:] and cells == want_cells:
        return "wrong_colour"
    if block == want:
        return "wrong_position"
    return "other"


def classify(move: dict[str, Any] | None, optimal: bool, offered: Iterable[dict[str, Any]]) -> str:
    """The category of one turn's move (``None``: no move was made)."""
    if optimal:
        return "correct"
    if not move or move.get("action") not in ("place", "remove"):
        return "other"
    best = "other"
    for candidate in offered:
        found = compare(move, candidate)
        if _RANK[found] < _RANK[best]:
            best = found
    return best


def taxonomy(turns: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Fractions of each category over turns with offered moves, plus ``turns`` (their count).

    With no such turn every fraction is NaN (shown as "n/a"): there was nothing to classify.
    """
    counts = dict.fromkeys(CATEGORIES, 0)
    total = 0
    for turn in turns:
        offered = turn.get("oracle_moves") or []
        if not offered:
            continue
        total += 1
        counts[classify(turn.get("move_attempted"), bool(turn.get("optimal")), offered)] += 1
    out: dict[str, Any] = {name: (counts[name] / total if total else float("nan")) for name in CATEGORIES}
    out["turns"] = total
    return out
