"""Editable installs compile the kernels, a reinstall too: three ``pip install -e`` into a new venv.

Slow (about 4 minutes of compiling on 2 cores, more on a busy machine), so it
runs only when ``CRAFT_ENV_INSTALL_TEST=1`` (docs/rl.md, "Preparing a
node"). The venv sees the system's packages, so pip installs only craft-env
(its build environment still comes from the package index). A copy of the
repository starts without numba caches; then:

1. the first install compiles every kernel;
2. a second one, nothing changed, finds them current and says so;
3. after a core source file changes (as a ``git pull`` does), a third
   compiles again. Before the fix the second and third installs said
   ``No module named 'craft_env'`` and compiled nothing.

After each, a new process in the venv compiles nothing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(
    os.environ.get("CRAFT_ENV_INSTALL_TEST") != "1", reason="slow: set CRAFT_ENV_INSTALL_TEST=1 to run"
)


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "NUMBA_CACHE_DIR")}
    # A new session has no terminal, so the build step writes its lines to stderr, which pip -v shows.
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          start_new_session=True)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


def _install(venv: Path, repo: Path) -> str:
    """``pip install -v -e repo`` in ``venv``; returns the build step's line about the kernels."""
    done = _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-v", "-e", str(repo)], repo.parent)
    output = done.stdout + done.stderr  # pip -v passes the build step's stderr on to its own
    lines = [line.strip() for line in output.splitlines() if line.strip().startswith("craft_env: ")]
    assert lines, output[-3000:]
    return lines[-1]


def _compiles_nothing(venv: Path, repo: Path) -> None:
    python = str(venv / "bin" / "python")
    where = _run([python, "-c", "import craft_env; print(craft_env.__file__)"], repo.parent).stdout
    assert Path(where.strip()).is_relative_to(repo / "src")
    again = _run([python, "-m", "craft_env.precompile"], repo.parent).stdout
    assert again.splitlines()[-1].endswith("kernels current, nothing compiled"), again


def test_editable_installs_compile_the_kernels_every_time(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(ROOT, repo, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "runs"))
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], tmp_path)

    first = _install(venv, repo)
    assert first.endswith(" s)") and " kernels compiled " in first, first
    _compiles_nothing(venv, repo)

    second = _install(venv, repo)
    assert "kernels current, nothing compiled" in second, second
    _compiles_nothing(venv, repo)

    (repo / "src" / "craft_env" / "core" / "rules.py").touch()  # newer than every cache entry
    third = _install(venv, repo)
    assert " kernels compiled " in third, third
    _compiles_nothing(venv, repo)
