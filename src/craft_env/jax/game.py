"""The game of CRAFT for one env as pure JAX functions: the numba core's turn, rule for rule.

The reference is ``core.game`` (``reset_row``, ``begin_turn_row``,
``speak_slots``, ``builder_row``) driven by ``core.batch`` for the vector
env: one function here per kernel there, on one env's arrays, for
``jax.jit`` and ``jax.vmap``. A turn is two steps, as in ``vector_env``:
``step_directors`` (every seated director's intent) and ``step_builder``
(the builder's move, its score, then the next turn or, when the episode
ended, the env's next episode: auto-reset).

Three records travel into every function:

* ``Tables`` (``jax.tables``): the size's and seating's constant arrays;
* ``Params``: the configuration's switches and numbers (reward, start,
  ``oracle_n``, the protocol's switches, ``max_turns``, ...), arrays too,
  so configurations of one board size share one compiled step when
  ``Params`` is passed as an argument (the env closes over it instead:
  constants folded);
* ``State``: one env's episode (board, target, seeds, turn, spoken intents,
  this turn's speaking order and masks, the phase).

Randomness is the core's: the episode seed ``derive_seed(env_seed, 102, k)``
(``vector_env.episode_seed``), the target from its ``STREAM_TARGET``
stream, the speaking order and the oracle candidates from the turn's
``STREAM_ORDER`` / ``STREAM_CANDIDATES`` streams (``u64``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from craft_env.core.encoding import KIND_LARGE, KIND_NOOP, KIND_REMOVE, KIND_SMALL
from craft_env.core.game import REWARD_DISTANCE, REWARD_PROGRESS_DELTA
from craft_env.core.random import (
    STREAM_CANDIDATES,
    STREAM_ORDER,
    STREAM_TARGET,
    STREAM_VECTOR_ENV,
    STREAM_VECTOR_EPISODE,
)
from craft_env.core.rules import (
    COVERED_HALF,
    HIDDEN_SPAN,
    NOTHING_TO_REMOVE,
    OK,
    STACK_FULL,
    UNEVEN_SPAN,
    UNKNOWN_ACTION,
)
from craft_env.jax import exact, generator, oracle, u64
from craft_env.jax.tables import Tables
from craft_env.jax.u64 import U64

PHASE_DIRECTORS = 0
PHASE_BUILDER = 1


class Params(NamedTuple):
    """One configuration's values (``envs.config.EnvConfig`` in the kernels' encoding), as arrays."""

    max_turns: jax.Array  # int32
    oracle_n: jax.Array  # int32, 0: no oracle condition (``game.NO_ORACLE``)
    reward: jax.Array  # int32, ``game.REWARD_*``
    start: jax.Array  # int32, ``starts.start_code``
    generate: jax.Array  # bool: targets from the episode seed; else each env keeps its given target
    hidden_span_ban: jax.Array  # bool
    with_replacement: jax.Array  # bool: speaking slots drawn with replacement (protocol paper)
    exact_completion: jax.Array  # bool: complete when the board equals the target
    complete_at: U64  # progress that completes a game (``exact.threshold`` units) otherwise
    paper_candidates: jax.Array  # bool
    fixed_order: jax.Array  # int32 (S,): the speaking order, or -1s for a seeded one
    visible: jax.Array  # bool (C,): the cells directors see
    allowed: jax.Array  # bool (A,): what the protocol allows at all


class State(NamedTuple):
    """One env's episode: everything the next step reads."""

    board: jax.Array  # int8 (C, h)
    target: jax.Array  # int8 (C, h)
    env_seed: U64  # the env's stream seed (episode seeds derive from it)
    seed: U64  # this episode's seed
    episode: jax.Array  # int32: episodes this env started before this one
    turn: jax.Array  # int32: turns played
    distance: jax.Array  # int32: oracle distance of the board
    progress: U64  # the board's float64 progress, exactly (``exact``)
    spoken: jax.Array  # int32 (S,): this turn's intents, -1 before a seat spoke
    order: jax.Array  # int32 (S,): this turn's speaking slots (seat indices)
    optimal: jax.Array  # bool (A,): this turn's optimal moves (the protocol's ban applied)
    builder_mask: jax.Array  # bool (A,): this turn's builder mask
    phase: jax.Array  # int32: PHASE_DIRECTORS or PHASE_BUILDER


class Move(NamedTuple):
    """What the builder's move did: the numba game's result row (``game.RESULT_*``), as step infos."""

    reason: jax.Array
    layer: jax.Array
    distance: jax.Array
    optimal: jax.Array
    remove_prescribed: jax.Array
    remove_attempted: jax.Array
    followed_oracle: jax.Array
    completed: jax.Array
    turn: jax.Array
    scores: jax.Array  # float32 (5,), ``METRIC_NAMES``


# --------------------------------------------------------------------------- rules


def heights_of(board: jax.Array) -> jax.Array:
    """int32 (C,): each stack's height (``rules.fill_heights``)."""
    alive = jnp.cumsum(board == 0, axis=1, dtype=jnp.int32) == 0
    return jnp.sum(alive, axis=1, dtype=jnp.int32)


def _tops(board: jax.Array, heights: jax.Array) -> jax.Array:
    levels = jnp.arange(board.shape[1], dtype=jnp.int32)
    return jnp.sum(jnp.where(levels == heights[:, None] - 1, board.astype(jnp.int32), 0), axis=1)


def legal_and_layers(board: jax.Array, heights: jax.Array, t: Tables) -> tuple[jax.Array, jax.Array]:
    """bool (A,) legal moves (``rules.legal_from_heights``) and int32 (A,) the layer each acts on."""
    h = board.shape[1]
    cells = heights.shape[0]
    kind = jnp.asarray(t.kind)
    ha = heights[jnp.asarray(t.cell_a)]
    hb = heights[jnp.asarray(t.cell_b)]
    top = _tops(board, heights)
    partner = jnp.clip(jnp.arange(cells) + jnp.asarray(t.partner_step)[top], 0, cells - 1)
    removable = (heights > 0) & ((top < 6) | (heights[partner] == heights))
    legal = jnp.where(kind == KIND_SMALL, ha < h,
                      jnp.where(kind == KIND_LARGE, (ha < h) & (ha == hb),
                                jnp.where(kind == KIND_REMOVE, removable[jnp.asarray(t.cell_a)], True)))
    layer = jnp.where(kind == KIND_REMOVE, ha - 1, jnp.where(kind == KIND_NOOP, -1, ha))
    return legal, layer


def check_action(board: jax.Array, heights: jax.Array, action: jax.Array, t: Tables) -> jax.Array:
    """int32 reason code of ``action`` (``rules.check_action``)."""
    h = board.shape[1]
    cells = heights.shape[0]
    actions = t.kind.shape[0]
    known = (action >= 0) & (action < actions)
    a_id = jnp.clip(action, 0, actions - 1)
    k = jnp.asarray(t.kind)[a_id]
    ha = heights[jnp.asarray(t.cell_a)[a_id]]
    hb = heights[jnp.asarray(t.cell_b)[a_id]]
    cell = jnp.asarray(t.cell_a)[a_id]
    top = board[cell, jnp.maximum(ha - 1, 0)].astype(jnp.int32)
    partner = jnp.clip(cell + jnp.asarray(t.partner_step)[top], 0, cells - 1)
    small = jnp.where(ha < h, OK, STACK_FULL)
    large = jnp.where((ha >= h) | (hb >= h), jnp.where(ha == hb, STACK_FULL, UNEVEN_SPAN),
                      jnp.where(ha == hb, OK, UNEVEN_SPAN))
    remove = jnp.where(ha == 0, NOTHING_TO_REMOVE,
                       jnp.where((top >= 6) & (heights[partner] != ha), COVERED_HALF, OK))
    code = jnp.where(k == KIND_SMALL, small, jnp.where(k == KIND_LARGE, large, jnp.where(k == KIND_REMOVE, remove, OK)))
    return jnp.where(known, code, UNKNOWN_ACTION).astype(jnp.int32)


def apply_action(board: jax.Array, heights: jax.Array, action: jax.Array, t: Tables) -> tuple[jax.Array, jax.Array, jax.Array]:
    """``rules.apply_action_inplace`` of a legal ``action``: the new board and the layer it acted on."""
    cells, h = board.shape
    actions = t.kind.shape[0]
    a_id = jnp.clip(action, 0, actions - 1)
    k = jnp.asarray(t.kind)[a_id]
    a = jnp.asarray(t.cell_a)[a_id]
    b = jnp.asarray(t.cell_b)[a_id]
    colour = jnp.asarray(t.colour)[a_id]
    ha = heights[a]
    layer = jnp.where(k == KIND_REMOVE, ha - 1, jnp.where(k == KIND_NOOP, -1, ha))
    top = board[a, jnp.maximum(ha - 1, 0)].astype(jnp.int32)
    partner = jnp.where(k == KIND_REMOVE, a + jnp.asarray(t.partner_step)[top], b)
    d = jnp.asarray(t.dir_ab)[a_id]
    value_a = jnp.where(k == KIND_SMALL, 1 + colour, jnp.where(k == KIND_LARGE, 6 + 4 * colour + d, 0))
    value_b = jnp.where(k == KIND_LARGE, 6 + 4 * colour + (d ^ 1), 0)
    second = (k == KIND_LARGE) | ((k == KIND_REMOVE) & (top >= 6))
    cell_ids = jnp.arange(cells)[:, None]
    at_layer = jnp.arange(h)[None, :] == layer
    acts = k != KIND_NOOP
    new = jnp.where(acts & at_layer & (cell_ids == a), value_a, board.astype(jnp.int32))
    new = jnp.where(acts & second & at_layer & (cell_ids == partner), value_b, new)
    return new.astype(jnp.int8), layer, jnp.where(second, partner, -1)


def director_masks(board: jax.Array, heights: jax.Array, t: Tables, params: Params) -> jax.Array:
    """bool (S, I): each seat's intent mask (``game.director_masks_row``): the no-op and every intent whose
    action the protocol allows, is legal now and acts on the intent's layer."""
    legal, layer = legal_and_layers(board, heights, t)
    ok = legal & params.allowed
    action = jnp.asarray(t.intent_action)
    safe = jnp.maximum(action, 0)
    mask = (action >= 0) & ok[safe] & (layer[safe] == jnp.asarray(t.intent_layer))
    return mask.at[:, 0].set(True)


# --------------------------------------------------------------------------- a turn


def _order(state: State, t: Tables, params: Params) -> jax.Array:
    """This turn's speaking slots (``begin_turn_row``): drawn with replacement, shuffled, or fixed."""
    seats = t.walls.shape[0]
    seed = u64.derive_seed(state.seed, STREAM_ORDER, state.turn)
    slots = []
    stream = seed
    for _ in range(seats):
        stream, r = u64.draw(stream, jnp.uint32(seats))
        slots.append(r)
    drawn = jnp.stack(slots)
    shuffled = u64.shuffled_order(seed, seats)
    seeded = jnp.where(params.with_replacement, drawn, shuffled)
    return jnp.where(params.fixed_order[0] < 0, seeded, params.fixed_order).astype(jnp.int32)


def _first_per_pair(keys: jax.Array) -> jax.Array:
    """bool (C,): cell ``c``'s pair key (-1: none) was not claimed by an earlier cell."""
    cells = keys.shape[0]
    earlier = jnp.arange(cells)[None, :] < jnp.arange(cells)[:, None]
    taken = jnp.any(earlier & (keys[None, :] == keys[:, None]) & (keys[:, None] >= 0), axis=1)
    return ~taken


def paper_list(board: jax.Array, target: jax.Array, heights: jax.Array, t: Tables, params: Params) -> tuple[jax.Array, jax.Array]:
    """``game.paper_candidates``: int32 (C,) the candidate action ids in scan order and their count."""
    cells, h = board.shape
    levels = jnp.arange(h, dtype=jnp.int32)
    goal = target.astype(jnp.int32)
    current = board.astype(jnp.int32)
    ht = jnp.sum(jnp.cumsum(goal == 0, axis=1) == 0, axis=1, dtype=jnp.int32)
    cell_ids = jnp.arange(cells, dtype=jnp.int32)
    pair_of = jnp.asarray(t.pair_of)
    step = jnp.asarray(t.partner_step)
    large_offset = 5 * cells
    remove_offset = large_offset + 5 * t.pairs.shape[0]
    # Placement: the target's next block.
    v = jnp.sum(jnp.where(levels == heights[:, None], goal, 0), axis=1)
    place_partner = jnp.clip(cell_ids + step[v], 0, cells - 1)
    place_pair = pair_of[cell_ids, place_partner]
    place_action = jnp.where(v < 6, cell_ids * 5 + v - 1, large_offset + place_pair * 5 + (v - 6) // 4)
    # Removal: the top, when the stack is taller or any layer differs.
    below = levels[None, :] < heights[:, None]
    differs = (heights > ht) | jnp.any(below & (current != goal), axis=1)
    top = _tops(board, heights)
    remove_pair = pair_of[cell_ids, jnp.clip(cell_ids + step[top], 0, cells - 1)]
    placing = heights < ht
    removing = ~placing & (heights > 0) & differs
    has = placing | removing
    key = jnp.where(placing & (v >= 6), place_pair, jnp.where(removing & (top >= 6), remove_pair, -1))
    action = jnp.where(placing, place_action, remove_offset + cell_ids)
    first = _first_per_pair(jnp.where(has, key, -1))
    safe = jnp.clip(action, 0, t.kind.shape[0] - 1)
    legal = jax.vmap(lambda a: check_action(board, heights, a, t))(safe) == OK
    keep = has & first & params.allowed[safe] & legal
    count = jnp.sum(keep, dtype=jnp.int32)
    slot = jnp.where(keep, jnp.cumsum(keep, dtype=jnp.int32) - 1, cells)
    listed = jnp.zeros(cells + 1, jnp.int32).at[slot].set(action)[:cells]
    return listed, count


def begin_turn(state: State, t: Tables, params: Params, ot: oracle.OracleTables) -> State:
    """``game.begin_turn_row``: the speaking slots, the optimal moves, the candidates and the builder mask."""
    board, target = state.board, state.target
    cells = board.shape[0]
    heights = heights_of(board)
    optimal = oracle.optimal_mask(board, target, ot)
    optimal = optimal & jnp.where(params.hidden_span_ban, params.allowed, True)
    legal, _ = legal_and_layers(board, heights, t)
    legal = legal & jnp.where(params.hidden_span_ban, params.allowed, True)
    # The oracle's list: the optimal moves in id order (craft) or the paper's list (paper); at most one per cell.
    optimal_ids = jnp.nonzero(optimal, size=cells, fill_value=0)[0].astype(jnp.int32)
    optimal_count = jnp.sum(optimal, dtype=jnp.int32)
    paper_ids, paper_count = paper_list(board, target, heights, t, params)
    items = jnp.where(params.paper_candidates, paper_ids, optimal_ids)
    count = jnp.where(params.paper_candidates, paper_count, optimal_count)
    seed = u64.derive_seed(state.seed, STREAM_CANDIDATES, state.turn)
    items, take = u64.sample_from_list(seed, items, count, params.oracle_n)
    chosen = jnp.arange(cells) < take
    candidates = jnp.zeros(t.kind.shape[0] + 1, bool).at[jnp.where(chosen, items, t.kind.shape[0])].set(True)
    candidates = candidates[:-1].at[t.noop].set(True)
    mask = jnp.where(params.oracle_n == 0, legal, candidates)
    return turn_cleared(state)._replace(order=_order(state, t, params), optimal=optimal, builder_mask=mask)


def turn_cleared(state: State) -> State:
    """``state`` with the last turn's intents cleared and the directors to speak: what a new turn starts
    from before its speaking slots and moves are drawn (``begin_turn``)."""
    return state._replace(spoken=jnp.full_like(state.spoken, -1), phase=jnp.int32(PHASE_DIRECTORS))


def fresh_episode(env_seed: U64, episode: jax.Array, target: jax.Array, t: Tables, params: Params,
                  ot: oracle.OracleTables) -> State:
    """``reset_row`` of episode ``episode`` of the env seeded ``env_seed`` (``batch._start_episode``), before
    its first turn begins (``begin_turn``). ``target`` is the env's given target, kept unless
    ``params.generate``."""
    seats = t.walls.shape[0]
    seed = u64.derive_seed(env_seed, STREAM_VECTOR_EPISODE, episode)
    generated = generator.generate(u64.derive_seed(seed, STREAM_TARGET, jnp.int32(0)), t)
    target = jnp.where(params.generate, generated, target)
    board = generator.start_board(target, params.start, t)
    progress = exact.progress(board, target, jnp.asarray(t.value_code), t.ratios)
    actions = t.kind.shape[0]
    return State(
        board=board, target=target, env_seed=env_seed, seed=seed, episode=episode.astype(jnp.int32),
        turn=jnp.int32(0), distance=oracle.distance(board, target, ot), progress=progress,
        spoken=jnp.full(seats, -1, jnp.int32), order=jnp.zeros(seats, jnp.int32),
        optimal=jnp.zeros(actions, bool), builder_mask=jnp.zeros(actions, bool), phase=jnp.int32(PHASE_DIRECTORS),
    )


def new_episode(env_seed: U64, episode: jax.Array, target: jax.Array, t: Tables, params: Params,
                ot: oracle.OracleTables) -> State:
    """``fresh_episode`` at its first turn: what ``vector_env.reset`` leaves in an env."""
    return begin_turn(fresh_episode(env_seed, episode, target, t, params, ot), t, params, ot)


def env_seed_of(base_seed: U64, env_index: jax.Array) -> U64:
    """``vector_env``'s stream seed of env ``env_index`` after ``reset(seed=base_seed)``."""
    return u64.derive_seed(base_seed, STREAM_VECTOR_ENV, env_index)


def step_directors(state: State, intents: jax.Array, t: Tables, params: Params) -> tuple[State, jax.Array]:
    """The director phase (``game.speak_slots``): each speaking slot's seat says ``intents[seat]``.

    An id out of range or outside the seat's mask is the no-op. Returns the
    state (builder phase next) and bool (S,) whether each seat's intent was
    allowed (True for a seat that held no slot).
    """
    num_intents = t.num_intents
    seats = t.walls.shape[0]
    intents = intents.astype(jnp.int32)
    masks = director_masks(state.board, heights_of(state.board), t, params)
    in_range = (intents >= 0) & (intents < num_intents)
    allowed = masks[jnp.arange(seats), jnp.where(in_range, intents, 0)]
    said = jnp.where(in_range & allowed, intents, 0)
    speaks = jnp.any(state.order[None, :] == jnp.arange(seats)[:, None], axis=1)
    spoken = jnp.where(speaks, said, state.spoken)
    legal = jnp.where(speaks, in_range & allowed, True)
    return state._replace(spoken=spoken, phase=jnp.int32(PHASE_BUILDER)), legal


def play(state: State, action: jax.Array, t: Tables, params: Params, ot: oracle.OracleTables) -> tuple[State, Move, jax.Array, jax.Array]:
    """``game.builder_row``: check, play and score ``action``; returns the state after the move (turn not
    yet begun), the move's result, the reward and whether the episode ended."""
    board = state.board
    heights = heights_of(board)
    actions = t.kind.shape[0]
    action = action.astype(jnp.int32)
    code = check_action(board, heights, action, t)
    a_id = jnp.clip(action, 0, actions - 1)
    known = code != UNKNOWN_ACTION
    code = jnp.where((code == OK) & params.hidden_span_ban & ~params.allowed[a_id], HIDDEN_SPAN, code)
    ok = code == OK
    remove_offset = 5 * board.shape[0] + 5 * t.pairs.shape[0]
    prescribed = jnp.any(state.optimal[remove_offset:remove_offset + board.shape[0]])
    moved, layer, _ = apply_action(board, heights, action, t)
    board_after = jnp.where(ok, moved, board)
    layer = jnp.where(ok, layer, -1)
    scores, progress = exact.scores(board_after, state.target, jnp.asarray(t.value_code), t.ratios)
    after = oracle.distance(board_after, state.target, ot)
    is_optimal = ok & state.optimal[a_id]
    in_candidates = state.builder_mask[a_id] & (a_id != t.noop)
    followed = jnp.where(params.oracle_n != 0, ok & in_candidates, is_optimal)
    reward = jnp.where(params.reward == REWARD_PROGRESS_DELTA, exact.progress_delta(progress, state.progress),
                       jnp.where(params.reward == REWARD_DISTANCE, (state.distance - after).astype(jnp.float32),
                                 (after == 0).astype(jnp.float32)))
    completed = (after == 0) | (~params.exact_completion & exact.ge(progress, params.complete_at))
    turn = state.turn + 1
    move = Move(
        reason=code, layer=layer, distance=after, optimal=is_optimal,
        remove_prescribed=prescribed, remove_attempted=known & (jnp.asarray(t.kind)[a_id] == KIND_REMOVE),
        followed_oracle=followed, completed=completed, turn=turn, scores=scores,
    )
    done = completed | (turn >= params.max_turns)
    state = state._replace(board=board_after, turn=turn, distance=after, progress=progress)
    return state, move, reward, done


def _select(flag: jax.Array, a, b):
    return jax.tree_util.tree_map(lambda x, y: jnp.where(flag, x, y), a, b)


def step_builder(state: State, action: jax.Array, t: Tables, params: Params, ot: oracle.OracleTables):
    """The builder phase (``batch._builder_step``): the move, then the next turn or the next episode.

    Returns ``(state, move, reward, terminated, truncated, step_seed, step_episode)``; when the episode
    ended the state is the env's next episode at its first turn (auto-reset), and the last two name the
    episode the move belonged to.
    """
    played, move, reward, done = play(state, action, t, params, ot)
    fresh = fresh_episode(state.env_seed, state.episode + 1, state.target, t, params, ot)
    following = begin_turn(_select(done, fresh, played), t, params, ot)
    terminated = move.completed
    truncated = done & ~terminated
    return following, move, reward, terminated, truncated, state.seed, state.episode


def step_builder_batch(states: State, actions: jax.Array, t: Tables, params: Params, ot: oracle.OracleTables,
                       reserve: int | None = None):
    """``step_builder`` over a batch (leading axis), drawing new episodes only for the envs whose episode ended.

    Under ``vmap`` a new episode (its target drawn by the generator, most of
    a step's work) would be computed for every env on every step and kept
    where one ended; here the ended envs are gathered ``reserve`` at a time
    (default an eighth of the batch, at least 64), their episodes drawn and
    scattered back, in as many rounds as it takes (none on a step where no
    episode ended): the result is ``vmap(step_builder)``'s, exactly.
    """
    batch = actions.shape[0]
    reserve = min(batch, max(64, batch // 8)) if reserve is None else min(reserve, batch)
    played, move, reward, done = jax.vmap(lambda s, a: play(s, a, t, params, ot))(states, actions)

    def fresh_for(env_states):
        return jax.vmap(lambda s: fresh_episode(s.env_seed, s.episode + 1, s.target, t, params, ot))(env_states)

    def more(carry):
        return jnp.any(carry[1])

    def draw_some(carry):
        merged, waiting = carry
        index = jnp.nonzero(waiting, size=reserve, fill_value=batch)[0]
        picked = jax.tree_util.tree_map(lambda x: x[jnp.minimum(index, batch - 1)], states)
        merged = jax.tree_util.tree_map(lambda x, y: x.at[index].set(y, mode="drop"), merged, fresh_for(picked))
        return merged, waiting.at[index].set(False, mode="drop")

    # ``reserve`` ended envs at a time: one round on almost every step, more only when more ended.
    merged, _ = jax.lax.while_loop(more, draw_some, (played, done))
    following = jax.vmap(lambda s: begin_turn(s, t, params, ot))(merged)
    terminated = move.completed
    truncated = done & ~terminated
    return following, move, reward, terminated, truncated, states.seed, states.episode


# --------------------------------------------------------------------------- observations


def _board_onehot(board: jax.Array, t: Tables) -> jax.Array:
    return jnp.asarray(t.value_onehot)[board.astype(jnp.int32)]  # (C, h, 15)


def wall_views(target: jax.Array, t: Tables) -> jax.Array:
    """int32 (S, n, h): each seat's view code of the target wall (``views.view_code``)."""
    walls = jnp.asarray(t.walls)
    values = target.astype(jnp.int32)[walls]  # (S, n, h)
    direction = (values - 6) & 3
    on_wall = jnp.take_along_axis(jnp.asarray(t.wall_partner_on_wall)[:, :, None, :], direction[..., None], axis=3)[..., 0]
    small = 1 + 2 * (values - 1)
    large = 1 + 2 * ((values - 6) // 4) + on_wall
    return jnp.where(values == 0, 0, jnp.where(values < 6, small, large))


def _intents_onehot(spoken: jax.Array, num_intents: int) -> jax.Array:
    return (spoken[:, None] == jnp.arange(num_intents)[None, :]).astype(jnp.float32).reshape(-1)


def observations(state: State, t: Tables, params: Params) -> tuple[jax.Array, jax.Array]:
    """float32 (S, Dd) the directors' and (Db,) the builder's observation (``core.observation``)."""
    seats = t.walls.shape[0]
    board = _board_onehot(state.board, t)
    builder_board = board.reshape(-1)
    director_board = jnp.where(params.visible[:, None, None], board, 0.0).reshape(-1)
    intents = _intents_onehot(state.spoken, t.num_intents)
    fraction = exact.turn_fraction(state.turn, params.max_turns)[None]
    builder = jnp.concatenate([builder_board, intents, fraction])
    views = jax.nn.one_hot(wall_views(state.target, t), 11, dtype=jnp.float32).reshape(seats, -1)
    directors = jnp.concatenate([
        jnp.broadcast_to(director_board, (seats, director_board.shape[0])), views,
        jnp.broadcast_to(jnp.concatenate([intents, fraction]), (seats, intents.shape[0] + 1)),
        jnp.eye(seats, dtype=jnp.float32),
    ], axis=1)
    return directors, builder


def world_state(state: State, t: Tables, params: Params) -> jax.Array:
    """float32 (S_dim,): ``[board | target | intents | turn]`` (``observation.fill_state``), every cell."""
    return jnp.concatenate([
        _board_onehot(state.board, t).reshape(-1), _board_onehot(state.target, t).reshape(-1),
        _intents_onehot(state.spoken, t.num_intents), exact.turn_fraction(state.turn, params.max_turns)[None],
    ])


def avail_actions(state: State, t: Tables, params: Params) -> tuple[jax.Array, jax.Array]:
    """bool (S, I) the directors' and (A,) the builder's masks; the idle role's allow only the no-op."""
    directors_move = state.phase == PHASE_DIRECTORS
    masks = director_masks(state.board, heights_of(state.board), t, params)
    idle_directors = jnp.zeros_like(masks).at[:, 0].set(True)
    idle_builder = jnp.zeros_like(state.builder_mask).at[t.noop].set(True)
    return (jnp.where(directors_move, masks, idle_directors),
            jnp.where(directors_move, idle_builder, state.builder_mask))
