"""Small run directories for the training tests, played offline: logs whose turns cover every outcome.

``mixed_run``: directors through the ``scripted/team`` provider, the builder a
test provider (``mixed/``) whose reply depends on the turn: turn 1, 6, ...
an offered candidate (optimal), then that candidate claimed one layer too
high (illegal), a reply with no move (unreadable), a question, the last
candidate (optimal) and a pass; ``--log-prompts`` keeps every chat.
``scripted_run``: the scripted team without the oracle (legal moves that do
not shorten the plan, and passes).
"""

from __future__ import annotations

import re
from pathlib import Path

from fake_providers import install  # tests/ is on sys.path (conftest)

from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from craft_env.models.llm import import_litellm

CANDIDATE = re.compile(r"^\d+\. (.+)$", re.MULTILINE)
TURN = re.compile(r"Turn (\d+) of")


def mixed_reply(prompt: str) -> str:
    """The ``mixed/`` builder's reply to a builder prompt (see the module docstring)."""
    turn = int(TURN.search(prompt).group(1))
    candidates = CANDIDATE.findall(prompt)
    kind = (turn - 1) % 6
    if kind == 0:
        return f"<think>the first candidate</think>\nMOVE: {candidates[0]}\nFOLLOWED: D1"
    if kind == 1:
        wrong = re.sub(r"L(\d)$", lambda m: f"L{int(m.group(1)) + 1}", candidates[0])
        return f"MOVE: {wrong}\nFOLLOWED: D2"
    if kind == 2:
        return "<think>no idea</think>\nI am not sure what anyone wants."
    if kind == 3:
        return "QUESTION: which colour goes first?\nFOLLOWED: none"
    if kind == 4:
        return f"MOVE: {candidates[-1]}\nFOLLOWED: D3"
    return "MOVE: pass\nFOLLOWED: none"


def install_mixed_builder() -> None:
    litellm = import_litellm()

    class Mixed(litellm.CustomLLM):
        def completion(self, model, messages, *args, **kwargs):
            content = mixed_reply(messages[-1]["content"])
            return litellm.ModelResponse(
                model=model, choices=[{"message": {"role": "assistant", "content": content}}]
            )

        async def acompletion(self, model, messages, *args, **kwargs):
            return self.completion(model, messages, *args, **kwargs)

    install("mixed", Mixed())


def mixed_run(out: Path, **options) -> Path:
    install_mixed_builder()
    settings = dict(
        director_model="scripted/team",
        builder_model="mixed/builder",
        log_prompts=True,
        structures="0,1",
        turns=8,
    )
    run_benchmark(RunSettings(out=str(out), **{**settings, **options}))
    return out


def scripted_run(out: Path, **options) -> Path:
    settings = dict(oracle_n=0, structures="0,1,2", turns=10, runs=2)
    run_benchmark(RunSettings(out=str(out), **{**settings, **options}))
    return out
