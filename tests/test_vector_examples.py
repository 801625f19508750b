"""The copy-paste PettingZoo loop in ``examples/`` runs as shown."""

from __future__ import annotations

import runpy
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_pettingzoo_loop_example_runs(capsys):
    runpy.run_path(str(EXAMPLES / "pettingzoo_loop.py"), run_name="__main__")
    assert "progress" in capsys.readouterr().out
