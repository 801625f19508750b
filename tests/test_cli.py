"""``craft-env``: run, report and generate from the command line, and its errors."""

from __future__ import annotations

import json

import pytest

from craft_env import load_structures
from craft_env.cli import main


def test_generate_writes_paper_json(tmp_path):
    path = tmp_path / "structures.json"
    assert main(["generate", "--n", "3", "--seed", "5", "-o", str(path)]) == 0
    structures = load_structures(path)
    assert len(structures) == 3 and structures[0].id == "structure_001"
    assert json.loads(path.read_text())[0]["director_views"]


def test_run_prints_table_one_and_report_rereads_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(["run", "--out", str(out), "--structures", "0,3", "--turns", "6", "--no-progress", "--no-plots"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "Table 1" in printed and "Prog." in printed and "run_1" in printed
    assert (out / "report.md").exists()
    assert main(["report", str(out), "--no-plots"]) == 0
    assert "Table 1" in capsys.readouterr().out
    config = json.loads((out / "config.json").read_text())
    assert config["structures"] == [0, 3] and config["turns"] == 6 and config["prompt_version"]


def test_run_with_a_dataset_file(tmp_path, capsys):
    dataset = tmp_path / "d.json"
    main(["generate", "--n", "2", "-o", str(dataset)])
    out = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--out",
                str(out),
                "--dataset",
                str(dataset),
                "--turns",
                "3",
                "--oracle-n",
                "0",
                "--no-progress",
                "--no-plots",
            ]
        )
        == 0
    )
    summary = json.loads((out / "run_1" / "summary.json").read_text())
    assert summary["games"] == 2


@pytest.mark.parametrize(
    "arguments, field",
    [
        (["--structures", "0,99"], "structures"),
        (["--structures", "a,b"], "structures"),
        (["--oracle-n", "-1"], "oracle_n"),
        (["--turns", "0"], "turns"),
        (["--start", "sideways"], "start"),
        (["--dataset", "/nonexistent/file.json"], "dataset"),
    ],
)
def test_bad_run_arguments_name_the_field(tmp_path, capsys, arguments, field):
    assert main(["run", "--out", str(tmp_path / "x"), "--no-progress", *arguments]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("craft-env: error:") and field in error and len(error.splitlines()) == 1


def test_a_missing_api_key_is_one_clear_line(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", "--out", str(tmp_path / "x"), "--director-model", "openai/gpt-4o-mini"]) == 2
    error = capsys.readouterr().err.strip()
    assert "OPENAI_API_KEY" in error and len(error.splitlines()) == 1
    assert not (tmp_path / "x").exists()


def test_resume_checks_its_arguments(tmp_path, capsys):
    out = tmp_path / "run"
    assert (
        main(["run", "--out", str(out), "--structures", "1", "--turns", "2", "--no-progress", "--no-plots"])
        == 0
    )
    capsys.readouterr()
    assert main(["run", "--out", str(out), "--no-progress"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["run", "--out", str(out), "--resume", "--turns", "9", "--no-progress"]) == 2
    assert "--turns" in capsys.readouterr().err
    assert main(["run", "--out", str(out), "--resume", "--turns", "2", "--no-progress", "--no-plots"]) == 0
    assert main(["run", "--resume", "--no-progress"]) == 2
    assert main(["run", "--out", str(tmp_path / "nothing"), "--resume"]) == 2


def test_run_works_without_rich(tmp_path, capsys, monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_rich(name, *args, **kwargs):
        if name.startswith("rich"):
            raise ImportError("no rich here")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_rich)
    assert (
        main(["run", "--out", str(tmp_path / "plain"), "--structures", "0", "--turns", "3", "--no-plots"])
        == 0
    )
    assert "| Run | Directors | Builder | Oracle | Prog." in capsys.readouterr().out
