"""The board's main table and rank bands as Markdown (``--format md``), for a paper or a README.

One section per group (same dataset, protocol and condition): rank, band,
the entry, Table 1 with mean ± SEM, the complexity split where the group
has one, and the 95% interval of the difference to the next entry; then
the director behaviour measures of the entries that have logs behind them
(published rows have none), with the teammate formula. Text
from logs (model names) is escaped so it stays text in any Markdown
renderer: ``&``, ``<``, ``>``, ``|``, backticks, brackets and line breaks.
"""

from __future__ import annotations

import math
import re
from typing import Any

_SPECIAL = re.compile(r"[\\`*_\[\]|<>&]")
_ENTITY = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def escape_cell(value: Any) -> str:
    """``value`` as the text of one Markdown table cell (no markup, no line break, no column break)."""
    text = " ".join(str(value).split())
    return _SPECIAL.sub(lambda m: _ENTITY.get(m.group(), "\\" + m.group()), text)


def _num(value: Any, signed: bool = False) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _pm(mean: Any, sem: Any) -> str:
    if mean is None:
        return "—"
    return _num(mean) if sem is None else f"{mean:.3f} ± {sem:.3f}"


def _next(entry: dict[str, Any]) -> str:
    found = entry.get("next")
    if not found:
        return ""
    if found["method"] == "not comparable":
        return escape_cell(f"not comparable: {found.get('reason') or 'different structures'}")
    how = "paired" if found["method"] == "paired bootstrap" else "unpaired"
    return f"{_num(found['diff'], True)} [{_num(found['low'], True)}, {_num(found['high'], True)}] {how}"


BEHAVIOUR_HEADERS = {
    "teammate": "Teammate",
    "chatter": "Chatter",
    "broken_record": "Broken record",
    "panic": "Panic",
    "grounding": "Grounding",
    "recovery": "Recovery",
    "overthink": "Overthink",
}


def _behaviour_table(entries: list[dict[str, Any]], measures: list[str]) -> list[str]:
    """The behaviour measures of the entries that have them (the page's Director behaviour tab)."""
    rows = [e for e in entries if e.get("behaviour")]
    if not rows:
        return []
    names = [m for m in BEHAVIOUR_HEADERS if m in measures]
    headers = ["Rank", "Entry", *(BEHAVIOUR_HEADERS[m] for m in names)]
    lines = ["Director behaviour:", "", "| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    for e in rows:
        cells = [str(e["rank"]), escape_cell(e["label"]), *(_num(e["behaviour"].get(m)) for m in names)]
        lines.append("| " + " | ".join(cells) + " |")
    return [*lines, ""]


def board_markdown(data: dict[str, Any]) -> str:
    """The Markdown text of a board (``board.build_board``'s data)."""
    by_key = {e["key"]: e for e in data["entries"]}
    lines = [f"# {escape_cell(data['title'])}", ""]
    for group in data["groups"]:
        split = ["S", "M", "C"] if group["complexity"] else []
        builder = ["Builder"] if data["show_builder"] else []
        metrics = ["Prog.", "Comp.", "Pos. Acc.", "IoU", "Fail", "REMOVE", "Gap"]
        headers = ["Rank", "Band", "Entry", *builder, "Games", *metrics, *split, "Δ to next [95% interval]"]
        lines += [
            f"## {escape_cell(group['label'])}",
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "---|" * len(headers),
        ]
        for key in group["entries"]:
            e = by_key[key]
            m = e["m"]
            name = e["label"] + (" (published)" if e["kind"] == "published" else "")
            cells = [
                str(e["rank"]),
                str(e["band"]),
                escape_cell(name),
                *([escape_cell(e["builder"] or "—")] if builder else []),
                "—" if e["games"] is None else str(e["games"]),
                *[
                    _pm(m.get(k), m.get(k + "_sem"))
                    for k in ("progress", "completion", "position_accuracy", "iou", "fail")
                ],
                _num(m.get("remove")),
                _num(m.get("gap"), signed=e["kind"] != "published"),
            ]
            if split:
                cells += [_num((e["split"] or {}).get(c)) for c in ("simple", "medium", "complex")]
            cells.append(_next(e))
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
        lines += _behaviour_table([by_key[key] for key in group["entries"]], data["measures"])
    legend = (
        "Ordered by the mean over structures of each structure's mean progress over runs. Rank: 1 + "
        "the comparable entries of the group better with the whole 95% interval of the difference in "
        "progress above zero; a band holds neighbours whose interval contains zero or that are not "
        f"comparable. Paired: seeded bootstrap over shared structures ({data['bootstrap']['samples']} "
        "samples, runs resampled within); unpaired: difference ± 1.96 √(SEM² + SEM²), SEM over "
        "structures; not comparable: fewer than 2 shared structures, or means over different structures. "
        "— marks a value that does not exist for the row."
    )
    lines += [legend, ""]
    if any(e.get("behaviour") for e in data["entries"]):
        lines += [
            f"Director behaviour (docs/leaderboard.md): {escape_cell(data['teammate_formula'])}; chatter, broken "
            "record and panic are shares of messages (lower is better), grounding and recovery shares of replies "
            "and stalls (higher is better), overthink think characters per message character.",
            "",
        ]
    if data["published"]["shown"]:
        lines += [f"Published rows: {escape_cell(data['published']['citation'])}", ""]
    return "\n".join(lines)
