"""One writer per run directory: an advisory lock held while a process writes there.

``RunLock(out)`` takes an exclusive ``fcntl.flock`` on ``out/.craft-env.lock``
and writes its pid into the file. A second ``craft-env`` process (a
``--resume`` started beside a live run, two resumes at once) gets
``RunDirectoryInUse`` at once, before it reads or writes anything. The
operating system drops the lock when the holder exits or is killed, so a
crashed run never leaves the directory stuck; the stale pid in the file is
only a hint for the message.
"""

from __future__ import annotations

import os
from pathlib import Path

LOCK_NAME = ".craft-env.lock"


class RunDirectoryInUse(ValueError):
    """Another process holds the run directory's lock."""


class RunLock:
    """The exclusive lock on one run directory (a context manager; ``release`` is idempotent)."""

    def __init__(self, out: str | os.PathLike) -> None:
        import fcntl

        self.path = Path(out) / LOCK_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(self.path, "a+", encoding="ascii")
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.seek(0)
            holder = self._handle.read().strip() or "unknown"
            self._handle.close()
            raise RunDirectoryInUse(
                f"run directory {os.fspath(out)} is in use by another craft-env process (pid {holder})"
            ) from None
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(str(os.getpid()))
        self._handle.flush()

    def release(self) -> None:
        if not self._handle.closed:
            self._handle.close()

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
