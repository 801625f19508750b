"""Reading a judge's reply: tolerant, never raising, never inventing an answer.

``parse_judge_reply(text, codes)`` looks for the answers in turn in: every
JSON object in the reply (code fences and prose around it are ignored;
the object with the most known codes wins), then ``SG1: yes - because``
style lines. Keys and answers are read case-blind (``"sg1"``,
``"yes"``, ``"n/a"``, ``"NA"``, ``"not applicable"``). A code the reply
does not answer, or answers with something that is not one of the four
answers, stays missing (``None``); a reply with no readable answer at all
is unreadable, with the reason, and its raw text is kept by the caller.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

MAX_REASON_CHARS = 500
_MAX_SCAN_CHARS = 200_000

_ANSWER_WORDS = {
    "yes": "Yes",
    "y": "Yes",
    "true": "Yes",
    "no": "No",
    "n": "No",
    "false": "No",
    "unclear": "Unclear",
    "unknown": "Unclear",
    "uncertain": "Unclear",
    "n/a": "N/A",
    "na": "N/A",
    "n.a.": "N/A",
    "not applicable": "N/A",
    "none": "N/A",
}
_LINE = re.compile(
    r"""["']?\b([A-Za-z]{2}\d{1,2})\b["']?\s*[:=\-.)]\s*["']?(yes|no|unclear|n/a|na|not\ applicable)\b["']?"""
    r"""[\s,;:.\-]*(.*)""",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Answer:
    answer: str
    reason: str = ""

    def to_dict(self) -> dict[str, str]:
        return {"answer": self.answer, "reason": self.reason}


@dataclass(frozen=True)
class ParsedReply:
    """``answers[code]`` is an ``Answer`` or ``None`` (missing); ``unreadable`` says why nothing was read."""

    answers: dict[str, Answer | None]
    unreadable: str | None = None

    @property
    def missing(self) -> list[str]:
        return [code for code, answer in self.answers.items() if answer is None]


def normalise_answer(value: Any) -> str | None:
    """``"Yes"``/``"No"``/``"Unclear"``/``"N/A"`` for any casing or common synonym, else ``None``."""
    if isinstance(value, bool):
        return "Yes" if value else "No"
    if not isinstance(value, str):
        return None
    word = value.strip().strip("\"'`*.!").strip().lower()
    return _ANSWER_WORDS.get(word)


def _json_objects(text: str) -> Iterator[dict[str, Any]]:
    """Every top-level JSON object that decodes, scanning from each ``{``."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            yield value
        start = text.find("{", end)


def _reason(value: Any) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=True, default=str)
    return " ".join(text.split())[:MAX_REASON_CHARS]


def _from_value(value: Any) -> Answer | None:
    if isinstance(value, dict):
        keys = {str(k).strip().lower(): v for k, v in value.items()}
        found = normalise_answer(keys.get("answer", keys.get("verdict", keys.get("label"))))
        if found is None:
            return None
        return Answer(found, _reason(keys.get("reason", keys.get("explanation", keys.get("rationale")))))
    found = normalise_answer(value)
    return Answer(found) if found is not None else None


def _from_mapping(data: dict[str, Any], codes: set[str], depth: int = 0) -> dict[str, Answer]:
    """Answers keyed by code, also inside wrappers like ``{"answers": {...}}`` (a few levels deep)."""
    out: dict[str, Answer] = {}
    for key, value in data.items():
        code = str(key).strip().upper()
        if code in codes:
            answer = _from_value(value)
            if answer is not None:
                out.setdefault(code, answer)
        elif isinstance(value, dict) and depth < 3:
            for code, answer in _from_mapping(value, codes, depth + 1).items():
                out.setdefault(code, answer)
    return out


def _from_lines(text: str, codes: set[str]) -> dict[str, Answer]:
    out: dict[str, Answer] = {}
    for match in _LINE.finditer(text):
        code = match.group(1).upper()
        answer = normalise_answer(match.group(2))
        if code in codes and answer is not None:
            out.setdefault(code, Answer(answer, _reason(match.group(3).strip().strip("\"',}"))))
    return out


def parse_judge_reply(text: object, codes: Iterable[str]) -> ParsedReply:
    """The answers to ``codes`` in ``text`` (see the module docstring). Never raises."""
    wanted = list(dict.fromkeys(str(c).upper() for c in codes))
    empty: dict[str, Answer | None] = dict.fromkeys(wanted)
    if not isinstance(text, str) or not text.strip():
        return ParsedReply(empty, "empty reply")
    body = text[:_MAX_SCAN_CHARS]
    best: dict[str, Answer] = {}
    for data in _json_objects(body):
        found = _from_mapping(data, set(wanted))
        if len(found) > len(best):
            best = found
    if len(best) < len(wanted):
        for code, answer in _from_lines(body, set(wanted)).items():
            best.setdefault(code, answer)
    if not best:
        return ParsedReply(empty, "no answer to any question code found in the reply")
    return ParsedReply({code: best.get(code) for code in wanted})
