"""Each switch of ``core.protocol`` on its own, in the game kernel, on a board where it changes the answer.

A protocol with one switch on (``Protocol(name=..., switch=...)``) is played
beside protocol craft on the same hand-drawn board; protocol paper (every
switch) must still play the same game in the AEC, Parallel and vector envs.
"""

from __future__ import annotations

import numpy as np
import pytest

import craft_env
from craft_env import Structure
from craft_env.core.encoding import action_table
from craft_env.core.intents import intent_table
from craft_env.core.metrics import score_arrays
from craft_env.core.protocol import CANDIDATES_PAPER, PAPER, SPEAKERS_WITH_REPLACEMENT, Protocol
from craft_env.core.rules import HIDDEN_SPAN, REASONS

BAN = Protocol(name="ban", hidden_span_ban=True)
REPLACEMENT = Protocol(name="replacement", speakers=SPEAKERS_WITH_REPLACEMENT)
COMPLETE_95 = Protocol(name="complete95", complete_at=0.95)
PAPER_LIST = Protocol(name="paper-list", candidates=CANDIDATES_PAPER)
TABLE = action_table(3)

# An orange domino from (1,0) into the hidden cell (1,1): the paper's engine refuses it.
HIDDEN_DOMINO = Structure.from_ascii(
    """
    layer 0
      gs  ..  ..
      ol==ol  ..
      ..  ..  ..
    """
)


def parallel(structure, protocol, board=None, **config):
    env = craft_env.parallel_env(structure=structure, protocol=protocol, **config)
    env.reset(seed=5)
    if board is not None:
        env.game.board[:] = board.array
        env.game.begin_turn()
    return env


def play_turn(env, builder_action):
    env.step({})
    return env.step({"builder": builder_action})


# ------------------------------------------------------------------ hidden_span_ban


def test_hidden_span_ban_forbids_large_blocks_touching_a_hidden_cell():
    domino = TABLE.large_action(3, 4, 4)  # ol over (1,0)-(1,1)
    along = TABLE.large_action(0, 1, 4)  # ol over (0,0)-(0,1): no hidden cell
    craft, ban = parallel(HIDDEN_DOMINO, "craft"), parallel(HIDDEN_DOMINO, BAN)
    assert craft.game.builder_mask[domino] == 1 and ban.game.builder_mask[domino] == 0
    assert craft.game.builder_mask[along] == 1 and ban.game.builder_mask[along] == 1
    assert craft.game.optimal[domino] == 1 and ban.game.optimal[domino] == 0
    # D1's "large inward at my slot 1, layer 0" names that domino.
    inward = intent_table("D1").large(1, 0, 4, 1)
    assert intent_table("D1").action[inward] == domino
    assert craft.game.director_masks[0, inward] == 1 and ban.game.director_masks[0, inward] == 0
    _, _, _, _, infos = play_turn(ban, domino)
    assert not infos["builder"]["legal"]
    assert infos["builder"]["reason"] == REASONS[HIDDEN_SPAN] and "hidden cell" in infos["builder"]["reason"]
    assert not ban.game.board.any()
    _, _, _, _, infos = play_turn(craft, domino)
    assert infos["builder"]["legal"]


def test_under_the_ban_an_unbuildable_target_is_played_to_truncation():
    env = parallel(HIDDEN_DOMINO, BAN, oracle_n=5, max_turns=4)
    small = TABLE.small_action(0, 0)  # gs at (0,0): the one block the ban lets anyone build
    assert env.game.candidate_ids[: env.game.num_candidates].tolist() == [small]
    truncated = False
    for turn in range(4):
        _, _, terminations, truncations, infos = play_turn(env, small if turn == 0 else TABLE.noop)
        assert not terminations["builder"] and env.game.num_candidates == 0
        truncated = truncations["builder"]
    assert truncated and infos["builder"]["distance"] == 1 and not infos["builder"]["completed"]


# ------------------------------------------------------------------ speakers


def slots_of(seed, protocol, turns=6):
    env = craft_env.parallel_env(protocol=protocol, max_turns=turns)
    env.reset(seed=seed)
    slots = []
    for _ in range(turns):
        slots.append(tuple(env.game.order_list))
        play_turn(env, env.game.noop)
    return slots


def test_speakers_with_replacement_are_reproducible_draws_that_may_repeat():
    each_once = [slots_of(seed, "craft") for seed in range(8)]
    drawn = [slots_of(seed, REPLACEMENT) for seed in range(8)]
    assert all(sorted(turn) == [0, 1, 2] for game in each_once for turn in game)
    assert any(len(set(turn)) < 3 for game in drawn for turn in game), "some turn names a director twice"
    assert all(len(turn) == 3 and set(turn) <= {0, 1, 2} for game in drawn for turn in game)
    assert drawn == [slots_of(seed, REPLACEMENT) for seed in range(8)]
    assert drawn[0] != drawn[1]


def first_repeating_turn(protocol):
    for seed in range(100):
        env = craft_env.env(protocol=protocol)
        env.reset(seed=seed)
        if len(set(env.unwrapped.game.order_list)) < 3:
            return seed, env
    raise AssertionError("no repeated speaker in 100 seeds")


def test_aec_selects_a_director_once_per_slot_and_its_second_word_replaces_the_first():
    _, env = first_repeating_turn(REPLACEMENT)
    game = env.unwrapped.game
    slots = list(game.order_list)
    selected = []
    for _ in slots:
        agent = env.agent_selection
        selected.append(agent)
        mask = env.observe(agent)["action_mask"]
        legal = np.flatnonzero(mask)
        env.step(int(legal[len(selected) % len(legal)]))
    assert selected == [f"director_{s + 1}" for s in slots]
    assert env.agent_selection == "builder"
    twice = next(s for s in slots if slots.count(s) > 1)
    intents_block = game.builder_obs[-1 - 3 * game.num_intents:-1].reshape(3, game.num_intents)
    assert intents_block[twice].sum() == 1, "one intent per seat in the observation"
    assert intents_block[twice, game.spoken[twice]] == 1


def paper_trajectories(seed, actions):
    """The same actions in env(), parallel_env() and a vector env of one: boards, rewards, ends, slots."""
    aec = craft_env.env(protocol="paper", oracle_n=3, max_turns=len(actions))
    aec.reset(seed=seed)
    par = craft_env.parallel_env(protocol="paper", oracle_n=3, max_turns=len(actions))
    par.reset(seed=seed)
    out_aec, out_par = [], []
    turn = 0
    for agent in aec.agent_iter():
        _, _, termination, truncation, _ = aec.last()
        if termination or truncation:
            aec.step(None)
            continue
        aec.step(actions[turn][agent])
        if agent == "builder":
            info = aec.unwrapped.infos["builder"]
            out_aec.append((aec.unwrapped.game.board.tobytes(), info["reward"], info["completed"], info["legal"]))
            turn += 1
    for turn in range(len(actions)):
        if not par.agents:
            break
        par.step(actions[turn])
        _, _, _, _, infos = par.step(actions[turn])
        info = infos["builder"]
        out_par.append((par.game.board.tobytes(), info["reward"], info["completed"], info["legal"]))
    return out_aec, out_par


@pytest.mark.parametrize("seed", [1, 7, 23])
def test_paper_protocol_plays_the_same_game_in_aec_and_parallel(seed):
    rng = np.random.default_rng(seed)
    actions = [
        {**{f"director_{k + 1}": int(rng.integers(0, 145)) for k in range(3)}, "builder": int(rng.integers(0, 115))}
        for _ in range(10)
    ]
    out_aec, out_par = paper_trajectories(seed, actions)
    assert out_aec == out_par


def test_vector_env_plays_the_paper_protocol_like_parallel_env():
    vec = craft_env.vector_env(3, protocol="paper", oracle_n=3, max_turns=8)
    vec.reset(seed=4)
    envs = []
    for i in range(3):
        env = craft_env.parallel_env(protocol="paper", oracle_n=3, max_turns=8)
        env.reset(seed=int(vec.episode_seeds[i]))
        envs.append(env)
    rng = np.random.default_rng(0)
    for _ in range(8):
        intents = vec.sample_actions(int(rng.integers(1 << 30)))
        vobs, *_ = vec.step_directors(intents)
        for i, env in enumerate(envs):
            assert vec.director_orders[i].tolist() == env.game.order_list
            env.step({f"director_{k + 1}": int(intents[i, k]) for k in range(3)})
            assert np.array_equal(vobs["builder"]["observation"][i], env.game.builder_obs)
        actions = vec.sample_actions(int(rng.integers(1 << 30)))
        _, rewards, terminations, truncations, infos = vec.step_builder(actions)
        for i, env in enumerate(envs):
            _, prew, pterm, ptrunc, pinfos = env.step({"builder": int(actions[i])})
            assert rewards[i] == np.float32(prew["builder"])
            assert terminations[i] == pterm["builder"] and truncations[i] == ptrunc["builder"]
            assert bool(infos["completed"][i]) == pinfos["builder"]["completed"]
            if not (pterm["builder"] or ptrunc["builder"]):
                assert np.array_equal(vec.boards[i], env.game.board)
            else:
                env.reset(seed=int(vec.episode_seeds[i]))


# ------------------------------------------------------------------ complete_at

# 27 blocks; the board lacks one small block on top of (2,2).
FULL = Structure.from_ascii(
    """
    layer 0
      gs  bs  rs
      ys  os  gs
      bs  rs  gs
    layer 1
      gs  bs  rs
      ys  os  gs
      bs  rs  gs
    layer 2
      gs  bs  rs
      ys  os  gs
      bs  rs  gs
    """
)
MISSING_TWO = Structure.from_ascii(
    """
    layer 0
      gs  bs  rs
      ys  os  gs
      bs  rs  gs
    layer 1
      gs  bs  rs
      ys  os  gs
      bs  rs  gs
    layer 2
      gs  bs  rs
      ys  os  gs
      bs  ..  ..
    """
)


def test_complete_at_ends_and_completes_a_game_before_the_board_equals_the_target():
    place = TABLE.small_action(7, 2)  # rs on (2,1)
    progress_after = score_arrays(
        MISSING_TWO.apply(craft_env.Move.place("rs", (2, 1))).array, FULL.array, 3
    )["progress"]
    assert 0.95 <= progress_after < 1.0
    results = {}
    for protocol in ("craft", COMPLETE_95):
        env = parallel(FULL, protocol, board=MISSING_TWO)
        _, _, terminations, _, infos = play_turn(env, place)
        results[getattr(protocol, "name", protocol)] = (terminations["builder"], infos["builder"]["completed"],
                                                        infos["builder"]["distance"], env.agents == [])
    assert results["craft"] == (False, False, 1, False)
    assert results["complete95"] == (True, True, 1, True)


# ------------------------------------------------------------------ candidates

# (0,0) holds a wrong red block under which the target wants green then blue; (0,2) wants a yellow
# domino with (1,2) whose cells are both empty; (2,2) holds one block too many.
PAPER_TARGET = Structure.from_ascii(
    """
    layer 0
      gs  ..  yl
              ||
      ..  ..  yl
      ..  ..  bs
    layer 1
      bs  ..  ..
      ..  ..  ..
      ..  ..  ..
    """
)
PAPER_BOARD = Structure.from_ascii(
    """
    layer 0
      rs  ..  ..
      ..  ..  ..
      ..  ..  bs
    layer 1
      ..  ..  ..
      ..  ..  ..
      ..  ..  os
    """
)


def test_paper_candidates_are_the_papers_per_cell_list_in_scan_order():
    exact, paper = (parallel(PAPER_TARGET, p, board=PAPER_BOARD, oracle_n=5) for p in ("craft", PAPER_LIST))
    place_blue_on_red = TABLE.small_action(0, 1)  # (0,0): |c| = 1 < |t| = 2, place t[1] = bs at L1
    domino = TABLE.large_action(2, 5, 3)  # (0,2)-(1,2) yl, offered once (at (0,2))
    remove_extra = TABLE.remove_action(8)  # (2,2): |c| = 2 > |t| = 1
    assert paper.game.candidate_ids[: paper.game.num_candidates].tolist() == [
        place_blue_on_red, domino, remove_extra
    ]
    assert [str(move) for move in paper.candidates] == [
        str(craft_env.Move.place("bs", (0, 0), layer=1)),
        str(craft_env.Move.place("yl", (0, 2), (1, 2), layer=0)),
        str(craft_env.Move.remove((2, 2), layer=1)),
    ]
    # The exact oracle removes the wrong red block instead; it never offers blue on red.
    shown = set(exact.game.candidate_ids[: exact.game.num_candidates].tolist())
    assert TABLE.remove_action(0) in shown and place_blue_on_red not in shown
    _, _, _, _, infos = play_turn(paper, place_blue_on_red)
    assert infos["builder"]["followed_oracle"] and not infos["builder"]["optimal"]


def test_paper_candidates_equal_length_stack_removes_the_top_even_when_a_lower_layer_differs():
    target = Structure.from_ascii(
        """
        layer 0
          gs  ..  ..
          ..  ..  ..
          ..  ..  ..
        layer 1
          bs  ..  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    board = Structure.from_ascii(
        """
        layer 0
          rs  ..  ..
          ..  ..  ..
          ..  ..  ..
        layer 1
          bs  ..  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    env = parallel(target, PAPER_LIST, board=board, oracle_n=5)
    assert env.game.candidate_ids[: env.game.num_candidates].tolist() == [TABLE.remove_action(0)]


def test_more_paper_candidates_than_oracle_n_are_a_seeded_sample():
    target = Structure.from_ascii(
        """
        layer 0
          gs  bs  rs
          ys  ..  gs
          bs  rs  gs
        """
    )
    lists = []
    for seed in (5, 5, 6):
        env = craft_env.parallel_env(structure=target, protocol=PAPER_LIST, oracle_n=3)
        env.reset(seed=seed)
        lists.append(env.game.candidate_ids[: env.game.num_candidates].tolist())
    scan = [TABLE.small_action(c, int(target.array[c, 0]) - 1) for c in (0, 1, 2, 3, 5, 6, 7, 8)]
    assert lists[0] == lists[1] and lists[0] != lists[2]
    assert all(len(shown) == 3 and set(shown) <= set(scan) for shown in lists)


# ------------------------------------------------------------------ configuration


def test_protocol_keyword_is_validated_and_named():
    with pytest.raises(ValueError, match="protocol"):
        craft_env.parallel_env(protocol="papers")
    env = craft_env.parallel_env(protocol="paper")
    assert env.config.protocol is PAPER and env.metadata["protocol"] == "paper"
    assert env.config.director_sees == "walls"
    assert craft_env.parallel_env(protocol="paper", director_sees="full").config.director_sees == "full"
    assert craft_env.parallel_env().config.director_sees == "full"
    assert craft_env.vector_env(2, protocol="paper").metadata["protocol"] == "paper"


def test_parallel_env_director_without_a_slot_gets_an_empty_info():
    """Under paper a seat may hold no speaking slot in a turn: its info is its own empty dict, the others speak."""
    env = craft_env.parallel_env(protocol="paper")
    silent_turns = 0
    for seed in range(20):
        env.reset(seed=seed)
        order = env.game.order_list
        _, _, _, _, infos = env.step({agent: 0 for agent in env.directors})
        assert set(infos) == set(env.possible_agents)
        for seat, agent in enumerate(env.directors):
            if seat in order:
                assert infos[agent]["intent"] == 0 and infos[agent]["legal"]
            else:
                assert infos[agent] == {}
                silent_turns += 1
        empty = [id(info) for info in infos.values() if info == {}]
        assert len(empty) == len(set(empty))
    assert silent_turns > 0
