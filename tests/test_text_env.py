"""``craft_env.text_env``: one seat played by text, the runner's game underneath, batched."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
from train_runs import mixed_run  # tests/ is on sys.path (conftest)

import craft_env
from craft_env import Structure, metrics, oracle
from craft_env.datasets import load_dataset
from craft_env.eval.logs.games import read_games
from craft_env.eval.run.settings import game_seed
from craft_env.train.replay import CHECKED_FIELDS

CANDIDATE = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


def first_candidate(messages) -> str:
    return f"MOVE: {CANDIDATE.findall(messages[-1]['content'])[0][1]}\nFOLLOWED: D1"


def test_an_episode_reproduces_a_logged_game_given_the_same_replies(tmp_path):
    run = mixed_run(tmp_path / "mixed")
    games = read_games(run / "run_1" / "log.jsonl")
    assert games
    for (_, index), game in games.items():
        env = craft_env.text_env(seat="builder", others="scripted", oracle_n=5, max_turns=8)
        messages, info = env.reset(seed=game_seed(0, 1, index), structure=index, run=1)
        assert info["structure_id"] == game.structure_id
        for logged in game.turns:
            assert messages is not None
            assert f"Turn {logged['turn_number']} of 8" in messages[-1]["content"]
            messages, _, terminated, truncated, info = env.step(logged["builder"]["raw"])
            (replayed,) = info["turns"]
            for name in CHECKED_FIELDS:
                assert replayed[name] == logged[name], name
            assert [d["message"] for d in replayed["director_responses"]] == [
                d["message"] for d in logged["director_responses"]
            ]
            assert info["sent"] == logged["builder"]["sent"] and info["reason"] == logged["reason"]
        assert messages is None and (terminated or truncated)
        env.close()


def test_model_seats_through_litellm_play_as_the_built_in_agents_do():
    """``others`` may be any litellm model; ``scripted/team`` answers offline as the scripted team would."""
    played = {}
    for others in ("scripted", "scripted/team"):
        with craft_env.text_env(others=others, max_turns=5) as env:
            messages, _ = env.reset(seed=4)
            trace, step = [messages], 0
            while messages is not None:
                reply = first_candidate(messages) if step % 2 == 0 else "no idea"
                messages, reward, _, _, info = env.step(reply)
                said = [entry["message"] for entry in info["turns"][0]["director_responses"]]
                trace.append((messages, reward, said))
                step += 1
            played[others] = trace
    assert len(played["scripted"]) == 6 and played["scripted"] == played["scripted/team"]


def test_a_builder_that_copies_a_candidate_finishes_and_the_rewards_add_up():
    target = load_dataset("paper")[4]
    for reward in ("progress_delta", "distance", "sparse"):
        with craft_env.text_env(reward=reward) as env:
            messages, info = env.reset(seed=11, structure=4)
            total, steps = 0.0, 0
            while messages is not None:
                messages, value, terminated, truncated, info = env.step(first_candidate(messages))
                total, steps = total + value, steps + 1
                assert info["legal"] and info["optimal"]
            assert terminated and not truncated and info["distance"] == 0
            empty = Structure.empty()
            expected = {
                "progress_delta": 1.0 - metrics.score(empty, target)["progress"],
                "distance": float(oracle.distance(empty, target)),
                "sparse": 1.0,
            }[reward]
            assert total == pytest.approx(expected)
            assert steps == oracle.distance(empty, target)
            with pytest.raises(ValueError, match="the game has ended"):
                env.step("MOVE: pass")


def test_failed_turns_are_verdicts_not_errors_and_can_be_penalised():
    with craft_env.text_env(failed_turn_penalty=0.5) as env:
        env.reset(seed=0)
        _, reward, terminated, truncated, info = env.step("no idea at all")
        assert not info["legal"] and info["reply_reason"] == "no move or question found"
        assert reward == -0.5 and not terminated and not truncated
        _, reward, _, _, info = env.step("MOVE: place gs (0,0) L2\nFOLLOWED: D1")
        assert not info["legal"] and "layer" in info["reason"] and reward == -0.5
        messages, reward, _, _, info = env.step("QUESTION: which block first?\nFOLLOWED: none")
        assert info["legal"] and info["question"] == "which block first?" and reward == 0.0
        assert "which block first?" in messages[-1]["content"]


def test_batched_games_step_together_and_match_single_games():
    seeds = [3, 8, 21]
    batch = craft_env.text_env(num_envs=3, max_turns=6)
    observations, infos = batch.reset(seed=seeds)
    singles = [craft_env.text_env(max_turns=6) for _ in seeds]
    expected = [env.reset(seed=seed) for env, seed in zip(singles, seeds)]
    assert observations == [messages for messages, _ in expected]
    assert [i["seed"] for i in infos] == seeds
    steps = 0
    while any(o is not None for o in observations):
        replies = [
            None if o is None else ("MOVE: pass" if (steps + k) % 3 == 0 else first_candidate(o))
            for k, o in enumerate(observations)
        ]
        observations, rewards, terminated, truncated, infos = batch.step(replies)
        for k, (env, reply) in enumerate(zip(singles, replies)):
            if reply is None:
                assert observations[k] is None and rewards[k] == 0.0
                continue
            messages, reward, ended, cut, info = env.step(reply)
            assert observations[k] == messages and rewards[k] == reward
            assert (terminated[k], truncated[k]) == (ended, cut) and infos[k]["turns"] == info["turns"]
        steps += 1
    assert steps == 6  # max_turns: the passes keep every game from finishing
    batch.close()
    for env in singles:
        env.close()


def test_a_director_seat_gets_its_own_prompt_and_the_verdict_of_its_turn():
    with craft_env.text_env(seat="D2", oracle_n=0, director_order="fixed") as env:
        messages, _ = env.reset(seed=5, structure=2)
        assert messages[0]["content"].startswith("You are director D2")
        assert "Write your <think> and your <message>" in messages[-1]["content"]
        _, reward, _, _, info = env.step(
            "<think>my wall</think>\n<message>put a small red block on my left column, bottom layer</message>"
        )
        assert info["sent"] == "put a small red block on my left column, bottom layer"
        assert info["reply_reason"] is None and isinstance(info["intent"], int)
        assert (
            info["turn"] == 1
            and "legal" in info
            and reward
            == pytest.approx(
                info["turns"][0]["progress_data"]["progress"]
                - metrics.score(Structure.empty(), load_dataset("paper")[2])["progress"]
            )
        )
        _, _, _, _, info = env.step("just some words")
        assert info["reply_reason"].startswith("no <message> tag")


def test_bad_options_name_the_keyword():
    with pytest.raises(ValueError, match="^colour: not an option of text_env"):
        craft_env.text_env(colour="red")
    with pytest.raises(ValueError, match="^seat: expected one of builder, D1, D2, D3"):
        craft_env.text_env(seat="D0")
    with pytest.raises(ValueError, match="^reward: expected one of"):
        craft_env.text_env(reward="money")
    with pytest.raises(ValueError, match="^structure: expected an index"):
        craft_env.text_env(structure=99)
    with pytest.raises(ValueError, match="^num_envs: expected an int from 1 to "):
        craft_env.text_env(num_envs=0)


def test_import_craft_env_and_the_text_env_stay_light():
    code = (
        "import sys, json, craft_env; env = craft_env.text_env(); env.reset(seed=0); env.step('MOVE: pass');"
        "heavy = ('torch', 'transformers', 'trl', 'datasets', 'openenv', 'litellm');"
        "print(json.dumps(sorted(m for m in heavy"
        " if m in sys.modules)))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == []
