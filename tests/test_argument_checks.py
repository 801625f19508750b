"""Arguments that were accepted and then wasted time or money, or ended in a traceback (issue 26, #9).

Each is now refused with one line that names the argument and what it
accepts, before anything is written (no run directory, no ``config.json``).
"""

from __future__ import annotations

import pytest

import craft_env
from craft_env.cli import main
from craft_env.eval.run.settings import RunSettings

RUN = ["run", "--no-progress", "--no-plots", "--structures", "0", "--turns", "1"]


def _refused(capsys, argv: list[str], *words: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("craft-env: error: "), err
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


@pytest.mark.parametrize(
    "flag, value, words",
    [
        ("--runs", "100000000000", ("runs:", "from 1 to 1,000")),
        ("--runs", "0", ("runs:", "from 1 to 1,000")),
        ("--oracle-n", "9223372036854775808", ("oracle_n:", "from 0 to 2,147,483,647")),
        ("--turns", "9223372036854775808", ("turns:", "from 1 to 2,147,483,647")),
        ("--timeout", "nan", ("timeout:", "finite")),
        ("--timeout", "inf", ("timeout:", "finite")),
        ("--timeout", "0", ("timeout:",)),
        ("--temperature", "nan", ("temperature:", "finite")),
        ("--temperature", "inf", ("temperature:", "finite")),
        ("--temperature", "-1", ("temperature:",)),
        ("--max-cost", "nan", ("max_cost:", "finite")),
        ("--max-cost", "inf", ("max_cost:", "finite")),
        ("--num-retries", "1000000", ("num_retries:", "from 0 to 100")),
    ],
)
def test_run_arguments_out_of_range_are_refused_before_anything_is_written(tmp_path, capsys, flag, value, words):
    out = tmp_path / "run"
    _refused(capsys, [*RUN, "--out", str(out), flag, value], *words)
    assert not out.exists()


def test_an_out_that_is_a_file_is_refused(tmp_path, capsys):
    path = tmp_path / "a_file"
    path.write_text("mine\n")
    _refused(capsys, [*RUN, "--out", str(path)], "out:", "is a file")
    assert path.read_text() == "mine\n"


def test_judge_timeouts_must_be_finite(tmp_path, capsys):
    _refused(capsys, ["judge", str(tmp_path), "--judge-model", "engine", "--timeout", "inf"], "timeout:", "finite")


@pytest.mark.parametrize("bad", ["missing_folder", "a_folder"])
def test_replay_transcript_and_generate_outputs_are_checked_first(tmp_path, capsys, bad):
    (tmp_path / "a_folder").mkdir()
    target = tmp_path / "nowhere" / "x.html" if bad == "missing_folder" else tmp_path / "a_folder"
    words = ("--output:", "does not exist") if bad == "missing_folder" else ("--output:", "is a directory")
    _refused(capsys, ["replay", str(tmp_path), "-o", str(target)], *words)
    _refused(capsys, ["transcript", str(tmp_path), "--game", "0", "-o", str(target)], *words)
    _refused(capsys, ["generate", "--n", "1", "-o", str(target)], *words)


def test_import_and_export_outputs_that_are_files_are_refused(tmp_path, capsys):
    path = tmp_path / "a_file"
    path.write_text("mine\n")
    _refused(capsys, ["import", str(tmp_path), "-o", str(path)], "--output:", "is a file")
    _refused(capsys, ["export", str(tmp_path), "-o", str(path)], "--output:", "is a file")
    assert path.read_text() == "mine\n"


@pytest.mark.parametrize("oracle_n", [2**63, 2**31])
def test_the_env_refuses_an_oracle_n_beyond_its_range_by_name(oracle_n):
    with pytest.raises(ValueError, match="oracle_n"):
        craft_env.env(oracle_n=oracle_n)


def test_settings_name_the_field_and_range():
    with pytest.raises(ValueError, match=r"runs: expected an int from 1 to 1,000, got 1001"):
        RunSettings(out="x", runs=1001)
