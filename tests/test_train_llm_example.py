"""``examples/train_llm.py`` without the training extra: ``--help`` works, a run says how to install it."""

from __future__ import annotations

from examples_support import run_without  # tests/ is on sys.path (conftest)

EXTRA = ("torch", "transformers", "trl", "peft", "datasets", "accelerate")


def test_help_works_without_the_training_extra():
    done = run_without(EXTRA, "train_llm", "--help")
    assert done.returncode == 0, done.stderr
    assert "--lora" in done.stdout and "--method" in done.stdout and "--data" in done.stdout


def test_a_run_without_the_training_extra_says_how_to_install_it(tmp_path):
    done = run_without(EXTRA, "train_llm", "--data", str(tmp_path), "--model", str(tmp_path))
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "needs the training extra" in done.stderr and ".[train]" in done.stderr
