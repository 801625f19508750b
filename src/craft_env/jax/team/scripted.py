"""The scripted directors (``core.scripted``) as a pure JAX function of their observations.

``core.scripted.scripted_intent`` compares the board with the director's
target wall, lowest layer first, then left to right from its seat, and
says the first fix its mask allows: take the top block off a column that
looks wrong, or put the wanted block where the spot is empty (a large
block along the wall when its wall view shows it wide). Here the same rule
reads only the director's observation (``core.observation``): the board's
one-hots and its wall view, as ``agents.scripted.ScriptedDirector`` does
(wide slots are paired with the next wide slot of the same code, left to
right, as ``agents.scripted.wall_target`` does; an unpaired wide slot is
asked for as a small block). ``tests/test_team.py`` checks it against
``vector_env().scripted_intents()`` on many states.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from craft_env.core.observation import BOARD_CHANNELS, VIEW_CHANNELS, board_dim
from craft_env.core.views import seat_cell_indices

#: Cell offset to a large half's partner, by the partner-direction channel (far, near, left, right).
_STEPS = (-1, 1, -1, 1)


def walls_of(seats, n: int) -> np.ndarray:
    """int32 ``(seats, n)``: each seat's wall cells, left to right from the seat."""
    return np.stack([seat_cell_indices(seat, n) for seat in seats]).astype(np.int32)


def _seen_codes(board: jnp.ndarray, wall: np.ndarray, n: int) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(codes (n, h), heights (n,))`` of the board on one wall: ``core.views.view_code`` and stack heights."""
    cells = board[wall]  # (slots, h, 15)
    blocks = cells[..., 1:11]
    occupied = blocks.sum(-1) > 0
    code_index = jnp.argmax(blocks, axis=-1)
    colour, large = code_index // 2, code_index % 2
    direction = jnp.argmax(cells[..., 11:15], axis=-1)
    step = jnp.asarray([-n, n, -1, 1])[direction]
    partner = wall[:, None] + step
    on_wall = (partner[..., None] == jnp.asarray(wall)[None, None, :]).any(-1)
    wide = (large == 1) & on_wall
    codes = jnp.where(occupied, 1 + 2 * colour + wide.astype(jnp.int32), 0)
    return codes, occupied.sum(-1)


def _wanted_codes(view: jnp.ndarray, slots: int) -> tuple[jnp.ndarray, jnp.ndarray]:
    """``(codes (n, h), pair_left (n, h))``: the wall view with unpaired wide slots made small, and the
    left slot of each paired wide slot (``agents.scripted.wall_target``'s greedy pairing)."""
    codes = jnp.argmax(view, axis=-1)  # (slots, h)
    wide = (codes > 0) & ((codes - 1) % 2 == 1)
    paired = jnp.zeros(codes.shape, bool)
    left = jnp.zeros(codes.shape, jnp.int32)
    taken = jnp.zeros(codes.shape[1:], bool)  # the previous slot was paired with its left neighbour
    for p in range(slots):
        starts = wide[p] & ~taken
        if p + 1 < slots:
            starts = starts & wide[p + 1] & (codes[p + 1] == codes[p])
        else:
            starts = jnp.zeros_like(starts)
        paired = paired.at[p].set(paired[p] | starts)
        left = left.at[p].set(jnp.where(starts, p, left[p]))
        if p + 1 < slots:
            paired = paired.at[p + 1].set(starts)
            left = left.at[p + 1].set(jnp.where(starts, p, left[p + 1]))
        taken = starts
    small = jnp.where(wide & ~paired, codes - 1, codes)
    return small, left


def scripted_intents(obs: jnp.ndarray, masks: jnp.ndarray, walls: np.ndarray, n: int, height: int) -> jnp.ndarray:
    """Every seat's scripted intent for one env: ``obs (seats, Dd)``, ``masks (seats, I)`` -> int32 ``(seats,)``."""
    seats, slots = walls.shape
    total = slots * height
    start = board_dim(n, height)
    out = []
    for k in range(seats):
        board = obs[k, :start].reshape(n * n, height, BOARD_CHANNELS)
        view = obs[k, start:start + slots * height * VIEW_CHANNELS].reshape(slots, height, VIEW_CHANNELS)
        seen, heights = _seen_codes(board, walls[k], n)
        wanted, left = _wanted_codes(view, slots)
        p = jnp.arange(slots)[:, None]
        level = jnp.arange(height)[None, :]
        colour = (wanted - 1) // 2
        remove = 1 + 15 * total + p * height + (heights[:, None] - 1)
        small = 1 + (p * height + level) * 5 + colour
        large = 1 + 5 * total + ((left * height + level) * 2 + 0) * 5 + colour
        is_wide = (wanted > 0) & ((wanted - 1) % 2 == 1)
        intent = jnp.where(seen != 0, remove, jnp.where(is_wide, large, small))
        intent = jnp.clip(intent, 0, masks.shape[-1] - 1)
        usable = (seen != wanted) & (masks[k][intent] > 0)
        order_intent, order_usable = intent.T.reshape(-1), usable.T.reshape(-1)  # lowest layer first
        first = jnp.argmax(order_usable)
        out.append(jnp.where(order_usable.any(), order_intent[first], 0))
    return jnp.stack(out).astype(jnp.int32)
