"""Judge prompts answered offline: the engine judge behind the ``scripted/`` litellm provider.

While a judge call is in flight its item is registered under the hash of
its messages (the same hash the agents' registry uses); the ``scripted/``
provider (``eval.run.provider``) asks ``offline_judge_reply`` first and answers with the engine judge's verdicts
as JSON, so ``craft-env judge --judge-model scripted/judge`` runs the whole
model path (client, cache, parser, results) without a network.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from craft_env.agents.llm import messages_key
from craft_env.eval.judges.engine import engine_reply
from craft_env.eval.judges.items import JudgedItem
from craft_env.eval.run.provider import answer_prompts_with

_IN_FLIGHT: dict[str, list[JudgedItem]] = {}


def _key(messages: list[dict[str, Any]]) -> str:
    return messages_key(messages)


@contextmanager
def registered(messages: list[dict[str, Any]], item: JudgedItem) -> Iterator[None]:
    """Register ``item`` as the one asking ``messages`` for the call's duration."""
    key = _key(messages)
    _IN_FLIGHT.setdefault(key, []).append(item)
    try:
        yield
    finally:
        waiting = [i for i in _IN_FLIGHT[key] if i is not item]
        if waiting:
            _IN_FLIGHT[key] = waiting
        else:
            del _IN_FLIGHT[key]


def offline_judge_reply(messages: list[dict[str, Any]]) -> str | None:
    """The engine judge's reply to a registered judge prompt; ``None`` for any other chat."""
    waiting = _IN_FLIGHT.get(_key(messages))
    if not waiting:
        return None
    return engine_reply(waiting[-1])


def _answer(messages: list[dict[str, Any]]) -> str | None:
    """``offline_judge_reply`` looked up at call time, so a test may replace it."""
    return offline_judge_reply(messages)


answer_prompts_with(_answer)
