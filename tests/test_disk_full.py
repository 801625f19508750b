"""A full disk during a run (issue 26, #4): a fault like a killed process, never a traceback.

The disk is simulated in-process: ``os.write`` to files under the run
directory fails with ``ENOSPC`` once a byte budget is spent (the writers
append with ``os.write``); "freeing space" lifts the budget. When a small
tmpfs can be mounted (root on Linux), the same run also fills a real one.
The run stops with one line that says what was saved and how to resume;
no ``*.tmp`` file is left; a resume after freeing space finishes every game.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from craft_env.eval.logs.games import read_games
from craft_env.eval.run.runner import load_settings, run_benchmark
from craft_env.models.jsonl import LogWriteError

RUN = ["run", "--director-model", "scripted/team", "--builder-model", "scripted/team", "--structures", "0,1",
       "--runs", "2", "--turns", "2", "--concurrency", "2", "--no-progress", "--no-plots"]

# ``craft-env ARGS`` in a process whose writes to files under OUT fail with ENOSPC after BUDGET bytes.
FULL_DISK = r"""
import errno, os, sys
out, budget = os.path.realpath(sys.argv[1]), int(sys.argv[2])
real_write, spent = os.write, [0]


def write(fd, data):
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        target = ""
    if target.startswith(out):
        spent[0] += len(data)
        if spent[0] > budget:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    return real_write(fd, data)


os.write = write
from craft_env.cli import main

sys.exit(main(sys.argv[3:]))
"""


def _finished(out: Path) -> int:
    return sum(
        g.status == "done" for log in out.glob("run_*/log.jsonl") for g in read_games(log).values()
    )


def test_a_full_disk_stops_the_run_with_one_line_and_a_resume_finishes_it(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-c", FULL_DISK, str(out), "12000", *RUN, "--out", str(out)],
        capture_output=True, text=True, timeout=900, check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 1, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith("craft-env: stopped: cannot write ") and "No space left on device" in line
    assert f"finish with: craft-env run --resume --out {out}" in line
    assert not list(out.rglob("*.tmp"))
    assert _finished(out) < 4
    (summary_1, summary_2) = run_benchmark(load_settings(out), resume=True)  # space freed
    assert summary_1["done"] == summary_2["done"] == 2 and _finished(out) == 4


def test_a_failed_write_leaves_no_torn_line_and_says_which_file(tmp_path, monkeypatch):
    from craft_env.models.jsonl import AppendOnlyJsonl, read_jsonl

    path = tmp_path / "log.jsonl"
    writer = AppendOnlyJsonl(path)
    writer.write({"n": 1})

    real = os.write

    def half_then_full(fd, data):
        real(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(LogWriteError, match=f"cannot write {path}: No space left on device"):
        writer.write({"n": 2, "text": "x" * 100})
    monkeypatch.undo()
    writer.write({"n": 3})
    writer.close()
    assert [r["n"] for r in read_jsonl(path)] == [1, 3]


def _mount_tmpfs(folder: Path, size: str) -> bool:
    folder.mkdir()
    if shutil.which("mount") is None or os.geteuid() != 0:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    return done.returncode == 0


def test_a_real_full_tmpfs(tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "24k"):
        pytest.skip("cannot mount a tmpfs here (needs root on Linux)")
    try:
        out = disk / "run"
        done = subprocess.run([sys.executable, "-m", "craft_env.cli", *RUN, "--out", str(out)],
                              capture_output=True, text=True, timeout=900, check=False)
        assert "Traceback" not in done.stderr and done.returncode == 1, done.stderr
        assert "No space left on device" in done.stderr and not list(out.rglob("*.tmp"))
        moved = tmp_path / "moved"
        shutil.copytree(out, moved)  # "free space": the run moves to a roomier disk and resumes there
    finally:
        subprocess.run(["umount", str(disk)], check=False)
    (summary_1, summary_2) = run_benchmark(load_settings(moved), resume=True)
    assert summary_1["done"] == summary_2["done"] == 2
