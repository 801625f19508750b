"""Flat numeric observations, shared by the PettingZoo envs and the vector env.

One place builds every agent's numeric view, so ``parallel_env()`` and the
batched vector env cannot drift apart. All values are 0/1 except the turn
fraction; dtype float32.

Builder (``builder_obs_dim``)::

    [ board | intents | turn ]

Director (``director_obs_dim``)::

    [ board | own target wall | intents | turn | seat one-hot ]

* ``board``: per cell (row-major) and layer, 11 code channels (empty, then
  the ten block codes ``gs gl bs bl ...``) and 4 partner-direction channels
  (far, near, left, right; all zero for a small block or empty).
  ``n*n*h*15`` values. Cells a director may not see (``director_sees =
  "walls"``) are all zero.
* ``own target wall``: the director's private target view, per slot (left
  to right from its seat) and layer, one-hot over 11 values (empty, then
  colour x apparent size 1/2). ``n*h*11`` values.
* ``intents``: for each director seat, a one-hot of the intent it spoke so
  far this turn (all zero if it has not spoken yet). ``seats * intents``.
* ``turn``: turn index / max_turns.
* ``seat one-hot``: which director this is (its index in the game's
  ``seats``, ``docs/rules.md`` "Seats"); ``seats`` is the number seated.

Global state (``state_dim``), for centralized critics only, never part of
an agent's observation::

    [ board | target | intents | turn ]

with ``target`` encoded like ``board`` (the whole target, every cell).
"""

from __future__ import annotations

from numba import njit

from craft_env.core.encoding import VALUE_TO_CODE_INDEX
from craft_env.core.views import view_code

BOARD_CHANNELS = 15
VIEW_CHANNELS = 11


def board_dim(n: int, height: int) -> int:
    return n * n * height * BOARD_CHANNELS


def view_dim(n: int, height: int) -> int:
    return n * height * VIEW_CHANNELS


def builder_obs_dim(n: int, height: int, seats: int, intents: int) -> int:
    return board_dim(n, height) + seats * intents + 1


def director_obs_dim(n: int, height: int, seats: int, intents: int) -> int:
    return board_dim(n, height) + view_dim(n, height) + seats * intents + 1 + seats


def state_dim(n: int, height: int, seats: int, intents: int) -> int:
    return 2 * board_dim(n, height) + seats * intents + 1


@njit(cache=True, inline="always")
def played_fraction(turn, max_turns):
    """The observation's last value: turns played over ``max_turns``, at most 1."""
    return min(turn / max_turns, 1.0)


@njit(cache=True, inline="always")
def write_cell(board, c, code_of, out, offset):
    """One-hot the stack of cell ``c`` into the board block that starts at ``out[offset]``."""
    h = board.shape[1]
    for level in range(h):
        base = offset + (c * h + level) * 15
        for k in range(15):
            out[base + k] = 0.0
        v = board[c, level]
        if v == 0:
            out[base] = 1.0
        else:
            out[base + 1 + code_of[v]] = 1.0
            if v >= 6:
                out[base + 11 + (v - 6) % 4] = 1.0


@njit(cache=True)
def write_board(board, n, visible, code_of, out, offset):
    """One-hot ``board`` into ``out[offset:]``; cells with ``visible[c] == 0`` stay zero."""
    h = board.shape[1]
    for c in range(n * n):
        if visible[c] == 0:
            for k in range(offset + c * h * 15, offset + (c + 1) * h * 15):
                out[k] = 0.0
        else:
            write_cell(board, c, code_of, out, offset)
    return offset + n * n * h * 15


@njit(cache=True)
def write_wall_view(target, n, wall, out, offset):
    """One-hot the target wall seen from a seat (cells ``wall``, left to right) into ``out``.

    Each slot and layer is one of the 11 ``views.view_code`` values.
    """
    h = target.shape[1]
    for s in range(wall.shape[0]):
        for level in range(h):
            base = offset + (s * h + level) * 11
            for k in range(11):
                out[base + k] = 0.0
            out[base + view_code(target, n, wall, s, level)] = 1.0
    return offset + wall.shape[0] * h * 11


@njit(cache=True)
def write_intents(spoken, num_intents, out, offset):
    """One-hot each seat's spoken intent (``-1``: not yet spoken) into ``out``."""
    for s in range(spoken.shape[0]):
        base = offset + s * num_intents
        for k in range(num_intents):
            out[base + k] = 0.0
        if spoken[s] >= 0:
            out[base + spoken[s]] = 1.0
    return offset + spoken.shape[0] * num_intents


@njit(cache=True)
def fill_builder_obs(board, n, code_of, visible, spoken, num_intents, turn_fraction, out):
    offset = write_board(board, n, visible, code_of, out, 0)
    offset = write_intents(spoken, num_intents, out, offset)
    out[offset] = turn_fraction


@njit(cache=True)
def fill_director_obs(
    board, target, n, code_of, visible, wall, spoken, num_intents, turn_fraction, seat, out
):
    offset = write_board(board, n, visible, code_of, out, 0)
    offset = write_wall_view(target, n, wall, out, offset)
    offset = write_intents(spoken, num_intents, out, offset)
    out[offset] = turn_fraction
    offset += 1
    for s in range(spoken.shape[0]):
        out[offset + s] = 1.0 if s == seat else 0.0


@njit(cache=True)
def fill_all_obs(board, target, n, code_of, director_visible, builder_visible, walls, spoken, num_intents,
                 turn_fraction, director_out, builder_out):
    """Every agent's observation in one call: directors into rows of ``director_out``, then the builder."""
    for seat in range(walls.shape[0]):
        fill_director_obs(board, target, n, code_of, director_visible, walls[seat], spoken, num_intents,
                          turn_fraction, seat, director_out[seat])
    fill_builder_obs(board, n, code_of, builder_visible, spoken, num_intents, turn_fraction, builder_out)


@njit(cache=True)
def fill_state(board, target, n, spoken, num_intents, turn_fraction, out):
    """The global state ``[board | target | intents | turn]`` into ``out`` (see the module docstring)."""
    target_at = n * n * board.shape[1] * 15
    for c in range(n * n):
        write_cell(board, c, VALUE_TO_CODE_INDEX, out, 0)
        write_cell(target, c, VALUE_TO_CODE_INDEX, out, target_at)
    offset = write_intents(spoken, num_intents, out, 2 * target_at)
    out[offset] = turn_fraction


# In-place updates of kept observations (the envs keep every agent's observation current instead of
# re-encoding it per step). Intents and the turn fraction are located from the end of each vector, so
# these need no board size: builder ``[... | intents | turn]``, director ``[... | intents | turn | seat]``.
# They are inlined into numba callers: the batch kernels call them on row views in tight loops.


@njit(cache=True, inline="always")
def rewrite_cell_obs(board, n, c, director_visible, director_out, builder_out):
    """Re-encode cell ``c``'s stack in every kept observation (directors' only where ``director_visible``)."""
    write_cell(board, c, VALUE_TO_CODE_INDEX, builder_out, 0)
    if director_visible[c]:
        for seat in range(director_out.shape[0]):
            write_cell(board, c, VALUE_TO_CODE_INDEX, director_out[seat], 0)


@njit(cache=True, inline="always")
def intents_at(director_out, builder_out, num_intents):
    """Where the intents block starts in each director's and in the builder's kept observation.

    Counted from the end: ``[... | intents | turn | seat]`` and ``[... | intents | turn]``.
    """
    block = director_out.shape[0] * num_intents
    seats = director_out.shape[0]
    return director_out.shape[1] - 1 - seats - block, builder_out.shape[0] - 1 - block


@njit(cache=True, inline="always")
def note_intent(director_masks, spoken, seat, intent, director_out, builder_out):
    """Director ``seat`` speaks ``intent`` if its mask allows it, else the no-op; returns whether allowed.

    The spoken intent goes into ``spoken`` and every kept observation; it
    replaces what the seat said before in this turn, if anything.
    """
    allowed = director_masks[seat, intent] != 0
    if not allowed:
        intent = 0
    director_at, builder_at = intents_at(director_out, builder_out, director_masks.shape[1])
    if spoken[seat] >= 0:  # the seat spoke before in this turn (speakers drawn with replacement)
        column = seat * director_masks.shape[1] + spoken[seat]
        builder_out[builder_at + column] = 0.0
        for row in range(director_out.shape[0]):
            director_out[row, director_at + column] = 0.0
    spoken[seat] = intent
    column = seat * director_masks.shape[1] + intent
    builder_out[builder_at + column] = 1.0
    for row in range(director_out.shape[0]):
        director_out[row, director_at + column] = 1.0
    return allowed


@njit(cache=True, inline="always")
def start_turn_obs(spoken, num_intents, turn_fraction, director_out, builder_out):
    """A new turn in every kept observation: spoken intents cleared (``spoken`` reset to -1), turn set."""
    seats = director_out.shape[0]
    director_at, builder_at = intents_at(director_out, builder_out, num_intents)
    for s in range(seats):
        if spoken[s] >= 0:
            column = s * num_intents + spoken[s]
            builder_out[builder_at + column] = 0.0
            for row in range(seats):
                director_out[row, director_at + column] = 0.0
            spoken[s] = -1
    builder_out[builder_at + seats * num_intents] = turn_fraction
    for row in range(seats):
        director_out[row, director_at + seats * num_intents] = turn_fraction


@njit(cache=True)
def update_obs_after_move(
    before, board, n, director_visible, spoken, num_intents, turn_fraction, director_out, builder_out
):
    """Bring kept observations (from ``fill_all_obs``) up to date after a move and start the next turn.

    Cells whose stack differs between ``before`` and ``board`` are
    re-encoded; target walls and seat one-hots never change in an episode.
    """
    h = board.shape[1]
    for c in range(n * n):
        for level in range(h):
            if before[c, level] != board[c, level]:
                rewrite_cell_obs(board, n, c, director_visible, director_out, builder_out)
                break
    start_turn_obs(spoken, num_intents, turn_fraction, director_out, builder_out)
