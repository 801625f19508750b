"""Smoke run of ``examples/train_builder.py`` (a few PPO updates); skipped when torch is not installed."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_builder.py"


def load_example():
    spec = importlib.util.spec_from_file_location("train_builder_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_training_example_runs_a_few_updates(capsys):
    pytest.importorskip("torch")
    example = load_example()
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
