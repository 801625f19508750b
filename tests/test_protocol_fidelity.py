"""Protocol ``paper`` outside the kernel: bundled set, buildability, completion, archetypes, what seats see,
settings and resume.

The kernel switches (hidden-span ban in masks, speakers, candidates) are
tested with the env; these tests only use what the runner, reports, prompts
and text observations do with the protocol.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, fields
from types import SimpleNamespace

import pytest

import craft_env
from craft_env import Structure, load_eval_set
from craft_env.agents.prompts import (
    PAPER_RULES,
    archetype_for,
    archetype_of,
    builder_system_prompt,
    director_system_prompt,
    paper_archetype_for,
)
from craft_env.cli import main
from craft_env.core.protocol import CRAFT, PAPER, buildable, is_completed
from craft_env.datasets import load_dataset
from craft_env.envs.textobs import builder_text, director_text
from craft_env.eval.logs.games import GameLog
from craft_env.eval.results.results import unbuildable_targets
from craft_env.eval.run.runner import GameSpec, env_options
from craft_env.eval.run.settings import RunSettings
from craft_env.eval.results.table import table_row

# docs/benchmark.md#protocols: run 3, D1 D2 D3 for index 0..19.
PAPER_RUN3 = "SSK KAO SKC SAA AKC CKK ASC SSK SAO KKO COO ACK ACO SAO COC CCC SCK ACS KKS OCA"
LETTER = {"A": "assertive", "C": "cautious", "O": "observant", "K": "skeptical", "S": "synthesizer"}
# docs/rules.md#two-protocols: every paper target has a domino touching a hidden cell except these.
PAPER_BUILDABLE_IDS = {
    "structure_008",
    "structure_009",
    "structure_011",
    "structure_015",
    "structure_017",
    "structure_019",
}


# ------------------------------------------------------------------ bundled sets


def test_paper_set_is_bundled_unchanged(paper_fixture_path):
    bundled = load_eval_set("paper")
    assert bundled == craft_env.load_structures(paper_fixture_path)
    assert [s.id for s in bundled] == [f"structure_{k:03d}" for k in range(1, 21)]


def test_default_python_set_stays_ours_and_names_are_checked():
    assert load_eval_set()[0].id == "eval_001" and load_eval_set("craft") == load_eval_set()
    assert load_dataset("paper") == load_eval_set("paper")
    with pytest.raises(ValueError, match="dataset"):
        load_eval_set("nope")


def test_run_settings_default_to_the_paper_set_and_old_configs_keep_ours(tmp_path):
    settings = RunSettings(out=str(tmp_path))
    assert settings.dataset == "paper" and settings.protocol == "craft"
    assert settings.load_structures()[0].id == "structure_001"
    old = {k: v for k, v in asdict(settings).items() if k not in ("protocol",)} | {"dataset": None}
    assert RunSettings.from_dict(old).dataset == "craft" and RunSettings.from_dict(old).protocol == "craft"
    with pytest.raises(ValueError, match="protocol"):
        RunSettings(out=str(tmp_path), protocol="other")
    with pytest.raises(ValueError, match="max_tool_calls"):
        RunSettings(out=str(tmp_path), max_tool_calls=0)


# ------------------------------------------------------------- buildable, completed


def test_fourteen_paper_targets_cannot_be_built_under_the_ban():
    paper = load_eval_set("paper")
    assert {s.id for s in paper if buildable(s, PAPER)} == PAPER_BUILDABLE_IDS
    assert all(buildable(s, CRAFT) for s in paper)


def test_a_domino_into_a_hidden_cell_is_what_makes_a_target_unbuildable():
    # (1,1) is hidden: a large green spanning (1,0)-(1,1) on layer 0.
    hidden = Structure.from_dict(
        {"structure": {"(1,0)": ["gl"], "(1,1)": ["gl"]}, "spans": {"0": [["(1,0)", "(1,1)"]]}}
    )
    visible = Structure.from_dict(
        {
            "structure": {"(0,0)": ["gl"], "(1,0)": ["gl"], "(1,1)": ["rs"]},
            "spans": {"0": [["(0,0)", "(1,0)"]]},
        }
    )
    assert not buildable(hidden, PAPER) and buildable(hidden, CRAFT)
    assert buildable(visible, PAPER)


def test_completion_follows_the_protocol():
    assert is_completed(PAPER, 0.95, False) and not is_completed(PAPER, 0.949, True)
    assert is_completed(CRAFT, 0.5, True) and not is_completed(CRAFT, 0.99, False)


def _game(index: int, progress: float, exact: bool) -> GameLog:
    metrics = {
        "progress": progress,
        "completion": 1.0 if exact else 0.9,
        "voxel_iou": 1.0 if exact else 0.9,
        "iou": progress,
        "position_accuracy": progress,
    }
    turn = {
        "progress_data": metrics,
        "legal": True,
        "remove_attempted": False,
        "remove_prescribed": False,
        "followed_oracle": False,
        "oracle_moves": None,
    }
    return GameLog(1, index, f"structure_{index + 1:03d}", "done", 1, 1, [turn])


def test_report_completed_column_and_unbuildable_count_follow_the_protocol():
    games = [_game(0, 0.96, False), _game(7, 1.0, True), _game(1, 0.5, False)]
    assert math.isclose(table_row(games, 0, PAPER)["completed"], 2 / 3)
    assert math.isclose(table_row(games, 0, CRAFT)["completed"], 1 / 3)
    assert table_row(games, 0, PAPER)["protocol"] == "paper"
    assert unbuildable_targets({"protocol": "paper", "dataset": "paper"}, games, PAPER) == 2  # 001 and 002
    assert unbuildable_targets({"protocol": "craft", "dataset": "paper"}, games, CRAFT) == 0


# ------------------------------------------------------------------- archetypes


def test_paper_archetypes_reproduce_the_papers_run_3():
    for index, letters in enumerate(PAPER_RUN3.split()):
        got = [paper_archetype_for(index, 3, seat) for seat in ("D1", "D2", "D3")]
        assert got == [LETTER[c] for c in letters], index
        assert archetype_of(PAPER, index, 3, "D2") == got[1]


def test_craft_archetypes_are_unchanged():
    for index in range(20):
        assert archetype_of(CRAFT, index, 1, "D3") == archetype_for(index, 1, "D3")


# ------------------------------------------------------------ what each seat sees


def _paper_game():
    """A text-mode game whose config names protocol paper (set on a copy of the config: no kernel needed)."""
    env = craft_env.env(message_mode="text", structure=0, director_order="fixed")
    env.reset(seed=3)
    game = env.unwrapped.game
    settings = {f.name: getattr(game.config, f.name) for f in fields(game.config)}
    game.config = SimpleNamespace(
        **{**settings, "protocol": PAPER}
    )  # works with or without the env's keyword
    return env, game


def test_paper_directors_see_walls_and_the_conversation_frozen_before_the_turn():
    env, game = _paper_game()
    env.step("Put a small red block bottom left.")  # director_1, turn 1
    text = director_text(game, 1)
    assert "D1's wall of the current board" in text and "bottom left" not in text
    for message in ("Second says hello.", "Third says hi."):
        env.step(message)
    env.step("pass")  # builder ends turn 1
    env.step("New turn message from D1.")
    later = director_text(game, 1)
    assert "bottom left" in later and "New turn message" not in later


def test_paper_builder_sees_only_this_turns_messages():
    env, game = _paper_game()
    for message in ("Old one.", "Old two.", "Old three."):
        env.step(message)
    env.step("pass")
    for message in ("Fresh one.", "Fresh two.", "Fresh three."):
        env.step(message)
    text = builder_text(game)
    assert "Fresh three." in text and "Old one." not in text and "This turn's messages" in text


def test_craft_seats_see_the_whole_conversation():
    env = craft_env.env(message_mode="text", structure=0, director_order="fixed")
    env.reset(seed=3)
    for message in ("Old one.", "Old two.", "Old three."):
        env.step(message)
    env.step("pass")
    env.step("Fresh one.")
    game = env.unwrapped.game
    assert "Old one." in builder_text(game) and "Fresh one." in director_text(game, 1)


def test_paper_prompts_state_the_papers_rules_and_craft_prompts_do_not():
    assert PAPER_RULES in director_system_prompt("D1", "cautious", 3, 3, PAPER)
    assert PAPER_RULES in builder_system_prompt(3, 3, True, PAPER)
    assert PAPER_RULES not in builder_system_prompt(3, 3, True)


# ------------------------------------------------------------ plumbing and resume


def test_runner_passes_the_protocol_to_the_env(tmp_path):
    structure = load_eval_set("paper")[0]
    spec = GameSpec(1, 0, structure, structure.id, 7)
    assert env_options(spec, RunSettings(out=str(tmp_path), protocol="paper"), False)["protocol"] == "paper"
    assert "protocol" not in env_options(spec, RunSettings(out=str(tmp_path)), False)


def test_config_and_summary_name_the_protocol_and_resume_refuses_another(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["run", "--out", str(out), "--structures", "0", "--turns", "2", "--no-progress", "--no-plots"]
    assert main(args) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["protocol"] == "craft" and config["dataset"] == "paper"
    assert json.loads((out / "run_1" / "summary.json").read_text())["protocol"] == "craft"
    assert "Protocol" in (out / "report.md").read_text()
    capsys.readouterr()
    assert main(["run", "--out", str(out), "--resume", "--protocol", "paper", "--no-progress"]) == 2
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "--protocol" in error and "'craft'" in error


def test_prepare_output_refuses_a_resume_under_another_protocol(tmp_path):
    from craft_env.models.redact import Redactor
    from craft_env.eval.run.runner import prepare_output

    prepare_output(RunSettings(out=str(tmp_path)), False, Redactor())
    with pytest.raises(ValueError, match="protocol: .*'craft', not 'paper'"):
        prepare_output(RunSettings(out=str(tmp_path), protocol="paper"), True, Redactor())


def test_the_env_reads_a_small_block_with_a_span_as_the_protocol_says():
    line = "PLACE:ys:(0,0):0:(0,1):CONFIRM:following D1"
    craft = craft_env.env(message_mode="text", structure=0, director_order="fixed")
    craft.reset(seed=3)
    for _ in range(3):
        craft.step("Nothing to add.")
    craft.step(line)
    info = craft.unwrapped.infos["builder"]
    assert not info["legal"] and "span_to" in info["reason"]
    env, _ = _paper_game()
    for _ in range(3):
        env.step("Nothing to add.")
    env.step(line)
    info = env.unwrapped.infos["builder"]
    assert info["legal"] and info["move"] == "place ys (0,0) L0"
