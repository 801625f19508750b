"""Paper-log import faults of issue 26: sizes and indices bounded before allocation (#1), one file at a time (#2).

Each bad file below once took the whole import down (a traceback, or 20 GB
of memory for ``structure_index: 3000000``); now it is listed with the
field at fault while the good files import, and the exit status says so.
The memory bomb runs in a child process under ``RLIMIT_AS`` so that a
regression fails the test instead of the machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from paper_log_samples import memory_limited, paper_log, write_log  # tests/ is on sys.path (conftest)

from craft_env import load_eval_set
from craft_env.cli import main
from craft_env.eval.logs import paperlogs
from craft_env.eval.logs.games import read_games

TARGET = load_eval_set("paper")[0]


def test_a_good_log_imports(tmp_path, capsys):
    write_log(tmp_path / "in" / "good.json", paper_log())
    assert main(["import", str(tmp_path / "in"), "-o", str(tmp_path / "out")]) == 0
    games = read_games(tmp_path / "out" / "run_1" / "log.jsonl")
    assert [g.status for g in games.values()] == ["done"]


# ------------------------------------------------------------------ #1 bounded before allocation


def test_a_structure_index_of_3_000_000_is_an_error_naming_file_and_field_not_20_gb(tmp_path):
    path = write_log(tmp_path / "bomb.json", paper_log(structure_index=3_000_000))
    done = subprocess.run(
        [sys.executable, "-c", memory_limited(1_500), "import", str(path), "-o", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600, check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, done.stderr
    assert f"{path} game 1: experiment_info.structure_index: expected an int from 0 to 9,999, got 3000000" in (
        done.stderr
    )
    assert not (tmp_path / "out" / "structures.json").exists()


@pytest.mark.parametrize("index", [10**10, 2**63, -5, True, 2.5])
def test_other_structure_indices_out_of_range_are_errors_too(tmp_path, capsys, index):
    path = write_log(tmp_path / "bad.json", paper_log(structure_index=index))
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path} game 1: experiment_info.structure_index: expected an int from 0 to 9,999, got {index!r}" in err
    assert not (tmp_path / "out").exists()


def test_a_file_above_the_size_limit_is_refused_before_it_is_read(tmp_path, monkeypatch, capsys):
    path = write_log(tmp_path / "big.json", paper_log())
    monkeypatch.setattr(paperlogs, "MAX_PAPER_LOG_BYTES", 1000)
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert f"{path}: " in err and "above the limit of 1000 bytes" in err


# ------------------------------------------------------------------ #2 file by file


def _deep(depth: int) -> str:
    return '{"games": ' + "[" * depth + "]" * depth + "}"


BAD_FILES = {
    "deep": _deep(200_000),
    "oracle": paper_log(num_oracle={"n": 5}),
    "turn": paper_log(turn_number="1e999"),
    "negative": paper_log(structure_index=-5),
    "run": paper_log(run=10**30),
    "max_turns": paper_log(max_turns=[1]),
}
REASONS = {
    "deep": "nested deeper than",
    "oracle": "experiment_info.num_oracle: expected",
    "turn": "turn_number: expected",
    "negative": "experiment_info.structure_index: expected",
    "run": "experiment_info.run: expected",
    "max_turns": "experiment_info.max_turns: expected",
}


@pytest.mark.parametrize("bad", sorted(BAD_FILES))
def test_one_bad_file_does_not_stop_the_good_one(tmp_path, capsys, bad):
    folder = tmp_path / "in"
    write_log(folder / "a_good.json", paper_log())
    bad_path = write_log(folder / "b_bad.json", BAD_FILES[bad])
    code = main(["import", str(folder), "-o", str(tmp_path / "out")])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    games = read_games(tmp_path / "out" / "run_1" / "log.jsonl")
    assert code == 1, err
    assert [g.status for g in games.values()] == ["done"]
    (line,) = err.splitlines()
    assert re.fullmatch(rf"craft-env: skipped {re.escape(str(bad_path))}( game 1)?: .*{REASONS[bad]}.*", line)
    assert "1 file(s) could not be imported" in out


def test_odd_but_readable_values_import_as_failed_turns_and_valid_text(tmp_path, capsys):
    log = paper_log(structure_id="\ud800/..", layer="1e999")
    log["games"][0]["turns"][0]["director_responses"]["D1"]["public_message"] = "\udfff\x1b]0;title\x07"
    write_log(tmp_path / "odd.json", log)
    assert main(["import", str(tmp_path / "odd.json"), "-o", str(tmp_path / "out")]) == 0
    (game,) = read_games(tmp_path / "out" / "run_1" / "log.jsonl").values()
    assert game.structure_id == "\ufffd/.."
    first = game.turns[0]
    assert first["legal"] is False and "layer" in first["reason"]
    assert first["director_responses"][0]["message"] == "\ufffd\x1b]0;title\x07"
    assert main(["transcript", str(tmp_path / "out"), "--game", "0"]) == 0


def test_nothing_imported_is_an_error(tmp_path, capsys):
    folder = tmp_path / "in"
    write_log(folder / "crash.json", {"experiment_info": {}, "games": [{"error": "model crashed"}]})
    assert main(["import", str(folder), "-o", str(tmp_path / "out")]) == 2
    out, err = capsys.readouterr()
    assert "Imported into" not in out
    assert "nothing imported" in err
    assert not (tmp_path / "out" / "config.json").exists()


def test_a_bad_game_in_a_good_file_is_listed(tmp_path, capsys):
    log = paper_log()
    log["games"].append({"structure_id": "x", "target_structure": {"(9,9)": ["gs"]}})
    path = write_log(tmp_path / "two.json", log)
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert f"skipped {path} game 2: " in err


def test_report_of_paper_logs_skips_a_bad_file_with_a_warning(tmp_path, capsys, caplog):
    folder = tmp_path / "in"
    write_log(folder / "a_good.json", paper_log())
    write_log(folder / "b_bad.json", BAD_FILES["oracle"])
    assert main(["report", str(folder), "--out", str(tmp_path / "report"), "--no-plots"]) == 0
    assert "num_oracle" in caplog.text


def test_export_of_a_structure_id_with_a_slash_stays_in_its_folder(tmp_path, capsys):
    write_log(tmp_path / "in.json", paper_log(structure_id="../../escape/me"))
    assert main(["import", str(tmp_path / "in.json"), "-o", str(tmp_path / "run")]) == 0
    assert main(["export", str(tmp_path / "run"), "-o", str(tmp_path / "paper")]) == 0
    written = sorted(p for p in tmp_path.rglob("*.json") if "paper" in p.parts)
    assert len(written) == 1 and (tmp_path / "paper") in written[0].parents
    assert json.loads(written[0].read_text())["games"][0]["structure_id"] == "../../escape/me"
    assert not (tmp_path / "escape").exists()


def test_report_and_import_name_the_limits_in_the_docs():
    text = (Path(__file__).parents[1] / "docs" / "robustness.md").read_text(encoding="utf-8")
    assert f"{paperlogs.MAX_PAPER_LOG_BYTES // 2**20} MiB" in text
    assert f"{paperlogs.MAX_STRUCTURE_INDEX:,}" in text
