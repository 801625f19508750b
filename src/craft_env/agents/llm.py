"""Language-model agents: a director and a builder behind any litellm model.

The agent builds its prompt (``prompts``), asks its client for a reply and
reads the reply robustly. The client is injected: anything with
``async acomplete(messages)`` returning an object with ``text``,
``prompt_tokens``, ``completion_tokens``, ``cost`` and ``latency`` (the
runner passes ``craft_env.models.llm.ModelClient``), so this module never
imports litellm and is testable with a fake.

Replies are read by ``craft_env.text.replies`` (the one home of model-text
parsing): a director's ``<message>``, a builder's move as the canonical line
the environment judges, a question as ``QUESTION: ...``, and an unreadable
reply as raw text so that the environment fails the turn with the parse
error as its reason.

Each call carries the agent's ``AgentContext`` with the request
(``acomplete(messages, context=...)``; the model client hands it to
litellm as request metadata, never to the cache key), so the
``scripted/`` litellm provider can answer through the scripted agents,
which keeps the whole model path testable offline.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from typing import Any, Protocol

from craft_env.agents.base import AgentContext, BuilderReply, DirectorReply, Usage
from craft_env.agents.prompts import archetype_for, builder_messages, director_messages
from craft_env.agents.tools import tool_loop
from craft_env.text.replies import MAX_RAW_CHARS, builder_action, clip, parse_director_reply

#: Replies at least this long are read in a worker thread, off the event loop.
PARSE_OFF_LOOP_CHARS = 20000


class CompletionLike(Protocol):
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    latency: float


class ChatClient(Protocol):
    model: str

    async def acomplete(
        self, messages: list[dict[str, Any]], context: AgentContext | None = None
    ) -> CompletionLike: ...


def messages_key(messages: list[dict[str, Any]]) -> str:
    """A hash of the roles and contents of a chat (what a provider receives)."""
    blob = json.dumps([[m.get("role"), m.get("content")] for m in messages], ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


async def _read(parse, text: str, *args: Any):
    """``parse(text, *args)``, in a worker thread when ``text`` is long enough to stall other games."""
    if isinstance(text, str) and len(text) >= PARSE_OFF_LOOP_CHARS:
        return await asyncio.to_thread(parse, text, *args)
    return parse(text, *args)


# ---------------------------------------------------------------------- agents


class LLMDirector:
    """A director played by a language model."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = client.model

    async def act(self, context: AgentContext) -> DirectorReply:
        archetype = context.archetype or archetype_for(context.structure_index, context.run, context.seat)
        messages = director_messages(
            context.text, context.seat, archetype, context.n, context.height, context.protocol, context.seats
        )
        completion = await self.client.acomplete(messages, context=context)
        think, message, reason = await _read(parse_director_reply, completion.text)
        return DirectorReply(
            message=message,
            think=think,
            raw=clip(completion.text, MAX_RAW_CHARS),
            reason=reason,
            usage=Usage.of(completion),
        )


class LLMBuilder:
    """A builder played by a language model."""

    def __init__(self, client: ChatClient) -> None:
        self.client = client
        self.name = client.model

    async def act(self, context: AgentContext) -> BuilderReply:
        oracle = context.candidates is not None
        budget = context.tool.max_calls if context.tool is not None else 0
        messages = builder_messages(
            context.text, context.n, context.height, oracle, context.protocol, budget, context.seats
        )
        if context.tool is not None:

            completion, usage = await tool_loop(self.client, messages, context)
        else:
            completion = await self.client.acomplete(messages, context=context)
            usage = Usage.of(completion)
        tolerant = context.protocol.tolerant_span
        action, followed, think, reason = await _read(
            builder_action, completion.text, context.n, context.height, tolerant
        )
        return BuilderReply(
            action=action,
            followed=followed,
            think=think,
            raw=clip(completion.text, MAX_RAW_CHARS),
            reason=reason,
            usage=usage,
            tool_calls=tuple(context.tool.calls) if context.tool is not None else (),
        )
