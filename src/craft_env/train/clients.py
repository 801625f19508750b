"""Chat clients for the language-model agents that do not call a model.

``craft_env.agents.llm``'s ``LLMDirector`` and ``LLMBuilder`` build a seat's
prompt, ask a client for the reply and read it. Giving them one of these
clients instead of a model keeps that code path whole (no second copy of the
prompts or the reply reading):

* ``ScriptedClient`` answers each call with the reply a script holds for the
  calling seat and turn (a logged game, played again: ``replay``);
* ``SeatClient`` hands each call's chat to whoever drives the game and waits
  for the reply (the learner in ``text_env``).

Both keep what they were asked (``calls`` / ``pending``), so the caller sees
exactly the chat the seat was given.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from craft_env.core.views import BUILDER
from craft_env.models.llm import Completion


def seat_of(context: Any) -> str:
    """The seat a call comes from: ``"builder"`` or the director's seat (``"D1"`` ..)."""
    return context.seat or BUILDER


@dataclass(frozen=True)
class Call:
    """One answered call: the calling seat, its 1-based turn, the chat it sent and the reply it got."""

    seat: str
    turn: int
    messages: list[dict[str, Any]]
    reply: str


class ScriptedClient:
    """Answers every call with the next reply ``replies[(seat, turn)]`` holds, in order.

    A seat that speaks twice in a turn (protocol ``paper``) gets that turn's
    replies one after the other. A call with no reply left raises
    ``LookupError`` naming the seat and turn: the game went further than
    the script.
    """

    def __init__(self, model: str, replies: dict[tuple[str, int], list[str]]) -> None:
        self.model = model
        self._replies = {key: list(texts) for key, texts in replies.items()}
        self.calls: list[Call] = []

    async def acomplete(self, messages: list[dict[str, Any]], context: Any = None) -> Completion:
        seat, turn = seat_of(context), int(context.turn)
        queue = self._replies.get((seat, turn))
        if not queue:
            raise LookupError(f"no reply left for {seat} at turn {turn}")
        text = queue.pop(0)
        self.calls.append(Call(seat, turn, messages, text))
        return Completion(text=text)


@dataclass
class Pending:
    """A call waiting for its reply: the chat the seat was given, its context, and the future to answer."""

    messages: list[dict[str, Any]]
    context: Any
    reply: asyncio.Future


class SeatClient:
    """The learner's seat: each call is posted as ``pending`` and waits until ``answer(text)``.

    ``on_call`` runs when a call is posted (the driver's signal that the
    game now waits for the learner); ``new_future`` makes the future a call
    waits on (default: the running loop's), so a driver that plays the game
    without running its loop knows the future when the game hands it over.
    """

    model = "learner"

    def __init__(
        self, on_call: Callable[[], None], new_future: Callable[[], asyncio.Future] | None = None
    ) -> None:
        self.pending: Pending | None = None
        self._on_call = on_call
        self._new_future = new_future

    async def acomplete(self, messages: list[dict[str, Any]], context: Any = None) -> Completion:
        new_future = self._new_future or asyncio.get_running_loop().create_future
        reply = new_future()
        self.pending = Pending(messages, context, reply)
        self._on_call()
        return Completion(text=await reply)

    def answer(self, text: str) -> None:
        """Give the waiting call its reply (the game goes on when the driver runs the loop)."""
        if self.pending is None:
            raise RuntimeError("no call is waiting for a reply")
        pending, self.pending = self.pending, None
        pending.reply.set_result(text)
