"""craft_env's build backend: setuptools', plus compiling the numba kernels after an editable install.

An editable install (``pip install -e .``) runs the package from this
source tree, where numba keeps its cache (``__pycache__`` beside each
source file). So ``build_editable`` compiles every kernel there, ahead of
time, with ``craft_env.precompile`` run from this tree: the first
``craft-env run`` then loads kernels instead of compiling them
(``docs/environment.md``, "Cold start"). A reinstall (after a ``git pull``)
runs it again: it compiles what changed, or finds every kernel current and
says so. A failure here never fails the install; the kernels then compile
at first use, as numba always does.

The source tree goes on ``sys.path`` inside the child process, not through
``PYTHONPATH``: pip's isolated build environment drops from ``sys.path``
every entry the target environment's ``.pth`` files add, and after a first
editable install that includes this very tree.

pip shows a build backend's output only under ``-v``, so the lines saying
what the compile does and how long it took go to the terminal pip runs in
(``/dev/tty``) when there is one, and to stderr (``pip -v``, pip's log)
otherwise. Every other hook is setuptools' own.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # the other PEP 517 hooks, unchanged

SOURCE = Path(__file__).resolve().parent.parent / "src"
#: The child's program: this tree first on ``sys.path``, then ``craft_env.precompile`` with every group.
PRECOMPILE = (
    "import sys; sys.path.insert(0, sys.argv[1]); from craft_env.precompile import main; sys.exit(main([]))"
)
TERMINAL = "/dev/tty"


def _say(line: str) -> None:
    """Show ``line`` to the person running pip: on their terminal if there is one, else on stderr."""
    try:
        with open(TERMINAL, "w", encoding="utf-8") as terminal:
            terminal.write(f"\n{line}\n")
            return
    except OSError:
        pass
    print(line, file=sys.stderr, flush=True)


def _compile_kernels() -> None:
    _say("craft_env: compiling the numba kernels ahead of time (about 2 minutes on 2 cores if none is cached)")
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PRECOMPILE, str(SOURCE)], capture_output=True, text=True, check=False
    )
    seconds = time.perf_counter() - start
    lines = done.stdout.strip().splitlines()
    if done.returncode == 0 and lines:
        state = lines[-1].split(", ", 1)[-1]  # precompile's last line: "total: S s, what it compiled"
        _say(f"craft_env: {state} ({seconds:.0f} s)")
    else:
        tail = "\n".join(done.stderr.strip().splitlines()[-5:])
        _say(f"craft_env: kernels not compiled ahead of time (they compile at first use):\n{tail}")


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if os.environ.get("CRAFT_ENV_NO_PRECOMPILE") != "1":
        _compile_kernels()
    return name
