"""The paper's result logs: hand-written samples replayed, reported and imported; our runs exported and back.

The samples are written here from the format description (the paper notes,
section 7); none ship with the project. They cover every per-game and
per-turn key, a move the paper's ban rejects, a small block sent with a
span, a remove carrying a code, a clarify turn, a wrong-layer move, a board
and a metric that disagree with our replay, an unknown field, a game that
crashed before it started and a HF-style model directory name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from craft_env import Move, Structure, load_eval_set, metrics
from craft_env.cli import main
from craft_env.eval.logs.games import read_games
from craft_env.eval.logs.paperlogs import read_paper_games
from craft_env.eval.report.report import disagreements, load_results

TARGET = load_eval_set("paper")[0]  # structure_001
EMPTY = {f"({i},{j})": [] for i in range(3) for j in range(3)}


def _board(**cells: list[str]) -> dict[str, list[str]]:
    board = {k: list(v) for k, v in EMPTY.items()}
    for key, stack in cells.items():
        board[f"({key[1]},{key[2]})"] = stack
    return board


def _tracker(board: dict[str, list[str]], turn: int, move: dict, progress: float | None = None) -> dict:
    scores = metrics.score(Structure.from_dict({"structure": board}), TARGET)
    record = {
        "iou_score": scores["iou"],
        "distance_score": 0.5,
        "completion_percentage": scores["completion"],
        "position_accuracy": scores["position_accuracy"],
        "overall_progress": scores["progress"] if progress is None else progress,
        "blocks_placed_correctly": 1,
        "blocks_total_target": 23,
        "blocks_total_current": 1,
    }
    return {
        "turn_number": turn,
        "move": move,
        "metrics": record,
        "progress_delta": 0.0,
        "structure_snapshot": board,
    }


def _responses(*seats: str) -> dict:
    return {
        s: {
            "internal_thinking": f"{s} thinks",
            "public_message": f"{s} speaks",
            "raw_response": f"<m>{s}</m>",
        }
        for s in seats
    }


def _turn(
    number: int,
    before: dict,
    move: dict | None,
    *,
    after: dict | None = None,
    ok: bool = True,
    progress: float | None = None,
    spans: dict | None = None,
    **extra,
) -> dict:
    turn = {
        "turn_number": number,
        "timestamp": "2025-05-01 10:00:00",
        "structure_before": before,
        "spans_before": spans or {},
        "director_prompt_D1": "prompt D1",
        "director_prompt_D3": "prompt D3",
        "director_responses": _responses("D1", "D3"),
        "move_executed": move is not None and ok,
        "target_achieved": False,
        "conversation_snapshot": ["D1: D1 speaks", "D3: D3 speaks"],
    }
    if move is None:
        turn["clarification"] = "Which block do you mean?"
        turn.pop("move_executed")
        turn["move_executed"] = False
        return turn | extra
    turn |= {
        "builder_confirmation": "Following D1",
        "builder_move_raw": dict(move),
        "builder_prompt": "the prompt",
        "oracle_moves": [
            {"action": "place", "block": "ys", "position": "(0,0)", "layer": 0, "span_to": None}
        ],
        "builder_followed_oracle": move.get("position") == "(0,0)",
        "move_attempted": dict(move),
        "failed_move": not ok,
        "director_discussion_full": "D1: D1 speaks\nD3: D3 speaks",
    }
    if ok:
        turn["progress_data"] = _tracker(after, number, move, progress)
        turn |= {
            "correct_structure_placement": True,
            "correct_side_placement": True,
            "overall_structure_correctness": True,
            "common_ground": {"agreement": "yes"},
        }
    else:
        turn["progress_data"] = {"error": "engine said no"}
    return turn | extra


def _sample_game() -> dict:
    b1 = _board(c00=["ys"])
    b4 = _board(c00=["ys"], c01=["gs"])
    b7 = _board(c00=["ys"], c22=["os"])
    turns = [
        _turn(
            1,
            EMPTY,
            {"action": "place", "block": "ys", "position": "(0,0)", "layer": 0, "span_to": None},
            after=b1,
        ),
        _turn(
            2,
            b1,
            {"action": "place", "block": "gl", "position": "(1,1)", "layer": 0, "span_to": "(1,2)"},
            ok=False,
        ),
        _turn(3, b1, None),
        _turn(
            4,
            b1,
            {"action": "place", "block": "gs", "position": "(0,1)", "layer": 0, "span_to": "(0,2)"},
            after=b4,
            progress=0.999,
            mystery_field={"kept": True},
        ),
        _turn(
            5,
            b4,
            {"action": "remove", "block": "gs", "position": "(0,1)", "layer": 0, "span_to": None},
            after=b1,
        ),
        _turn(
            6,
            b1,
            {"action": "place", "block": "os", "position": "(2,2)", "layer": 1, "span_to": None},
            ok=False,
        ),
        _turn(
            7,
            _board(c00=["ys"], c20=["bs"]),
            {"action": "place", "block": "os", "position": "(2,2)", "layer": 0, "span_to": None},
            after=b7,
            error="director timed out",
        ),
    ]
    target = TARGET.to_dict()
    return {
        "structure_id": "structure_001",
        "structure_idx": 0,
        "complexity": "medium",
        "target_structure": target["structure"],
        "target_spans": target["spans"],
        "target_director_views": target["director_views"],
        "completed": False,
        "turns_taken": 7,
        "final_progress": turns[-1]["progress_data"]["metrics"]["overall_progress"],
        "final_structure": b7,
        "final_spans": {"0": []},
        "stopping_reason": "max_turns_reached",
        "partialCompletion": True,
        "partialCompletionCategory": "empty",
        "D1 Archetype": "synthesizer",
        "D2 Archetype": "synthesizer",
        "D3 Archetype": "skeptical",
        "progress_summary": {
            "current_turn": 7,
            "overall_progress": 0.2,
            "completion_percentage": 0.08,
            "blocks_correct": 2,
            "blocks_total_needed": 23,
            "recent_trend": 0.0,
            "is_improving": True,
            "estimated_turns_remaining": float("inf"),
        },
        "turns": turns,
    }


def _info(index: int = 0) -> dict:
    return {
        "timestamp": "20250501_100000",
        "dataset_path": "data/structures_dataset_20.json",
        "structure_index": index,
        "max_turns": 20,
        "models": {"director": "gpt-4o-mini", "builder": "gpt-4o-mini"},
        "use_oracle": True,
        "num_oracle": 5,
        "builder_tool_use": False,
        "use_common_ground": False,
        "run": 3,
        "max_tokens": 2000,
        "partial_completion": True,
    }


@pytest.fixture
def paper_dir(tmp_path) -> Path:
    root = tmp_path / "craft_results" / "api" / "oracle5_no_tools_run3"
    folder = root / "gpt-4o-mini_gpt-4o-mini,,20250501_100000"
    folder.mkdir(parents=True)
    (folder / "craft_structure_001_3.json").write_text(
        json.dumps({"experiment_info": _info(), "games": [_sample_game()]}), encoding="utf-8"
    )
    crashed = {
        "structure_id": "structure_002",
        "error": "boom",
        "completed": False,
        "turns_taken": 0,
        "final_progress": 0.0,
    }
    (folder / "craft_structure_002_3.json").write_text(
        json.dumps({"experiment_info": _info(1), "games": [crashed]}), encoding="utf-8"
    )
    (folder / "craft_structure_001_3.md").write_text("# notes\n", encoding="utf-8")
    return tmp_path / "craft_results"


def test_replay_of_a_hand_written_log(paper_dir):
    (game,) = read_paper_games(paper_dir)
    assert (game.condition, game.director, game.builder, game.run) == (
        "oracle5_no_tools",
        "gpt-4o-mini",
        "gpt-4o-mini",
        3,
    )
    assert game.protocol.name == "paper" and game.structure_index == 0 and len(game.turns) == 7
    legal = [t["legal"] for t in game.turns]
    assert legal == [True, False, True, True, True, False, True]
    assert "hidden cell (1,1)" in game.turns[1]["reason"]
    assert game.turns[2]["question"] == "Which block do you mean?" and game.turns[2]["move_attempted"] is None
    assert "span_to (0,2) ignored" in game.turns[3]["builder"]["reason"]
    assert game.turns[3]["move_attempted"] == Move.place("gs", (0, 1), layer=0).to_dict()
    assert game.turns[4]["remove_attempted"] and game.turns[4]["move_attempted"]["action"] == "remove"
    assert game.turns[0]["followed_oracle"] and not game.turns[3]["followed_oracle"]
    assert game.turns[3]["paper_turn"]["mystery_field"] == {"kept": True}
    assert (
        game.paper_game["D3 Archetype"] == "skeptical" and game.turns[0]["director_responses"][0]["archetype"]
    )
    found = {(d["turn"], d["field"]) for d in game.disagreements}
    assert found == {(4, "overall_progress"), (7, "structure_before")}
    board_note = next(d for d in game.disagreements if d["field"] == "structure_before")
    assert board_note["logged"]["(2,0)"] == ["bs"] and board_note["replayed"]["(2,0)"] == []


def test_report_reads_paper_logs_per_condition_and_lists_disagreements(paper_dir, tmp_path, capsys):
    (result,) = load_results([paper_dir])
    assert result.label == "oracle5_no_tools/gpt-4o-mini_gpt-4o-mini" and result.protocol == "paper"
    assert result.row["games"] == 1 and result.row["unbuildable"] == 1
    assert len(disagreements([result])) == 2
    out = tmp_path / "report"
    assert main(["report", str(paper_dir), "--out", str(out), "--no-plots"]) == 0
    text = (out / "report.md").read_text()
    assert "Moves the protocol rejects in replayed logs (2)" in text and "hidden cell (1,1)" in text
    assert "Replay disagreements (2)" in text and "| structure_001 | 4 | overall_progress | 0.999 |" in text
    assert json.loads((out / "disagreements.json").read_text())[0]["game"] == "structure_001"
    single = next(paper_dir.rglob("craft_structure_001_3.json"))
    assert main(["report", str(single), "--out", str(tmp_path / "one"), "--no-plots"]) == 0


def test_import_writes_a_run_directory_that_report_reads(paper_dir, tmp_path, capsys):
    out = tmp_path / "imported"
    assert main(["import", str(paper_dir), "-o", str(out)]) == 0
    config = json.loads((out / "config.json").read_text())
    assert (
        config["protocol"] == "paper"
        and config["oracle_n"] == 5
        and config["director_model"] == "gpt-4o-mini"
    )
    games = read_games(out / "run_3" / "log.jsonl")
    assert list(games) == [(3, 0)] and games[(3, 0)].status == "done" and len(games[(3, 0)].turns) == 7
    (result,) = load_results([out])
    assert result.protocol == "paper" and len(disagreements([result])) == 2
    assert main(["import", str(paper_dir), "-o", str(out)]) == 2  # refuses to overwrite


def _same_games(ours: dict, back: dict) -> None:
    assert sorted(ours) == sorted(back)
    for key, game in ours.items():
        again = back[key]
        assert len(game.turns) == len(again.turns)
        for a, b in zip(game.turns, again.turns):
            moves = [
                None if t["move_attempted"] is None else Move.from_dict(t["move_attempted"]) for t in (a, b)
            ]
            assert moves[0] == moves[1]
            assert a["legal"] == b["legal"] and a["optimal"] == b["optimal"]
            assert a["remove_attempted"] == b["remove_attempted"]
            assert a["progress_data"] == pytest.approx(b["progress_data"])
            assert a["structure_before"] == b["structure_before"]
            assert not b["replay_disagreements"]


@pytest.mark.parametrize("builder, oracle", [("random", "0"), ("scripted", "5")])
def test_export_then_import_gives_the_same_games(tmp_path, capsys, builder, oracle):
    run = tmp_path / "run"
    assert (
        main(
            [
                "run",
                "--out",
                str(run),
                "--structures",
                "0,8",
                "--turns",
                "8",
                "--builder-model",
                builder,
                "--oracle-n",
                oracle,
                "--no-progress",
                "--no-plots",
            ]
        )
        == 0
    )
    exported = tmp_path / "exported"
    assert main(["export", str(run), "--format", "paper", "-o", str(exported)]) == 0
    condition = "no_oracle_no_tools" if oracle == "0" else "oracle5_no_tools"
    files = sorted(p.relative_to(exported).as_posix() for p in exported.rglob("*.json"))
    assert files == [
        f"{condition}_run1/scripted_{builder}/craft_structure_{k}_1.json" for k in ("001", "009")
    ]
    data = json.loads((exported / files[0]).read_text())
    game = data["games"][0]
    assert {"experiment_info", "games"} == set(data) and data["experiment_info"]["structure_index"] == 0
    for key in (
        "target_structure",
        "target_spans",
        "final_structure",
        "final_spans",
        "progress_summary",
        "D1 Archetype",
        "turns_taken",
        "final_progress",
        "stopping_reason",
        "completed",
    ):
        assert key in game
    for turn in game["turns"]:
        assert isinstance(turn["structure_before"], dict) and isinstance(turn["spans_before"], dict)
        move = turn.get("move_attempted")
        if move and move["action"] == "remove" and move["block"].endswith("l"):
            assert move["span_to"] is not None
    back = tmp_path / "back"
    assert main(["import", str(exported), "-o", str(back)]) == 0
    _same_games(read_games(run / "run_1" / "log.jsonl"), read_games(back / "run_1" / "log.jsonl"))


def test_round_trip_keeps_unreadable_replies_and_wrong_layers_as_failed_turns(tmp_path, monkeypatch):
    from craft_env.agents.base import BuilderReply
    from craft_env.agents.scripted import ScriptedBuilder
    from craft_env.eval.run import runner
    from craft_env.eval.run.settings import RunSettings

    class Clumsy:
        name = "clumsy"

        async def act(self, context):
            if context.turn == 2:
                return BuilderReply(action="I would like a sandwich")
            if context.turn == 3:
                return BuilderReply(action="place ys (0,0) L2")
            return ScriptedBuilder().decide(context)

    monkeypatch.setattr(runner.AgentFactory, "builder", lambda self, spec: Clumsy())
    settings = RunSettings(out=str(tmp_path / "run"), structures=[0], turns=5, oracle_n=0)
    runner.run_benchmark(settings)
    ours = read_games(tmp_path / "run" / "run_1" / "log.jsonl")
    assert [t["legal"] for t in ours[(1, 0)].turns][1:3] == [False, False]
    assert main(["export", settings.out, "-o", str(tmp_path / "exported")]) == 0
    assert main(["import", str(tmp_path / "exported"), "-o", str(tmp_path / "back")]) == 0
    _same_games(ours, read_games(tmp_path / "back" / "run_1" / "log.jsonl"))
