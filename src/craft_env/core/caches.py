"""Numba's on-disk caches of the core's kernels, dropped when a source file is newer than them.

Numba keys a cached kernel on its own source file only: after an edit (or a
``git pull``) to a kernel that kernels in other files call, the callers'
caches still hold the old code, and numba would run it. So when any source
file of ``craft_env.core`` is newer than the oldest cache entry, every
cache entry goes and the kernels compile again. Checked once, when
``craft_env.core`` is imported (a few ms of ``stat`` calls).
"""

from __future__ import annotations

import logging
from pathlib import Path

CORE = Path(__file__).resolve().parent
_log = logging.getLogger("craft_env")


def drop_stale_caches(package: Path = CORE) -> int:
    """Delete ``package``'s numba caches if any of its ``.py`` files is newer than them; returns how many."""
    try:
        caches = [path for pattern in ("*.nbi", "*.nbc") for path in package.rglob(f"__pycache__/{pattern}")]
        if not caches:
            return 0
        newest_source = max(path.stat().st_mtime for path in package.rglob("*.py"))
        if newest_source <= min(path.stat().st_mtime for path in caches):
            return 0
        for path in caches:
            path.unlink(missing_ok=True)
    except OSError as error:  # a read-only or vanishing install: numba copes with what is there
        _log.debug("numba caches not checked: %s", error)
        return 0
    _log.info("dropped %d numba cache files older than the sources of %s", len(caches), package.name)
    return len(caches)
