"""The text path's faster readings give what the plain ones give (issue 33, third round).

``tests/test_text_speed.py`` compares a 60-game run, its export and fixed
text-env games with digests written before the speed-ups; these check the
pieces on inputs those games do not reach: the runner's direct game against
the AEC env under protocol paper and other seats, remembered per-cell texts
and log records against their plain definitions, remembered reply readings,
and the scripted director's plain-list wall reading.
"""

from __future__ import annotations

import asyncio

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import craft_env
from craft_env.agents.base import BuilderReply
from craft_env.agents.decode import apparent_wall
from craft_env.agents.scripted import (
    ScriptedBuilder,
    ScriptedDirector,
    _describe_code,
    _first_difference,
    intent_texts,
)
from craft_env.core.board import _PARTNER_CELL, Structure
from craft_env.core.encoding import format_position, value_code
from craft_env.core.intents import intent_table
from craft_env.core.moves import Move
from craft_env.eval.run.runner import AgentFactory, game_specs, play_game
from craft_env.eval.run.runner import _context as context_of
from craft_env.eval.run.settings import RunSettings
from craft_env.models.redact import Redactor
from craft_env.text import describe_board, intent_to_text, replies
from craft_env.train.recorder import TurnRecorder

PAPER = craft_env.load_eval_set("paper")


def _boards() -> list[Structure]:
    """The paper's targets and, for each, its lower layers alone (boards a game passes through)."""
    boards = []
    for target in PAPER:
        cells = target.array
        for top in range(1, cells.shape[1] + 1):
            partial = np.zeros_like(cells)
            partial[:, :top] = cells[:, :top]
            boards.append(Structure.adopt(partial, target.n))
    return boards


def _layout_dict_plainly(board: Structure) -> dict:
    """``Structure.layout_dict`` as written before its cells' parts were remembered."""
    n, rows = board.n, board.array.tolist()
    structure = {
        format_position((k // n, k % n)): [value_code(v) for v in rows[k] if v != 0] for k in range(n * n)
    }
    spans: dict = {}
    for level in range(board.height):
        for k in range(n * n):
            value = rows[k][level]
            if value >= 6 and (value - 6) % 4 in (1, 3):
                p = _PARTNER_CELL(n, k, value)
                spans.setdefault(str(level), []).append([format_position((k // n, k % n)),
                                                          format_position((p // n, p % n))])
    return {"structure": structure, "spans": spans}


def _describe_board_plainly(board: Structure) -> str:
    """``describe_board`` through ``stack`` and ``partner``, one numpy read per block."""
    lines = []
    for i in range(board.n):
        for j in range(board.n):
            parts = []
            for level, code in enumerate(board.stack(i, j)):
                partner = board.partner(i, j, level)
                spans = "" if partner is None else f" (spans to {format_position(partner)})"
                parts.append(f"L{level} {code}{spans}")
            lines.append(f"{format_position((i, j))}: {', '.join(parts) if parts else 'empty'}")
    return "\n".join(lines)


def test_board_records_and_descriptions_equal_their_plain_definitions():
    for board in _boards():
        for _ in range(2):  # the second time from the remembered parts
            assert board.layout_dict() == _layout_dict_plainly(board)
            assert describe_board(board) == _describe_board_plainly(board)
        record = board.layout_dict()
        record["structure"][next(iter(record["structure"]))].append("changed")
        assert board.layout_dict() == _layout_dict_plainly(board)  # a caller's change stays in its copy


def test_move_dicts_are_fresh_copies():
    move = Move.place("bl", (0, 1), (0, 2), layer=1)
    first = move.to_dict()
    first["layer"] = 7
    expected = {"action": "place", "block": "bl", "position": "(0,1)", "layer": 1, "span_to": "(0,2)"}
    assert move.to_dict() == expected
    assert Move.noop().to_dict() == {"action": "noop"}


@settings(max_examples=80, deadline=None)
@given(st.sampled_from([(3, 3), (4, 3), (5, 2)]), st.sampled_from(["D0", "D1", "D2", "D3"]), st.data())
def test_the_first_difference_reads_the_wall_as_apparent_wall_does(size, seat, data):
    n, height = size
    values = data.draw(st.lists(st.integers(0, 25), min_size=n * n * height, max_size=n * n * height))
    board = np.array(values, np.int8).reshape(n * n, height)
    seen = apparent_wall(board, n, seat).T.tolist()
    # the target: the board's own reading, with at most one code changed (a difference anywhere, or none)
    wanted = [list(row) for row in seen]
    if data.draw(st.booleans()):
        level, slot = data.draw(st.integers(0, height - 1)), data.draw(st.integers(0, n - 1))
        wanted[level][slot] = data.draw(st.integers(0, 10))
    expected = next(
        (
            f"slot {slot} layer {level}: board shows {_describe_code(seen[level][slot])}, "
            f"my target shows {_describe_code(wanted[level][slot])}"
            for level in range(height)
            for slot in range(n)
            if seen[level][slot] != wanted[level][slot]
        ),
        None,
    )
    assert _first_difference(board.tolist(), seat, n, wanted) == expected


def test_intent_texts_are_intent_to_text():
    for seat in ("D0", "D1", "D2", "D3"):
        for n, height in ((3, 3), (4, 2)):
            table = intent_table(seat, n, height)
            expected = tuple(intent_to_text(i, table) for i in range(table.num_intents))
            assert intent_texts(seat, n, height) == expected


_REPLY_PIECES = st.sampled_from(
    ["<think>", "</think>", "<message>", "</message>", "MOVE: ", "place rs (0,0) L0", "QUESTION: ",
     "FOLLOWED: D1", "remove (1,1)", "\n", " ", "```", "pass", "x"]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_REPLY_PIECES | st.text(max_size=5), max_size=10).map("".join), st.booleans())
def test_remembered_reply_readings_are_the_readings(text, tolerant):
    for _ in range(2):
        assert replies.parse_director_reply(text) == replies._director_reply(text)
        assert replies.builder_action(text, 3, 3, tolerant) == replies._builder_action(text, 3, 3, tolerant)


def _aec_turns(spec, settings: RunSettings) -> list[tuple]:
    """What the AEC env makes of the scripted team's game (the runner's loop before it drove the game
    itself): per turn the speaking order, the directors' messages and intents, the move, its verdict and
    progress."""
    env = craft_env.env(
        message_mode="text", structure=spec.structure, oracle_n=settings.oracle_n or None,
        max_turns=settings.turns, protocol=settings.protocol, seats=settings.seats,
    )
    env.reset(seed=spec.seed)
    u = env.unwrapped
    directors, builder = {seat: ScriptedDirector() for seat in u.seat_of.values()}, ScriptedBuilder()
    turns, spoken = [], []
    for agent in env.agent_iter():
        _, _, terminated, truncated, _ = env.last(observe=False)
        if terminated or truncated:
            env.step(None)
            continue
        seat = u.seat_of.get(agent)
        context = context_of(u.game, agent, seat, env.observe(agent), spec, settings.turns, settings.rules)
        if seat is not None:
            reply = directors[seat].decide(context)
            env.step(reply.message)
            spoken.append((seat, reply.message, u.infos[agent]["intent"]))
            continue
        order = list(u.director_order)
        env.step(builder.decide(context).action)
        info = u.infos["builder"]
        progress = info["metrics"]["progress"]
        turns.append((order, spoken, info["move"], info["legal"], info["reason"], progress))
        spoken = []
    return turns


@pytest.mark.parametrize(
    "options", [{"protocol": "paper", "oracle_n": 3}, {"seats": ("D3", "D0"), "oracle_n": 0}, {"oracle_n": 5}]
)
def test_the_runners_game_is_the_aec_envs(options):
    settings = RunSettings(out="", runs=1, turns=8, **options)
    for spec in game_specs(settings, 1)[:3]:
        recorder = TurnRecorder()
        asyncio.run(play_game(spec, settings, AgentFactory(settings, None, Redactor()), recorder, 1))
        got = [
            (
                record["director_order"],
                [(said["director"], said["message"], said["intent"]) 
                 for said in record["director_responses"]],
                record["move"], record["legal"], record["reason"], record["progress_data"]["progress"],
            )
            for record in recorder.turns
        ]
        assert got == _aec_turns(spec, settings)
        assert recorder.ended["event"] == "done"


class _OutOfRange:
    name = "out of range"
    reads_text = False

    async def act(self, context):
        return BuilderReply(action=999)


def test_an_action_outside_the_space_ends_the_game_as_the_env_check_did():
    settings = RunSettings(out="", runs=1, turns=3)
    spec = game_specs(settings, 1)[0]
    recorder = TurnRecorder()
    factory = AgentFactory(settings, None, Redactor(), seated={"builder": _OutOfRange()})
    asyncio.run(play_game(spec, settings, factory, recorder, 1))
    assert recorder.ended["event"] == "errored"
    expected = "ValueError: action: 999 is outside builder's action space Discrete(115)"
    assert recorder.ended["error"] == expected


def _play(env, replies) -> list:
    """Every step's (messages, reward, terminated, truncated, info without its turns) of one game."""
    steps = []
    messages, _ = env.reset(seed=4)
    for reply in replies:
        if messages is None:
            break
        messages, reward, terminated, truncated, info = env.step(reply(messages))
        shown = {name: value for name, value in info.items() if name != "turns"}
        steps.append((messages, reward, terminated, truncated, shown))
    return steps


def _first_candidate(messages) -> str:
    line = next(line for line in messages[-1]["content"].splitlines() if line.startswith("1. "))
    return f"MOVE: {line[3:]}\nFOLLOWED: D1"


def test_a_reply_read_off_the_loop_plays_on_as_a_task_with_the_same_game():
    """A reply long enough to be read in a thread (``agents.llm.PARSE_OFF_LOOP_CHARS``) hands the directly
    played game to the loop; the game goes on as it would have (the same chats, rewards and verdicts)."""
    from craft_env.agents.llm import PARSE_OFF_LOOP_CHARS

    padding = "<think>" + "x" * PARSE_OFF_LOOP_CHARS + "</think>\n"
    plain = [_first_candidate] * 6
    padded = [lambda m: padding + _first_candidate(m)] + [_first_candidate] * 5
    with craft_env.text_env(max_turns=6) as env:
        expected = _play(env, plain)
        got = _play(env, padded)
        assert env.batch._slots[0].task is not None  # the second game went on as a task
    assert [step[:4] for step in got] == [step[:4] for step in expected]
    assert [step[4]["move"] for step in got] == [step[4]["move"] for step in expected]


def test_a_directly_played_game_stopped_midway_leaves_nothing_running(recwarn):
    with craft_env.text_env(num_envs=2, max_turns=6) as env:
        observations, _ = env.reset(seed=1)
        env.step([_first_candidate(o) for o in observations])
        games = [slot.game for slot in env._slots]
        assert all(game is not None for game in games)  # waiting for the learner, played directly
        env.reset(seed=5)  # the first games are stopped
        assert all(game.cr_frame is None for game in games)  # closed
    assert all(slot.game is None for slot in env._slots)
    assert not [w for w in recwarn if "never awaited" in str(w.message)]


def _describe_one_plainly(speaker: str, text: str) -> str:
    """``describe_conversation([(speaker, text)])`` as written before ``describe_message``."""
    body = text.strip().splitlines() or [""]
    lines = [f"{speaker}: {body[0].rstrip()}".rstrip()]
    lines.extend(f"    {line.rstrip()}" for line in body[1:] if line.strip())
    return "\n".join(lines)


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=8), st.lists(st.sampled_from(["a", " ", "\n", "\r", "\x0b", "\u2028", "\t", "b c"]),
                                     max_size=10).map("".join))
def test_a_message_is_described_as_a_conversation_of_one(speaker, text):
    from craft_env.text import describe_conversation, describe_message

    assert describe_message(speaker, text) == _describe_one_plainly(speaker, text)
    assert describe_conversation([(speaker, text)]) == _describe_one_plainly(speaker, text)


def test_replaying_some_seats_gives_those_seats_turns_of_the_whole_replay(tmp_path):
    """``replay_seats`` (what an export of some seats replays) gives the same seat turns as ``replay_game``
    for those seats and counts every seat turn played; a seat's outcomes chained turn to turn equal the
    ones read from each turn's board (protocol paper: a director may not speak in a turn)."""
    from craft_env.eval.run.runner import run_benchmark
    from craft_env.train.export import _with_outcomes
    from craft_env.train.outcome import turn_outcome
    from craft_env.train.replay import finished_games, open_run, replay_game, replay_seats

    run_benchmark(RunSettings(out=str(tmp_path / "run"), runs=1, structures=[0, 3], protocol="paper", turns=8))
    run = open_run(tmp_path / "run")
    for _, game, spec in finished_games(run):
        every = replay_game(run, game, spec)
        for seats in (("builder",), ("D2",), ("D1", "D2", "D3")):
            turns, played = replay_seats(run, game, spec, seats)
            assert played == len(every)
            assert [(t.seat, t.turn, t.messages, t.reply) for t in turns] == [
                (t.seat, t.turn, t.messages, t.reply) for t in every if t.seat in seats
            ]
            for turn, outcome in _with_outcomes(turns, game.turns):
                assert outcome == turn_outcome(turn, None)


def test_stepping_inside_a_running_loop_is_refused_as_before():
    """A directly played game is not stepped from a coroutine of another loop (running the env's own loop
    there was refused, and still is)."""
    with craft_env.text_env(max_turns=3) as env:
        messages, _ = env.reset(seed=2)

        async def step_here():
            return env.step(_first_candidate(messages))

        with pytest.raises(RuntimeError, match="another loop is running"):
            asyncio.run(step_here())
