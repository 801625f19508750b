"""The game of CRAFT for one episode row: the one place a turn is played.

Every env runs these kernels. ``CraftGame`` (``env()``, ``parallel_env()``)
holds a batch of one episode; the vector env holds ``B`` and loops over
them (``core.batch``). A kernel acts on row ``b`` of the batch and writes
into arrays the caller owns, so it never allocates.

Named state
-----------
Two records travel into every kernel:

* ``Config``: what one configuration fixes (sizes, the reward, the start,
  the protocol's switches, the action and intent tables, the walls);
  shared by every episode of a batch, never written.
* ``Episode``: the arrays of a batch of episodes, one row per episode
  (boards, targets, masks, kept observations, scratch) plus ``info``, a
  structured array of each episode's scalars (``EPISODE_INFO``: seed, turn,
  distance, ...).

Both are named tuples in Python and inside numba; ``CONFIG_FIELDS`` and
``EPISODE_FIELDS`` give each field's numba type. The kernels Python calls
(``reset_episode``, ``resync_episode``, ``play_builder`` here, the drivers
of ``core.batch``) take them packed (``kernel_records``, made once by the
owner: one structref each, ``core.records``) and name them on their first
line (``named``); every row kernel takes the named tuples. Packing saves
numba's unboxing of 40 arrays on every call from Python: a builder turn
of ``play_builder`` from Python took 2.7 µs as tuples, 1.3 µs packed.

A turn
------
``reset_row`` starts an episode from ``info.seed``: target (generated or
given), start board, scores, then ``begin_turn_row``. ``begin_turn_row``
draws the speaking slots and the oracle candidates from the episode seed's
streams (``core.random``) and writes the builder's and every director's
mask. ``speak`` is a director's action (one slot), ``speak_slots`` a
whole director phase. ``builder_row`` checks,
plays and scores the builder's move, updates the kept observations and
reports whether the episode ended; the caller then begins the next turn
(``begin_turn_row``), closes the episode (``close_row``) or, in the vector
env, starts the next one.

The protocol's switches (``core.protocol``; ``docs/rules.md``) are fields of
``Config``: ``allowed`` (the per-action mask ``protocol_action_mask``;
``hidden_span_ban`` says whether it forbids anything), ``speakers``,
``complete_at`` and ``paper_candidates``.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit
from numba.experimental import structref

from craft_env.core.encoding import KIND_LARGE, KIND_NOOP, KIND_REMOVE, VALUE_TO_CODE_INDEX, action_table
from craft_env.core.generator import generate_with_scratch
from craft_env.core.intents import intent_groups
from craft_env.core.metrics import METRIC_NAMES, fill_scores
from craft_env.core.observation import (
    fill_builder_obs,
    fill_director_obs,
    note_intent,
    played_fraction,
    rewrite_cell_obs,
    start_turn_obs,
)
from craft_env.core.oracle import distance_from_keep, fill_keep_levels, optimal_from_keep
from craft_env.core.protocol import (
    CANDIDATES_PAPER,
    CRAFT,
    SPEAKERS_WITH_REPLACEMENT,
    Protocol,
    protocol_action_mask,
)
from craft_env.core.random import (
    STREAM_CANDIDATES,
    STREAM_ORDER,
    STREAM_TARGET,
    derive_seed,
    draw,
    sample_from_list,
    shuffled_order,
)
from craft_env.core.records import (
    FLOAT64,
    INT64,
    KernelRecord,
    check_fields,
    frozen,
    record_type,
    writeable,
)
from craft_env.core.rules import (
    HIDDEN_SPAN,
    OK,
    UNKNOWN_ACTION,
    apply_action_inplace,
    check_action,
    landing_layer_at,
    legal_from_heights,
    partner_cell,
)
from craft_env.core.starts import fill_start, start_code
from craft_env.core.views import seat_cell_indices

REWARDS = ("progress_delta", "distance", "sparse")
REWARD_PROGRESS_DELTA, REWARD_DISTANCE, REWARD_SPARSE = range(len(REWARDS))
PROGRESS = METRIC_NAMES.index("progress")

# "No oracle condition" inside the kernels (``oracle_n=None`` in the API); "complete when the board
# equals the target" likewise (``complete_at=None``).
NO_ORACLE = 0
EXACT_COMPLETION = -1.0

# Columns of the float64 result row the builder's action writes (``builder_row``).
RESULT_REASON = 0
RESULT_LAYER = 1  # the layer the move acted on (-1: none)
RESULT_DISTANCE = 2  # oracle distance after the move
RESULT_REWARD = 3
RESULT_OPTIMAL = 4
RESULT_REMOVE_PRESCRIBED = 5
RESULT_REMOVE_ATTEMPTED = 6
RESULT_FOLLOWED = 7
RESULT_CANDIDATES = 8  # the next turn's candidate count (0 when the episode ended)
RESULT_TURN = 9  # turns played after the move
RESULT_COMPLETED = 10  # the protocol's completion (``complete_at``)
RESULT_SCORES = 11  # ``METRIC_NAMES``, after the move
RESULT_WIDTH = RESULT_SCORES + len(METRIC_NAMES)

# One episode's scalars, a row of ``Episode.info``.
EPISODE_INFO = np.dtype([
    ("seed", np.int64),  # this episode's seed
    ("turn", np.int64),  # turns played
    ("distance", np.int64),  # oracle distance of the current board
    ("num_candidates", np.int64),  # oracle candidates shown this turn
    ("env_seed", np.int64),  # vector env: the env's stream seed (episode seeds derive from it)
    ("episode", np.int64),  # vector env: episodes this env has started (0 = the first)
    ("step_seed", np.int64),  # vector env: the seed of the episode the last builder step belonged to
    ("step_episode", np.int64),  # vector env: its episode index
])

#: The fields of ``Config`` and their numba types (the arrays are read-only).
CONFIG_FIELDS = {
    "n": INT64,  # board side
    "max_turns": INT64,
    "oracle_n": INT64,  # candidates shown (NO_ORACLE: the builder may try every legal move)
    "reward": INT64,  # REWARD_*
    "start": INT64,  # starts.start_code
    "generate": INT64,  # 1: targets come from the episode seed; 0: from fixed_targets
    "num_intents": INT64,
    "large_offset": INT64,  # first large-block action id (``ActionTable.large_offset``)
    "remove_offset": INT64,  # first removal action id
    "hidden_span_ban": INT64,  # 1 when ``allowed`` forbids actions (protocol paper)
    "speakers_with_replacement": INT64,  # 1: slots drawn with replacement; 0: each seat once, shuffled or fixed
    "complete_at": FLOAT64,  # progress that completes a game (EXACT_COMPLETION: board equals target)
    "paper_candidates": INT64,  # 1: the paper's candidate list; 0: the exact oracle's optimal moves
    "fixed_order": frozen(np.int64, 1),  # (seats,): the speaking order, or -1s for a seeded one
    "static": frozen(np.int16, 2),  # (4, A): the action table's kind, cell_a, cell_b, colour rows
    "pairs": frozen(np.int16, 2),  # (P, 2): the two cells of each adjacent pair, in action-table order
    "pair_of": frozen(np.int16, 2),  # (C, C): pair index of two neighbouring cells
    "allowed": frozen(np.int8, 1),  # (A,): what the protocol allows at all (``protocol_action_mask``)
    "groups": frozen(np.int16, 3),  # (seats, G, 6) and
    "bucket_ptr": frozen(np.int16, 2),  # (seats, K+1): the intent groups (``intents.intent_groups``)
    "walls": frozen(np.int16, 2),  # (seats, n): each seat's wall cells
    "visible": frozen(np.int8, 1),  # (C,): the cells directors see
    "all_visible": frozen(np.int8, 1),  # (C,): ones (the builder sees everything)
    "fixed_targets": frozen(np.int8, 3),  # (B or 1, C, h): the given structures when ``generate == 0``
}

#: The fields of ``Episode`` and their numba types (``B`` is the batch).
EPISODE_FIELDS = {
    "boards": writeable(np.int8, 3),  # (B, C, h)
    "targets": writeable(np.int8, 3),  # (B, C, h)
    "info": writeable(EPISODE_INFO, 1),  # (B,)
    "scores": writeable(np.float64, 2),  # (B, 5), METRIC_NAMES order
    "spoken": writeable(np.int16, 2),  # (B, seats): intent spoken this turn (-1: not yet)
    "order": writeable(np.int64, 2),  # (B, slots): the seat speaking in each slot of this turn
    "optimal": writeable(np.int8, 2),  # (B, A): the oracle's moves this turn
    "candidates": writeable(np.int16, 2),  # (B, A): the candidates shown (first num_candidates)
    "candidate_layers": writeable(np.int8, 2),  # (B, A): the layer each candidate acts on
    "builder_mask": writeable(np.int8, 2),  # (B, A)
    "director_masks": writeable(np.int8, 3),  # (B, seats, I)
    "director_obs": writeable(np.float32, 3),  # (B, seats, Dd), kept current
    "builder_obs": writeable(np.float32, 2),  # (B, Db), kept current
    "scratch": writeable(np.int8, 2),  # (B, scratch_width(n))
}

Config = namedtuple("Config", CONFIG_FIELDS)
Episode = namedtuple("Episode", EPISODE_FIELDS)
CONFIG_RECORD = record_type(CONFIG_FIELDS)
EPISODE_RECORD = record_type(EPISODE_FIELDS)


@njit(cache=True)
def _pack_config(values):
    packed = structref.new(CONFIG_RECORD)
    packed.values = values
    return packed


@njit(cache=True)
def _pack_episode(values):
    packed = structref.new(EPISODE_RECORD)
    packed.values = values
    return packed


def kernel_records(config: Config, episode: Episode) -> tuple[KernelRecord, KernelRecord]:
    """``config`` and ``episode`` packed for the kernels (``core.records``): the same arrays, no copy."""
    check_fields("Config", config, CONFIG_FIELDS)
    check_fields("Episode", episode, EPISODE_FIELDS)
    return _pack_config(tuple(config)), _pack_episode(tuple(episode))


@njit(cache=True, inline="always")
def named(config, episode):
    """Packed records (``kernel_records``) as the named tuples every row kernel takes."""
    return Config(*config.values), Episode(*episode.values)


# --------------------------------------------------------------------------- building the records


def scratch_width(n: int) -> int:
    """Columns of int8 scratch one episode needs (heights, keep, prefix, order, 4 + 4 neighbours)."""
    return 4 * n * n + 8


def pair_cells(n: int) -> np.ndarray:
    """``(P, 2)`` int16: the two cells of each adjacent pair, in action-table order."""
    table = action_table(n)
    ids = table.large_offset + 5 * np.arange(table.num_pairs)
    return np.stack([table.cell_a[ids], table.cell_b[ids]], axis=1).astype(np.int16)


def config_record(
    seats, intents, n, height, max_turns, oracle_n, reward, start, director_order, director_sees,
    protocol: Protocol = CRAFT, fixed_targets=None,
) -> Config:
    """The ``Config`` record of one (validated) configuration.

    ``seats`` are seat names, ``intents`` their ``IntentTable``s;
    ``oracle_n`` None is no oracle; ``director_order`` None is a seeded
    order; ``fixed_targets`` ``(B or 1, n*n, height)`` the given targets, or
    None to generate them from the episode seeds.
    """
    table = action_table(n)
    cells = n * n
    walls = np.stack([seat_cell_indices(seat, n) for seat in seats]).astype(np.int16)
    all_visible = np.ones(cells, np.int8)
    visible = all_visible
    if director_sees == "walls":
        visible = np.zeros(cells, np.int8)
        visible[walls.ravel()] = 1
    allowed = protocol_action_mask(protocol, n)
    groups, bucket_ptr = intent_groups(intents, n, height, allowed)
    generate = fixed_targets is None
    if generate:
        fixed_targets = np.zeros((1, cells, height), np.int8)
    fixed_order = np.array(director_order if director_order is not None else (-1,) * len(seats), np.int64)
    static = np.stack([table.kind, table.cell_a, table.cell_b, table.colour]).astype(np.int16)
    config = Config(
        n=n,
        max_turns=max_turns,
        oracle_n=NO_ORACLE if oracle_n is None else oracle_n,
        reward=REWARDS.index(reward),
        start=start_code(start, seats),
        generate=int(generate),
        num_intents=intents[0].num_intents,
        large_offset=table.large_offset,
        remove_offset=table.remove_offset,
        hidden_span_ban=int(protocol.hidden_span_ban),
        speakers_with_replacement=int(protocol.speakers == SPEAKERS_WITH_REPLACEMENT),
        complete_at=EXACT_COMPLETION if protocol.complete_at is None else float(protocol.complete_at),
        paper_candidates=int(protocol.candidates == CANDIDATES_PAPER),
        fixed_order=fixed_order,
        static=static,
        pairs=pair_cells(n),
        pair_of=table.pair_of,
        allowed=allowed,
        groups=groups,
        bucket_ptr=bucket_ptr,
        walls=walls,
        visible=visible,
        all_visible=all_visible,
        fixed_targets=np.ascontiguousarray(fixed_targets, np.int8),
    )
    for array in config[config._fields.index("fixed_order"):]:
        array.flags.writeable = False
    return config


def new_episodes(config: Config, batch: int, height: int, director_dim: int, builder_dim: int) -> Episode:
    """Zeroed ``Episode`` arrays for ``batch`` episodes of ``config``."""
    n = config.n
    cells = n * n
    seats = config.walls.shape[0]
    actions = config.static.shape[1]
    return Episode(
        boards=np.zeros((batch, cells, height), np.int8),
        targets=np.zeros((batch, cells, height), np.int8),
        info=np.zeros(batch, EPISODE_INFO),
        scores=np.zeros((batch, len(METRIC_NAMES)), np.float64),
        spoken=np.full((batch, seats), -1, np.int16),
        order=np.zeros((batch, seats), np.int64),
        optimal=np.zeros((batch, actions), np.int8),
        candidates=np.zeros((batch, actions), np.int16),
        candidate_layers=np.zeros((batch, actions), np.int8),
        builder_mask=np.zeros((batch, actions), np.int8),
        director_masks=np.zeros((batch, seats, config.num_intents), np.int8),
        director_obs=np.zeros((batch, seats, director_dim), np.float32),
        builder_obs=np.zeros((batch, builder_dim), np.float32),
        scratch=np.zeros((batch, scratch_width(n)), np.int8),
    )


# --------------------------------------------------------------------------- masks


@njit(cache=True)
def director_masks_row(board, n, groups, bucket_ptr, heights, out):
    """Every seat's intent mask into ``out`` (seats, I): the no-op, and each intent whose builder action
    is legal now and acts on the intent's layer (``intents.fill_director_mask``), bucket by bucket.

    ``heights`` must hold the board's stack heights; ``groups, bucket_ptr``
    come from ``intents.intent_groups``.
    """
    h = board.shape[1]
    seats, intents = out.shape
    # Indexed, not sliced: a row view per group costs more than the rest of the loop.
    for s in range(seats):
        for intent in range(intents):
            out[s, intent] = 0
        out[s, 0] = 1
        for a in range(n * n):
            ha = heights[a]
            key = a * (h + 1) + ha
            for g in range(bucket_ptr[s, key], bucket_ptr[s, key + 1]):
                if groups[s, g, 5]:  # a removal: a large top needs its partner uncovered
                    top = board[a, ha - 1]
                    allowed = top < 6 or heights[partner_cell(n, a, top)] == ha
                else:
                    allowed = heights[groups[s, g, 3]] == ha
                if allowed:
                    first = groups[s, g, 0]
                    for intent in range(first, first + groups[s, g, 1]):
                        out[s, intent] = 1


@njit(cache=True, inline="always")
def _mask_with(mask, allowed):
    """``mask &= allowed``; returns how many stay set."""
    count = 0
    for a in range(mask.shape[0]):
        mask[a] &= allowed[a]
        count += mask[a]
    return count


@njit(cache=True)
def paper_candidates(board, target, n, kind, cell_a, cell_b, pair_of, large_offset, remove_offset, allowed,
                     heights, seen_pairs, out):
    """The paper's candidate list into ``out`` in scan order; returns its length (docs/rules.md).

    Cells row-major, at most one candidate per cell: a stack shorter than
    its target places the target's next block (the layers below are not
    checked), a taller one removes its top, one of equal length removes its
    top if any layer differs. A large block is offered once per pair
    (``seen_pairs``, scratch of one entry per pair, counts placements and
    removals alike). A candidate must be legal and allowed by the protocol.
    ``heights`` must hold the board's stack heights.
    """
    cells = n * n
    h = board.shape[1]
    for p in range(seen_pairs.shape[0]):
        seen_pairs[p] = 0
    count = 0
    for c in range(cells):
        hc = heights[c]
        ht = 0
        while ht < h and target[c, ht] != 0:
            ht += 1
        action = -1
        if hc < ht:
            v = target[c, hc]
            if v < 6:
                action = c * 5 + v - 1
            else:
                p = pair_of[c, partner_cell(n, c, v)]
                if seen_pairs[p]:
                    continue
                seen_pairs[p] = 1
                action = large_offset + p * 5 + (v - 6) // 4
        elif hc > 0:
            differs = hc > ht
            for level in range(hc):
                if board[c, level] != target[c, level]:
                    differs = True
            if not differs:
                continue
            top = board[c, hc - 1]
            if top >= 6:
                p = pair_of[c, partner_cell(n, c, top)]
                if seen_pairs[p]:
                    continue
                seen_pairs[p] = 1
            action = remove_offset + c
        if action >= 0 and allowed[action] and check_action(board, n, action, kind, cell_a, cell_b) == OK:
            out[count] = action
            count += 1
    return count


# --------------------------------------------------------------------------- a turn


@njit(cache=True, inline="always")
def score_row(c, e, b):
    """Score episode ``b``'s board: ``scores[b]`` and ``info[b].distance`` (keep levels into scratch)."""
    cells = c.n * c.n
    board = e.boards[b]
    target = e.targets[b]
    fill_scores(board, target, c.n, VALUE_TO_CODE_INDEX, e.scores[b])
    keep = e.scratch[b, cells:2 * cells]
    fill_keep_levels(board, target, c.n, keep)
    e.info[b].distance = distance_from_keep(board, target, c.n, keep)


@njit(cache=True, inline="always")
def begin_turn_row(c, e, b):
    """Begin episode ``b``'s next turn: slots, optimal moves, candidates and every mask.

    ``scratch[b]`` must hold the board's keep levels (``score_row`` and
    ``builder_row`` leave them there).
    """
    n = c.n
    cells = n * n
    board = e.boards[b]
    kind = c.static[0]
    row = e.scratch[b]
    heights = row[:cells]
    keep = row[cells:2 * cells]
    info = e.info[b]
    order = e.order[b]
    seats = c.walls.shape[0]
    if c.speakers_with_replacement:
        state = np.uint64(derive_seed(info.seed, STREAM_ORDER, info.turn))
        for k in range(order.shape[0]):
            state, r = draw(state, seats)
            order[k] = r
    elif c.fixed_order[0] < 0:
        shuffled_order(derive_seed(info.seed, STREAM_ORDER, info.turn), seats, order)
    else:
        for k in range(order.shape[0]):
            order[k] = c.fixed_order[k]
    optimal = e.optimal[b]
    # optimal_from_keep fills ``heights`` for this board; the rest of the turn reuses it.
    optimal_from_keep(board, e.targets[b], n, c.pair_of, c.large_offset, c.remove_offset, keep, heights, True,
                      optimal)
    if c.hidden_span_ban:
        _mask_with(optimal, c.allowed)
    mask = e.builder_mask[b]
    candidates = e.candidates[b]
    count = 0
    if c.oracle_n == NO_ORACLE:
        legal_from_heights(board, n, c.pairs, c.large_offset, c.remove_offset, heights, mask)
        if c.hidden_span_ban:
            _mask_with(mask, c.allowed)
    else:
        seed = derive_seed(info.seed, STREAM_CANDIDATES, info.turn)
        if c.paper_candidates:
            # The pair flags borrow the candidate-layer row (rewritten below).
            total = paper_candidates(board, e.targets[b], n, kind, c.static[1], c.static[2], c.pair_of,
                                     c.large_offset, c.remove_offset, c.allowed, heights,
                                     e.candidate_layers[b, :c.pairs.shape[0]], candidates)
            if total > c.oracle_n:
                count = sample_from_list(seed, candidates, total, c.oracle_n)
            else:
                count = total
        else:
            total = 0
            for a in range(optimal.shape[0]):
                if optimal[a]:
                    candidates[total] = a
                    total += 1
            count = sample_from_list(seed, candidates, total, c.oracle_n)
        for a in range(mask.shape[0]):
            mask[a] = 0
        layers = e.candidate_layers[b]
        for k in range(count):
            action = candidates[k]
            mask[action] = 1
            layers[k] = landing_layer_at(kind[action], heights[c.static[1, action]])
        mask[mask.shape[0] - 1] = 1
    info.num_candidates = count
    director_masks_row(board, n, c.groups, c.bucket_ptr, heights, e.director_masks[b])


@njit(cache=True)
def write_all_obs_row(c, e, b):
    """Every kept observation of episode ``b`` in full (``core.observation``'s writers)."""
    fraction = played_fraction(e.info[b].turn, c.max_turns)
    board = e.boards[b]
    spoken = e.spoken[b]
    fill_builder_obs(board, c.n, VALUE_TO_CODE_INDEX, c.all_visible, spoken, c.num_intents, fraction,
                     e.builder_obs[b])
    for s in range(c.walls.shape[0]):
        fill_director_obs(board, e.targets[b], c.n, VALUE_TO_CODE_INDEX, c.visible, c.walls[s], spoken,
                          c.num_intents, fraction, s, e.director_obs[b, s])


@njit(cache=True)
def resync_row(c, e, b):
    """Score episode ``b``'s board, begin the turn and rewrite every observation (after an outside edit)."""
    for s in range(e.spoken.shape[1]):
        e.spoken[b, s] = -1
    score_row(c, e, b)
    begin_turn_row(c, e, b)
    write_all_obs_row(c, e, b)


@njit(cache=True)
def reset_row(c, e, b):
    """Start episode ``b`` from ``info[b].seed``: target, start board, turn 0, and its first turn."""
    n = c.n
    cells = n * n
    row = e.scratch[b]
    target = e.targets[b]
    h = target.shape[1]
    if c.generate:
        for cell in range(cells):
            for level in range(h):
                target[cell, level] = 0
        generate_with_scratch(
            np.uint64(derive_seed(e.info[b].seed, STREAM_TARGET, 0)), n, target, row[:cells],
            row[3 * cells:4 * cells], row[4 * cells:4 * cells + 4], row[4 * cells + 4:4 * cells + 8],
        )
    else:
        target[:, :] = c.fixed_targets[b % c.fixed_targets.shape[0]]
    fill_start(target, n, c.start, c.walls, row[2 * cells:3 * cells], e.boards[b])
    e.info[b].turn = 0
    resync_row(c, e, b)


@njit(cache=True, inline="always")
def speak(director_masks, spoken, seat, intent, director_obs, builder_obs):
    """A director's action: ``seat`` speaks ``intent`` in one slot (the no-op if its mask forbids it).

    Arguments are one episode's rows. Returns whether it was allowed. A seat
    that speaks again in the turn (speakers drawn with replacement) replaces
    what it said.
    """
    return note_intent(director_masks, spoken, seat, intent, director_obs, builder_obs)


@njit(cache=True, inline="always")
def speak_slots(director_masks, spoken, order, intents, num_intents, director_obs, builder_obs, legal):
    """The director phase of one episode: each speaking slot's seat says ``intents[seat]``.

    Arguments are one episode's rows (``order`` its slots, ``intents`` one
    id per seat). An id outside ``0..num_intents-1`` or outside the seat's
    mask is the no-op; ``legal[seat]`` records whether what the seat said
    was allowed (True for a seat that held no slot this turn).
    """
    for s in range(legal.shape[0]):
        legal[s] = True
    for k in range(order.shape[0]):
        s = order[k]
        intent = intents[s]
        in_range = 0 <= intent < num_intents
        allowed = speak(director_masks, spoken, s, intent if in_range else 0, director_obs, builder_obs)
        legal[s] = in_range and allowed


@njit(cache=True, inline="always")
def builder_row(c, e, b, action, override, out):
    """The builder's ``action`` in episode ``b``: check, play, score; returns whether the episode ended.

    ``override`` != ``OK`` fails a legal move with that reason (the caller
    found it wrong, e.g. a wrong layer claimed in text). Writes the result
    row ``out`` (``RESULT_*``), ``info[b]`` (turn, distance), the scores and
    the kept observations (the changed cells, the cleared intents, the turn
    fraction); leaves the keep levels in scratch for ``begin_turn_row``.
    """
    n = c.n
    cells = n * n
    kind = c.static[0]
    cell_a = c.static[1]
    cell_b = c.static[2]
    board = e.boards[b]
    target = e.targets[b]
    info = e.info[b]
    optimal = e.optimal[b]
    code = check_action(board, n, action, kind, cell_a, cell_b)
    known = code != UNKNOWN_ACTION
    if code == OK and c.hidden_span_ban and not c.allowed[action]:
        code = HIDDEN_SPAN
    if code == OK and override != OK:
        code = override
    prescribed = 0.0
    for cell in range(cells):
        if optimal[c.remove_offset + cell]:
            prescribed = 1.0
    layer = -1
    changed_a = -1
    changed_b = -1
    if code == OK:
        k = kind[action]
        if k != KIND_NOOP:
            a = cell_a[action]
            changed_a = a
            height = 0
            while height < board.shape[1] and board[a, height] != 0:
                height += 1
            layer = landing_layer_at(k, height)
            if k == KIND_REMOVE:
                top = board[a, layer]
                if top >= 6:
                    changed_b = partner_cell(n, a, top)
            elif k == KIND_LARGE:
                changed_b = cell_b[action]
        apply_action_inplace(board, n, action, kind, cell_a, cell_b, c.static[3])
    scores = e.scores[b]
    before_progress = scores[PROGRESS]
    before_distance = info.distance
    fill_scores(board, target, n, VALUE_TO_CODE_INDEX, scores)
    keep = e.scratch[b, cells:2 * cells]
    fill_keep_levels(board, target, n, keep)
    after = distance_from_keep(board, target, n, keep)
    is_optimal = 1.0 if code == OK and optimal[action] else 0.0
    followed = is_optimal
    if c.oracle_n != NO_ORACLE:
        followed = 0.0
        if code == OK:
            for k in range(info.num_candidates):
                if e.candidates[b, k] == action:
                    followed = 1.0
    if c.reward == REWARD_PROGRESS_DELTA:
        reward = scores[PROGRESS] - before_progress
    elif c.reward == REWARD_DISTANCE:
        reward = float(before_distance - after)
    else:
        reward = 1.0 if after == 0 else 0.0
    if c.complete_at == EXACT_COMPLETION:
        completed = after == 0
    else:
        completed = after == 0 or scores[PROGRESS] >= c.complete_at
    turn = info.turn + 1
    info.turn = turn
    info.distance = after
    out[RESULT_REASON] = code
    out[RESULT_LAYER] = layer
    out[RESULT_DISTANCE] = after
    out[RESULT_REWARD] = reward
    out[RESULT_OPTIMAL] = is_optimal
    out[RESULT_REMOVE_PRESCRIBED] = prescribed
    out[RESULT_REMOVE_ATTEMPTED] = 1.0 if known and kind[action] == KIND_REMOVE else 0.0
    out[RESULT_FOLLOWED] = followed
    out[RESULT_CANDIDATES] = 0.0
    out[RESULT_TURN] = turn
    out[RESULT_COMPLETED] = 1.0 if completed else 0.0
    for m in range(scores.shape[0]):
        out[RESULT_SCORES + m] = scores[m]
    dobs = e.director_obs[b]
    bobs = e.builder_obs[b]
    for changed in (changed_a, changed_b):
        if changed >= 0:
            rewrite_cell_obs(board, n, changed, c.visible, dobs, bobs)
    start_turn_obs(e.spoken[b], c.num_intents, played_fraction(turn, c.max_turns), dobs, bobs)
    return completed or turn >= c.max_turns


@njit(cache=True, inline="always")
def close_row(c, e, b):
    """Episode ``b`` is over: every mask allows only the no-op and no candidates are shown."""
    mask = e.builder_mask[b]
    for a in range(mask.shape[0]):
        mask[a] = 0
    mask[mask.shape[0] - 1] = 1
    masks = e.director_masks[b]
    for s in range(masks.shape[0]):
        for intent in range(masks.shape[1]):
            masks[s, intent] = 0
        masks[s, 0] = 1
    e.info[b].num_candidates = 0


# --------------------------------------------------------------------------- called from Python (packed records)


@njit(cache=True)
def reset_episode(config, episode, b):
    """``reset_row`` for packed records (``kernel_records``)."""
    c, e = named(config, episode)
    reset_row(c, e, b)


@njit(cache=True)
def resync_episode(config, episode, b):
    """``resync_row`` for packed records (``kernel_records``)."""
    c, e = named(config, episode)
    resync_row(c, e, b)


@njit(cache=True)
def play_builder(config, episode, b, action, override, out):
    """The builder's action ending the turn of a single episode (packed records): ``builder_row``, then
    the next turn (``begin_turn_row``) or the end (``close_row``). Returns the reason code. One call
    per turn: on the PettingZoo envs' path a call costs mostly numba's argument dispatch.
    """
    c, e = named(config, episode)
    done = builder_row(c, e, b, action, override, out)
    if done:
        close_row(c, e, b)
    else:
        begin_turn_row(c, e, b)
        out[RESULT_CANDIDATES] = e.info[b].num_candidates
    return np.int64(out[RESULT_REASON])
