"""One writer per directory: an advisory lock held while a process writes there (docs/robustness.md).

``RunLock(folder)`` takes an exclusive ``fcntl.flock`` on ``folder/.craft-env.lock``
and writes its pid into the file. A second ``craft-env`` process (a
``--resume`` started beside a live run, two resumes at once, two judges of
one model on one run) gets ``RunDirectoryInUse`` at once, before it reads or
writes anything. The operating system drops the lock when the holder exits
or is killed, so a crashed process never leaves the folder stuck; the stale
pid in the file is only a hint for the message.

The lock file is opened without following links (``O_NOFOLLOW``) and must
be a regular file with one name (no hard link), so a link planted at its
path cannot get another file truncated: it is refused with
``LinkRefused`` (``models.jsonl.open_no_follow``, which every run file goes
through). A new lock file is readable by its owner only.
"""

from __future__ import annotations

import os
from pathlib import Path

from craft_env.models.jsonl import LinkRefused, open_no_follow

LOCK_NAME = ".craft-env.lock"


class RunDirectoryInUse(ValueError):
    """Another process holds the lock."""


class RunLock:
    """The exclusive lock on one folder (a context manager; ``release`` is idempotent).

    ``what`` names the folder in the message a second process gets ("run directory", "judge folder").
    """

    def __init__(self, out: str | os.PathLike, what: str = "run directory") -> None:
        import fcntl

        self.path = Path(out) / LOCK_NAME
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_no_follow(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except LinkRefused as error:
            raise LinkRefused(f"lock: {error}") from None
        self._handle = os.fdopen(fd, "r+", encoding="ascii", errors="replace")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = self._handle.read(32).strip() or "unknown"
            self._handle.close()
            raise RunDirectoryInUse(
                f"{what} {os.fspath(out)} is in use by another craft-env process (pid {holder})"
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
