"""The command line's start-up savings change nothing but time: ``import craft_env`` loads nothing heavy,
and where the process is the command's own (``main()`` without arguments, as the console script calls it)
cached kernels load without numba's registry (``core.jit.load_caches_lean``), the command line's imports are
not collected as they arrive, and the heap is left to the system at exit (``cli.main``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys

from craft_env.cli import main

#: In a fresh process: a one-game run through ``main``, then what it left out comes back on demand.
_RUN_THEN_USE_WHAT_WAS_LEFT_OUT = """
import sys
from craft_env.cli import main
sys.argv = ["craft-env", "run", "--runs", "1", "--structures", "0", "--no-plots", "--no-progress", "--out", sys.argv[1]]
assert main() == 0  # as the console script calls it
left_out = [name for name in ("numba.np.arraymath", "scipy.linalg", "cffi") if name in sys.modules]
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


def test_a_run_leaves_numba_registry_scipy_and_cffi_out_and_they_still_work_after(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", _RUN_THEN_USE_WHAT_WAS_LEFT_OUT, str(tmp_path / "run")],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "[] 5.0 5.0 4"
    assert (tmp_path / "run" / "run_1" / "log.jsonl").stat().st_size > 0


#: A kernel that allocates (numba's runtime), hashes a string (the hash secret's symbols) and calls another.
_KERNELS = """
import numpy as np
from numba import njit

@njit(cache=True)
def total(n):
    return np.arange(n).sum()

@njit(cache=True)
def kernel(n, word):
    return total(n) + hash(word) % 7
"""

#: In a fresh process: the kernels compiled and cached, as numba does by itself.
_FILL = "import sys; sys.path.insert(0, sys.argv[1]); from kernels import kernel; print(kernel(10, 'word'))"

#: In a fresh process: the cached kernel loaded lean, then a kernel compiled after it (numba's whole registry).
#: Whether the registry was loaded: numba's target context records each registry it installs.
_LOAD_LEAN = """
import sys
from craft_env.core.jit import load_caches_lean
sys.path.insert(0, sys.argv[1])
from kernels import kernel
assert load_caches_lean() and not load_caches_lean()
first = kernel(10, "word")
from numba.core.registry import cpu_target
registry = bool(cpu_target.target_context._registries)
import numba
import numpy as np
later = numba.njit(lambda a: np.dot(a, a))(np.arange(3.0))
print(first, registry, kernel.stats.cache_hits[kernel.signatures[0]], later, bool(cpu_target.target_context._registries))
"""


def test_a_cached_kernel_loads_without_numba_registry_and_compiling_after_still_works(tmp_path):
    (tmp_path / "kernels.py").write_text(_KERNELS)
    same_hash = {**os.environ, "PYTHONHASHSEED": "0"}
    fill = subprocess.run(
        [sys.executable, "-c", _FILL, str(tmp_path)], check=False, capture_output=True, text=True, timeout=300,
        env=same_hash,
    )
    assert fill.returncode == 0, fill.stderr
    done = subprocess.run(
        [sys.executable, "-c", _LOAD_LEAN, str(tmp_path)], check=False, capture_output=True, text=True, timeout=300,
        env=same_hash,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [fill.stdout.strip(), "False", "1", "5.0", "True"]


#: In a fresh process: what ``import craft_env`` loads, then every public name as it was when it loaded eagerly.
_IMPORT_THEN_NAMES = """
import sys
import craft_env
heavy = sorted(name for name in ("numpy", "numba", "craft_env.core", "pettingzoo") if name in sys.modules)
from craft_env import Move, Structure, load_eval_set, metrics, oracle, views
import craft_env.core.board, craft_env.core.metrics, craft_env.core.oracle, craft_env.core.views, craft_env.datasets
names = set(craft_env.__all__) <= set(dir(craft_env)) and all(getattr(craft_env, name) for name in craft_env.__all__)
print(
    heavy, names, Structure is craft_env.core.board.Structure, oracle is craft_env.core.oracle,
    metrics is craft_env.core.metrics, views is craft_env.core.views, craft_env.datasets.load_eval_set is load_eval_set,
    Move.__module__, len(load_eval_set()),
)
try:
    craft_env.no_such_name
except AttributeError as error:
    print(error)
"""


def test_import_craft_env_is_light_and_every_public_name_is_there():
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", _IMPORT_THEN_NAMES],
        check=False, capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "[] True True True True True True craft_env.core.moves 20",
        "module 'craft_env' has no attribute 'no_such_name'",
    ]


def test_only_the_process_command_line_freezes_the_heap(tmp_path, monkeypatch):
    assert gc.get_freeze_count() == 0  # nothing of the test process is frozen (unfreeze below undoes all)
    assert main(["generate", "--n", "1", "-o", str(tmp_path / "called.json")]) == 0  # a program's call
    assert gc.get_freeze_count() == 0
    monkeypatch.setattr(sys, "argv", ["craft-env", "generate", "--n", "1", "-o", str(tmp_path / "command.json")])
    try:
        assert main() == 0  # the console script's call: the process ends next
        assert gc.get_freeze_count() > 0
        assert gc.isenabled()  # paused while the command line's modules imported only
    finally:
        gc.unfreeze()
    assert (tmp_path / "command.json").read_bytes() == (tmp_path / "called.json").read_bytes()
