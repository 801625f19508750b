"""The seeded target generator and the starting boards, ported from ``core.generator`` and ``core.starts``.

``generate(seed, n, h)`` draws exactly the numbers ``core.generator.
generate_with_scratch`` draws from the same SplitMix64 stream (``u64``),
in the same order, so a seed gives the same target here as in the numba
game: the loops are the numba kernel's (``fori_loop``s: unrolled, their
bodies made the compile take minutes), with every conditional draw written as a draw whose state is
kept only where the kernel would have drawn. ``start_board`` is
``core.starts.fill_start``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from craft_env.jax import u64
from craft_env.jax.tables import Tables


def generate(seed: u64.U64, tables: Tables) -> jax.Array:
    """The target of uint64 ``seed`` (the core draws it from ``derive_seed(episode, STREAM_TARGET, 0)``)."""
    n, h = tables.n, tables.height
    cells = n * n
    state = seed
    state, _ = u64.draw(state, jnp.uint32(2))
    heights = []
    for c in range(cells):
        i, j = divmod(c, n)
        if i == 0 or j == 0 or j == n - 1:
            heights.append(jnp.int32(h))
        else:
            state, r = u64.draw(state, jnp.uint32(h))
            heights.append(r)
    heights = jnp.stack(heights)
    cell_ids = jnp.arange(cells, dtype=jnp.int32)
    steps = jnp.array([-n, n, -1, 1], jnp.int32)
    offsets = jnp.array([(-1, 0), (1, 0), (0, -1), (0, 1)], jnp.int32)

    def shuffle_step(k, carry):
        state, order = carry
        c = cells - 1 - k
        state, r = u64.draw(state, (c + 1).astype(jnp.uint32))
        at_c, at_r = order[c], order[r]
        order = jnp.where(cell_ids == c, at_r, jnp.where(cell_ids == r, at_c, order))
        return state, order

    def place_step(idx, carry):
        state, order, row, level = carry
        c = order[idx]
        active = (heights[c] > level) & (row[c] == 0)
        coin_state, coin = u64.draw(state, jnp.uint32(2))
        state = u64.where(active, coin_state, state)
        ni = c // n + offsets[:, 0]
        nj = c % n + offsets[:, 1]
        inside = (ni >= 0) & (ni < n) & (nj >= 0) & (nj < n)
        p = jnp.clip(ni, 0, n - 1) * n + jnp.clip(nj, 0, n - 1)
        # The unfilled neighbours that need a block on this level, in direction order 0..3.
        found = inside & (heights[p] > level) & (row[p] == 0) & (coin == 0)
        count = jnp.sum(found, dtype=jnp.int32)
        colour_state, colour = u64.draw(state, jnp.uint32(5))
        state = u64.where(active, colour_state, state)
        pick_state, pick = u64.draw(state, count.astype(jnp.uint32))
        large = active & (count > 0)
        state = u64.where(large, pick_state, state)
        rank = jnp.cumsum(found, dtype=jnp.int32) - 1
        d = jnp.argmax(found & (rank == pick)).astype(jnp.int32)
        own = jnp.where(large, 6 + 4 * colour + d, 1 + colour)
        row = jnp.where(active & (cell_ids == c), own, row)
        row = jnp.where(large & (cell_ids == c + steps[d]), 6 + 4 * colour + (d ^ 1), row)
        return state, order, row, level

    def level_step(level, carry):
        state, board = carry
        state, order = jax.lax.fori_loop(0, cells - 1, shuffle_step, (state, cell_ids))
        state, _, row, _ = jax.lax.fori_loop(0, cells, place_step, (state, order, jnp.zeros(cells, jnp.int32), level))
        return state, board.at[:, level].set(row)

    _, board = jax.lax.fori_loop(0, h, level_step, (state, jnp.zeros((cells, h), jnp.int32)))
    return board.astype(jnp.int8)


def start_board(target: jax.Array, start: jax.Array, tables: Tables) -> jax.Array:
    """``core.starts.fill_start``: start number ``start`` (``starts.start_code``, traced) of ``target``."""
    h = tables.height
    cells = target.shape[0]
    values = target.astype(jnp.int32)
    count = jnp.sum(values != 0, axis=1, dtype=jnp.int32)
    walls = jnp.asarray(tables.walls)
    wall = walls[jnp.clip(start - 3, 0, walls.shape[0] - 1)]
    on_wall = jnp.any(jnp.arange(cells)[:, None] == wall[None, :], axis=1)
    prefix = jnp.where(start == 0, 0, jnp.where(start == 1, jnp.minimum(1, count),
                       jnp.where(start == 2, jnp.minimum(2, count), jnp.where(on_wall, count, 0))))
    levels = jnp.arange(h, dtype=jnp.int32)
    large = values >= 6
    partner = jnp.arange(cells)[:, None] + jnp.asarray(tables.partner_step)[values]
    partner = jnp.clip(partner, 0, cells - 1)
    # Synchronous rounds to the fixpoint: a cut to layer L needs the partner's prefix <= L, which is the
    # starting prefix or a cut by another block on a lower layer, so chains climb the layers: h rounds.
    for _ in range(h):
        cut = (levels[None, :] < prefix[:, None]) & large & (prefix[partner] <= levels[None, :])
        lowest = jnp.min(jnp.where(cut, levels[None, :], h), axis=1)
        prefix = jnp.minimum(prefix, lowest)
    return jnp.where(levels[None, :] < prefix[:, None], values, 0).astype(jnp.int8)
