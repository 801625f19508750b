"""Every text parser runs in time linear in its input (issue 15, defect 1).

The inputs are the reproductions of the fault probe: long runs of spaces
inside a ``QUESTION``/``MOVE``/``FOLLOWED`` line, inside a JSON position,
after ``row``/``col``/``layer``/``colour``. Each is timed at two sizes and
the ratio must stay far below the quadratic one.
"""

from __future__ import annotations

import importlib
import pkgutil

import pytest
from parse_timing import LINEAR_LIMIT, PARSE_MEMOS, growth

import craft_env.text
from craft_env.core.intents import intent_table
from craft_env.text import parse_builder_reply, parse_director_message, parse_move, text_to_intent
from craft_env.text.replies import builder_action, parse_director_reply

D1 = intent_table("D1", 3, 3)

PARSERS = {
    "parse_builder_reply": parse_builder_reply,
    "parse_move": parse_move,
    "parse_director_message": lambda text: parse_director_message(text, "D1"),
    "text_to_intent": lambda text: text_to_intent(text, D1),
    "parse_director_reply": parse_director_reply,
    "builder_action": lambda text: builder_action(text, 3, 3),
}

INPUTS = {
    "question line": lambda k: "QUESTION" + " " * k + "x",
    "move line": lambda k: "MOVE" + " " * k + "x",
    "followed line": lambda k: "FOLLOWED" + " " * k + "x",
    "json position": lambda k: '{"action":"place","block":"gs","position":"col 1' + " " * k + 'x"}',
    "row": lambda k: "row 1" + " " * k + "x",
    "col": lambda k: "col" + " " * k + "1" + " " * k + "x",
    "layer": lambda k: "place gs (0,0) layer" + " " * k + "x",
    "colour": lambda k: "place colour" + " " * k + "x (0,0)",
    "lone l": lambda k: "l" + " " * k,
    "tabs and newlines": lambda k: "MOVE:" + " \t\n" * (k // 3) + "x",
}


def test_the_timing_forgets_every_parse_the_text_layer_remembers():
    """A memo missing from ``PARSE_MEMOS`` would let a timing look its text up instead of reading it."""
    memos = set()
    for module in pkgutil.iter_modules(craft_env.text.__path__, "craft_env.text."):
        for name, value in vars(importlib.import_module(module.name)).items():
            if name.startswith("_memo") and hasattr(value, "cache_clear"):
                memos.add(value)
    assert memos == set(PARSE_MEMOS)


@pytest.mark.parametrize("shape", list(INPUTS))
@pytest.mark.parametrize("parser", list(PARSERS))
def test_parsing_time_grows_linearly(parser, shape):
    ratio = growth(PARSERS[parser], INPUTS[shape])
    assert ratio < LINEAR_LIMIT, f"{parser} on {shape}: 10x the input took {ratio:.0f}x the time"


@pytest.mark.parametrize(
    "parser", ["parse_builder_reply", "parse_move", "parse_director_message", "text_to_intent"]
)
def test_a_megabyte_costs_what_the_parse_bound_costs(parser):
    """Beyond ``MAX_PARSE_CHARS`` a parser reads the head and the tail: 1 MB costs what 100 kB costs."""
    make = INPUTS["json position"]
    ratio = growth(PARSERS[parser], lambda k: "place gs (0,0) L0. " * (k // 19) + make(k // 10), 100_000)
    assert ratio < 4, f"{parser}: 1 MB took {ratio:.1f}x the time of 100 kB"


def test_a_bounded_reply_keeps_a_move_written_first_or_last():
    filler = "Let me think about the board. " * 40_000
    first = parse_builder_reply("<move>place gs (0,0) L0</move>\n" + filler)
    assert first.move == parse_move("place gs (0,0) L0")
    assert parse_builder_reply(filler + "\nMOVE: remove (1,1) L0").move == parse_move("remove (1,1) L0")


def test_long_replies_are_read_off_the_event_loop(monkeypatch):
    """A long reply is parsed in a worker thread so the other games' calls keep running."""
    import asyncio
    import threading

    from craft_env.agents import llm as agent_llm
    from craft_env.core.board import Structure

    threads = []
    real = agent_llm.builder_action

    def spy(text, *shape):
        threads.append(threading.current_thread() is threading.main_thread())
        return real(text, *shape)

    monkeypatch.setattr(agent_llm, "builder_action", spy)

    class Client:
        model = "fake/long"

        async def acomplete(self, messages, context=None):
            from craft_env.models.llm import Completion

            return Completion(text="x" * (agent_llm.PARSE_OFF_LOOP_CHARS + 1) + "\nMOVE: place gs (0,0) L0")

    context = agent_llm.AgentContext(
        agent="builder", seat=None, observation={"text": "board"}, board=Structure.empty(3, 3),
        conversation=(), turn=1, max_turns=5,
    )
    reply = asyncio.run(agent_llm.LLMBuilder(Client()).act(context))
    assert reply.action == "place gs (0,0) L0" and threads == [False]
