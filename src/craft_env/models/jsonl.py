"""Append-only JSON Lines files that survive being killed mid-write.

Every JSON file the package writes is strict JSON (no ``NaN`` or
``Infinity`` tokens); ``json_safe`` is the one rule for the numbers JSON
cannot hold (docs/benchmark.md, "Numbers in JSON files"): NaN (a value that
is not defined, such as the SEM of one game) is ``null``, and an infinite
value (the paper's logs hold ``Infinity`` distances) is the string
``"Infinity"`` or ``"-Infinity"``.

Writers append one redacted JSON object per line and flush at once, so a
killed process loses at most the line it was writing. Readers skip a torn
(unparseable) line instead of failing, and ``AppendOnlyJsonl`` first cuts
such a torn tail off so that the next line starts on a fresh line.
"""

from __future__ import annotations

import json
import logging
import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from craft_env.models.redact import Redactor

log = logging.getLogger(__name__)


def json_safe(value: Any) -> Any:
    """A copy of nested dicts/lists/tuples with NaN as ``None`` and ±inf as ``"Infinity"``/``"-Infinity"``."""
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    return value


def dumps(record: dict[str, Any]) -> str:
    """Compact, key-sorted, ASCII-safe JSON: the same record gives the same bytes."""
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False)


def read_jsonl(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``path`` in order; torn or non-object lines are skipped with a warning."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                log.warning("%s:%d: skipping a torn or invalid line", path, number)
                continue
            if isinstance(record, dict):
                yield record


def _trim_torn_tail(path: Path) -> None:
    """Drop a final line without its newline (a write cut short by a kill)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    with path.open("rb+") as handle:
        data = handle.read()
        if data.endswith(b"\n"):
            return
        cut = data.rfind(b"\n") + 1
        log.warning("%s: dropping a torn last line of %d bytes", path, len(data) - cut)
        handle.truncate(cut)


class AppendOnlyJsonl:
    """Append redacted JSON lines to ``path``, flushing after each one."""

    def __init__(self, path: str | os.PathLike, redactor: Redactor | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        _trim_torn_tail(self.path)
        self._redact = redactor or Redactor()
        self._handle = self.path.open("a", encoding="utf-8")

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(self._redact.json_line(dumps(record)) + "\n")
        self._handle.flush()

    def close(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> AppendOnlyJsonl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
