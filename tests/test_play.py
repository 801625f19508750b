"""``craft-env play``: a person at one seat, driven through a pseudo-terminal, logged like a run."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import sys

import pytest

from craft_env.agents.base import AgentContext, GameStopped
from craft_env.agents.human import HumanBuilder, HumanDirector, Terminal
from craft_env.cli import main
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.play import play, play_settings, who_plays

pexpect = pytest.importorskip("pexpect")

# The first command in a fresh tree may compile the numba kernels.
FIRST_OUTPUT_S = 300
STEP_S = 60
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def spawn(*args: str, out) -> "pexpect.spawn":
    env = dict(os.environ, NO_COLOR="1", COLUMNS="120", LINES="50")
    child = pexpect.spawn(
        sys.executable, ["-m", "craft_env.cli", "play", *args, "--out", str(out)],
        env=env, encoding="utf-8", dimensions=(50, 120), timeout=STEP_S,
    )
    child.logfile_read = io.StringIO()
    return child


def transcript(child) -> str:
    return ANSI.sub("", child.logfile_read.getvalue())


def test_builder_seat_plays_a_whole_game_and_report_reads_it(tmp_path):
    out = tmp_path / "game"
    child = spawn("--seat", "builder", "--structure", "2", "--turns", "40", out=out)
    child.expect("builder> ", timeout=FIRST_OUTPUT_S)
    child.sendline("help")
    child.expect(r"remove \(0,2\)\s+take the top block off")
    child.expect("builder> ")
    child.sendline("place zs (0,0) L0")  # no such colour: the text layer's reason, asked again
    child.expect("Not understood: ")
    child.expect("builder> ")
    child.sendline("9")
    child.expect(r"No candidate 9 \(candidates: 1\.\.")
    child.expect("builder> ")
    child.sendline("remove (0,0)")  # readable, but the board is empty: a failed turn with its reason
    child.expect(r"Last move: remove \(0,0\) \(failed: nothing to remove")
    turns = 1
    while True:
        index = child.expect(["builder> ", r"Game over after (\d+) turns?: ([a-z ]+),"])
        if index == 1:
            break
        child.sendline("1")  # the oracle's first candidate: an optimal move
        turns += 1
    assert child.match.group(2) == "structure complete"
    assert int(child.match.group(1)) == turns
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    config = json.loads((out / "config.json").read_text())
    assert config["person"] == "builder" and config["structures"] == [2]
    game = read_games(out / "run_1" / "log.jsonl")[(1, 2)]
    assert game.status == "done" and game.marker["completed"] is True
    assert len(game.turns) == turns
    first = game.turns[0]
    assert first["builder"]["sent"] == "remove (0,0)" and first["failed"] is True
    assert "nothing to remove" in first["reason"]
    assert all(t["followed_oracle"] and t["optimal"] for t in game.turns[1:])

    assert main(["report", str(out), "--no-plots"]) == 0
    (row,) = json.loads((out / "report.json").read_text())
    assert row["builder_model"] == "person" and row["director_model"] == "scripted"
    assert row["completed"] == 1 and row["games"] == 1


def test_director_seat_sees_only_its_own_wall_and_quitting_is_logged_as_stopped(tmp_path):
    out = tmp_path / "game"
    child = spawn("--seat", "D2", "--structure", "0", out=out)
    child.expect("D2> ", timeout=FIRST_OUTPUT_S)
    child.sendline("help")
    child.expect("take the top block off my")
    child.expect("D2> ")
    child.sendline("build me something nice")
    child.expect("would not understand that")
    child.expect("D2> ")
    child.sendline("put a small red block on my left column, bottom layer")
    child.expect("Turn 2/20 - you are director D2")
    child.expect("D2> ")
    child.sendline("pass")
    child.expect("Turn 3/20 - you are director D2")
    child.expect("D2> ")
    child.sendline("quit")
    child.expect(r"Game stopped after 2 turns\.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    seen = transcript(child)
    assert "You are director D2" in seen and "D2's wall, left to right" in seen
    assert "D2 wall (far side" in seen  # its wall, drawn from its own observation
    for other in ("D1", "D3"):
        assert f"{other}'s wall" not in seen and f"{other} wall" not in seen
    assert "Candidate moves" not in seen  # the builder's candidates are not a director's to see

    game = read_games(out / "run_1" / "log.jsonl")[(1, 0)]
    assert game.status == "stopped" and "quit" in game.marker["reason"]
    lines = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    turns = [r for r in lines if r["kind"] == "turn"]
    assert len(turns) == 2
    said = [next(d["message"] for d in t["director_responses"] if d["director"] == "D2") for t in turns]
    assert said == ["put a small red block on my left column, bottom layer", "Nothing to add from me."]
    assert main(["report", str(out), "--no-plots"]) == 0  # a stopped game is reported, not a crash
    (row,) = json.loads((out / "report.json").read_text())
    assert row["director_model"] == "scripted + person at D2" and row["games"] == 0


# ------------------------------------------------------------- the agents, without a terminal


class Script:
    """A Terminal's reader that answers from a list and records what it was asked."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def context_for(agent: str, message_mode: str = "text", oracle_n: int | None = 3) -> AgentContext:
    import craft_env

    env = craft_env.env(message_mode=message_mode, oracle_n=oracle_n, structure=0, director_order="fixed")
    env.reset(seed=0)
    u = env.unwrapped
    while env.agent_selection != agent:
        env.step(0)
    candidates = tuple(u.candidates) if agent == "builder" and u.candidates is not None else None
    return AgentContext(
        agent=agent, seat=u.seat_of.get(agent), observation=env.observe(agent), board=u.board,
        conversation=tuple(u.conversation), turn=u.turn + 1, max_turns=20, candidates=candidates,
    )


def quiet_terminal(*lines: str) -> tuple[Terminal, Script, io.StringIO]:
    from rich.console import Console

    buffer = io.StringIO()
    script = Script(*lines)
    return Terminal(Console(file=buffer, width=100, no_color=True), read=script), script, buffer


def test_builder_answers_the_candidate_or_the_typed_line_and_asks_again_on_nonsense():
    context = context_for("builder")
    terminal, script, shown = quiet_terminal("", "flibber", "0", "2")
    reply = asyncio.run(HumanBuilder(terminal).act(context))
    assert reply.action == str(context.candidates[1])
    assert len(script.prompts) == 4
    assert "Not understood" in shown.getvalue() and "No candidate 0" in shown.getvalue()
    terminal, _, _ = quiet_terminal("what goes on (0,1)?")
    assert HumanBuilder(terminal).decide(context).action == "what goes on (0,1)?"


def test_end_of_input_or_quit_stops_the_game():
    with pytest.raises(GameStopped, match="builder"):
        HumanBuilder(quiet_terminal()[0]).decide(context_for("builder"))
    with pytest.raises(GameStopped, match="D1"):
        HumanDirector(quiet_terminal("QUIT")[0]).decide(context_for("director_1"))


def test_the_greeting_says_in_a_sentence_who_plays_the_other_seats(tmp_path):
    terminal, _, shown = quiet_terminal("quit")
    result = play(play_settings("builder", 0, out=str(tmp_path / "game")), terminal)
    assert result["status"] == "stopped"
    assert "You are the builder; the scripted agents play the other seats. Type help" in shown.getvalue()
    assert who_plays("openai/gpt-4o-mini") == "the model openai/gpt-4o-mini plays"


def test_director_strictness_follows_the_builder():
    context = context_for("director_1")
    terminal, script, _ = quiet_terminal("hello there", "pass")
    assert HumanDirector(terminal, strict=True).decide(context).message == "Nothing to add from me."
    assert len(script.prompts) == 2
    terminal, _, _ = quiet_terminal("hello there")
    assert HumanDirector(terminal, strict=False).decide(context).message == "hello there"


def test_options_lists_what_the_mask_allows():
    context = context_for("director_1")
    terminal, _, shown = quiet_terminal("options", "pass")
    HumanDirector(terminal).decide(context)
    listed = shown.getvalue()
    assert "0: Nothing to add from me." in listed
    assert "top layer" not in listed.split("Nothing to add from me.")[-1]  # nothing rests on an empty board


@pytest.mark.parametrize(
    "field, kwargs",
    [
        ("seat", {"seat": "D5"}),
        ("structure", {"seat": "builder", "structure": -1}),
        ("structures", {"seat": "builder", "structure": 999}),
        ("turns", {"seat": "builder", "turns": 0}),
    ],
)
def test_play_settings_name_the_bad_field(field, kwargs, tmp_path):
    with pytest.raises(ValueError, match=field):
        play_settings(out=str(tmp_path / "x"), **kwargs)
