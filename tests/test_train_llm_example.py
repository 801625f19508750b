"""``examples/train_llm.py`` without the training extra: ``--help`` works, a run says how to install it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "train_llm.py"
# Run the example with the training libraries hidden, as on a machine without the extra.
WITHOUT_EXTRA = """
import sys
HIDDEN = ("torch", "transformers", "trl", "peft", "datasets", "accelerate")
class _Hidden:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in HIDDEN:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, _Hidden())
sys.argv = [sys.argv[1], *sys.argv[2:]]
import runpy
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", WITHOUT_EXTRA, str(EXAMPLE), *args],
                          capture_output=True, text=True, timeout=120)


def test_help_works_without_the_training_extra():
    done = _run("--help")
    assert done.returncode == 0, done.stderr
    assert "--lora" in done.stdout and "--method" in done.stdout and "--data" in done.stdout


def test_a_run_without_the_training_extra_says_how_to_install_it(tmp_path):
    done = _run("--data", str(tmp_path), "--model", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "needs the training extra" in done.stderr and ".[train]" in done.stderr
