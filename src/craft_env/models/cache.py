"""Record/replay cache of model calls, stored with the run as JSON Lines.

Each call is keyed by the sha256 of the canonical JSON of (model, messages,
sampling parameters); the API key and base URL are not part of the key.
A finished run can therefore be re-run offline and reproduce every reply,
token count and cost bit for bit; a resumed run does not pay twice for calls
it already made. Identical requests share one answer by design.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

from craft_env.models.jsonl import AppendOnlyJsonl, read_jsonl
from craft_env.models.redact import Redactor


def cache_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """sha256 hex digest of the canonical JSON of the request."""
    blob = json.dumps(
        {"model": model, "messages": messages, "params": params},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ReplayCache:
    """An append-only JSONL file of call records, loaded into memory at open.

    A record holds ``key``, ``model``, ``text``, ``prompt_tokens``,
    ``completion_tokens``, ``cost`` and ``latency``, and with
    ``--log-prompts`` the ``messages`` sent (redacted).
    """

    def __init__(self, path: str | os.PathLike, redactor: Redactor | None = None) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        for record in read_jsonl(path):
            if isinstance(record.get("key"), str) and isinstance(record.get("text"), str):
                self._records.setdefault(record["key"], record)
        self._writer = AppendOnlyJsonl(path, redactor)

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: str) -> bool:
        return key in self._records

    def records(self) -> list[dict[str, Any]]:
        """Every record, in the order first written."""
        return list(self._records.values())

    def get(self, key: str) -> dict[str, Any] | None:
        return self._records.get(key)

    def put(self, record: dict[str, Any]) -> None:
        """Store ``record`` (first write of a key wins) and append it to the file."""
        key = record["key"]
        if key in self._records:
            return
        self._records[key] = record
        self._writer.write(record)

    def close(self) -> None:
        self._writer.close()
