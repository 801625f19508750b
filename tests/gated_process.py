"""A ``craft-env`` child process whose model calls wait at a gate, for tests that act while it is live.

Models named ``gated/...`` answer as the scripted team (``scripted/team``),
but only once the file ``gate`` exists; every call first touches the file
``waiting``. A test waits for ``waiting`` to appear (the process holds its
lock and is inside a model call, with asyncio's handlers in place), then
signals it, or starts a rival, and finally touches ``gate``. Tests wait for
such states, never for a time.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

GATED = r"""
import asyncio, sys
from pathlib import Path
from craft_env.models.llm import import_litellm
from craft_env.eval.run.provider import request_context, scripted_reply
from craft_env.models.cost import declare_free_provider

litellm = import_litellm()
declare_free_provider("gated")  # it answers as the free scripted team: no price warning on stderr
gate, waiting = Path(sys.argv[1]), Path(sys.argv[2])


class Gated(litellm.CustomLLM):
    async def acompletion(self, model, messages, *args, **kwargs):
        waiting.touch()
        while not gate.exists():
            await asyncio.sleep(0.02)
        text = scripted_reply("scripted/team", messages, request_context(kwargs))
        return litellm.ModelResponse(model=model, choices=[{"message": {"role": "assistant", "content": text}}])


litellm.custom_provider_map = [*litellm.custom_provider_map, {"provider": "gated", "custom_handler": Gated()}]
from craft_env.cli import main

sys.exit(main(sys.argv[3:]))
"""


def gated(folder: Path, *args: str) -> subprocess.Popen:
    """``craft-env ARGS`` with the gate ``folder/gate`` and the marker ``folder/waiting``."""
    return subprocess.Popen(
        [sys.executable, "-c", GATED, str(folder / "gate"), str(folder / "waiting"), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def wait_for(process: subprocess.Popen, path: Path) -> None:
    """Block until ``path`` exists (the process reached that state); fail if the process ended first."""
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(f"the process ended early: {process.stderr.read()}")
        os.sched_yield()


def gated_run(folder: Path, out: Path, *extra: str) -> subprocess.Popen:
    """A gated ``craft-env run`` of two short games into ``out``."""
    return gated(folder, "run", "--out", str(out), "--no-progress", "--no-plots", "--structures", "0,1",
                 "--turns", "2", "--director-model", "gated/team", "--builder-model", "gated/team", *extra)
