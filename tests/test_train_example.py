"""``examples/train_builder.py``: a smoke run (a few PPO updates; skipped without torch), and its ``--help``
and install hint without torch."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
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


# Run the example with torch hidden: a meta path finder that refuses it, as on a machine without torch.
NO_TORCH = """
import sys
class _NoTorch:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError("No module named 'torch'", name="torch")
        return None
sys.meta_path.insert(0, _NoTorch())
sys.argv = [sys.argv[1], *sys.argv[2:]]
import runpy
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _run_without_torch(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", NO_TORCH, str(EXAMPLE), *args],
                          capture_output=True, text=True, timeout=120)


def test_training_example_help_works_without_torch():
    done = _run_without_torch("--help")
    assert done.returncode == 0, done.stderr
    assert "--num-envs" in done.stdout and "--minutes" in done.stdout


def test_training_example_without_torch_says_how_to_install_it():
    done = _run_without_torch("--updates", "1")
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "needs torch" in done.stderr and "whl/cpu" in done.stderr
