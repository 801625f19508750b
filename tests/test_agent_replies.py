"""Reading model replies in the agents: private drafts stay private (issue 15 #6), every followed seat is kept
(issue 11)."""

from __future__ import annotations

import pytest

from craft_env.text.replies import builder_action, parse_director_reply
from craft_env.text import parse_builder_reply
from fake_providers import install  # tests/ is on sys.path (conftest)


@pytest.mark.parametrize(
    "text, think, message",
    [
        (
            "<think>draft: <message>Put red on my left.</message></think><message>Nothing to add.</message>",
            "draft: <message>Put red on my left.</message>",
            "Nothing to add.",
        ),
        ("I should say red.</think><message>Blue on my right.</message>", "I should say red.",
         "Blue on my right."),
        (
            "<think>a</think>mid<think>b <message>no</message></think><message>yes</message>",
            "a\nb <message>no</message>",
            "yes",
        ),
        ("<think>reasoning<message>hi</message>", "reasoning", "hi"),
        ("<think>x</think>Put red on my left.", "x", "Put red on my left."),
    ],
)
def test_a_draft_inside_think_never_becomes_the_message(text, think, message):
    got_think, got_message, _ = parse_director_reply(text)
    assert got_message == message
    assert got_think == think


def test_a_draft_without_any_public_message_publishes_nothing():
    _, message, reason = parse_director_reply("<think>draft: <message>Put red on my left.</message></think>")
    assert message == "" and reason


def test_a_builder_draft_inside_think_is_not_played():
    sent, _, think, _ = builder_action(
        "<think>maybe <move>place gs (0,0) L0</move></think>\nMOVE: remove (1,1) L0", 3, 3
    )
    assert sent == "remove (1,1) L0" and "place gs" in think
    sent, _, _, _ = builder_action("draft MOVE: place gs (0,0) L0</think>\nQUESTION: which colour?", 3, 3)
    assert sent.startswith("QUESTION:")


@pytest.mark.parametrize(
    "text, seats",
    [
        ("MOVE: place gs (0,0) L0\nFOLLOWED: D3, D2", ("D3", "D2")),
        ("MOVE: place gs (0,0) L0\nFOLLOWED: D1 and D3", ("D1", "D3")),
        ("MOVE: place gs (0,0) L0\nFOLLOWED: director 2, director_2", ("D2",)),
        ("MOVE: place gs (0,0) L0\nFOLLOWED: none", ()),
        ('{"action":"place","block":"gs","position":"(0,0)","followed":["D2","D1"]}', ("D2", "D1")),
    ],
)
def test_every_followed_seat_is_kept(text, seats):
    assert parse_builder_reply(text).followed_seats == seats
    assert builder_action(text, 3, 3)[1] == seats


def test_the_agent_context_travels_with_the_request_not_in_a_global():
    """A provider reads the caller's context from the request's metadata (issue 14), not a registry."""
    import asyncio

    from craft_env.agents import llm as agent_llm
    from craft_env.models.llm import ModelClient, import_litellm
    from craft_env.eval.run.provider import request_context

    litellm = import_litellm()
    seen = []

    class Echo(litellm.CustomLLM):
        async def acompletion(self, model, messages, *args, **kwargs):
            seen.append(request_context(kwargs))
            message = {"role": "assistant", "content": "x"}
            return litellm.ModelResponse(model=model, choices=[{"message": message}])

    install("echo", Echo())
    assert not hasattr(agent_llm, "_IN_FLIGHT") and not hasattr(agent_llm, "context_for")
    context = object()
    messages = [{"role": "user", "content": "You are the builder."}]
    asyncio.run(ModelClient("echo/m").acomplete(messages, context=context))
    asyncio.run(ModelClient("echo/m").acomplete(messages))
    assert seen[0] is context and seen[1] is None
