"""Random agents: uniform over the action mask, the floor every team must beat.

Each agent owns a ``numpy`` generator seeded by the runner per game, so a
random team's games are as reproducible as the scripted team's.
"""

from __future__ import annotations

import numpy as np

from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply
from craft_env.core.intents import intent_table
from craft_env.text import intent_to_text


def _uniform(rng: np.random.Generator, mask: np.ndarray) -> int:
    allowed = np.flatnonzero(np.asarray(mask))
    return int(allowed[rng.integers(len(allowed))]) if len(allowed) else 0


class RandomDirector:
    """Says a uniformly random allowed intent, in words."""

    name = "random"
    #: It reads the numeric observation only (the runner renders it no text observation).
    reads_text = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, context: AgentContext) -> DirectorReply:
        intent = _uniform(self.rng, context.observation["action_mask"])
        table = intent_table(context.seat, context.n, context.height)
        return DirectorReply(message=intent_to_text(intent, table), think="random", intent=intent)

    async def act(self, context: AgentContext) -> DirectorReply:
        return self.decide(context)


class RandomBuilder:
    """Plays a uniformly random action allowed by its mask (the no-op included)."""

    name = "random"
    #: It reads the numeric observation only (the runner renders it no text observation).
    reads_text = False

    def __init__(self, seed: int | None = None) -> None:
        self.rng = np.random.default_rng(seed)

    def decide(self, context: AgentContext) -> BuilderReply:
        return BuilderReply(action=_uniform(self.rng, context.observation["action_mask"]), think="random")

    async def act(self, context: AgentContext) -> BuilderReply:
        return self.decide(context)
