"""Interrupt messages of issue 26 (#10): SIGTERM is Ctrl-C, and the message names only what exists.

``judge`` said "finish with --resume" but has no ``--resume``; a Ctrl-C
before the run directory existed printed a resume command for a directory
never made; SIGTERM (schedulers, ``docker stop``) ended a run silently.
Signals are sent once the child is inside a model call (a file it writes),
never after a delay.
"""

from __future__ import annotations

import signal

import pytest
from gated_process import gated, gated_run, wait_for

from craft_env import cli
from craft_env.eval.run.runner import interrupted_note, run_benchmark
from craft_env.eval.run.settings import RunSettings


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path):
    out = tmp_path / "terminated"
    process = gated_run(tmp_path, out)
    wait_for(process, tmp_path / "waiting")
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate()
    assert process.returncode == 130, stderr
    line = _one_line(stderr)
    assert line.startswith("craft-env: interrupted; 0 turn(s) and 0 finished game(s) are saved in ")
    assert line.endswith(f"finish with: craft-env run --resume --out {out}")
    assert run_benchmark(RunSettings(out=str(out), director_model="scripted/team",
                                     builder_model="scripted/team", structures=[0, 1], turns=2),
                         resume=True)[0]["done"] == 2


def test_an_interrupt_before_the_run_exists_names_no_resume(tmp_path, monkeypatch, capsys):
    out = tmp_path / "never"

    def interrupted(settings):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_check_models", interrupted)  # Ctrl-C while the models are being checked
    code = cli.main(["run", "--out", str(out), "--director-model", "scripted/team", "--no-progress"])
    assert code == 130
    line = _one_line(capsys.readouterr().err)
    assert line == f"craft-env: interrupted; nothing was saved (no run was started in {out})"
    assert not out.exists()


def test_the_note_of_a_directory_without_a_run_has_no_resume_command(tmp_path):
    (tmp_path / "empty").mkdir()
    assert "--resume" not in interrupted_note(tmp_path / "empty")
    assert "--resume" not in interrupted_note(tmp_path / "missing")


def test_an_interrupted_judge_says_how_it_finishes(tmp_path):
    out = tmp_path / "run"
    run_benchmark(RunSettings(out=str(out), structures=[0], turns=1))
    process = gated(tmp_path, "judge", str(out), "--judge-model", "gated/judge", "--judges", "sg",
                    "--no-progress")
    wait_for(process, tmp_path / "waiting")
    process.send_signal(signal.SIGINT)  # SIGTERM takes the same path (test_sigterm_stops_a_run_as_ctrl_c_does)
    _, stderr = process.communicate()
    assert process.returncode == 130, stderr
    line = _one_line(stderr)
    assert "--resume" not in line
    assert line == (f"craft-env: interrupted; 0 judged item(s) are saved in {out / 'judges' / 'gated__judge'}; "
                    "finish by running the same command again")
