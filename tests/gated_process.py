"""A ``craft-env`` child process whose model calls wait at a gate, for tests that act while it is live.

Models named ``gated/...`` answer as the scripted team (``scripted/team``),
but only once the file ``gate`` exists; every call first touches the file
``waiting`` and writes a byte to a pipe the test holds. A test waits for that
byte (the process holds its lock and is inside a model call, with asyncio's
handlers in place), then signals it, or starts a rival, and finally touches
``gate``. Tests wait for such states, never for a time, and the wait is a
blocking read: it takes no processor time from the child under test (a
polling loop took a whole core and made the child's start minutes long on
a busy machine).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GATED = r"""
import asyncio, os, signal, sys
from pathlib import Path

# Ctrl-C is on, as in a terminal: a suite started in the background (a shell's `&`, nohup) hands its children
# SIGINT ignored, and then the SIGINT a test sends would be lost (the call ran into its timeout: exit 1, not 130).
signal.signal(signal.SIGINT, signal.default_int_handler)
from craft_env.models.llm import import_litellm
from craft_env.eval.run.provider import request_context, scripted_reply
from craft_env.models.cost import declare_free_provider

litellm = import_litellm()
declare_free_provider("gated")  # it answers as the free scripted team: no price warning on stderr
gate, waiting, ready = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])


class Gated(litellm.CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        waiting.touch()
        os.write(ready, b"w")
        while not gate.exists():
            await asyncio.sleep(0.02)
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        return litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}])


litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "gated", "custom_handler": Gated()}]
from craft_env.cli import main

sys.exit(main(sys.argv[4:]))
"""


class GatedProcess(subprocess.Popen):
    """A ``Popen`` that also holds the read end of the child's "waiting" pipe, closed once the child is reaped."""

    ready: int = -1

    def wait(self, timeout: float | None = None) -> int:
        code = super().wait(timeout)
        if self.ready >= 0:
            os.close(self.ready)
            self.ready = -1
        return code


def gated(folder: Path, *args: str) -> GatedProcess:
    """``craft-env ARGS`` with the gate ``folder/gate``, the marker ``folder/waiting`` and a "waiting" pipe."""
    ready, ready_child = os.pipe()
    try:
        process = GatedProcess(
            [sys.executable, "-c", GATED, str(folder / "gate"), str(folder / "waiting"), str(ready_child), *args],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, pass_fds=(ready_child,),
        )
    finally:
        os.close(ready_child)  # the child holds the only write end: its exit ends the test's read
    process.ready = ready
    return process


def wait_for(process: GatedProcess, path: Path) -> None:
    """Block until the process is inside a model call (it wrote to the pipe and made ``path``); fail if it
    ended first. A blocking read: no polling, no time limit of its own (pytest's timeout, if any, applies)."""
    if not os.read(process.ready, 1):
        stderr = process.stderr.read()
        process.wait()
        raise AssertionError(f"the process ended early: {stderr}")
    assert path.exists()


def gated_run(folder: Path, out: Path, *extra: str) -> GatedProcess:
    """A gated ``craft-env run`` of two short games into ``out``."""
    return gated(folder, "run", "--out", str(out), "--no-progress", "--no-plots", "--structures", "0,1",
                 "--turns", "2", "--director-model", "gated/team", "--builder-model", "gated/team", *extra)
