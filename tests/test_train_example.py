"""``examples/train_builder.py``: a smoke run (a few PPO updates; skipped without torch), and its ``--help``
and install hint without torch."""

from __future__ import annotations

import pytest

from examples_support import load_example, run_without  # tests/ is on sys.path (conftest)


def test_training_example_runs_a_few_updates(capsys):
    pytest.importorskip("torch")
    example = load_example("train_builder")
    results = example.main([
        "--updates", "3", "--num-envs", "16", "--rollout", "6", "--minibatch", "48", "--epochs", "2",
        "--hidden", "32", "--eval-seeds", "1", "--log-every", "1", "--threads", "1",
    ])
    out = capsys.readouterr().out
    assert "update" in out and "bundled evaluation set" in out
    assert len([line for line in out.splitlines() if line.strip().startswith(("1 ", "2 ", "3 "))]) >= 3
    assert set(results) == {"random", "listener", "trained", "oracle"}
    assert results["oracle"]["progress"] == pytest.approx(1.0)
    assert results["random"]["progress"] < results["listener"]["progress"]
    assert all(r["games"] == 20 for r in results.values())


def _run_without_torch(*args: str):
    return run_without(("torch",), "train_builder", *args)


def test_training_example_help_works_without_torch():
    done = _run_without_torch("--help")
    assert done.returncode == 0, done.stderr
    assert "--num-envs" in done.stdout and "--minutes" in done.stdout


def test_training_example_without_torch_says_how_to_install_it():
    done = _run_without_torch("--updates", "1")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "needs torch" in done.stderr and "whl/cpu" in done.stderr
