"""The ``scripted/`` litellm provider: the built-in agents behind a model name.

``litellm.completion(model="scripted/team", messages=...)`` answers through
the scripted agents (``scripted/random`` through the random agents), in the
same formats a language model is asked for. The agent that sent the
messages comes with the request (litellm metadata, see
``request_context``), so the whole
model path (prompts, litellm, retries, cache, reply parsing, logs) runs
offline and deterministically in tests and demos. Judge prompts
(``eval.judges``) are answered by the engine judge.

Importing this module registers it with the model client (``craft_env.models.llm.add_provider``), which adds it
to litellm on import.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from craft_env.agents.llm import messages_key
from craft_env.agents.prompts import builder_reply, director_reply
from craft_env.agents.random import RandomBuilder, RandomDirector
from craft_env.agents.scripted import ScriptedBuilder, ScriptedDirector
from craft_env.agents.tools import scripted_tool_reply
from craft_env.core.board import cached_move
from craft_env.core.encoding import action_table
from craft_env.core.rules import landing_layer_at
from craft_env.models.cost import declare_free_provider
from craft_env.models.llm import CONTEXT_KEY, add_provider

PROVIDER = "scripted"
#: Answerers tried before the agents: each takes the messages and returns a reply, or ``None`` when the chat is
#: not its own (the engine judge adds one: ``eval.judges.offline``).
_prompt_answerers: list[Callable[[list[dict[str, Any]]], str | None]] = []


def answer_prompts_with(answerer: Callable[[list[dict[str, Any]]], str | None]) -> None:
    """Let ``answerer`` reply first to the chats it recognises (added once)."""
    if answerer not in _prompt_answerers:
        _prompt_answerers.append(answerer)


def request_context(handler_kwargs: dict[str, Any]) -> Any:
    """The ``AgentContext`` a request carries, from the keyword arguments litellm gives a custom handler."""
    params = handler_kwargs.get("litellm_params") or {}
    metadata = params.get("metadata") if isinstance(params, dict) else None
    return metadata.get(CONTEXT_KEY) if isinstance(metadata, dict) else None


def scripted_reply(model: str, messages: list[dict[str, Any]], context: Any = None, tools: Any = None) -> Any:
    """The reply the scripted (or random) agent gives for ``messages`` sent by ``context``.

    A builder with the ``simulate_move`` tool (``agents.tools``) answers
    with a list of tool calls first, then with the best legal move.
    """
    for answerer in _prompt_answerers:
        answered = answerer(messages)
        if answered is not None:
            return answered
    if context is None:
        return "<think>I was called without a game.</think>\n<message>I have nothing to add.</message>"
    randomised = model.split("/", 1)[-1].startswith("random")
    seed = int(messages_key(messages)[:15], 16) if randomised else None
    if context.seat is not None:
        director = RandomDirector(seed) if randomised else ScriptedDirector()
        reply = director.decide(context)
        return director_reply(reply.message, reply.think)
    if context.tool is not None:

        kind, answer = scripted_tool_reply(context, messages, bool(tools))
        if kind == "tool_calls" or answer is not None:
            return answer
    builder = RandomBuilder(seed) if randomised else ScriptedBuilder()
    reply = builder.decide(context)
    board = context.board

    table = action_table(board.n)
    if reply.action == table.noop:
        return builder_reply(None, reply.followed, reply.think, "Which block should I place next?")
    heights = board.heights().reshape(-1)
    layer = int(landing_layer_at(int(table.kind[reply.action]), int(heights[table.cell_a[reply.action]])))
    move = cached_move(board.n, board.height, int(reply.action), layer)
    return builder_reply(str(move), reply.followed, reply.think)


def _approximate_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _response(litellm: Any, model: str, messages: list[dict[str, Any]], kwargs: dict[str, Any]) -> Any:
    tools = (kwargs.get("optional_params") or {}).get("tools")
    answer = scripted_reply(model, messages, request_context(kwargs), tools)
    message: dict[str, Any] = {"role": "assistant", "content": answer}
    if isinstance(answer, list):  # tool calls
        message = {"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in answer
        ]}
    text = answer if isinstance(answer, str) else str(answer)
    prompt = sum(_approximate_tokens(str(m.get("content") or "")) for m in messages)
    completion = _approximate_tokens(text)
    finish = "tool_calls" if isinstance(answer, list) else "stop"
    return litellm.ModelResponse(
        id="scripted-" + hashlib.sha256(text.encode()).hexdigest()[:16],
        model=model,
        choices=[{"index": 0, "finish_reason": finish, "message": message}],
        usage={"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    )


def register_scripted_provider(litellm: Any) -> None:
    """Add the ``scripted`` provider to ``litellm.custom_provider_map`` (once)."""
    if any(item.get("provider") == PROVIDER for item in litellm.custom_provider_map):
        return
    from litellm import CustomLLM

    class ScriptedLLM(CustomLLM):
        """litellm custom handler answering through the built-in agents."""

        def completion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            return _response(litellm, model, messages, kwargs)

        async def acompletion(self, model: str, messages: list, *args: Any, **kwargs: Any) -> Any:
            return _response(litellm, model, messages, kwargs)

    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": PROVIDER, "custom_handler": ScriptedLLM()},
    ]


add_provider(register_scripted_provider)
declare_free_provider(PROVIDER)  # the built-in agents cost nothing: no price warning, --max-cost allowed
