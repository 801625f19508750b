"""The exact oracle (``docs/rules.md#oracle``) as pure JAX functions on one env's arrays.

The same numbers as the numba kernels of ``craft_env.core.oracle``
(``fill_keep_levels``, ``distance_from_keep``, ``fill_optimal_mask``), written
for ``jax.jit`` and ``jax.vmap``: fixed shapes, no Python control flow on
traced values, int32 arithmetic, no host callbacks. ``board`` and ``target``
are ``int8 (n*n, h)`` arrays in the core's encoding (``core.encoding``); ``n``
and ``h`` are read from the shape. The per-size constants come from
``oracle_tables(n, height)``, built once outside any trace; a batch is
``jax.vmap(distance, in_axes=(0, 0, None))(boards, targets, tables)``.

Every function assumes a board the rules can produce (``core.rules``): a
stack is a run of blocks from layer 0 with empty entries above, and each
large half's partner cell (the direction in its value) holds the mirror
half on the same layer. Boards from legal play and generated or loaded
targets all satisfy this.

Keep levels without a loop to a fixpoint
    The numba kernel starts from each cell's longest bottom prefix equal to
    the target and lowers keep levels until nothing changes: a large block on
    layer ``L`` at or above either half's keep level lowers both to at most
    ``L``. Here the same rule runs as ``h`` synchronous rounds, each lowering
    every cell at once: a cell ``c`` holding a large half on layer ``L``
    whose partner ``p`` has keep level ``<= L`` drops to ``min(keep, L)``
    (the half's own cell at or below ``L`` changes nothing, and the mirror
    half in ``p`` carries the rule the other way). The result is the same
    greatest fixpoint below the prefixes that the numba loop reaches, since
    every lowering either makes is forced in any fixpoint.

    Why ``h`` rounds suffice: ``keep[c] <= L`` is first derived from a block
    on layer ``L`` and the fact ``keep[p] <= L``; that fact is either the
    starting prefix or was derived, by a different block (the only block of
    ``p`` on layer ``L`` is this one), from a block on a layer ``L' < L``. So
    every derivation chain climbs strictly through layers ``0 .. h-1`` and
    has at most ``h`` steps, and round ``r`` settles every chain of ``r``
    steps. (With a valid target ``h - 1`` would do: a mismatch on layer 0
    under a large block is a mismatch in both its cells. ``h`` rounds need
    only the current board to be valid.) ``tests/test_jax_oracle.py`` checks
    a staircase of ``h`` large blocks, the longest chain.

Cost
    A few elementwise passes over ``(n*n, h)``, shifted slices of the
    ``n x n`` grid for neighbours and adjacent pairs, and one concatenation
    into the ``A`` action ids: no gather, no per-action loop. (Shifts ran
    in half the time of gathers with a neighbour or pair table on CPU.)
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from craft_env.core.encoding import NUM_COLOURS, check_size, direction_between, large_value, small_value

_FIRST_LARGE = 6  # cell values 6.. are large halves (``core.encoding``)


class OracleTables(NamedTuple):
    """The per-size constants of the oracle (``oracle_tables``).

    ``placements[kind, colour]`` is the target value a placement must find
    on the cell it lands on (its lower cell for a large block): row 0 small
    blocks, row 1 a large block whose other half is the right neighbour
    (pairs ``c, c + 1``), row 2 the near neighbour (``c, c + n``), the two
    kinds of adjacent pair in the action table (``core.encoding``).
    """

    placements: jax.Array  # int32 (3, NUM_COLOURS)


_RIGHT = direction_between((0, 0), (0, 1))
_NEAR = direction_between((0, 0), (1, 0))


@functools.lru_cache(maxsize=None)
def oracle_tables(n: int, height: int) -> OracleTables:
    """The constants for boards of side ``n`` and ``height``: checked, cached, concrete even under a trace.

    Nothing in them depends on the size today (the functions read ``n`` and
    ``h`` from the boards' shape); the size is the cache key so that a
    size-dependent table can join without changing any caller.
    """
    check_size(n, height)
    colours = range(NUM_COLOURS)
    placements = np.array(
        [[small_value(c) for c in colours], [large_value(c, _RIGHT) for c in colours],
         [large_value(c, _NEAR) for c in colours]],
        np.int32,
    )
    with jax.ensure_compile_time_eval():
        return OracleTables(jnp.asarray(placements))


def _bottom_run(mask: jax.Array) -> jax.Array:
    """Per row, True on the longest bottom run where ``mask`` holds (the numba loops' ``break``).

    A running AND unrolled over the few layers: elementwise, where a cumulative
    sum would lower to a windowed reduction.
    """
    columns = [mask[:, 0]]
    for level in range(1, mask.shape[1]):
        columns.append(columns[-1] & mask[:, level])
    return jnp.stack(columns, axis=1)


def _neighbour_values(values: jax.Array, fill: int) -> jax.Array:
    """Per-cell ``(n*n,)`` -> ``(n*n, 4)``: the neighbour's value in each direction, ``fill`` off the board.

    Four shifted copies of the ``n x n`` grid: slices and concatenations,
    which fuse with their consumers, where a neighbour table would need a
    gather (twice the time on CPU, measured).
    """
    n = math.isqrt(values.shape[0])
    grid = values.reshape(n, n)
    row = jnp.full((1, n), fill, values.dtype)
    column = jnp.full((n, 1), fill, values.dtype)
    shifted = (
        jnp.concatenate([row, grid[:-1]], axis=0),  # direction 0: row i-1
        jnp.concatenate([grid[1:], row], axis=0),  # 1: row i+1
        jnp.concatenate([column, grid[:, :-1]], axis=1),  # 2: column j-1
        jnp.concatenate([grid[:, 1:], column], axis=1),  # 3: column j+1
    )
    return jnp.stack([s.reshape(-1) for s in shifted], axis=1)


def _towards_partner(values: jax.Array, per_direction: jax.Array) -> jax.Array:
    """For each large half in ``values`` (cells, k): ``per_direction`` (cells, 4) at its partner's direction.

    A select over the four directions (elementwise, no data-dependent
    gather); entries that are not large halves read some direction and
    must be masked by the caller.
    """
    direction = (values - _FIRST_LARGE) & 3
    picked = per_direction[:, 3:4]
    for d in (2, 1, 0):
        picked = jnp.where(direction == d, per_direction[:, d:d + 1], picked)
    return picked


def keep_levels(board: jax.Array, target: jax.Array, tables: OracleTables) -> jax.Array:
    """int32 ``(n*n,)``: each cell's keep level, equal to ``core.oracle.fill_keep_levels``."""
    current = board.astype(jnp.int32)
    goal = target.astype(jnp.int32)
    h = current.shape[1]
    levels = jnp.arange(h, dtype=jnp.int32)
    alive = _bottom_run(current != 0)
    keep = jnp.sum(_bottom_run(alive & (current == goal)), axis=1, dtype=jnp.int32)
    large = alive & (current >= _FIRST_LARGE)
    lowering = jnp.where(large, levels, h)  # the level each large half lowers its cell to, h: none
    for _ in range(h):  # h synchronous rounds reach the fixpoint (module docstring)
        partner_keep = _towards_partner(current, _neighbour_values(keep, h))
        due = jnp.where(levels >= partner_keep, lowering, h)
        keep = jnp.minimum(keep, jnp.min(due, axis=1))
    return keep


def _distance_from_keep(current: jax.Array, goal: jax.Array, keep: jax.Array) -> jax.Array:
    """``core.oracle.distance_from_keep``: blocks to remove plus blocks to place, a large one once."""
    above = jnp.arange(current.shape[1], dtype=jnp.int32)[None, :] >= keep[:, None]
    smalls = jnp.int32(0)
    halves = jnp.int32(0)
    for values in (current, goal):
        counted = _bottom_run(values != 0) & above
        large = values >= _FIRST_LARGE
        smalls += jnp.sum(counted & ~large, dtype=jnp.int32)
        halves += jnp.sum(counted & large, dtype=jnp.int32)
    return smalls + halves // 2


def distance(board: jax.Array, target: jax.Array, tables: OracleTables) -> jax.Array:
    """int32 scalar: the fewest moves turning ``board`` into ``target`` (``core.oracle.distance_arrays``)."""
    keep = keep_levels(board, target, tables)
    return _distance_from_keep(board.astype(jnp.int32), target.astype(jnp.int32), keep)


def _large_placements(
    next_value: jax.Array, heights: jax.Array, keep: jax.Array, tables: OracleTables
) -> jax.Array:
    """bool ``(5 P,)``: the optimal large placements, in action-table order.

    Pair ``c, c + 1`` or ``c, c + n`` is optimal in a colour when the next
    value ``c`` needs (``next_value``, 0 unless ``c`` is clean) is that
    colour's large half towards the other cell, and the other cell is clean
    at the same height (``core.oracle.optimal_from_keep``). Computed on the
    ``n x n`` grid for both kinds of pair, then laid out cell by cell, right
    pair before near pair (``core.encoding``), by static slices.
    """
    n = math.isqrt(heights.shape[0])
    level, kept, value = (x.reshape(n, n) for x in (heights, keep, next_value))
    right = (level[:, 1:] == level[:, :-1]) & (kept[:, 1:] == level[:, :-1])
    right = right[..., None] & (value[:, :-1, None] == tables.placements[1])  # (n, n-1, colour)
    near = (level[1:] == level[:-1]) & (kept[1:] == level[:-1])
    near = near[..., None] & (value[:-1, :, None] == tables.placements[2])  # (n-1, n, colour)
    rows = []
    for i in range(n - 1):
        rows += [jnp.stack([right[i], near[i, :-1]], axis=1).reshape(-1), near[i, -1]]
    return jnp.concatenate(rows + [right[n - 1].reshape(-1)])


def _mask_from_keep(current: jax.Array, goal: jax.Array, keep: jax.Array, tables: OracleTables) -> jax.Array:
    """``core.oracle.optimal_from_keep`` as a bool mask over action ids (the no-op False)."""
    h = current.shape[1]
    levels = jnp.arange(h, dtype=jnp.int32)
    heights = jnp.sum(_bottom_run(current != 0), axis=1, dtype=jnp.int32)
    top = jnp.sum(jnp.where(levels == heights[:, None] - 1, current, 0), axis=1)
    top_partner_height = _towards_partner(top[:, None], _neighbour_values(heights, -1))[:, 0]
    remove = (heights > keep) & ((top < _FIRST_LARGE) | (top_partner_height == heights))
    # The target's next entry on a clean cell (stack == keep level); 0 on a full stack or elsewhere.
    above_stack = jnp.sum(jnp.where(levels == heights[:, None], goal, 0), axis=1)
    next_value = jnp.where(heights == keep, above_stack, 0)
    small = next_value[:, None] == tables.placements[0]
    large = _large_placements(next_value, heights, keep, tables)
    return jnp.concatenate([small.reshape(-1), large, remove, jnp.zeros(1, bool)])


def optimal_mask(board: jax.Array, target: jax.Array, tables: OracleTables) -> jax.Array:
    """bool ``(A,)``: the actions that lower the distance by one (``core.oracle.fill_optimal_mask``)."""
    keep = keep_levels(board, target, tables)
    return _mask_from_keep(board.astype(jnp.int32), target.astype(jnp.int32), keep, tables)


def distance_and_mask(
    board: jax.Array, target: jax.Array, tables: OracleTables
) -> tuple[jax.Array, jax.Array]:
    """``(distance(...), optimal_mask(...))`` computing the keep levels once."""
    current = board.astype(jnp.int32)
    goal = target.astype(jnp.int32)
    keep = keep_levels(board, target, tables)
    return _distance_from_keep(current, goal, keep), _mask_from_keep(current, goal, keep, tables)
