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

Where the lines go: pip captures a build backend's output and shows it only
under ``-v``. So the start line, the progress (kernels compiled of the
total an empty cache needs, from ``precompile --progress``) and the result
go to the terminal pip runs in (``/dev/tty``: one line, rewritten); without
one, to pip's own output (its process's standard output, reopened through
``/proc`` on Linux) when that is a pipe (CI, Docker, ``| tee``) or a file
opened for appending (``>> log``): a line at most every ``EVERY`` seconds.
A file pip truncated (``> log``) is not written: pip writes at its own
offset and would overwrite the lines. Otherwise, and always under
``pip -v``, they go to stderr. Every other hook is setuptools' own.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # the other PEP 517 hooks, unchanged

SOURCE = Path(__file__).resolve().parent.parent / "src"
#: The child's program: this tree first on ``sys.path``, then ``craft_env.precompile`` with every group.
PRECOMPILE = (
    "import sys; sys.path.insert(0, sys.argv[1]); from craft_env.precompile import main; "
    "sys.exit(main(['--progress']))"
)
TERMINAL = "/dev/tty"
#: Seconds between two progress lines where a line cannot be rewritten (a pipe, a log file).
EVERY = 10.0
#: What an empty cache takes (measured: docs/environment.md, "Cold start"), for the start line.
ESTIMATE = "about 45 s of CPU: under a minute on an idle machine, longer on a busy one"


def _pip_output() -> TextIO | None:
    """pip's standard output, reopened, when lines appended to it stay where they are (module docstring)."""
    ours = os.fstat(1)
    for pid in (os.getppid(), *_grandparent()):
        path = f"/proc/{pid}/fd/1"
        try:
            theirs = os.stat(path)
        except OSError:
            return None
        if (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino):
            continue  # our own pipe: this process is not pip yet
        if stat.S_ISFIFO(theirs.st_mode) or stat.S_ISSOCK(theirs.st_mode):
            flags = os.O_WRONLY
        elif stat.S_ISREG(theirs.st_mode) and _appends(pid):
            flags = os.O_WRONLY | os.O_APPEND
        else:
            return None
        try:
            return open(os.open(path, flags | os.O_CLOEXEC), "w", encoding="utf-8")
        except OSError:
            return None
    return None


def _grandparent() -> tuple[int, ...]:
    try:
        fields = Path(f"/proc/{os.getppid()}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[1]),)
    except (OSError, IndexError, ValueError):
        return ()


def _appends(pid: int) -> bool:
    try:
        info = Path(f"/proc/{pid}/fdinfo/1").read_text()
        flags = next(line for line in info.splitlines() if line.startswith("flags:"))
        return bool(int(flags.split()[1], 8) & os.O_APPEND)
    except (OSError, StopIteration, IndexError, ValueError):
        return False


class _Reporter:
    """Shows the compile's lines where the person running pip sees them (see the module docstring)."""

    def __init__(self) -> None:
        self.rewrite = True
        try:
            self.stream: TextIO = open(TERMINAL, "w", encoding="utf-8")
        except OSError:
            self.rewrite = False
            self.stream = _pip_output() or sys.stderr
        if self.rewrite:
            self.stream.write("\n")  # off pip's spinner line
        self.start = time.perf_counter()
        self.shown = 0.0

    def line(self, text: str) -> None:
        prefix = "\r\033[K" if self.rewrite else ""
        self.stream.write(f"{prefix}craft_env: {text}\n")
        self.stream.flush()

    def progress(self, done: str) -> None:
        seconds = time.perf_counter() - self.start
        text = f"compiling kernels: {done} ({seconds:.0f} s)"
        if self.rewrite:
            self.stream.write(f"\r\033[Kcraft_env: {text}")
            self.stream.flush()
        elif seconds - self.shown >= EVERY:
            self.shown = seconds
            self.line(text)

    def close(self) -> None:
        if self.stream is not sys.stderr:
            self.stream.close()


def _compile_kernels() -> None:
    reporter = _Reporter()
    try:
        reporter.line(f"compiling the numba kernels ahead of time (if none is cached: {ESTIMATE})")
        with tempfile.TemporaryFile("w+", encoding="utf-8") as errors:
            child = subprocess.Popen(
                [sys.executable, "-c", PRECOMPILE, str(SOURCE)],
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
            )
            last = ""
            for output in child.stdout:
                if output.startswith("progress: "):
                    reporter.progress(output.split(" ", 1)[1].strip())
                elif output.strip():
                    last = output.strip()
            child.wait()
            errors.seek(0)
            tail = "\n".join(errors.read().strip().splitlines()[-5:])
        seconds = time.perf_counter() - reporter.start
        if child.returncode == 0 and last:
            state = last.split(", ", 1)[-1]  # precompile's last line: "total: S s, what it compiled"
            reporter.line(f"{state} ({seconds:.0f} s)")
        else:
            reporter.line(f"kernels not compiled ahead of time (they compile at first use):\n{tail}")
    finally:
        reporter.close()


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
    if os.environ.get("CRAFT_ENV_NO_PRECOMPILE") != "1":
        _compile_kernels()
    return name
