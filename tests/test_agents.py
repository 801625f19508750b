"""Agents: observation decoding, the scripted team's choices, prompts, archetypes, reply reading."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import numpy as np
import pytest

import craft_env
from craft_env import Move, Structure, load_eval_set
from craft_env.agents.base import AgentContext, Usage
from craft_env.agents.decode import apparent_wall, decode_board, decode_wall_view
from craft_env.text.replies import builder_action, parse_director_reply
from craft_env.agents.prompts import (
    ARCHETYPE_NAMES,
    PROMPT_VERSION,
    archetype_for,
    builder_messages,
    director_messages,
)
from craft_env.agents.random import RandomBuilder, RandomDirector
from craft_env.agents.scripted import ScriptedBuilder, ScriptedDirector, similarity, wall_target
from craft_env.core.encoding import action_table, value_colour
from craft_env.core.intents import intent_table
from craft_env.core.moves import action_to_move
from craft_env.core.oracle import optimal_moves

SEATS = ("D1", "D2", "D3")


def _director_obs(env, seat: str) -> dict:
    agent = f"director_{seat[1]}"
    return env.observe(agent)


def _context(env, agent: str, candidates=None) -> AgentContext:
    u = env.unwrapped
    seat = u.seat_of.get(agent)
    return AgentContext(
        agent=agent,
        seat=seat,
        observation=env.observe(agent),
        board=u.board,
        conversation=tuple(u.conversation),
        turn=u.turn + 1,
        max_turns=20,
        candidates=None if candidates is None else tuple(candidates),
    )


def _env(structure, **config):
    env = craft_env.env(message_mode="text", structure=structure, **config)
    env.reset(seed=3)
    return env


# ------------------------------------------------------------------ decoding


def test_decoded_board_and_wall_match_the_game():
    target = load_eval_set()[4]
    board = Structure.from_ascii(
        """
        layer 0
          yl  gl==gl
          ||
          yl  ..  os
          ..  ..  ..
        """
    )
    env = craft_env.env(message_mode="text", structure=target, start="empty")
    env.reset(seed=1)
    env.unwrapped.game.board[:] = board.array
    env.unwrapped.game.begin_turn()
    for seat in SEATS:
        obs = _director_obs(env, seat)["observation"]
        decoded = decode_board(obs, 3, 3)
        assert np.array_equal(decoded, board.array)
        view = decode_wall_view(obs, 3, 3)
        assert np.array_equal(view, apparent_wall(target.array, 3, seat))


@pytest.mark.parametrize("index", range(20))
def test_wall_target_shows_exactly_the_view(index):
    target = load_eval_set()[index]
    for seat in SEATS:
        view = apparent_wall(target.array, 3, seat)
        assert np.array_equal(apparent_wall(wall_target(view, seat, 3), 3, seat), view)


# ------------------------------------------------------------------ scripted director


def test_scripted_director_asks_for_its_lowest_leftmost_missing_block():
    target = Structure.from_ascii(
        """
        layer 0
          rs  bs  gs
          ..  ..  ..
          ..  ..  ys
        """
    )
    env = _env(target)
    reply = ScriptedDirector().decide(_context(env, "director_2"))
    # D2 sits on the far side: its left is (0,2), which holds green on the ground.
    assert "green" in reply.message and "small" in reply.message
    table = intent_table("D2", 3, 3)
    move_cell = action_table(3).cell_a[table.action[reply.intent]]
    assert int(move_cell) == 2  # cell (0,2)
    assert reply.think.startswith("slot 0 layer 0")


def test_scripted_director_asks_to_remove_a_wrong_block_and_says_nothing_when_done():
    target = Structure.from_ascii("layer 0\n  rs  ..  ..\n  ..  ..  ..\n  ..  ..  ..")
    env = _env(target)
    env.unwrapped.game.board[0, 0] = 2  # a small blue where red belongs
    env.unwrapped.game.begin_turn()
    reply = ScriptedDirector().decide(_context(env, "director_1"))
    assert reply.message.lower().startswith(("take", "remove"))
    assert "D1" not in reply.message
    env.unwrapped.game.board[0, 0] = 3
    env.unwrapped.game.begin_turn()
    quiet = ScriptedDirector().decide(_context(env, "director_1"))
    assert quiet.intent == 0 and quiet.think == "my wall matches the target"


@pytest.mark.parametrize("index", [0, 7, 13, 19])
def test_scripted_director_only_asks_for_moves_toward_its_wall(index):
    """On the empty board each director asks to place a block its target wall holds right there."""
    target = load_eval_set()[index]
    env = _env(target)
    for seat in SEATS:
        reply = ScriptedDirector().decide(_context(env, f"director_{seat[1]}"))
        table = intent_table(seat, 3, 3)
        action = int(table.action[reply.intent])
        assert action >= 0
        cell = int(action_table(3).cell_a[action])
        assert target.array[cell, 0] != 0
        assert value_colour(int(target.array[cell, 0])) == int(action_table(3).colour[action])


# ------------------------------------------------------------------ scripted builder


def test_scripted_builder_picks_the_candidate_the_directors_describe():
    target = load_eval_set()[2]
    env = _env(target, oracle_n=5)
    director = ScriptedDirector()
    heard_cells = []
    while env.agent_selection != "builder":
        agent = env.agent_selection
        reply = director.decide(_context(env, agent))
        env.step(reply.message)
        table = intent_table(env.unwrapped.seat_of[agent], 3, 3)
        if reply.intent:
            heard_cells.append(int(action_table(3).cell_a[table.action[reply.intent]]))
    candidates = env.unwrapped.candidates
    reply = ScriptedBuilder().decide(_context(env, "builder", candidates))
    assert reply.action in [m.to_action(3) for m in candidates]
    chosen = action_to_move(reply.action, 3)
    assert any(3 * i + j in heard_cells for i, j in chosen.cells) or not heard_cells
    assert reply.followed


def test_scripted_builder_without_oracle_plays_the_majority_legal_request():
    target = Structure.from_ascii("layer 0\n  rs  ..  ..\n  ..  ..  ..\n  ..  ..  ..")
    env = _env(target, director_order="fixed")
    for message in (
        "put a small red block on my left column, bottom layer",
        "nothing from me",
        "nothing from me",
    ):
        env.step(message)
    reply = ScriptedBuilder().decide(_context(env, "builder"))
    assert reply.action == Move.place("rs", (0, 0)).to_action(3)
    assert reply.followed == ("D1",)


def test_scripted_builder_passes_when_it_hears_nothing_possible():
    env = _env(0, director_order="fixed")
    for _ in range(3):
        env.step("hello there")
    reply = ScriptedBuilder().decide(_context(env, "builder"))
    assert reply.action == action_table(3).noop


def test_similarity_ranks_exact_over_partial_over_unrelated():
    table = action_table(3)
    exact = Move.place("rs", (0, 0)).to_action(3)
    domino = Move.place("rl", (0, 0), (0, 1)).to_action(3)
    elsewhere = Move.place("gs", (2, 2)).to_action(3)
    assert similarity(table, exact, 0, exact, 0) > similarity(table, exact, 0, domino, 0) > 0
    assert similarity(table, exact, 0, elsewhere, 0) == 0


def test_random_agents_stay_inside_their_masks_and_are_seeded():
    env = _env(0, oracle_n=5)
    context = _context(env, env.agent_selection)
    picks = [RandomDirector(seed=5).decide(context).intent for _ in range(3)]
    assert len(set(picks)) == 1
    assert context.observation["action_mask"][picks[0]] == 1
    while env.agent_selection != "builder":
        env.step("nothing")
    builder_context = _context(env, "builder", env.unwrapped.candidates)
    for seed in range(10):
        action = RandomBuilder(seed).decide(builder_context).action
        assert builder_context.observation["action_mask"][action] == 1


# ------------------------------------------------------------------ prompts


def test_archetypes_are_stable_and_all_used():
    assert archetype_for(0, 1, "D1") == archetype_for(0, 1, "D1")
    code = "from craft_env.agents.prompts import archetype_for; print(archetype_for(3, 2, 'D3'))"
    other_process = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other_process.stdout.strip() == archetype_for(3, 2, "D3")
    seen = {archetype_for(i, r, s) for i in range(20) for r in (1, 2, 3) for s in SEATS}
    assert seen == set(ARCHETYPE_NAMES)


def test_prompts_carry_role_archetype_format_and_observation():
    director = director_messages("OBSERVATION TEXT", "D2", "skeptical", 3, 3)
    assert director[0]["role"] == "system" and "director D2" in director[0]["content"]
    assert "skeptical" in director[0]["content"] and "<message>" in director[0]["content"]
    assert "OBSERVATION TEXT" in director[1]["content"]
    builder = builder_messages("BOARD", 3, 3, oracle=True)
    assert "MOVE:" in builder[0]["content"] and "FOLLOWED:" in builder[0]["content"]
    assert "candidate" in builder[0]["content"]
    assert (
        "candidate"
        not in builder_messages("BOARD", 3, 3, oracle=False)[0]["content"].lower().split("move syntax")[0]
    )
    assert PROMPT_VERSION
    with pytest.raises(ValueError, match="archetype"):
        director_messages("x", "D1", "grumpy", 3, 3)


def test_prompt_move_examples_parse():
    from craft_env.text import parse_move

    system = builder_messages("", 3, 3, oracle=True)[0]["content"]
    examples = [
        line.split("  ")[1]
        for line in system.splitlines()
        if line.startswith("  place") or line.startswith("  remove")
    ]
    assert len(examples) == 3
    for example in examples:
        parse_move(example, 3, 3)


# ------------------------------------------------------------------ reading replies


@pytest.mark.parametrize(
    "text, message, reason",
    [
        ("<think>hmm</think><message>Put red on my left.</message>", "Put red on my left.", None),
        ("<THINK>a</THINK>\n<Message>Blue here</Message>", "Blue here", None),
        ("```\n<think>x</think>\n<message>fenced</message>\n```", "fenced", None),
        ("<think>only thinking", "", "no <message> tag and nothing outside <think>"),
        ("Just put red on my left.", "Just put red on my left.", "no <message> tag"),
        ("<message>unclosed tag", "unclosed tag", None),
        ("", "", "empty reply"),
        ("<message></message>", "", "empty <message> tag"),
    ],
)
def test_parse_director_reply(text, message, reason):
    _, got, why = parse_director_reply(text)
    assert got == message
    assert (why is None) if reason is None else (why is not None and why.startswith(reason))


def test_parse_director_reply_cuts_huge_messages():
    _, message, reason = parse_director_reply("<message>" + "a " * 50000 + "</message>")
    assert len(message) <= 1200 and "cut" in reason


def test_builder_action_reads_moves_questions_and_garbage():
    sent, followed, think, reason = builder_action(
        "<think>ok</think>\nMOVE: place rs at (0,2) layer 0\nFOLLOWED: D3", 3, 3
    )
    assert sent == "place rs (0,2) L0" and followed == ("D3",) and think == "ok" and reason is None
    sent, _, _, reason = builder_action("QUESTION: which red?", 3, 3)
    assert sent.startswith("QUESTION:") and reason is None
    sent, _, _, reason = builder_action("%%% }{ nonsense", 3, 3)
    assert reason and "no move" in reason
    assert builder_action("", 3, 3)[3] == "empty reply"
    sent, _, _, reason = builder_action("z" * 100000, 3, 3)
    assert reason and len(sent) < 5000


def test_llm_agents_use_the_client_and_count_usage():
    from craft_env.agents.llm import LLMBuilder, LLMDirector

    class Fake:
        model = "fake/model"

        def __init__(self, reply):
            self.reply = reply
            self.seen = None

        async def acomplete(self, messages, context=None):
            self.seen = context

            class Completion:
                text = self.reply
                prompt_tokens, completion_tokens, cost, latency = 10, 5, 0.25, 0.5

            return Completion

    env = _env(0, oracle_n=5)
    agent = env.agent_selection
    client = Fake("<think>t</think><message>m</message>")
    reply = asyncio.run(LLMDirector(client).act(_context(env, agent)))
    assert (reply.think, reply.message, reply.reason) == ("t", "m", None)
    assert reply.usage == Usage(1, 10, 5, 0.25, 0.5)
    assert client.seen is not None and client.seen.agent == agent
    builder = asyncio.run(
        LLMBuilder(Fake("MOVE: pass")).act(_context(env, "builder", env.unwrapped.candidates))
    )
    assert builder.usage.calls == 1


def test_importing_agents_and_eval_does_not_import_litellm():
    code = (
        "import sys, craft_env, craft_env.agents, craft_env.agents.llm, craft_env.agents.scripted, "
        "craft_env.eval.run.runner, craft_env.eval.report.report, craft_env.cli; "
        "assert 'litellm' not in sys.modules, 'litellm imported'; "
        "assert 'matplotlib' not in sys.modules, 'matplotlib imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_optimal_moves_helper_still_available():
    assert optimal_moves(Structure.empty(), load_eval_set()[0])
