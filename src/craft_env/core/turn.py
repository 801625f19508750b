"""Fused per-turn kernels: the game's hot path in two numba calls per turn.

``begin_turn`` draws the directors' order and the oracle candidates from the
episode seed and writes every mask; ``play_builder_action`` checks, applies
and scores the builder's move. The PettingZoo envs call only
``finish_turn``: once per turn (the builder's move, the next turn and the
kept observations in one call, because on this path the cost of a call is
mostly numba's argument dispatch) and with ``START_TURN`` at reset; the batched
vector env plays the same logic over a batch (so both play exactly the same
rules and randomness).

Static tables are packed into one int16 array ``static`` of shape
``(4, num_actions)``: rows kind, cell_a, cell_b, colour (``pack_static``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from craft_env.core.encoding import KIND_NOOP, KIND_REMOVE, VALUE_TO_CODE_INDEX, action_table
from craft_env.core.metrics import fill_scores
from craft_env.core.observation import played_fraction, update_obs_after_move
from craft_env.core.oracle import distance_arrays, fill_optimal_mask
from craft_env.core.random import (
    STREAM_CANDIDATES,
    STREAM_ORDER,
    derive_seed,
    sample_from_mask,
    shuffled_order,
)
from craft_env.core.rules import (
    OK,
    UNKNOWN_ACTION,
    apply_action_inplace,
    check_action,
    fill_legal_layers,
    stack_height,
)

REWARD_PROGRESS_DELTA = 0
REWARD_DISTANCE = 1
REWARD_SPARSE = 2

# Fields of the float64 ``result`` vector written by ``play_builder_action``.
RESULT_REASON = 0
RESULT_LAYER = 1
RESULT_DISTANCE = 2
RESULT_REWARD = 3
RESULT_OPTIMAL = 4
RESULT_REMOVE_PRESCRIBED = 5
RESULT_REMOVE_ATTEMPTED = 6
RESULT_FOLLOWED = 7
RESULT_CANDIDATES = 8
RESULT_SIZE = 9

# ``finish_turn``'s action for "no move: score the board and begin the turn" (reset, resynchronising).
START_TURN = -2


def pack_static(n: int) -> np.ndarray:
    """The action table's kind, cell_a, cell_b and colour rows as one int16 array."""
    table = action_table(n)
    static = np.stack([table.kind, table.cell_a, table.cell_b, table.colour]).astype(np.int16)
    static.flags.writeable = False
    return static


@njit(cache=True)
def begin_turn(
    board,
    target,
    n,
    seed,
    turn,
    oracle_n,
    fixed_order,
    static,
    pair_of,
    intent_action,
    intent_layer,
    order,
    optimal,
    candidates,
    candidate_layers,
    builder_mask,
    director_masks,
):
    """Draw the turn's order and candidates and write every mask; return the number of candidates.

    ``fixed_order[0] < 0`` means a seeded shuffle; ``oracle_n <= 0`` means no
    oracle condition (the builder may try every legal move). The layer each
    candidate acts on goes into ``candidate_layers`` (for naming the moves).
    """
    kind = static[0]
    cell_a = static[1]
    cell_b = static[2]
    cells = n * n
    large_offset = 5 * cells
    remove_offset = large_offset + 10 * n * (n - 1)
    seats = order.shape[0]
    if fixed_order[0] < 0:
        shuffled_order(derive_seed(seed, STREAM_ORDER, turn), seats, order)
    else:
        for s in range(seats):
            order[s] = fixed_order[s]
    fill_optimal_mask(board, target, n, pair_of, large_offset, remove_offset, optimal)
    noop = kind.shape[0] - 1
    # 1 + the layer each legal action acts on (0: illegal): the builder's and the directors' masks.
    layers = np.empty(kind.shape[0], np.int8)
    fill_legal_layers(board, n, kind, cell_a, cell_b, layers)
    count = 0
    if oracle_n <= 0:
        for action in range(kind.shape[0]):
            builder_mask[action] = 1 if layers[action] else 0
    else:
        count = sample_from_mask(derive_seed(seed, STREAM_CANDIDATES, turn), optimal, oracle_n, candidates)
        builder_mask[:] = 0
        for k in range(count):
            builder_mask[candidates[k]] = 1
            candidate_layers[k] = layers[candidates[k]] - 1
        builder_mask[noop] = 1
    for s in range(seats):
        director_masks[s, 0] = 1
        for intent in range(1, intent_action.shape[1]):
            action = intent_action[s, intent]
            allowed = action >= 0 and layers[action] == intent_layer[s, intent] + 1
            director_masks[s, intent] = 1 if allowed else 0
    return count


@njit(cache=True)
def play_builder_action(
    board, target, n, action, override, static, optimal, candidates, num_candidates, reward_kind, scores,
    result,
):
    """Check, apply and score builder ``action``; fill ``result`` (see ``RESULT_*``); return the reason code.

    ``override`` != ``OK`` fails the move with that reason without playing it
    (the caller found it illegal, e.g. a wrong layer claimed in text).
    ``num_candidates < 0`` means no oracle condition: "followed" is then
    "optimal". ``scores`` holds the metrics before the move on entry and
    after it on exit; ``result[RESULT_DISTANCE]`` the distance likewise.
    """
    kind = static[0]
    cell_a = static[1]
    cell_b = static[2]
    colour = static[3]
    code = check_action(board, n, action, kind, cell_a, cell_b)
    known = code != UNKNOWN_ACTION
    if code == OK and override != OK:
        code = override
    cells = n * n
    remove_offset = 5 * cells + 10 * n * (n - 1)
    prescribed = 0.0
    for c in range(cells):
        if optimal[remove_offset + c]:
            prescribed = 1.0
    layer = -1
    if code == OK:
        if kind[action] != KIND_NOOP:
            layer = stack_height(board, cell_a[action])
            if kind[action] == KIND_REMOVE:
                layer -= 1
        apply_action_inplace(board, n, action, kind, cell_a, cell_b, colour)
    before_progress = scores[3]
    before_distance = result[RESULT_DISTANCE]
    fill_scores(board, target, n, VALUE_TO_CODE_INDEX, scores)
    after = distance_arrays(board, target, n)
    is_optimal = 1.0 if code == OK and optimal[action] else 0.0
    followed = is_optimal
    if num_candidates >= 0:
        followed = 0.0
        if code == OK:
            for k in range(num_candidates):
                if candidates[k] == action:
                    followed = 1.0
    if reward_kind == REWARD_PROGRESS_DELTA:
        reward = scores[3] - before_progress
    elif reward_kind == REWARD_DISTANCE:
        reward = before_distance - after
    else:
        reward = 1.0 if after == 0 else 0.0
    result[RESULT_REASON] = code
    result[RESULT_LAYER] = layer
    result[RESULT_DISTANCE] = after
    result[RESULT_REWARD] = reward
    result[RESULT_OPTIMAL] = is_optimal
    result[RESULT_REMOVE_PRESCRIBED] = prescribed
    result[RESULT_REMOVE_ATTEMPTED] = 1.0 if known and kind[action] == KIND_REMOVE else 0.0
    result[RESULT_FOLLOWED] = followed
    return code


@njit(cache=True)
def finish_turn(
    before, board, target, n, action, override, seed, turn, max_turns, oracle_n, fixed_order, static, pair_of,
    intent_action, intent_layer, order, optimal, candidates, candidate_layers, num_candidates, reward_kind,
    scores, result, builder_mask, director_masks, director_visible, spoken, director_obs, builder_obs,
):
    """The builder's ``action`` ends the turn; ``turn`` is the count of turns played after it.

    Plays and scores the move (``play_builder_action``), then either closes
    the episode (target complete, or ``turn >= max_turns``: every mask allows
    only the no-op and there are no candidates) or begins the next turn, and
    updates the kept observations (``before`` is scratch shaped like the
    board: it receives the board before the move, to find the changed
    cells). Returns the reason code; ``result[RESULT_CANDIDATES]`` holds the
    next turn's candidate count.

    ``action == START_TURN`` plays nothing: it scores the current board
    (``scores`` and ``result[RESULT_DISTANCE]``; the other results are not
    written) and begins turn ``turn``, at reset or after the board was
    edited. The env calls no other turn kernel, so numba compiles this path
    once (compiling it is most of an env's first-use time).
    """
    before[:, :] = board
    if action == START_TURN:
        code = OK
        fill_scores(board, target, n, VALUE_TO_CODE_INDEX, scores)
        result[RESULT_DISTANCE] = distance_arrays(board, target, n)
    else:
        code = play_builder_action(
            board, target, n, action, override, static, optimal, candidates, num_candidates, reward_kind,
            scores, result,
        )
    count = 0
    if action != START_TURN and (result[RESULT_DISTANCE] == 0 or turn >= max_turns):
        builder_mask[:] = 0
        builder_mask[builder_mask.shape[0] - 1] = 1
        director_masks[:, :] = 0
        director_masks[:, 0] = 1
    else:
        count = begin_turn(
            board, target, n, seed, turn, oracle_n, fixed_order, static, pair_of, intent_action, intent_layer,
            order, optimal, candidates, candidate_layers, builder_mask, director_masks,
        )
    result[RESULT_CANDIDATES] = count
    update_obs_after_move(
        before, board, n, director_visible, spoken, director_masks.shape[1], played_fraction(turn, max_turns),
        director_obs, builder_obs,
    )
    return code
