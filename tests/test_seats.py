"""Configurable seats (``seats=``, ``craft-env run --seats``): every env, the scripted team, text, runs.

``docs/rules.md`` ("Seats") is the rule: any non-empty subset of D0..D3,
seat ``Dk`` is agent ``director_k``, the order given is the seat index order.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import craft_env
from craft_env import Structure
from craft_env.cli import main
from craft_env.core.intents import intent_table
from craft_env.core.rules import partner_cell
from craft_env.core.observation import builder_obs_dim, director_obs_dim
from craft_env.core.views import ALL_SEATS, DEFAULT_SEATS, check_seats, seat_cells
from craft_env.envs.craft import BUILDER
from craft_env.eval.run.runner import run_benchmark
from craft_env.eval.run.settings import RunSettings
from craft_env.text import (
    director_frame_description,
    intent_to_text,
    parse_builder_reply,
    parse_director_message,
)

SEAT_SETS = [("D1",), ("D1", "D3"), ("D1", "D2", "D3"), ("D0", "D1", "D2", "D3"), ("D0", "D2")]
ENV_KINDS = ["env", "raw_env", "parallel_env", "vector_env"]
INTENTS = intent_table("D1", 3, 3).num_intents
BAD_SEATS = [(), [], ("D5",), ("D1", "D1"), "D1,D9", ("d1",), 3, None, {"D1", "D3"}]


def _make(kind: str, seats, **config):
    if kind == "vector_env":
        return craft_env.vector_env(2, seats=seats, **config)
    if kind == "raw_env":
        return craft_env.raw_env(seats=seats, **config)
    return getattr(craft_env, kind)(seats=seats, **config)


def _agents(seats) -> list[str]:
    return [f"director_{seat[1]}" for seat in seats] + [BUILDER]


@pytest.mark.parametrize("seats", SEAT_SETS)
@pytest.mark.parametrize("kind", ENV_KINDS)
def test_agents_spaces_and_masks_follow_the_seats(kind, seats):
    env = _make(kind, seats)
    dim = director_obs_dim(3, 3, len(seats), INTENTS)
    assert env.possible_agents == _agents(seats)
    for agent in env.possible_agents[:-1]:
        assert env.observation_space(agent)["observation"].shape == (dim,)
        assert env.action_space(agent).n == INTENTS
    builder_dim = builder_obs_dim(3, 3, len(seats), INTENTS)
    assert env.observation_space(BUILDER)["observation"].shape == (builder_dim,)
    if kind == "vector_env":
        obs, _ = env.reset(seed=1)
        assert obs["directors"]["observation"].shape == (2, len(seats), dim)
        assert obs["directors"]["action_mask"].shape == (2, len(seats), INTENTS)
        assert env.scripted_intents().shape == env.sample_actions(0).shape == (2, len(seats))
        return
    if kind == "parallel_env":
        observations, _ = env.reset(seed=1)
        assert list(observations) == _agents(seats)
        for agent in env.possible_agents[:-1]:
            assert observations[agent]["observation"].shape == (dim,)
            assert observations[agent]["action_mask"].shape == (INTENTS,)
        return
    env.reset(seed=1)
    assert env.agents == _agents(seats)
    for agent in env.possible_agents[:-1]:
        assert env.observe(agent)["action_mask"].shape == (INTENTS,)


def _run_episode(kind: str, env, rng: np.random.Generator) -> int:
    """Random legal actions to the end; the number of builder moves."""
    moves = 0
    if kind == "vector_env":
        env.reset(seed=2)
        for step in range(2 * env.config.max_turns):
            env.step(env.sample_actions(step))
            moves += step % 2
        return moves
    if kind == "parallel_env":
        observations, _ = env.reset(seed=2)
        while env.agents:
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in observations.items()}
            moves += env.builder_phase
            observations, *_ = env.step(actions)
        return moves
    env.reset(seed=2)
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        moves += agent == BUILDER
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return moves


@pytest.mark.parametrize("seats", SEAT_SETS)
@pytest.mark.parametrize("kind", ENV_KINDS)
def test_an_episode_runs_under_every_seat_set(kind, seats):
    env = _make(kind, seats, max_turns=6)
    assert _run_episode(kind, env, np.random.default_rng(0)) >= 1


def test_aec_env_selects_only_seated_directors_each_once_a_turn():
    env = craft_env.env(seats=("D3", "D0"), max_turns=3)
    env.reset(seed=4)
    speakers = []
    for agent in env.agent_iter():
        _, _, termination, truncation, _ = env.last()
        speakers.append(agent)
        env.step(None if termination or truncation else 0)
    turns = [speakers[k:k + 3] for k in range(0, 9, 3)]
    assert all(sorted(turn[:2]) == ["director_0", "director_3"] and turn[2] == BUILDER for turn in turns)
    assert env.unwrapped.seat_of == {"director_3": "D3", "director_0": "D0"}


def test_director_order_and_wall_starts_are_read_against_the_seats():
    env = craft_env.raw_env(seats=("D0", "D2"), director_order=("D2", "D0"))
    env.reset(seed=0)
    assert env.director_order == ["D2", "D0"]
    target = craft_env.load_eval_set()[3]
    started = craft_env.raw_env(seats=("D0", "D2"), structure=target, start="wall_D0")
    started.reset(seed=0)
    for i, j in seat_cells("D0", 3):
        assert started.board.stack(i, j) == target.stack(i, j)[: len(started.board.stack(i, j))]
    assert np.count_nonzero(started.board.array) > 0
    with pytest.raises(ValueError, match="director_order"):
        craft_env.raw_env(seats=("D0", "D2"), director_order=("D1", "D2"))
    with pytest.raises(ValueError, match="start"):
        craft_env.raw_env(seats=("D0", "D2"), start="wall_D1")


@pytest.mark.parametrize("bad", BAD_SEATS)
@pytest.mark.parametrize("kind", ENV_KINDS)
def test_bad_seats_are_a_value_error_naming_seats(kind, bad):
    with pytest.raises(ValueError, match="^seats: ") as error:
        _make(kind, bad)
    assert repr(bad) in str(error.value)


def test_check_seats_reads_names_and_comma_lists():
    assert check_seats("D0,D1, D2,D3") == ALL_SEATS
    assert check_seats(["D3", "D1"]) == ("D3", "D1")
    assert check_seats(DEFAULT_SEATS) == DEFAULT_SEATS


# ------------------------------------------------------------------ privacy


def _next_colour(value: int) -> int:
    """A block's cell value in the next colour (same size and partner direction)."""
    if value < 6:
        return 1 + value % 5
    colour, direction = divmod(value - 6, 4)
    return 6 + 4 * ((colour + 1) % 5) + direction


def _recoloured_off_wall(target: Structure, seat: str) -> Structure:
    """``target`` with every block that ``seat`` cannot see given the next colour.

    A block is unseen when its cell is off the seat's wall and, for a large
    block, its other half is off the wall too (both halves change together).
    """
    cells = target.array.copy()
    n = target.n
    wall = {i * n + j for i, j in seat_cells(seat, n)}
    for cell in range(n * n):
        for level in range(cells.shape[1]):
            value = int(cells[cell, level])
            if value == 0 or cell in wall or (value >= 6 and partner_cell(n, cell, value) in wall):
                continue
            cells[cell, level] = _next_colour(value)
    return Structure.adopt(cells, n)


def _changed_on_wall(target: Structure, seat: str) -> Structure:
    """``target`` with the lowest block on the seat's wall recoloured (or a block added to an empty wall)."""
    cells = target.array.copy()
    n = target.n
    wall = [i * n + j for i, j in seat_cells(seat, n)]
    for level in range(cells.shape[1]):
        for cell in wall:
            value = int(cells[cell, level])
            if value:
                cells[cell, level] = _next_colour(value)
                if value >= 6:
                    partner = partner_cell(n, cell, value)
                    cells[partner, level] = _next_colour(int(cells[partner, level]))
                return Structure.adopt(cells, n)
    cells[wall[0], 0] = 1
    return Structure.adopt(cells, n)


def _observation(kind: str, seats, director: str, target: Structure, mode: str):
    if kind == "vector_env":
        env = craft_env.vector_env(1, seats=seats, structure=target, director_order="fixed")
        obs, _ = env.reset(seed=0)
        return obs["directors"]["observation"][0, env.possible_agents.index(director)].tobytes(), None
    if kind == "parallel_env":
        env = craft_env.parallel_env(seats=seats, structure=target, message_mode=mode, director_order="fixed")
        obs, _ = env.reset(seed=0)
        return obs[director]["observation"].tobytes(), obs[director].get("text")
    env = craft_env.raw_env(seats=seats, structure=target, message_mode=mode, director_order="fixed")
    env.reset(seed=0)
    obs = env.observe(director)
    return obs["observation"].tobytes(), obs.get("text")


@settings(max_examples=15, deadline=None)
@given(
    seats=st.lists(st.sampled_from(ALL_SEATS), min_size=1, max_size=4, unique=True),
    pick=st.integers(0, 3),
    seed=st.integers(0, 10**6),
    kind=st.sampled_from(["raw_env", "parallel_env", "vector_env"]),
    mode=st.sampled_from(["intent", "text"]),
)
def test_each_director_sees_only_its_own_wall_of_the_target(seats, pick, seed, kind, mode):
    """Random seat subsets: sizes hold, and a director's observation changes with its wall only."""
    seats = tuple(seats)
    seat = seats[pick % len(seats)]
    director = f"director_{seat[1]}"
    target = craft_env.generate_structure(seed)
    base = _observation(kind, seats, director, target, mode)
    assert len(base[0]) == 4 * director_obs_dim(3, 3, len(seats), INTENTS)
    assert _observation(kind, seats, director, _recoloured_off_wall(target, seat), mode) == base
    changed = _observation(kind, seats, director, _changed_on_wall(target, seat), mode)
    assert changed[0] != base[0]
    if mode == "text" and kind != "vector_env":
        assert changed[1] != base[1]


# ------------------------------------------------------------- the builder


def _oracle_game(target: Structure, seats) -> Structure:
    """No-op directors and a builder that always plays the oracle's one candidate; the final board."""
    env = craft_env.env(seats=seats, structure=target, oracle_n=1, max_turns=40)
    env.reset(seed=0)
    for agent in env.agent_iter():
        obs, _, termination, truncation, info = env.last()
        if termination or truncation:
            env.step(None)
        elif agent == BUILDER:
            env.step(int(np.flatnonzero(obs["action_mask"][:-1])[0]))
            assert env.unwrapped.infos[BUILDER]["optimal"]
        else:
            env.step(0)
    return env.unwrapped.board


@pytest.mark.parametrize("seats", [("D2",), ("D1", "D3"), DEFAULT_SEATS, ALL_SEATS])
def test_the_oracle_following_builder_finishes_under_one_to_four_seats(seats):
    for target in craft_env.load_eval_set()[:4]:
        assert _oracle_game(target, seats).array.tolist() == target.array.tolist(), (seats, target.id)


def _scripted_progress(tmp_path, seats) -> float:
    settings_ = RunSettings(out=str(tmp_path / "-".join(seats)), oracle_n=0, seats=seats, concurrency=2)
    (summary,) = run_benchmark(settings_)
    assert summary["done"] == summary["games"] == 20
    return summary["table"]["progress"]


def test_the_scripted_team_without_the_oracle_does_better_with_four_seats_than_with_two(tmp_path):
    """A measured claim (docs/benchmark.md, "Seats"): more walls seen, more of the target built."""
    two = _scripted_progress(tmp_path, ("D1", "D3"))
    four = _scripted_progress(tmp_path, ALL_SEATS)
    assert four > two


# ------------------------------------------------------------------- runs


def test_cli_run_records_the_seats_and_resume_refuses_others(tmp_path, capsys):
    out = tmp_path / "four"
    common = ["--structures", "0,1", "--turns", "3", "--no-progress", "--no-plots"]
    assert main(["run", "--seats", "D0,D1,D2,D3", "--out", str(out), *common]) == 0
    config = json.loads((out / "config.json").read_text())
    assert config["seats"] == ["D0", "D1", "D2", "D3"]
    assert "seats D0,D1,D2,D3" in (out / "report.md").read_text()
    assert "λ_D0" in (out / "report.md").read_text()
    capsys.readouterr()
    assert main(["run", "--seats", "D1,D3", "--out", str(out), "--resume", *common]) == 2
    assert "--seats" in capsys.readouterr().err
    assert main(["run", "--out", str(out), "--resume", *common]) == 0
    assert main(["run", "--seats", "D5", "--out", str(tmp_path / "bad"), *common]) == 2
    error = capsys.readouterr().err
    assert "seats" in error and "'D5'" in error
    logged = [json.loads(line) for line in (out / "run_1" / "log.jsonl").read_text().splitlines()]
    speakers = {d["director"] for entry in logged for d in entry.get("director_responses") or []}
    assert speakers == {"D0", "D1", "D2", "D3"}


def test_replay_and_transcript_show_the_seated_walls(tmp_path):
    from craft_env.eval.replay.page import replay_data
    from craft_env.eval.replay.transcript import game_transcript

    out = tmp_path / "near"
    run_benchmark(RunSettings(out=str(out), structures=[0], turns=2, seats=("D0", "D2")))
    (game,) = replay_data([out])["games"]
    assert list(game["walls"]) == ["D0", "D2"] and game["walls"]["D0"]["side"] == "near"
    assert "seats D0,D2" in game["condition"]
    assert [1, 1] in game["hidden"] and [2, 1] not in game["hidden"]
    assert "at D0,D2" in game_transcript(out, "0")


def test_api_resume_refuses_other_seats(tmp_path):
    out = tmp_path / "run"
    run_benchmark(RunSettings(out=str(out), structures=[0], turns=2, seats=("D1", "D3")))
    with pytest.raises(ValueError, match="seats"):
        run_benchmark(RunSettings(out=str(out), structures=[0], turns=2), resume=True)


def test_export_to_the_paper_format_refuses_other_seats(tmp_path):
    from craft_env.eval.logs.paperlogs import export_paper_logs

    out = tmp_path / "run"
    run_benchmark(RunSettings(out=str(out), structures=[0], turns=2, seats=ALL_SEATS))
    with pytest.raises(ValueError, match="D1, D2, D3 only"):
        export_paper_logs(out, tmp_path / "paper")


def test_paper_protocol_with_four_seats_draws_four_slots_among_them():
    env = craft_env.raw_env(seats=ALL_SEATS, protocol="paper", max_turns=30)
    env.reset(seed=5)
    slots = []
    for _ in range(30):
        slots.append(list(env.director_order))
        for _ in range(4):
            env.step(0)
        env.step(env.game.noop)
    assert all(len(turn) == 4 and set(turn) <= set(ALL_SEATS) for turn in slots)
    assert any(len(set(turn)) < 4 for turn in slots)  # with replacement


# --------------------------------------------------------------- text, prompts


def test_the_near_seat_describes_its_side_and_reads_its_own_frame():
    frame = director_frame_description("D0", 3, 3)
    assert "beside the builder, on the near side" in frame and "row i=2" in frame
    assert "Your left and right are the builder's" in frame
    table = intent_table("D0", 3, 3)
    for intent in (table.small(0, 0, 1), table.small(2, 0, 4)):
        assert parse_director_message(intent_to_text(intent, table), "D0", 3, 3) == [intent]
    assert seat_cells("D0", 3) == [(2, 0), (2, 1), (2, 2)]
    reply = parse_builder_reply("MOVE: place rs (2,0) L0\nFOLLOWED: D0", 3, 3)
    assert reply.followed == "D0" and reply.followed_seats == ("D0",)
    assert parse_builder_reply("MOVE: place rs (2,0) L0\nFOLLOWED: the near director", 3, 3).followed == "D0"


def test_a_d0_directors_text_observation_and_prompt_name_its_seat():
    from craft_env.agents.prompts import ARCHETYPE_NAMES, builder_system_prompt, director_messages

    env = craft_env.raw_env(seats=("D0", "D2"), message_mode="text", director_order="fixed")
    env.reset(seed=0)
    text = env.observe("director_0")["text"]
    assert text.startswith("You are director D0.") and "near side" in text
    messages = director_messages(text, "D0", ARCHETYPE_NAMES[0], 3, 3, seats=("D0", "D2"))
    system = messages[0]["content"]
    seated = "Two directors sit around the grid: D0 beside the builder on the near side, D2 on the far side"
    assert seated in system
    builder = builder_system_prompt(3, 3, True, seats=("D0", "D2"))
    assert "FOLLOWED: <the director whose message you acted on: D0 or D2>" in builder
    assert "Three directors sit around the grid: D1 on the builder's left" in builder_system_prompt(3, 3, True)


def test_play_takes_only_a_seated_seat():
    from craft_env.eval.run.play import play_settings

    with pytest.raises(ValueError, match="seat"):
        play_settings("D0", out="unused")
    settings_ = play_settings("D0", out="unused", seats="D0,D2")
    assert settings_.person == "D0" and settings_.seats == ("D0", "D2")


@pytest.mark.parametrize("seats", [("D1",), ALL_SEATS])
def test_the_homogenising_wrappers_follow_the_seats(seats):
    from craft_env.wrappers import homogeneous_env, homogeneous_parallel_env

    parallel = homogeneous_parallel_env(seats=seats)
    observations, _ = parallel.reset(seed=0)
    assert list(observations) == _agents(seats)
    shapes = {parallel.observation_space(agent)["observation"].shape for agent in parallel.possible_agents}
    assert shapes == {(director_obs_dim(3, 3, len(seats), INTENTS) + 2,)}
    aec = homogeneous_env(seats=seats, max_turns=3)
    aec.reset(seed=0)
    for agent in aec.agent_iter():
        obs, _, termination, truncation, _ = aec.last()
        aec.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
    assert aec.possible_agents == _agents(seats)


def test_frames_label_the_seated_directors():
    from craft_env.envs.render import render_panel, seat_labels

    assert [label for label, _ in seat_labels()] == ["D1", "D2", "D3", "BUILDER"]
    assert [label for label, _ in seat_labels(("D0", "D3"))] == ["D3", "BUILDER D0"]
    board = craft_env.load_eval_set()[0]
    assert render_panel(board).shape == render_panel(board, seats=("D0", "D3")).shape
    assert not np.array_equal(render_panel(board), render_panel(board, seats=("D0", "D3")))
    env = craft_env.raw_env(seats=ALL_SEATS, render_mode="ansi")
    env.reset(seed=0)
    frame = env.render()
    assert all(f"{seat} wall" in frame for seat in ALL_SEATS)
