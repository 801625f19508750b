"""``craft-env export --format sft|dpo``: records from logged games, checked against the engine and logs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from train_runs import mixed_run, scripted_run  # tests/ is on sys.path (conftest)

from craft_env import Move, Structure, metrics, oracle
from craft_env.agents.prompts import PROMPT_VERSION
from craft_env.core.protocol import get_protocol
from craft_env.datasets import load_dataset
from craft_env.eval.logs.games import read_games
from craft_env.eval.logs.paperlogs import Replayer
from craft_env.text import parse_move
from craft_env.text.replies import builder_action, parse_director_reply, split_think
from craft_env.train.export import export_training_data
from craft_env.train.replay import open_run, replay_run

TARGETS = load_dataset("paper")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("train_runs")
    return {
        "mixed": mixed_run(root / "mixed"),
        "scripted": scripted_run(root / "scripted"),
        "random_directors": scripted_run(root / "random_directors", director_model="random"),
    }


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _export(tmp_path, dirs, fmt="sft", **options) -> tuple[list[dict], list[dict], dict]:
    out = tmp_path / f"{fmt}-{options.get('seat', 'builder')}-{options.get('keep', 'all')}"
    manifest = export_training_data([str(d) for d in dirs], fmt, out, **options)
    valid = _records(out / "valid.jsonl") if (out / "valid.jsonl").exists() else []
    return _records(out / "train.jsonl"), valid, manifest


def _logged_turns(run: Path) -> dict[tuple, dict]:
    """``(source, run, structure index, turn) -> turn record`` of every finished game."""
    settings = json.loads((run / "config.json").read_text())
    found = {}
    for number in range(1, settings["runs"] + 1):
        for (k, index), game in read_games(run / f"run_{number}" / "log.jsonl").items():
            if game.status == "done":
                for record in game.turns:
                    found[(run.name, k, index, record["turn_number"])] = record
    return found


def _key(record: dict) -> tuple:
    meta = record["meta"]
    return (meta["source"], meta["run"], meta["structure_index"], meta["turn"])


def _engine(record: dict, move: Move) -> tuple[bool, bool, int, int]:
    """``(legal, optimal, distance before, after)`` of ``move`` on the record's board, by the engine."""
    meta = record["meta"]
    target = TARGETS[meta["structure_index"]]
    logged = record["logged"]
    before = Structure.from_dict(logged["structure_before"])
    step = Replayer(target, get_protocol(meta["protocol"]), before).step(move)
    return step.legal, step.optimal, oracle.distance(before, target), step.metrics["distance"]


def _reply_move(text: str) -> Move | None:
    sent, _, _, reason = builder_action(text, 3, 3)
    if reason is not None or sent.startswith("QUESTION") or sent == "pass":
        return None
    return parse_move(sent, 3, 3)


def test_sft_keep_rules_select_exactly_the_turns_they_define(runs, tmp_path):
    dirs = [runs["mixed"], runs["scripted"]]
    logged = {**_logged_turns(runs["mixed"]), **_logged_turns(runs["scripted"])}
    everything, _, manifest = _export(tmp_path, dirs, keep="all")
    assert {_key(r) for r in everything} == set(logged)  # one record per builder turn of every finished game
    assert manifest["records"]["train"] == len(logged)
    progress, _, _ = _export(tmp_path, dirs, keep="progress")
    correct, _, _ = _export(tmp_path, dirs, keep="oracle-correct")
    expected_progress, expected_correct = set(), set()
    for key, turn in logged.items():
        target = TARGETS[key[2]]
        before = metrics.score(Structure.from_dict(turn["structure_before"]), target)["progress"]
        if turn["executed"] and turn["progress_data"]["progress"] > before:
            expected_progress.add(key)
        move = Move.from_dict(turn["move_attempted"]) if turn["move_attempted"] else None
        board = Structure.from_dict(turn["structure_before"])
        if move is not None and move.action != "noop":
            step = Replayer(target, get_protocol("craft"), board).step(move)
            if step.optimal:
                expected_correct.add(key)
    assert {_key(r) for r in progress} == expected_progress
    assert {_key(r) for r in correct} == expected_correct
    assert expected_correct and expected_progress and expected_progress != set(logged)
    assert expected_correct != expected_progress  # optimal removals lower progress; some placements raise it


def test_director_records_need_the_builder_to_have_followed_them(runs, tmp_path):
    records, _, _ = _export(tmp_path, [runs["scripted"]], seat="directors", keep="oracle-correct")
    logged = _logged_turns(runs["scripted"])
    assert records
    for record in records:
        turn = logged[_key(record)]
        assert turn["optimal"] and record["meta"]["seat"] in turn["builder"]["followed"]
        assert record["messages"][0]["content"].startswith(f"You are director {record['meta']['seat']}")
    everything, _, _ = _export(tmp_path, [runs["scripted"]], seat="D2")
    assert {r["meta"]["seat"] for r in everything} == {"D2"} and len(everything) == len(logged)


def test_the_split_puts_every_target_on_one_side(runs, tmp_path):
    train, valid, manifest = _export(
        tmp_path, [runs["mixed"], runs["scripted"]], split_by="structure", valid=0.34, seed=3
    )
    train_targets = {r["meta"]["structure_index"] for r in train}
    valid_targets = {r["meta"]["structure_index"] for r in valid}
    assert train and valid and not train_targets & valid_targets
    assert train_targets | valid_targets == {0, 1, 2}
    assert manifest["targets"] == {"train": len(train_targets), "valid": len(valid_targets)}
    again, _, _ = _export(
        tmp_path / "again", [runs["mixed"], runs["scripted"]], split_by="structure", valid=0.34, seed=3
    )
    assert again == train  # seeded


def test_dpo_builder_pairs_are_judged_by_the_engine_and_never_self_pairs(runs, tmp_path):
    pairs, _, manifest = _export(tmp_path, [runs["mixed"], runs["scripted"]], fmt="dpo")
    logged = {**_logged_turns(runs["mixed"]), **_logged_turns(runs["scripted"])}
    assert manifest["counts"]["pairs builder-engine"] == len(pairs) > 0
    kinds = set()
    for pair in pairs:
        chosen, rejected = pair["chosen"][0]["content"], pair["rejected"][0]["content"]
        assert chosen != rejected
        pair["logged"] = logged[_key(pair)]
        good, bad = _reply_move(chosen), _reply_move(rejected)
        assert good is not None and good != bad
        legal, optimal, _, _ = _engine(pair, good)
        assert legal and optimal
        if bad is not None:
            legal, optimal, before, after = _engine(pair, bad)
            assert not legal or not optimal
            assert not legal or after > before or pair["meta"]["pair"]["engine_side"] == "chosen"
        kinds.add(pair["meta"]["pair"]["engine_move_is"])
        assert pair["prompt"][0]["role"] == "system" and pair["prompt"][1]["role"] == "user"
    assert kinds >= {"optimal", "lengthens the plan"}


def test_dpo_director_pairs_share_a_prompt_and_differ_in_outcome(runs, tmp_path):
    pairs, _, manifest = _export(
        tmp_path, [runs["scripted"], runs["random_directors"]], fmt="dpo", seat="directors"
    )
    assert pairs and manifest["counts"]["pairs director-logged"] == len(pairs)
    logged = {**_logged_turns(runs["scripted"]), **_logged_turns(runs["random_directors"])}
    for pair in pairs:
        chosen, rejected = pair["chosen"][0]["content"], pair["rejected"][0]["content"]
        assert parse_director_reply(chosen)[1] != parse_director_reply(rejected)[1]
        assert logged[_key(pair)]["optimal"]
        source = pair["meta"]["pair"]["rejected_from"]
        worse = logged[(source["source"], source["run"], pair["meta"]["structure_index"], source["turn"])]
        assert not worse["optimal"]


def test_the_rebuilt_prompt_equals_the_logged_prompt(runs, tmp_path):
    calls = [json.loads(line) for line in (runs["mixed"] / "cache.jsonl").read_text().splitlines()]
    logged = {(c["text"], json.dumps(c["messages"], sort_keys=True)) for c in calls}
    assert all("messages" in c for c in calls)
    bare = tmp_path / "no_cache"
    shutil.copytree(runs["mixed"], bare)
    (bare / "cache.jsonl").unlink()  # nothing to look up: every prompt below is rebuilt from the log
    turns = list(replay_run(open_run(bare)))
    assert {t.prompt for t in turns} == {"rebuilt"}
    assert {(t.reply, json.dumps(t.messages, sort_keys=True)) for t in turns} == logged
    with_cache = list(replay_run(open_run(runs["mixed"])))
    assert {t.prompt for t in with_cache} == {"logged"}


def test_a_run_with_other_prompts_is_refused_unless_it_logged_them(runs, tmp_path):
    for name, logged in (("scripted", False), ("mixed", True)):
        copy = tmp_path / name
        shutil.copytree(runs[name], copy)
        config = json.loads((copy / "config.json").read_text())
        config["prompt_version"] = "craft-prompts-v0"
        (copy / "config.json").write_text(json.dumps(config))
        if logged:
            turns = list(replay_run(open_run(copy)))
            assert turns and {t.prompt for t in turns} == {"logged"}
        else:
            with pytest.raises(
                ValueError, match=f"{name}: the run used prompts 'craft-prompts-v0'.*{PROMPT_VERSION}"
            ):
                open_run(copy)


def test_think_is_kept_only_when_asked_and_the_reply_reads_the_same(runs, tmp_path):
    plain, _, _ = _export(tmp_path, [runs["mixed"]])
    thinking, _, _ = _export(tmp_path / "think", [runs["mixed"]], with_think=True)
    assert len(plain) == len(thinking)
    assert any("<think>" in r["messages"][-1]["content"] for r in thinking)
    for short, full in zip(plain, thinking):
        assert "<think>" not in short["messages"][-1]["content"]
        assert short["messages"][-1]["content"] == split_think(full["messages"][-1]["content"])[1].strip()
        assert (
            builder_action(short["messages"][-1]["content"], 3, 3)[:2]
            == builder_action(full["messages"][-1]["content"], 3, 3)[:2]
        )


def test_a_replay_that_departs_from_its_log_is_an_error_naming_the_turn(runs, tmp_path):
    copy = tmp_path / "tampered"
    shutil.copytree(runs["scripted"], copy)
    log = copy / "run_1" / "log.jsonl"
    lines = log.read_text().splitlines()
    for k, line in enumerate(lines):
        record = json.loads(line)
        if record.get("kind") == "turn" and record["turn_number"] == 3:
            record["progress_data"]["progress"] += 0.5
            lines[k] = json.dumps(record)
            break
    log.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"tampered run 1 structure_\d+ turn 3: .*progress_data"):
        list(replay_run(open_run(copy)))


def test_the_command_line_writes_the_files_and_checks_its_options(runs, tmp_path):
    out = tmp_path / "cli"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "craft_env.cli",
            "export",
            str(runs["scripted"]),
            "--format",
            "sft",
            "-o",
            str(out),
            "--keep",
            "progress",
            "--split-by",
            "structure",
            "--valid",
            "0.34",
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "sft record(s)" in done.stdout
    manifest = json.loads((out / "export.json").read_text())
    assert manifest["keep"] == "progress" and manifest["records"]["valid"] == len(
        _records(out / "valid.jsonl")
    )
    bad = subprocess.run(
        [
            sys.executable,
            "-m",
            "craft_env.cli",
            "export",
            str(runs["scripted"]),
            "--format",
            "dpo",
            "-o",
            str(out),
            "--keep",
            "progress",
        ],
        capture_output=True,
        text=True,
    )
    assert bad.returncode == 2 and "keep:" in bad.stderr
    two = subprocess.run(
        [
            sys.executable,
            "-m",
            "craft_env.cli",
            "export",
            str(runs["scripted"]),
            str(runs["mixed"]),
            "-o",
            str(out),
        ],
        capture_output=True,
        text=True,
    )
    assert two.returncode == 2 and "one run directory" in two.stderr
