"""``craft-env export --format sft|dpo`` under hostile input (issue 35, items 15-17).

The output folder is checked before any game is replayed and replaced
whole; a game whose log cannot be replayed is skipped, named, and listed in
``export.json``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from craft_env.models.jsonl import LogWriteError
from craft_env.train import export
from craft_env.train.export import export_training_data


@pytest.fixture(scope="module")
def run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("hexport") / "run"
    run_benchmark(RunSettings(out=str(out), structures="0,1,2", turns=4, runs=1))
    return out


def _no_replay(monkeypatch) -> None:
    def refuse(run):
        raise AssertionError("a game was replayed before the output was checked")

    monkeypatch.setattr(export, "finished_games", refuse)


def _cli(*args: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "craft_env.cli", "export", *args]
    return subprocess.run(command, capture_output=True, text=True)


def test_an_unsplit_export_leaves_no_stale_valid_file(run, tmp_path):
    out = tmp_path / "out"
    export_training_data([run], "sft", out, split_by="structure", valid=0.34)
    assert (out / "valid.jsonl").exists()
    manifest = export_training_data([run], "sft", out)
    assert sorted(p.name for p in out.iterdir()) == ["export.json", "train.jsonl"]
    assert json.loads((out / "export.json").read_text()) == manifest and manifest["split_by"] is None


def test_a_folder_holding_other_files_is_refused_before_the_replay(run, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    _no_replay(monkeypatch)
    with pytest.raises(ValueError, match=r"output: .*notes\.txt.*new or empty directory"):
        export_training_data([run], "sft", out)
    assert [p.name for p in out.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("name", ["train.jsonl", "export.json", "valid.jsonl.tmp"])
def test_a_planted_link_is_refused_and_its_target_kept(run, tmp_path, monkeypatch, name):
    out, victim = tmp_path / "out", tmp_path / "victim.txt"
    victim.write_text("precious")
    out.mkdir()
    (out / name).symlink_to(victim)
    _no_replay(monkeypatch)
    with pytest.raises(ValueError, match=rf"{name} \(not a regular file\)"):
        export_training_data([run], "sft", out)
    assert victim.read_text() == "precious" and (out / name).is_symlink()


def test_an_output_that_is_a_file_is_refused_at_once_with_exit_2(run, tmp_path):
    target = tmp_path / "taken"
    target.write_text("keep")
    done = _cli(str(run), "--format", "sft", "-o", str(target))
    assert done.returncode == 2 and "is a file" in done.stderr and "Traceback" not in done.stderr
    assert target.read_text() == "keep"


def test_a_full_disk_leaves_the_previous_export_whole(run, tmp_path, monkeypatch):
    out = tmp_path / "out"
    export_training_data([run], "sft", out, split_by="structure", valid=0.34)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    real_write, budget = os.write, [2_000]

    def write(fd, data):
        if os.readlink(f"/proc/self/fd/{fd}").startswith(os.path.realpath(out)):
            budget[0] -= len(data)
            if budget[0] < 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    with pytest.raises(LogWriteError, match=r"train\.jsonl: No space left"):
        export_training_data([run], "dpo", out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def _tamper(run: Path, copy: Path, change) -> None:
    """A copy of ``run`` whose structure-1 turn-1 line is ``change(line bytes, record)``."""
    shutil.copytree(run, copy)
    log = copy / "run_1" / "log.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    for k, line in enumerate(lines):
        record = json.loads(line)
        if record.get("kind") == "turn" and record["structure_index"] == 1 and record["turn_number"] == 1:
            lines[k] = change(line, record)
            break
    log.write_bytes(b"".join(lines))


def _field(update):
    def change(line, record):
        update(record)
        return (json.dumps(record) + "\n").encode()

    return change


FAULTS = {
    "torn": (lambda line, record: line[:40] + b"\n", "turn 1 is missing"),
    "not utf-8": (lambda line, record: line[:40] + b"\xff\xfe" + line[40:], "turn 1 is missing"),
    "responses as text": (
        _field(lambda r: r.update(director_responses="x")),
        "director_responses: expected a list",
    ),
    "no director": (
        _field(lambda r: r["director_responses"][0].pop("director")),
        r"director_responses\[0\]\.director",
    ),
    "order as text": (
        _field(lambda r: r["director_responses"][0].update(order="z")),
        r"director_responses\[0\]\.order: expected an integer, got 'z'",
    ),
    "followed as number": (_field(lambda r: r["builder"].update(followed=5)), "builder.followed"),
    "progress as text": (_field(lambda r: r["progress_data"].update(progress="x")), "progress_data.progress"),
    "replay departs": (
        _field(lambda r: r["progress_data"].update(progress=r["progress_data"]["progress"] + 0.5)),
        "the replay differs from the log in progress_data",
    ),
}


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_a_game_whose_log_cannot_be_replayed_is_skipped_and_named(run, tmp_path, fault):
    change, reason = FAULTS[fault]
    copy = tmp_path / "tampered"
    _tamper(run, copy, change)
    whole = export_training_data([run], "sft", tmp_path / "whole")
    manifest = export_training_data([copy], "sft", tmp_path / "out")
    [skipped] = manifest["skipped"]
    game = json.loads((run / "run_1" / "log.jsonl").read_text().splitlines()[0])["structure_id"]
    assert skipped["source"] == "tampered" and skipped["run"] == 1 and skipped["game"] != game
    assert skipped["line"].startswith("run_1/log.jsonl:") and skipped["line"].split(":")[1].isdigit()
    assert re.search(reason, skipped["reason"])
    kept = [json.loads(line) for line in (tmp_path / "out" / "train.jsonl").read_text().splitlines()]
    others = [
        json.loads(line)
        for line in (tmp_path / "whole" / "train.jsonl").read_text().splitlines()
        if json.loads(line)["meta"]["game"] != skipped["game"]
    ]
    assert [r["messages"] for r in kept] == [r["messages"] for r in others]
    assert len(kept) < whole["records"]["train"]
    assert json.loads((tmp_path / "out" / "export.json").read_text())["skipped"] == [skipped]


def test_the_command_line_names_the_skipped_game_without_a_traceback(run, tmp_path):
    copy = tmp_path / "tampered"
    _tamper(run, copy, FAULTS["order as text"][0])
    done = _cli(str(copy), "--format", "dpo", "-o", str(tmp_path / "out"))
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert "tampered run 1" in done.stderr and "run_1/log.jsonl:" in done.stderr
    assert "Skipped 1 game" in done.stdout


def test_when_every_game_is_skipped_nothing_is_written(run, tmp_path):
    copy = tmp_path / "tampered"
    shutil.copytree(run, copy)
    log = copy / "run_1" / "log.jsonl"
    log.write_text(log.read_text().replace('"order":', '"order":"z","was":'))
    with pytest.raises(ValueError, match="every finished game was skipped"):
        export_training_data([copy], "sft", tmp_path / "out")
    assert not (tmp_path / "out").exists()
