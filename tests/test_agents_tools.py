"""The builder's simulate_move tool (``agents.tools``): the simulator, the model loop, the offline paths."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from dataclasses import dataclass

from craft_env import Structure, load_eval_set
from craft_env.agents.base import AgentContext
from craft_env.agents.llm import LLMBuilder
from craft_env.agents.tools import TOOL_SCHEMA, MoveSimulator
from craft_env.core.protocol import CRAFT, PAPER
from craft_env.eval.logs.games import read_games
from craft_env.eval.report.report import load_results
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings

TARGET = load_eval_set("paper")[0]  # (1,1)-(1,2) is a large green on layer 0


def test_simulate_answers_like_the_env_and_leaves_the_board():
    board = Structure.empty()
    tool = MoveSimulator(board, TARGET, CRAFT, max_calls=3)
    good = tool.simulate("place ys (0,0) L0")
    assert good["legal"] and good["distance"] < 23 and 0 < good["progress"] < 1
    bad = tool.call("simulate_move", json.dumps({"move": "place gs (0,0) L1"}))
    assert not bad["legal"] and "layer" in bad["reason"]
    assert tool.call("other_tool", "{}")["legal"] is False and tool.remaining == 0
    assert board == Structure.empty() and len(tool.calls) == 3
    assert tool.best()["arguments"] == {"move": "place ys (0,0) L0"}


def test_the_paper_protocol_bans_hidden_spans_in_the_tool_too():
    move = "place gl (1,1)-(1,2) L0"
    assert MoveSimulator(Structure.empty(), TARGET, CRAFT).simulate(move)["legal"]
    banned = MoveSimulator(Structure.empty(), TARGET, PAPER).simulate(move)
    assert not banned["legal"] and "hidden cell (1,1)" in banned["reason"]
    tolerant = MoveSimulator(Structure.empty(), TARGET, PAPER).simulate("PLACE:gs:(0,1):0:(0,2):CONFIRM:x")
    assert tolerant["legal"] and tolerant["move"] == "place gs (0,1) L0"


@dataclass
class _Reply:
    text: str
    tool_calls: tuple = ()
    prompt_tokens: int = 1
    completion_tokens: int = 1
    cost: float = 0.0
    latency: float = 0.0


class _ToolHappyClient:
    """Asks for tools as long as they are offered (two per batch), then answers with a move."""

    model = "fake/tools"

    def __init__(self, batch: int = 2) -> None:
        self.batch = batch
        self.offered: list[bool] = []

    async def acomplete(self, messages, tools=None, context=None):
        self.offered.append(bool(tools))
        assert tools is None or tools == [TOOL_SCHEMA]
        if tools:
            calls = tuple(
                {
                    "id": f"c{k}",
                    "name": "simulate_move",
                    "arguments": json.dumps({"move": "place ys (0,0) L0"}),
                }
                for k in range(self.batch)
            )
            return _Reply("", calls)
        return _Reply("MOVE: place ys (0,0) L0\nFOLLOWED: D1")


def _context(tool) -> AgentContext:
    return AgentContext("builder", None, {"text": "board"}, Structure.empty(), (), 1, 20, tool=tool)


def test_a_model_builder_gets_at_most_k_calls_then_must_answer():
    client = _ToolHappyClient(batch=2)
    tool = MoveSimulator(Structure.empty(), TARGET, CRAFT, max_calls=3)
    reply = asyncio.run(LLMBuilder(client).act(_context(tool)))
    # 2 calls, then a batch of 2 that would exceed 3 is dropped and the answer is forced without tools
    assert client.offered == [True, True, False] and len(reply.tool_calls) == 2
    assert reply.action == "place ys (0,0) L0" and reply.usage.calls == 3


def _run(tmp_path, builder: str):
    settings = RunSettings(
        out=str(tmp_path / builder.replace("/", "_")),
        builder_model=builder,
        director_model="scripted",
        structures=[0, 8],
        turns=4,
        oracle_n=0,
        builder_tools=True,
        max_tool_calls=2,
    )
    run_benchmark(settings)
    return settings.out


def test_built_in_and_offline_model_builders_use_the_tool_and_the_log_keeps_every_call(tmp_path):
    for builder in ("scripted", "scripted/team"):
        out = _run(tmp_path, builder)
        games = read_games(f"{out}/run_1/log.jsonl")
        turns = [t for g in games.values() for t in g.turns]
        assert turns and all(1 <= len(t["tool_calls"]) <= 2 for t in turns), builder
        assert all({"name", "arguments", "result"} <= set(c) for t in turns for c in t["tool_calls"])
        played = [t for t in turns if t["executed"]]
        assert played and all(
            any(c["result"].get("move") == t["move"] for c in t["tool_calls"]) for t in played
        )
        (result,) = load_results([out])
        assert 1 <= result.row["tool_calls_per_turn"] <= 2
        assert json.loads(Path(out, "config.json").read_text())["builder_tools"] is True
