"""Append-only JSON Lines files that survive being killed mid-write.

Every JSON file the package writes is strict JSON (no ``NaN`` or
``Infinity`` tokens); ``json_safe`` is the one rule for the numbers JSON
cannot hold (docs/benchmark.md, "Numbers in JSON files"): NaN (a value that
is not defined, such as the SEM of one game) is ``null``, and an infinite
value (the paper's logs hold ``Infinity`` distances) is the string
``"Infinity"`` or ``"-Infinity"``.

Writers append one redacted JSON object per line with one ``os.write``
each (nothing is buffered), so a killed process loses at most the line it
was writing. Readers skip a torn (unparseable) line instead of failing, and
``AppendOnlyJsonl`` first cuts such a torn tail off so that the next line
starts on a fresh line.

A write the system refuses (a full disk, a quota) cuts the file back to
its last whole line and raises ``LogWriteError`` naming the file: a fault
like a killed process, which the runner turns into one line and a resume
command (docs/robustness.md, "Run directories"). ``write_atomic`` writes a
whole file through a temporary that never outlives a failure. Files are
opened without following a symbolic link at their path, and a path that
is a link is refused (``LinkRefused``): a link planted in a run directory
cannot get another file written.
"""

from __future__ import annotations

import errno
import gc
import json
import logging
import math
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import orjson

from craft_env.models.redact import Redactor
from craft_env.text.clean import holds_surrogate_escape, valid_unicode_data

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


#: Every digit as ``0``: a line holds a run of 19 digits (an integer that may not fit in 64 bits, which
#: orjson would read as a float) when its translation holds ``_LONG_RUN`` (ten times as fast as a regex).
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_LONG_RUN = b"0" * 19
#: More opening brackets than this and a line may nest deeper than ``json`` reads (it raises
#: ``RecursionError`` near Python's recursion limit, where orjson reads on): ``json`` decides.
_MANY_BRACKETS = 256


def loads_line(raw: bytes, valid_text: bool = False) -> Any:
    """One JSON line, exactly as ``json.loads(raw.decode("utf-8"))`` reads it, only faster.

    orjson reads strict JSON three to four times as fast as the standard
    library and gives the same values (floats correctly rounded, the last of
    duplicate keys), except where it refuses (``NaN``/``Infinity`` tokens,
    lone surrogates) or reads what ``json`` would not: an integer beyond 64
    bits (as a float), nesting deeper than ``json`` goes. Those lines, and
    any holding a run of 19 or more digits or more than 256 opening
    brackets, are read by ``json`` itself. Raises what ``json.loads`` raises.

    With ``valid_text``, a line holding a lone surrogate (a log written
    before model text was made valid where it entered, docs/robustness.md
    "Model text") is read with its strings made valid. Only ``json`` reads
    such a line (orjson refuses it), so only its lines are looked at.
    """
    if (
        raw.count(b"[") + raw.count(b"{") <= _MANY_BRACKETS
        and _LONG_RUN not in raw.translate(_DIGITS_AS_ZERO)
    ):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    data = json.loads(raw.decode("utf-8"))
    return valid_unicode_data(data) if valid_text and holds_surrogate_escape(raw) else data


@contextmanager
def collection_paused() -> Iterator[None]:
    """Pause Python's cycle collector while a whole log is read into memory, and restore it after.

    Records read from JSON hold no reference cycles, so collecting while
    thousands of them pile up finds nothing, yet each pass walks every one
    still held: on the logs of ``benchmarks/bench_leaderboard.py`` reading
    with it paused took about half the CPU time. Memory is still freed by
    reference counting; a cycle made meanwhile waits for the next pass.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def read_jsonl(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The JSON objects of ``path`` in order, their text valid Unicode (``loads_line``); torn or non-object
    lines are skipped with a warning."""
    path = Path(path)
    if not path.exists():
        return
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, 1):
            if raw.isspace():
                continue
            try:
                record = loads_line(raw, valid_text=True)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
                log.warning("%s:%d: skipping a torn or invalid line", path, number)
                continue
            if isinstance(record, dict):
                yield record


class LinkRefused(ValueError):
    """A path craft-env would write is a link (or not a regular file): it is never written through."""


class LogWriteError(OSError):
    """The system refused a write (a full disk, a quota): the message names the file and the cause."""


def open_no_follow(path: str | os.PathLike, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of ``path`` that never follows a symbolic link at its last part and refuses a file with a
    second name (a hard link) or that is not a regular file: ``LinkRefused`` naming the path."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise LinkRefused(f"{os.fspath(path)} is a link; craft-env writes only files it creates "
                              "(remove the link)") from None
        raise
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        kind = "a link" if stat.S_ISREG(info.st_mode) else "not a regular file"
        raise LinkRefused(f"{os.fspath(path)} is {kind}; craft-env writes only files it creates (remove it)")
    return fd


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _refused(path: Path, error: OSError) -> LogWriteError:
    refused = LogWriteError(f"cannot write {os.fspath(path)}: {error.strerror or error}")
    refused.errno = error.errno
    return refused


def write_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` whole: a kill leaves the old file or the new one, a refused write leaves
    the old one and no temporary (``LogWriteError``)."""
    path = Path(path)
    data = text.encode("utf-8")  # text UTF-8 cannot encode is refused before any file is touched
    temporary = path.with_name(path.name + ".tmp")
    temporary.unlink(missing_ok=True)  # a stale temporary (or a link planted there) goes, its target stays
    fd = open_no_follow(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError as error:
        temporary.unlink(missing_ok=True)
        raise _refused(path, error) from None


def _trim_torn_tail(fd: int, path: Path) -> None:
    """Drop a final line without its newline (a write cut short by a kill)."""
    size = os.fstat(fd).st_size
    if size == 0:
        return
    data = os.pread(fd, size, 0)
    if data.endswith(b"\n"):
        return
    cut = data.rfind(b"\n") + 1
    log.warning("%s: dropping a torn last line of %d bytes", path, len(data) - cut)
    os.ftruncate(fd, cut)


class AppendOnlyJsonl:
    """Append redacted JSON lines to ``path``, one ``os.write`` each (see the module docstring)."""

    def __init__(self, path: str | os.PathLike, redactor: Redactor | None = None) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._redact = redactor or Redactor()
        self._fd = open_no_follow(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            _trim_torn_tail(self._fd, self.path)
        except OSError as error:
            os.close(self._fd)
            raise _refused(self.path, error) from None

    def write(self, record: dict[str, Any]) -> None:
        """Append ``record`` as one line; ``LogWriteError`` (the file cut back to its last line) if refused."""
        data = (self._redact.json_line(dumps(record)) + "\n").encode("utf-8")
        size = os.fstat(self._fd).st_size
        try:
            _write_all(self._fd, data)
        except OSError as error:
            try:
                os.ftruncate(self._fd, size)
            except OSError:  # the torn line is cut by the next open (``_trim_torn_tail``)
                pass
            raise _refused(self.path, error) from None

    @property
    def closed(self) -> bool:
        return self._fd < 0

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def __enter__(self) -> AppendOnlyJsonl:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
