"""``craft_env.precompile`` compiles every kernel a user's run needs: afterwards a new process compiles nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from craft_env import precompile

HERE = Path(__file__).parent


def _run(args: list[str], cache: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, *args], env=env, cwd=cwd, capture_output=True, text=True, check=False)


def test_after_precompile_nothing_compiles(tmp_path):
    cache = tmp_path / "numba"
    done = _run(["-m", "craft_env.precompile", "--progress"], cache, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    progress = [line for line in lines if line.startswith("progress: ")]
    assert [line.split(":")[0] for line in lines if line not in progress] == [*precompile.GROUPS, "total"]
    # The build step's "kernels done / total" (issue 35, item 22): an empty cache compiles KERNELS.
    total = precompile.KERNELS
    assert lines[-1].endswith(f", {total} kernels compiled"), (lines[-1], "update precompile.KERNELS")
    assert progress == [f"progress: {k}/{total}" for k in range(1, total + 1)]
    check = _run([str(HERE / "precompile_workloads.py"), str(tmp_path / "runs")], cache, tmp_path)
    assert check.returncode == 0, check.stderr
    assert json.loads(check.stdout.splitlines()[-1]) == []
    again = _run(["-m", "craft_env.precompile"], cache, tmp_path)
    assert again.stdout.splitlines()[-1].endswith("kernels current, nothing compiled"), again.stdout


def test_unknown_group_is_a_clear_error():
    with pytest.raises(ValueError, match="groups: unknown group"):
        precompile.compile_kernels(["envs", "nope"])
