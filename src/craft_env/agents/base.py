"""The agent protocol: what a director or a builder is given, and what it answers.

The runner builds an ``AgentContext`` from the environment for the agent
whose turn it is. It carries the agent's own observation (the env's dict:
numeric ``"observation"``, ``"action_mask"`` and ``"text"``) and public
facts every player may know (board, conversation, the builder's candidates),
never another director's private wall or the target.

A director answers ``DirectorReply`` (a private ``think`` and a public
``message``); a builder answers ``BuilderReply`` (an action id or a line of
text for the environment, and which director it followed). Both carry a
``Usage`` for the model calls made to produce them (zero for built-in
agents). Every agent has an ``async act(context)``; built-in agents also
answer synchronously through ``decide(context)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.core.protocol import CRAFT
from craft_env.core.protocol import Protocol as Rules
from craft_env.core.views import DEFAULT_SEATS


@dataclass(frozen=True)
class Usage:
    """Accounting for the model calls behind one reply."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    latency: float = 0.0

    @classmethod
    def of(cls, completion: Any) -> Usage:
        """The usage of one model call (``completion``: prompt and completion tokens, cost, latency)."""
        return cls(
            calls=1,
            prompt_tokens=int(completion.prompt_tokens),
            completion_tokens=int(completion.completion_tokens),
            cost=float(completion.cost),
            latency=float(completion.latency),
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.calls + other.calls,
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.cost + other.cost,
            self.latency + other.latency,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost": round(self.cost, 10),
            "latency": round(self.latency, 6),
        }


#: The usage of a reply that called no model (immutable, so built-in agents share it).
NO_USAGE = Usage()


@dataclass(frozen=True, eq=False)
class AgentContext:
    """What one agent may know when it acts (see the module docstring).

    ``seat`` is ``"D0"``.. ``"D3"`` for a director and ``None`` for the
    builder; ``seats`` every seated director (``core.views``);
    ``candidates`` is the oracle's shortlist shown to the builder (``None``
    without the oracle condition, and always ``None`` for directors).
    ``structure_index`` and ``run`` identify the game (they fix a director's
    archetype); ``turn`` is 1-based. ``protocol`` is the rules of play
    (a ``core.protocol.Protocol``, resolved once by the run settings); ``tool`` is the builder's ``simulate_move`` tool
    (``agents.tools``), ``None`` without the tool condition.
    """

    agent: str
    seat: str | None
    observation: dict[str, Any]
    board: Structure
    conversation: tuple[dict[str, Any], ...]
    turn: int
    max_turns: int
    structure_index: int = 0
    run: int = 1
    candidates: tuple[Move, ...] | None = None
    archetype: str | None = None
    protocol: Rules = CRAFT
    tool: Any = None
    seats: tuple[str, ...] = DEFAULT_SEATS

    @property
    def n(self) -> int:
        return self.board.n

    @property
    def height(self) -> int:
        return self.board.height

    @property
    def text(self) -> str:
        return str(self.observation.get("text") or "")

    def messages_this_turn(self) -> list[tuple[str, str]]:
        """``(seat, text)`` of the directors who spoke so far in the current turn."""
        return [
            (entry["speaker"], entry.get("text") or "")
            for entry in self.conversation
            if entry.get("turn") == self.turn and entry.get("speaker") != "builder"
        ]


@dataclass(frozen=True)
class DirectorReply:
    """A director's turn: ``message`` is public, ``think`` private; ``raw`` is the model's whole reply.

    ``intent`` is the intent id a built-in director meant; ``reason`` says
    what was wrong with a model's reply (no tags, empty, cut short).
    """

    message: str
    think: str = ""
    raw: str | None = None
    intent: int | None = None
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class BuilderReply:
    """A builder's turn: ``action`` goes to the env (action id, move line or question).

    ``followed`` is the seat(s) the builder says it followed; ``reason`` is
    set when the agent already knows its reply could not be understood.
    ``tool_calls`` are the turn's ``simulate_move`` calls with their results.
    """

    action: int | str
    followed: tuple[str, ...] = ()
    think: str = ""
    raw: str | None = None
    reason: str | None = None
    usage: Usage = field(default_factory=Usage)
    tool_calls: tuple[dict[str, Any], ...] = ()


class GameStopped(Exception):
    """Raised by an agent to end its game before the end (a person typed ``quit``).

    The runner logs the game as ``stopped``: not finished, not an error.
    """


@runtime_checkable
class Director(Protocol):
    name: str

    async def act(self, context: AgentContext) -> DirectorReply: ...


@runtime_checkable
class Builder(Protocol):
    name: str

    async def act(self, context: AgentContext) -> BuilderReply: ...
