"""The PettingZoo environments: API conformance, the turn protocol, equivalence, hygiene, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pettingzoo.test import api_test, parallel_api_test, parallel_seed_test, render_test, seed_test, state_test
from pettingzoo.utils.conversions import parallel_to_aec

import craft_env
from craft_env import Structure, metrics, oracle
from craft_env.core.metrics import METRIC_NAMES
from craft_env.agents.decode import decode_board
from craft_env.core.encoding import VALUE_TO_CODE_INDEX
from craft_env.core.observation import fill_builder_obs, fill_director_obs
from craft_env.core.views import seat_cells
from craft_env.envs.craft import BUILDER, DIRECTORS

FIXTURES = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "craft_paper_structures_20.json"


@pytest.mark.parametrize("mode", ["intent", "text"])
def test_pettingzoo_api(mode):
    api_test(craft_env.env(message_mode=mode), num_cycles=60)
    parallel_api_test(craft_env.parallel_env(message_mode=mode), num_cycles=60)


@pytest.mark.parametrize("mode", ["intent", "text"])
def test_pettingzoo_seeding(mode):
    seed_test(lambda: craft_env.env(message_mode=mode, oracle_n=5), num_cycles=30)
    parallel_seed_test(lambda: craft_env.parallel_env(message_mode=mode), num_cycles=30)


@pytest.mark.parametrize("mode", ["intent", "text"])
def test_pettingzoo_render_test_on_both_envs(mode, capsys):
    render_test(lambda render_mode: craft_env.env(message_mode=mode, render_mode=render_mode))
    render_test(
        lambda render_mode: parallel_to_aec(craft_env.parallel_env(message_mode=mode, render_mode=render_mode))
    )
    render_test(
        lambda render_mode: craft_env.env(message_mode=mode, render_mode=render_mode, render_target=True)
    )
    assert "CRAFT turn" in capsys.readouterr().out  # the human mode printed its frames


@pytest.mark.parametrize("render_mode", ["ansi", "rgb_array"])
def test_render_modes(render_mode):
    env = craft_env.env(render_mode=render_mode)
    env.reset(seed=1)
    picture = env.render()
    if render_mode == "rgb_array":
        assert picture.dtype == np.uint8 and picture.ndim == 3 and picture.shape[2] == 3
    else:
        assert "D1" in picture and "D3" in picture


def test_human_mode_prints_the_ansi_frame(capsys):
    human = craft_env.env(render_mode="human", render_target=True)
    ansi = craft_env.env(render_mode="ansi", render_target=True)
    for env in (human, ansi):
        env.reset(seed=4)
        for _ in range(4):
            env.step(0 if env.agent_selection != "builder" else int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    capsys.readouterr()
    assert human.render() is None
    assert capsys.readouterr().out == ansi.render()  # not a terminal here: no colour escapes
    assert "target 0" in ansi.render() and "CRAFT turn 1/20" in ansi.render()


def test_rgb_frame_shows_the_turn_and_the_target_on_request():
    from craft_env.envs.render import panel_origin, render_frame, render_rgb

    env = craft_env.env(render_mode="rgb_array", structure=2)
    wide = craft_env.env(render_mode="rgb_array", structure=2, render_target=True)
    env.reset(seed=0)
    wide.reset(seed=0)
    first = env.render()
    board, target = env.unwrapped.board, env.unwrapped.target
    assert np.array_equal(first, render_frame(board, "TURN 0/20"))
    top, left = panel_origin()
    picture = render_rgb(board)
    assert np.array_equal(first[top:top + picture.shape[0], left:left + picture.shape[1]], picture)
    assert np.array_equal(wide.render(), render_frame(board, "TURN 0/20", target))
    assert wide.render().shape[1] == 2 * first.shape[1]
    for _ in range(4):
        env.step(0 if env.agent_selection != "builder" else env.unwrapped.game.noop)
    later = env.render()
    assert env.unwrapped.turn == 1 and np.array_equal(later, render_frame(env.unwrapped.board, "TURN 1/20"))
    assert not np.array_equal(later[:top], first[:top])  # the title line changed with the turn


def test_aec_env_refuses_pettingzoos_generic_parallel_conversion_and_parallel_env_converts_to_aec():
    """``aec_to_parallel`` would play another game (one cycle, shuffled order): ``parallel_env()`` is the way."""
    from pettingzoo.utils.conversions import aec_to_parallel

    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(craft_env.env())
    converted = parallel_to_aec(craft_env.parallel_env())
    converted.reset(seed=0)
    steps = 0
    for agent in converted.agent_iter(40):
        obs, _, termination, truncation, _ = converted.last()
        converted.step(None if termination or truncation else int(np.flatnonzero(obs["action_mask"])[0]))
        steps += 1
    assert steps == 40


@pytest.mark.parametrize("mode", ["intent", "text"])
def test_pettingzoo_state_test(mode):
    state_test(craft_env.env(message_mode=mode), craft_env.parallel_env(message_mode=mode))


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**40), sees=st.sampled_from(["full", "walls"]), data=st.data())
def test_state_encodes_board_whole_target_intents_and_turn(seed, sees, data):
    env = craft_env.parallel_env(director_sees=sees, max_turns=6)
    observations, _ = env.reset(seed=seed)
    game = env.game
    board_size = game.builder_dim - len(DIRECTORS) * game.num_intents - 1
    while True:
        state = env.state()
        assert env.state_space.contains(state)
        assert np.array_equal(decode_board(state, game.n, game.height), game.board)
        assert np.array_equal(decode_board(state[board_size:], game.n, game.height), game.target)
        builder_tail = observations[BUILDER]["observation"][board_size:]
        assert np.array_equal(state[2 * board_size:], builder_tail)  # intents and turn, as the builder sees them
        if not env.agents:
            break
        actions = {
            agent: data.draw(st.sampled_from(np.flatnonzero(obs["action_mask"]).tolist()))
            for agent, obs in observations.items()
        }
        observations, *_ = env.step(actions)


def test_metadata_and_spaces_are_stable():
    env = craft_env.raw_env()
    assert env.metadata["name"] == "craft_v0"
    assert env.metadata["render_modes"] == ["human", "ansi", "rgb_array"]
    assert env.possible_agents == ["director_1", "director_2", "director_3", "builder"]
    assert env.action_space("builder").n == 115
    assert env.action_space("director_1").n == 145
    assert env.observation_space("builder") is env.observation_space("builder")
    env.reset(seed=0)
    obs = env.observe("builder")
    assert obs["action_mask"].dtype == np.int8
    assert obs["observation"].dtype == np.float32
    assert "text" not in obs


def _play_oracle_builder(env, after_builder_step=None, on_finished_observation=None) -> None:
    """Play an episode (already reset): no-op directors, a builder playing its first unmasked move.

    With ``oracle_n`` set, that move is an oracle candidate.
    """
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        if termination or truncation:
            if on_finished_observation is not None:
                on_finished_observation(obs)
            env.step(None)
        elif agent == BUILDER:
            env.step(int(np.flatnonzero(obs["action_mask"][:-1])[0]))
            if after_builder_step is not None:
                after_builder_step(env)
        else:
            env.step(0)


def _oracle_builder_game(target: Structure, max_turns: int) -> tuple[int, float]:
    """The turns an oracle-following builder (one candidate a turn) takes, and the distance left."""
    env = craft_env.env(structure=target, oracle_n=1, max_turns=max_turns)
    env.reset(seed=0)
    turns = []

    def check(env) -> None:
        info = env.unwrapped.infos[BUILDER]
        assert info["legal"] and info["optimal"] and info["followed_oracle"]
        assert len(info["candidates"]) == 1
        if info["terminated"]:
            assert info["metrics"]["progress"] == 1.0
        turns.append(info["turn"])

    _play_oracle_builder(env, check)
    return len(turns), env.unwrapped.game.distance


def test_oracle_builder_completes_every_bundled_structure_in_distance_turns():
    for target in craft_env.load_eval_set():
        needed = oracle.distance(Structure.empty(), target)
        turns, remaining = _oracle_builder_game(target, needed + 5)
        assert (turns, remaining) == (needed, 0), target.id


def test_oracle_builder_completes_every_paper_structure_in_distance_turns():
    if not FIXTURES.exists():
        pytest.skip("paper fixtures not available")
    for entry in json.loads(FIXTURES.read_text()):
        target = Structure.from_dict(entry)
        needed = oracle.distance(Structure.empty(), target)
        turns, remaining = _oracle_builder_game(target, needed + 5)
        assert (turns, remaining) == (needed, 0), entry["id"]


def _play_aec(seed: int, actions: list[dict[str, int]], **config) -> list[tuple]:
    env = craft_env.env(**config)
    env.reset(seed=seed)
    trajectory = []
    turn = 0
    for agent in env.agent_iter():
        _, reward, termination, truncation, _ = env.last()
        if termination or truncation:
            env.step(None)
            continue
        env.step(actions[turn][agent])
        if agent == BUILDER:
            info = env.unwrapped.infos[BUILDER]
            trajectory.append((env.unwrapped.game.board.tobytes(), info["reward"], info["terminated"],
                               info["truncated"], info["legal"], info["move"]))
            turn += 1
    return trajectory


def _play_parallel(seed: int, actions: list[dict[str, int]], **config) -> list[tuple]:
    env = craft_env.parallel_env(**config)
    env.reset(seed=seed)
    trajectory = []
    turn = 0
    while env.agents:
        env.step(actions[turn])
        _, rewards, terminations, truncations, infos = env.step(actions[turn])
        info = infos[BUILDER]
        assert rewards[BUILDER] == info["reward"]
        trajectory.append((env.game.board.tobytes(), info["reward"], terminations[BUILDER],
                           truncations[BUILDER], info["legal"], info["move"]))
        turn += 1
    return trajectory


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**40), oracle_n=st.sampled_from([None, 3]), data=st.data())
def test_aec_and_parallel_play_the_same_game(seed, oracle_n, data):
    """Same seed and same actions (including illegal ones): the same boards, rewards and endings."""
    config = {"oracle_n": oracle_n, "max_turns": 12, "reward": "distance"}
    actions = [
        {
            **{d: data.draw(st.integers(0, 144)) for d in DIRECTORS},
            BUILDER: data.draw(st.integers(0, 114)),
        }
        for _ in range(12)
    ]
    aec = _play_aec(seed, actions, **config)
    parallel = _play_parallel(seed, actions, **config)
    assert aec == parallel
    assert len(aec) == 12 or aec[-1][2]


def _observations_from_scratch(game) -> tuple[np.ndarray, np.ndarray]:
    """Every agent's observation encoded anew from the game state (``core.observation``'s full writers)."""
    fraction = min(game.turn / game.config.max_turns, 1.0)
    builder = np.empty(game.builder_dim, np.float32)
    fill_builder_obs(game.board, game.n, VALUE_TO_CODE_INDEX, game.all_visible, game.spoken, game.num_intents,
                     fraction, builder)
    directors = np.empty((len(DIRECTORS), game.director_dim), np.float32)
    for seat in range(len(DIRECTORS)):
        fill_director_obs(game.board, game.target, game.n, VALUE_TO_CODE_INDEX, game.director_visible,
                          game.walls[seat], game.spoken, game.num_intents, fraction, seat, directors[seat])
    return directors, builder


@settings(max_examples=20, deadline=None)
@given(
    seed=st.integers(0, 2**40),
    sees=st.sampled_from(["full", "walls"]),
    start=st.sampled_from(["empty", "first_layer", "wall_D2"]),
    oracle_n=st.sampled_from([None, 2]),
    data=st.data(),
)
def test_kept_observations_match_a_fresh_encoding_at_every_step(seed, sees, start, oracle_n, data):
    """Observations are updated in place (changed cells, spoken intents): they must equal a full rewrite."""
    env = craft_env.raw_env(director_sees=sees, start=start, oracle_n=oracle_n, max_turns=8)
    env.reset(seed=seed)
    game = env.game
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        directors, builder = _observations_from_scratch(game)
        expected = builder if agent == BUILDER else directors[DIRECTORS.index(agent)]
        assert np.array_equal(obs["observation"], expected), agent
        assert np.array_equal(game.director_obs, directors) and np.array_equal(game.builder_obs, builder)
        if agent == BUILDER and oracle_n and not (termination or truncation):
            board = env.board
            candidates = env.candidates
            assert candidates and all(board.is_legal(move) and move.layer is not None for move in candidates)
            named = sorted(move.to_action(game.n) for move in candidates)
            assert named == np.flatnonzero(obs["action_mask"])[:-1].tolist()
        if termination or truncation:
            env.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        size = env.action_space(agent).n
        pick = data.draw(st.one_of(st.sampled_from(legal.tolist()), st.integers(0, size - 1)))
        env.step(pick)
        if agent == BUILDER:
            info = env.infos[BUILDER]
            assert list(info["metrics"]) == list(METRIC_NAMES)
            assert info["metrics"] == metrics.score(env.board, env.target)
            assert info["distance"] == oracle.distance(env.board, env.target)


def test_parallel_env_masks_the_idle_side():
    env = craft_env.parallel_env()
    observations, _ = env.reset(seed=3)
    assert observations[BUILDER]["action_mask"].tolist() == [0] * 114 + [1]
    assert observations["director_1"]["action_mask"].sum() > 1
    observations, *_ = env.step({a: 0 for a in env.agents} | {BUILDER: 114})
    for director in DIRECTORS:
        assert observations[director]["action_mask"].tolist() == [1] + [0] * 144
    assert observations[BUILDER]["action_mask"].sum() > 1


def _swap_colour(code: str) -> str:
    colours = "gbryo"
    return colours[(colours.index(code[0]) + 1) % 5] + code[1]


def _recolour(target: Structure, cells: list[tuple[int, int]]) -> Structure:
    """``target`` with every block in ``cells`` given the next colour (both halves of a large block)."""
    touched = set()
    for i, j in cells:
        for level in range(len(target.stack(i, j))):
            touched.add((i, j, level))
            partner = target.partner(i, j, level)
            if partner is not None:
                touched.add((*partner, level))
    data = target.to_dict(views=False)
    recoloured = {}
    for (i, j), stack in target.stacks().items():
        recoloured[f"({i},{j})"] = [
            _swap_colour(code) if (i, j, level) in touched else code for level, code in enumerate(stack)
        ]
    return Structure.from_dict({"structure": recoloured, "spans": data["spans"]})


def _director_observation(target: Structure, director: str, mode: str):
    env = craft_env.raw_env(structure=target, message_mode=mode, director_order="fixed")
    env.reset(seed=0)
    obs = env.observe(director)
    return obs["observation"].tobytes(), obs.get("text")


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 10**6), seat_index=st.integers(0, 2), mode=st.sampled_from(["intent", "text"]))
def test_directors_see_only_their_own_target_wall(seed, seat_index, mode):
    """A director's observation and text change with its own wall and not with other seats' walls."""
    target = craft_env.generate_structure(seed)
    seat = ("D1", "D2", "D3")[seat_index]
    director = DIRECTORS[seat_index]
    own = seat_cells(seat, 3)
    base = _director_observation(target, director, mode)
    changed_own = _director_observation(_recolour(target, own[:1]), director, mode)
    assert changed_own[0] != base[0]
    if mode == "text":
        assert changed_own[1] != base[1]
    elsewhere = [cell for cell in [(1, 1), (2, 1)] if target.stack(*cell)]
    affects_own = {
        cell
        for cell in elsewhere
        for level in range(len(target.stack(*cell)))
        if target.partner(*cell, level) in own
    }
    hidden = [cell for cell in elsewhere if cell not in affects_own]
    if hidden:
        assert _director_observation(_recolour(target, hidden), director, mode) == base


def test_director_info_carries_no_target_information():
    env = craft_env.raw_env(oracle_n=5)
    env.reset(seed=4)
    for agent in env.agent_iter(max_iter=8):
        env.step(0 if agent != BUILDER else 114)
    for director in DIRECTORS:
        assert set(env.infos[director]) <= {"turn", "move", "question", "legal", "reason", "intent", "message"}
    assert "metrics" in env.infos[BUILDER] and "candidates" in env.infos[BUILDER]


@pytest.mark.parametrize(
    "field, value",
    [
        ("max_turns", 0),
        ("max_turns", "20"),
        ("oracle_n", 0),
        ("oracle_n", 2.5),
        ("start", "middle"),
        ("director_order", ("D1", "D1", "D2")),
        ("director_order", "shuffled"),
        ("director_sees", "everything"),
        ("reward", "dense"),
        ("message_mode", "speech"),
        ("render_mode", "window"),
        ("render_target", "yes"),
        ("structure", 99),
        ("structure", "structure_001"),
    ],
)
def test_bad_config_names_the_field_and_value(field, value):
    with pytest.raises(ValueError) as error:
        craft_env.env(**{field: value})
    message = str(error.value)
    assert field in message and (repr(value) in message or str(value) in message)


def test_illegal_and_unparseable_actions_are_failed_turns():
    env = craft_env.env(message_mode="text", director_order="fixed")
    env.reset(seed=5)
    board_before = env.unwrapped.game.board.copy()
    for director in DIRECTORS:
        assert env.agent_selection == director
        env.step("say something odd")
    env.step("remove (0,0)")
    info = env.unwrapped.infos[BUILDER]
    assert not info["legal"] and "empty" in info["reason"] and info["remove_attempted"]
    assert np.array_equal(env.unwrapped.game.board, board_before)
    for _ in DIRECTORS:
        env.step(0)
    env.step("blah blah")
    info = env.unwrapped.infos[BUILDER]
    assert not info["legal"] and "parse" in info["reason"]
    for _ in DIRECTORS:
        env.step(0)
    env.step("place gs (0,0) L2")
    info = env.unwrapped.infos[BUILDER]
    assert not info["legal"] and "wrong layer" in info["reason"]
    for _ in DIRECTORS:
        env.step(0)
    env.step("Where should the green go?")
    info = env.unwrapped.infos[BUILDER]
    assert info["legal"] and info["question"] and info["move"] is None
    assert np.array_equal(env.unwrapped.game.board, board_before)


def test_raw_env_masked_builder_action_is_a_failed_turn_and_env_rejects_out_of_space():
    raw = craft_env.raw_env(director_order="fixed")
    raw.reset(seed=6)
    for _ in DIRECTORS:
        raw.step(0)
    raw.step(1000)
    assert not raw.infos[BUILDER]["legal"] and "unknown action" in raw.infos[BUILDER]["reason"]
    for huge in (2**70, -(2**70), np.uint64(2**63 + 5)):  # beyond int64: still a failed turn, not a crash
        for _ in DIRECTORS:
            director = raw.agent_selection
            raw.step(huge)
            assert "unknown intent" in raw.infos[director]["reason"]
        raw.step(huge)
        assert not raw.infos[BUILDER]["legal"] and str(int(huge)) in raw.infos[BUILDER]["reason"]
    wrapped = craft_env.env(director_order="fixed")
    wrapped.reset(seed=6)
    with pytest.raises(ValueError, match="action"):
        wrapped.step(1000)
    wrapped.step(7)  # an intent that names no legal move: a failed turn, not an error
    assert wrapped.unwrapped.infos["director_1"]["legal"] is False


@pytest.mark.parametrize("start", ["first_layer", "first_two_layers", "wall_D1", "wall_D2", "wall_D3"])
def test_partial_starts_are_reachable_prefixes_that_leave_the_target_intact(start):
    for target in craft_env.load_eval_set()[:10]:
        snapshot = target.array.copy()
        env = craft_env.raw_env(structure=target, start=start)
        env.reset(seed=0)
        board = env.board
        assert np.array_equal(target.array, snapshot)
        assert not np.shares_memory(env.unwrapped.game.board, target.array)
        for i in range(3):
            for j in range(3):
                stack = board.stack(i, j)
                assert stack == target.stack(i, j)[: len(stack)]
        assert oracle.distance(board, target) == oracle.distance(Structure.empty(), target) - board.num_blocks
        if start.startswith("wall_"):
            wall = seat_cells(start[5:], 3)
            assert any(board.stack(*cell) for cell in wall)
            assert all(not board.stack(*cell) for cell in [(1, 1)] if (1, 1) not in wall)


def test_rewards_and_truncation():
    target = craft_env.load_eval_set()[0]
    for reward in ("progress_delta", "distance", "sparse"):
        env = craft_env.raw_env(structure=target, oracle_n=1, max_turns=3, reward=reward, director_order="fixed")
        env.reset(seed=0)
        paid = []

        def collect(env) -> None:
            assert len(set(env.rewards.values())) == 1
            paid.append(env.rewards[BUILDER])

        _play_oracle_builder(env, collect)
        assert env.game.turn == 3
        if reward == "distance":
            assert sum(paid) == 3.0
        elif reward == "sparse":
            assert sum(paid) == 0.0
        else:
            assert sum(paid) > 0


@pytest.mark.parametrize("mode", ["intent", "text"])
def test_observing_after_the_game_is_won_works_and_allows_only_the_noop(mode):
    target = craft_env.load_eval_set()[3]
    env = craft_env.env(structure=target, oracle_n=1, max_turns=40, message_mode=mode)
    env.reset(seed=2)
    finished = []
    _play_oracle_builder(env, on_finished_observation=lambda obs: finished.append(int(obs["action_mask"].sum())))
    assert env.unwrapped.game.distance == 0
    assert finished == [1, 1, 1, 1]


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2**40), sees=st.sampled_from(["full", "walls"]), data=st.data())
def test_cached_text_observations_equal_fresh_renderings(seed, sees, data):
    """Text parts are cached per episode, board or conversation entry: they must equal a fresh rendering."""
    env = craft_env.raw_env(message_mode="text", director_sees=sees, oracle_n=3, max_turns=5)
    env.reset(seed=seed)
    game = env.game
    for agent in env.agent_iter():
        obs, _, termination, truncation, _ = env.last()
        cached = obs["text"]
        game.text_cache.clear()
        assert env.observe(agent)["text"] == cached
        if termination or truncation:
            env.step(None)
            continue
        if agent == BUILDER:
            env.step(data.draw(st.sampled_from(np.flatnonzero(obs["action_mask"]).tolist())))
        else:
            env.step(data.draw(st.sampled_from(["place a red block on the left", "remove it", "", "layer 0 middle"])))


def test_text_observations_are_printable_ascii():
    from craft_env.envs.textobs import ascii_text

    assert ascii_text("plain text\nwith lines") == "plain text\nwith lines"
    assert ascii_text("put the “blue” block – café ✓") == 'put the "blue" block - cafe ?'
