"""The text environment's inputs are checked where they enter (issue 35, items 18-20).

Every bad argument is refused before a game starts, with a ``ValueError``
naming the argument and its range; a reply's lone surrogates never reach
``info``; ``close()`` works from a thread whose own event loop runs (an async
server's), and a closed environment says so.
"""

from __future__ import annotations

import asyncio
import json
import math
import re

import numpy as np
import pytest

import craft_env
from craft_env.train import text_env as text_env_module
from craft_env.train.text_env import MAX_NUM_ENVS, MAX_SEED

CANDIDATE = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)
SURROGATE = re.compile("[\ud800-\udfff]")


@pytest.fixture(scope="module")
def env():
    with craft_env.text_env(oracle_n=5, max_turns=4) as env:
        yield env


@pytest.mark.parametrize(
    "seed", [2**63, MAX_SEED + 1, 2**64, -1, 2**70, "3", 1.5, 3.0, True, None, np.float64(2.0)]
)
def test_a_seed_out_of_range_or_not_an_integer_is_refused_naming_the_range(env, seed):
    with pytest.raises(ValueError, match=r"^seed: expected an int from 0 to 9,223,372,036,854,775,807, got "):
        env.reset(seed=seed)


def test_every_integer_type_in_range_is_a_seed_and_the_same_seed_is_the_same_game(env):
    by_int, _ = env.reset(seed=3)
    for seed in (np.int64(3), np.uint8(3), np.int32(3)):
        messages, info = env.reset(seed=seed)
        assert messages == by_int and info["seed"] == 3 and type(info["seed"]) is int
    messages, info = env.reset(seed=MAX_SEED)
    assert messages is not None and "error" not in info and info["seed"] == MAX_SEED


def test_a_batched_reset_whose_later_seeds_pass_the_range_is_refused_before_any_game_starts():
    with craft_env.text_env(num_envs=2, oracle_n=5, max_turns=4) as env:
        with pytest.raises(ValueError, match=r"^seed: expected an int from 0 to 9,223,372,036,854,775,806 "):
            env.reset(seed=MAX_SEED)
        with pytest.raises(ValueError, match=r"^seed\[1\]: expected an int from 0 to .*, got 9223372036"):
            env.reset(seed=[0, 2**63])
        assert not env.started
        observations, infos = env.reset(seed=np.array([MAX_SEED - 1, MAX_SEED]))
        assert all(o is not None for o in observations)
        assert [info["seed"] for info in infos] == [MAX_SEED - 1, MAX_SEED]


@pytest.mark.parametrize("run", ["x", None, -5, 0, 1.5, 2**70, True, 1001])
def test_a_run_out_of_range_or_not_an_integer_is_refused(env, run):
    with pytest.raises(ValueError, match=r"^run: expected an int from 1 to 1,000, got "):
        env.reset(seed=1, run=run)


def test_a_structure_must_be_an_index_not_a_bool(env):
    expected = "^structure: expected an index into the dataset from 0 to 19, got "
    with pytest.raises(ValueError, match=expected + "True"):
        env.reset(seed=1, structure=True)
    with pytest.raises(ValueError, match=expected + "20"):
        env.reset(seed=1, structure=20)
    with pytest.raises(ValueError, match=expected + "True"):
        craft_env.text_env(structure=True)
    _, info = env.reset(seed=1, structure=np.int64(4), run=np.int16(2))
    assert (info["structure_index"], info["run"]) == (4, 2)


@pytest.mark.parametrize("penalty", [math.nan, math.inf, -math.inf, -0.5, "0.5", None, True, 1e7])
def test_a_failed_turn_penalty_must_be_a_finite_number_in_range(penalty):
    expected = r"^failed_turn_penalty: expected a finite number from 0 to 1e\+06, got "
    with pytest.raises(ValueError, match=expected):
        craft_env.text_env(failed_turn_penalty=penalty)


@pytest.mark.parametrize("num_envs", [10**7, MAX_NUM_ENVS + 1, 0, -3, 2.0, True, "4"])
def test_num_envs_is_bounded_and_refused_at_once(num_envs):
    with pytest.raises(ValueError, match=r"^num_envs: expected an int from 1 to 4,096, got "):
        craft_env.text_env(num_envs=num_envs)


def test_step_before_reset_and_any_call_after_close_say_what_to_do():
    env = craft_env.text_env(oracle_n=5, max_turns=4)
    with pytest.raises(ValueError, match=r"^step: no game yet; call reset\(\) first"):
        env.step("MOVE: pass")
    env.reset(seed=2)
    env.close()
    env.close()  # a second close is a no-op
    with pytest.raises(ValueError, match=r"^step: the environment is closed; make a new one"):
        env.step("MOVE: pass")
    with pytest.raises(ValueError, match=r"^reset: the environment is closed; make a new one"):
        env.reset(seed=2)
    batched = craft_env.text_env(num_envs=2, oracle_n=5, max_turns=4)
    batched.close()
    with pytest.raises(ValueError, match=r"^step: the environment is closed"):
        batched.step(["a", "b"])


def test_close_works_in_a_thread_whose_own_event_loop_runs():
    """An async server (OpenEnv's HTTP ``/reset``) closes the environment on its own loop's thread."""
    env = craft_env.text_env(oracle_n=5, max_turns=4)
    messages, _ = env.reset(seed=5)
    assert messages is not None

    async def serve() -> None:
        env.close()

    asyncio.run(serve())
    assert env.batch._loop.is_closed()
    with pytest.raises(ValueError, match="closed"):
        env.reset(seed=5)


def test_a_game_that_crashes_before_its_first_turn_says_why(monkeypatch):
    async def crashing_game(*args, **kwargs):
        raise RuntimeError("the engine refused the game")

    monkeypatch.setattr(text_env_module, "play_game", crashing_game)
    with craft_env.text_env(oracle_n=5, max_turns=4) as env:
        messages, info = env.reset(seed=1)
    assert messages is None
    assert info["error"] == "the game crashed: RuntimeError: the engine refused the game"


def test_a_replys_lone_surrogates_become_the_replacement_character_where_it_enters(env):
    messages, _ = env.reset(seed=6, structure=2)
    move = CANDIDATE.findall(messages[-1]["content"])[0][1]
    reply = f"MOVE: {move}\nFOLLOWED: D1 \ud800 and \udfff"
    _, _, _, _, info = env.step(reply)
    (turn,) = info["turns"]
    assert SURROGATE.search(turn["builder"]["raw"]) is None and "\ufffd" in turn["builder"]["raw"]
    json.dumps(info, ensure_ascii=False).encode("utf-8")  # every string in info can be written to a file
    assert info["legal"] and info["sent"] and SURROGATE.search(info["sent"]) is None
    messages, _ = env.reset(seed=6, structure=2)
    _, _, _, _, info = env.step(f"MOVE: {move}\ud83d")  # a lone surrogate inside the move line itself
    assert SURROGATE.search(json.dumps(info, ensure_ascii=False)) is None
    json.dumps(info, ensure_ascii=False).encode("utf-8")


def test_a_grpo_dataset_of_more_games_than_one_env_holds_is_made_in_parts(monkeypatch):
    """``num_envs`` is bounded, so ``CraftRollout.dataset`` makes a long seed list's first chats in parts."""
    trl_rollout = pytest.importorskip("craft_env.train.trl", exc_type=ImportError)
    monkeypatch.setattr(trl_rollout, "MAX_NUM_ENVS", 2)
    rollout = trl_rollout.CraftRollout(max_turns=2, oracle_n=5)
    dataset = rollout.dataset([0, 1, 2, 3, 4])
    with craft_env.text_env(num_envs=5, max_turns=2, oracle_n=5) as env:
        chats, _ = env.reset(seed=0)
    assert dataset["prompt"] == chats
