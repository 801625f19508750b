"""craft_env's build backend: setuptools', plus compiling the numba kernels after an editable install.

An editable install (``pip install -e .``) runs the package from this
source tree, where numba keeps its cache (``__pycache__`` beside each
source file). So ``build_editable`` compiles every kernel there, ahead of
time, with ``python -m craft_env.precompile`` in the build environment:
the first ``craft-env run`` then loads kernels instead of compiling them
(``docs/environment.md``, "Cold start"). A failure here never fails the
install; the kernels then compile at first use, as numba always does.
Every other hook is setuptools' own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F401,F403 - the other PEP 517 hooks, unchanged

SOURCE = Path(__file__).resolve().parent.parent / "src"


def _compile_kernels() -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE), env.get("PYTHONPATH")]))
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "craft_env.precompile"], env=env, capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    if done.returncode == 0:
        print(f"craft_env: kernels compiled ahead of time in {seconds:.0f} s", file=sys.stderr)
    else:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        print(f"craft_env: kernels not compiled ahead of time (they compile at first use):\n{tail}",
              file=sys.stderr)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if os.environ.get("CRAFT_ENV_NO_PRECOMPILE") != "1":
        _compile_kernels()
    return name
