"""The agents of one served game: a person's seat in the browser, and every seat watched by its session.

``Team`` gives ``runner.play_game`` its agents (``AgentFactory``'s
interface): a ``PersonSeat`` where a person plays, else the agent the
runner's own ``AgentFactory`` makes for the seat's kind. Each is wrapped
in ``Watched``, which tells the session (``session.GameSession``) when the
seat's turn starts and ends. ``recorded_replies`` reads a person's replies
back from the log, so a game resumed after a restart gives them again.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Any

from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply
from craft_env.core.views import BUILDER
from craft_env.eval.logs.games import LOG_NAME, run_dir
from craft_env.eval.run.runner import AgentFactory, GameSpec
from craft_env.models.jsonl import read_jsonl
from craft_env.web.seats import PERSON


def recorded_replies(out: Path, run: int, index: int) -> dict[tuple[str, int], list[Any]]:
    """Each seat's replies in the last unfinished attempt of game ``index``, by ``(seat, turn)``, in order."""
    records = [
        r for r in read_jsonl(run_dir(out, run) / LOG_NAME)
        if r.get("kind") == "turn" and r.get("structure_index") == index and r.get("run") == run
    ]
    if not records:
        return {}
    last = max(int(r.get("attempt", 1)) for r in records)
    turns = {int(r["turn_number"]): r for r in records if int(r.get("attempt", 1)) == last}
    replies: dict[tuple[str, int], list[Any]] = defaultdict(list)
    for number in sorted(turns):
        record = turns[number]
        for entry in sorted(record.get("director_responses") or (), key=lambda e: e.get("order", 0)):
            replies[(entry["director"], number)].append(
                DirectorReply(message=entry.get("message") or "", reason=entry.get("reason"))
            )
        builder = record.get("builder") or {}
        action = builder.get("sent") if builder.get("sent") is not None else builder.get("action_id")
        replies[(BUILDER, number)].append(BuilderReply(action=action, reason=builder.get("reason")))
    return replies


class PersonSeat:
    """A person at one seat, in a browser: the session asks, the page answers (module docstring)."""

    name = PERSON

    def __init__(self, session: Any, seat: str, recorded: dict[tuple[str, int], list[Any]]) -> None:
        self.session = session
        self.seat = seat
        self.recorded = recorded

    async def act(self, context: AgentContext) -> Any:
        again = self.recorded.get((self.seat, context.turn))
        if again:
            return again.pop(0)
        return await self.session.ask(self.seat, context)


class Watched:
    """Any seat's agent, reporting to the session when its turn starts and ends."""

    def __init__(self, agent: Any, session: Any, seat: str) -> None:
        self.agent = agent
        self.session = session
        self.seat = seat
        self.name = getattr(agent, "name", type(agent).__name__)

    async def act(self, context: AgentContext) -> Any:
        self.session.turn_starts(self.seat, context)
        await asyncio.sleep(0)  # a built-in agent never waits: the server answers requests between turns
        try:
            return await self.agent.act(context)
        finally:
            self.session.turn_ends(self.seat)


class Team:
    """The agents of one game, as ``runner.play_game`` asks for them (``AgentFactory``'s interface)."""

    needs_text = True

    def __init__(self, session: Any, factories: dict[str, AgentFactory], recorded: dict) -> None:
        self.session = session
        self.factories = factories
        self.recorded = recorded

    def _agent(self, spec: GameSpec, seat: str) -> Any:
        kind = self.session.setup.kinds[seat]
        if kind == PERSON:
            agent: Any = PersonSeat(self.session, seat, self.recorded)
        elif seat == BUILDER:
            agent = self.factories[kind].builder(spec)
        else:
            agent = self.factories[kind].director(spec, seat)
        return Watched(agent, self.session, seat)

    def director(self, spec: GameSpec, seat: str) -> Any:
        return self._agent(spec, seat)

    def builder(self, spec: GameSpec) -> Any:
        return self._agent(spec, BUILDER)
