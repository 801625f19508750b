"""The guard against stale numba caches (``craft_env.core.caches``), run on import and by the test session."""

from __future__ import annotations

import os

from craft_env.core.caches import drop_stale_caches


def _package(tmp_path, source_time: float, cache_time: float):
    source = tmp_path / "pkg" / "kernels.py"
    cache = tmp_path / "pkg" / "__pycache__" / "kernels.f-10.py311.nbi"
    data = cache.with_suffix(".nbc")
    cache.parent.mkdir(parents=True)
    for path, when in ((source, source_time), (cache, cache_time), (data, cache_time)):
        path.write_text("x")
        os.utime(path, (when, when))
    return tmp_path / "pkg", cache, data


def test_caches_older_than_a_source_file_are_dropped(tmp_path):
    package, cache, data = _package(tmp_path, source_time=2_000_000, cache_time=1_000_000)
    assert drop_stale_caches(package) == 2
    assert not cache.exists() and not data.exists()


def test_caches_newer_than_every_source_file_are_kept(tmp_path):
    package, cache, data = _package(tmp_path, source_time=1_000_000, cache_time=2_000_000)
    assert drop_stale_caches(package) == 0
    assert cache.exists() and data.exists()
