"""Locks of issue 26: ``craft-env judge`` has one writer (#5); the lock file never follows a link (#6).

Two judges on one run once made two paid calls per item and wrote every
cache key twice; now the second stops at once, naming the holder. A lock
path that is a symbolic (or hard) link to another file once had that file
truncated and a pid written into it; now it is refused and the file is
untouched. Live processes are observed through files they write (a call
waiting at a gate: ``tests/gated_process.py``), never through time.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from gated_process import gated, wait_for  # tests/ is on sys.path (conftest)

from craft_env.cli import main
from craft_env.eval.run.lock import LOCK_NAME, RunLock
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("locks") / "run"
    run_benchmark(RunSettings(out=str(out), structures=[0], turns=2))
    return out


# ------------------------------------------------------------------ #5 one judge at a time


def test_a_second_judge_on_the_same_results_stops_at_once(scripted_run, tmp_path, capsys):
    args = ["judge", str(scripted_run), "--judge-model", "gated/judge", "--judges", "sg", "--no-progress"]
    first = gated(tmp_path, *args)
    wait_for(first, tmp_path / "waiting")
    code = main(args)
    (tmp_path / "gate").touch()
    first.communicate()
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    folder = scripted_run / "judges" / "gated__judge"
    assert err == [
        f"craft-env: error: judge folder {folder} is in use by another craft-env process (pid {first.pid})"
    ]
    assert first.returncode in (0, 1)  # the stand-in answers like a director: unreadable, not failed


def test_judges_of_two_models_may_run_at_once(scripted_run, tmp_path):
    with RunLock(scripted_run / "judges" / "gated__judge", "judge folder"):
        assert main(["judge", str(scripted_run), "--judge-model", "engine", "--no-progress"]) == 0


# ------------------------------------------------------------------ #6 a safe lock file


def test_a_lock_path_that_is_a_symbolic_link_is_refused_and_its_target_untouched(scripted_run, tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    lock = scripted_run / LOCK_NAME
    lock.unlink(missing_ok=True)
    lock.symlink_to(victim)
    try:
        assert main(["run", "--resume", "--out", str(scripted_run), "--no-progress", "--no-plots"]) == 2
    finally:
        lock.unlink()
    assert victim.read_text() == "precious\n"
    err = capsys.readouterr().err
    assert f"lock: {lock} is a link" in err and "Traceback" not in err


def test_a_lock_path_that_is_a_hard_link_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (tmp_path / "run").mkdir()
    os.link(victim, tmp_path / "run" / LOCK_NAME)
    with pytest.raises(ValueError, match="is a link"):
        RunLock(tmp_path / "run")
    assert victim.read_text() == "precious\n"


def test_the_lock_file_is_created_private(tmp_path):
    with RunLock(tmp_path / "run") as lock:
        assert (lock.path.stat().st_mode & 0o777) == 0o600
        assert lock.path.read_text() == str(os.getpid())


def test_run_files_that_are_links_are_not_written_through(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "run"
    (out / "run_1").mkdir(parents=True)
    (out / "run_1" / "log.jsonl").symlink_to(victim)
    code = main(["run", "--out", str(out), "--structures", "0", "--turns", "1", "--no-progress", "--no-plots"])
    assert code == 2 and victim.read_text() == "precious\n"
    assert "is a link" in capsys.readouterr().err
