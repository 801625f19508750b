"""The builder's ``simulate_move`` tool: try a move on a copy of the board before committing to one.

The paper's tool condition (``docs/benchmark.md``, "The paper's three
conditions"): a builder may call ``simulate_move`` at most ``max_calls``
times a turn (the paper: 3); each call answers what the environment would
say for that move (legal or the reason, progress and distance after)
without changing the board, and then the builder must answer with its
move. Like the paper's tool, the answer scores against the target, which
the builder otherwise never sees.

* ``TOOL_SCHEMA``: the OpenAI function-calling schema (passed through litellm).
* ``MoveSimulator``: one builder turn's tool, with its budget and the log of
  every call and result (written into the turn's log line).
* ``tool_loop``: a model builder's turn with the tool (``agents.llm``).
* ``ToolBuilder``: wraps a built-in builder so it uses the tool as well: it
  simulates its best guesses and keeps the best legal one (the offline path).
* ``scripted_tool_reply``: the same for the ``scripted/`` litellm provider.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from craft_env.core import metrics, oracle
from craft_env.agents.base import AgentContext, BuilderReply, Usage
from craft_env.agents.scripted import ScriptedBuilder
from craft_env.core.board import Structure, cached_move
from craft_env.core.encoding import action_table
from craft_env.core.protocol import Protocol, move_reason
from craft_env.text import ParseError, parse_builder_reply, parse_move

SIMULATE_MOVE = "simulate_move"
TOOL_SCHEMA: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": SIMULATE_MOVE,
        "description": (
            "Try one move on a copy of the current board without playing it. Returns whether the move "
            "is legal (or why not) and the progress and distance to the target after it."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "move": {
                    "type": "string",
                    "description": "one move, e.g. 'place gs (0,2) L0', 'place bl (1,0)-(2,0) L1', "
                    "'remove (2,2) L2' (or the PLACE:/REMOVE: line format)",
                }
            },
            "required": ["move"],
        },
    },
}


@dataclass
class MoveSimulator:
    """One builder turn's ``simulate_move`` tool (``board`` is never changed)."""

    board: Structure
    target: Structure
    protocol: Protocol
    max_calls: int = 3
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def remaining(self) -> int:
        return max(0, self.max_calls - len(self.calls))

    def simulate(self, move_text: str) -> dict[str, Any]:
        """What the environment would answer for ``move_text``; logged in ``calls``."""
        result: dict[str, Any]
        try:
            reply = parse_builder_reply(
                str(move_text), self.board.n, self.board.height, self.protocol.tolerant_span
            )
        except ParseError as error:
            result = {"legal": False, "reason": f"could not read the move: {error.reason}"}
        else:
            move = reply.move
            reason = None if move is None else move_reason(self.board, move, self.protocol)
            if move is None or reason is not None:
                result = {"move": None if move is None else str(move), "legal": False, "reason": reason}
            else:
                after = self.board if move.action == "noop" else self.board.apply(move)
                score = metrics.score(after, self.target)
                result = {
                    "move": str(move),
                    "legal": True,
                    "reason": None,
                    "progress": round(score["progress"], 6),
                    "distance": int(oracle.distance(after, self.target)),
                }
        self.calls.append({"name": SIMULATE_MOVE, "arguments": {"move": str(move_text)}, "result": result})
        return result

    def call(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run a tool call by name with JSON (or dict) arguments; a bad call is an answer, not an error."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments or "{}")
            except json.JSONDecodeError:
                arguments = {"move": arguments}
        if name != SIMULATE_MOVE or not isinstance(arguments, dict) or "move" not in arguments:
            result = {"legal": False, "reason": f"unknown tool call {name!r}; use {SIMULATE_MOVE}(move)"}
            self.calls.append({"name": str(name), "arguments": arguments, "result": result})
            return result
        return self.simulate(arguments["move"])

    def best(self) -> dict[str, Any] | None:
        """The legal simulated move with the highest progress (earliest on ties), or ``None``."""
        legal = [c for c in self.calls if c["result"].get("legal") and c["result"].get("move") != "noop"]
        return max(legal, key=lambda c: c["result"]["progress"], default=None)


def make_simulator(board: Structure, target: Structure, protocol: Protocol, max_calls: int) -> MoveSimulator:
    return MoveSimulator(board, target, protocol, max_calls)


# ---------------------------------------------------------------- model builders


async def tool_loop(client: Any, messages: list[dict[str, Any]], context: AgentContext) -> tuple[Any, Usage]:
    """Ask ``client``, with the tool, until it answers in text or the budget is spent: ``(completion, usage)``.

    A batch of calls larger than what is left of the budget is dropped and
    the final answer is asked for without tools (as the paper does).
    """
    simulator: MoveSimulator = context.tool
    usage = Usage()
    chat = list(messages)
    while True:
        tools = [TOOL_SCHEMA] if simulator.remaining > 0 else None
        snapshot = list(chat)
        completion = await (
            client.acomplete(snapshot, tools=tools, context=context)
            if tools
            else client.acomplete(snapshot, context=context)
        )
        usage += Usage.of(completion)
        calls = list(getattr(completion, "tool_calls", None) or ())
        if not calls or tools is None:
            return completion, usage
        if len(calls) > simulator.remaining:
            simulator.max_calls = len(simulator.calls)
            continue
        chat.append(
            {
                "role": "assistant",
                "content": completion.text or None,
                "tool_calls": [
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                    for c in calls
                ],
            }
        )
        for c in calls:
            result = simulator.call(c["name"], c["arguments"])
            chat.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(result)})


# -------------------------------------------------------------- built-in builders


def guesses(context: AgentContext, limit: int) -> list[int]:
    """The scripted builder's best guesses this turn (action ids, most votes first), at most ``limit``."""
    votes: dict[int, float] = {}
    for _, action, _, weight in ScriptedBuilder().hear(context):
        votes[action] = votes.get(action, 0.0) + weight
    ranked = sorted(votes, key=lambda a: (-votes[a], list(votes).index(a)))
    if context.candidates is not None:
        ranked += [m.to_action(context.n) for m in context.candidates if m.to_action(context.n) not in ranked]
    return ranked[:limit]


def move_line(context: AgentContext, action: int) -> str:
    """The canonical line of action id ``action`` at the layer the board implies."""
    board = context.board
    table = action_table(board.n)
    heights = board.heights().reshape(-1)
    layer = int(heights[table.cell_a[action]]) - (1 if table.kind[action] == 2 else 0)
    return str(cached_move(board.n, board.height, int(action), max(layer, 0)))


class ToolBuilder:
    """A built-in builder that simulates its best guesses first and plays the best legal one."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = getattr(inner, "name", "builder")

    def decide(self, context: AgentContext) -> BuilderReply:
        simulator: MoveSimulator | None = context.tool
        reply = self.inner.decide(context)
        if simulator is None:
            return reply
        for action in guesses(context, simulator.max_calls):
            simulator.simulate(move_line(context, action))
        best = simulator.best()
        if best is not None:
            chosen = parse_line(best["result"]["move"], context)
            if chosen != reply.action:
                reply = replace(
                    reply,
                    action=chosen,
                    think=f"simulated: {best['result']['move']} is legal, "
                    f"progress {best['result']['progress']:.3f}",
                )
        return replace(reply, tool_calls=tuple(simulator.calls))

    async def act(self, context: AgentContext) -> BuilderReply:
        return self.decide(context)


def parse_line(line: str, context: AgentContext) -> int:
    return parse_move(line, context.n, context.height).to_action(context.n)


def scripted_tool_reply(context: AgentContext, messages: list[dict[str, Any]], tools_offered: bool):
    """The ``scripted/`` provider's turn with the tool: ``("tool_calls", [...])`` or ``("text", reply)``.

    First call: simulate the scripted builder's guesses (within the budget);
    once results are back (or no tools are offered): the best legal one.
    """
    simulator: MoveSimulator = context.tool
    answered = any(m.get("role") == "tool" for m in messages)
    if tools_offered and not answered and simulator.remaining > 0:
        calls = [
            {
                "id": f"call_{k}",
                "name": SIMULATE_MOVE,
                "arguments": json.dumps({"move": move_line(context, a)}),
            }
            for k, a in enumerate(guesses(context, simulator.remaining))
        ]
        if calls:
            return "tool_calls", calls
    best = simulator.best()
    if best is None:
        return "text", None
    return "text", f"<think>simulated {len(simulator.calls)} move(s)</think>\nMOVE: {best['result']['move']}"
