"""The command line's start-up savings change nothing but time: numba's target loaded without the modules
no kernel uses (``core.jit.load_target_lean``) and the heap left to the system at exit (``cli.main``), both
only where the process is the command's own (``main()`` without arguments, as the console script calls it)."""

from __future__ import annotations

import gc
import subprocess
import sys

from craft_env.cli import main

#: In a fresh process: a one-game run through ``main``, then what it left out comes back on demand.
_RUN_THEN_USE_WHAT_WAS_LEFT_OUT = """
import sys
from craft_env.cli import main
sys.argv = ["craft-env", "run", "--runs", "1", "--structures", "0", "--no-plots", "--no-progress", "--out", sys.argv[1]]
assert main() == 0  # as the console script calls it
left_out = [name for name in ("scipy.linalg", "cffi") if name in sys.modules]
import numba
import numpy as np
import scipy.linalg
try:
    import cffi
    int_size = cffi.FFI().sizeof("int")
except ImportError:  # not a dependency of the package: nothing to check then
    int_size = 4

@numba.njit(cache=False)
def dot(a, b):
    return np.dot(a, b)

print(left_out, dot(np.arange(3.0), np.arange(3.0)), scipy.linalg.norm([3.0, 4.0]), int_size)
"""


def test_a_run_leaves_scipy_linalg_and_cffi_out_and_they_still_work_after(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _RUN_THEN_USE_WHAT_WAS_LEFT_OUT, str(tmp_path / "run")],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[] 5.0 5.0 4"
    assert (tmp_path / "run" / "run_1" / "log.jsonl").stat().st_size > 0


def test_only_the_process_command_line_freezes_the_heap(tmp_path, monkeypatch):
    assert gc.get_freeze_count() == 0  # nothing of the test process is frozen (unfreeze below undoes all)
    assert main(["generate", "--n", "1", "-o", str(tmp_path / "called.json")]) == 0  # a program's call
    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(sys, "argv", ["craft-env", "generate", "--n", "1", "-o", str(tmp_path / "command.json")])
    try:
        assert main() == 0  # the console script's call: the process ends next
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert (tmp_path / "command.json").read_bytes() == (tmp_path / "called.json").read_bytes()
