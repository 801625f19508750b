"""The constant tables of one board size and seating, built once from ``core``'s tables (outside jit).

Everything the jitted game looks up (the action table, each seat's intent
table, the walls, the one-hot encodings of cell values and wall views) is
a numpy array here, made from the same ``core`` functions the numba game
uses (``core.encoding.action_table``, ``core.intents.intent_table``,
``core.views.seat_cell_indices``), so the two games share one definition
of every table. ``Tables`` is a ``NamedTuple`` of arrays: a pytree, so it
can be closed over (constants folded into the compiled step) or passed as
an argument (one compile for several configurations).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from craft_env.core.encoding import (
    KIND_LARGE,
    KIND_NOOP,
    KIND_REMOVE,
    KIND_SMALL,
    VALUE_TO_CODE_INDEX,
    action_table,
)
from craft_env.core.game import pair_cells
from craft_env.core.intents import intent_table
from craft_env.core.observation import BOARD_CHANNELS
from craft_env.core.views import seat_cell_indices
from craft_env.jax.exact import RatioTable, ratio_table

__all__ = ["KIND_LARGE", "KIND_NOOP", "KIND_REMOVE", "KIND_SMALL", "Tables", "make_tables"]


class Tables(NamedTuple):
    """One size's and seating's constant arrays (``make_tables``)."""

    kind: np.ndarray  # int32 (A,): KIND_* of each action id
    cell_a: np.ndarray  # int32 (A,): first cell (0 for the no-op)
    cell_b: np.ndarray  # int32 (A,): second cell of a large block, else cell_a
    colour: np.ndarray  # int32 (A,)
    pairs: np.ndarray  # int32 (P, 2): the cells of each adjacent pair, in action-table order
    pair_of: np.ndarray  # int32 (C, C): pair index of two neighbours, else -1
    partner_step: np.ndarray  # int32 (26,): cell offset from a large half to its partner (0 otherwise)
    dir_ab: np.ndarray  # int32 (A,): cell value direction from cell_a to cell_b (large actions)
    value_onehot: np.ndarray  # float32 (26, 15): a cell value's board channels (``core.observation``)
    value_code: np.ndarray  # int32 (26,): block code index (``VALUE_TO_CODE_INDEX``; -1 for empty)
    walls: np.ndarray  # int32 (S, n): each seat's wall cells, left to right from the seat
    wall_partner_on_wall: np.ndarray  # int32 (S, n, 4): 1 when direction d from slot p stays on the wall
    intent_action: np.ndarray  # int32 (S, I): the action an intent denotes (-1: none)
    intent_layer: np.ndarray  # int32 (S, I): the layer it names
    ratios: RatioTable  # every score quotient of this size (``exact.ratio_table``)
    noop: int
    n: int
    height: int
    num_intents: int


def _direction(n: int, a: int, b: int) -> int:
    delta = b - a
    return {-n: 0, n: 1, -1: 2, 1: 3}[delta]


def make_tables(n: int, height: int, seats: tuple[str, ...]) -> Tables:
    """The tables of side ``n``, ``height`` and the seats ``seats`` (names, in seat-index order)."""
    table = action_table(n)
    actions = table.num_actions
    kind = table.kind.astype(np.int32)
    cell_a = np.maximum(table.cell_a, 0).astype(np.int32)
    cell_b = np.where(kind == KIND_LARGE, table.cell_b, cell_a).astype(np.int32)
    dir_ab = np.zeros(actions, np.int32)
    for action in np.flatnonzero(kind == KIND_LARGE):
        dir_ab[action] = _direction(n, int(cell_a[action]), int(cell_b[action]))
    partner_step = np.zeros(26, np.int32)
    for value in range(6, 26):
        partner_step[value] = (-n, n, -1, 1)[(value - 6) % 4]
    value_onehot = np.zeros((26, BOARD_CHANNELS), np.float32)
    value_onehot[0, 0] = 1.0
    for value in range(1, 26):
        value_onehot[value, 1 + VALUE_TO_CODE_INDEX[value]] = 1.0
        if value >= 6:
            value_onehot[value, 11 + (value - 6) % 4] = 1.0
    walls = np.stack([seat_cell_indices(seat, n) for seat in seats]).astype(np.int32)
    on_wall = np.zeros((len(seats), n, 4), np.int32)
    for s, wall in enumerate(walls):
        for p, cell in enumerate(wall):
            for d, step in enumerate((-n, n, -1, 1)):
                on_wall[s, p, d] = int(cell + step in set(wall.tolist()))
    intents = [intent_table(seat, n, height) for seat in seats]
    return Tables(
        kind=kind,
        cell_a=cell_a,
        cell_b=cell_b,
        colour=np.maximum(table.colour, 0).astype(np.int32),
        pairs=pair_cells(n).astype(np.int32),
        pair_of=table.pair_of.astype(np.int32),
        partner_step=partner_step,
        dir_ab=dir_ab,
        value_onehot=value_onehot,
        value_code=VALUE_TO_CODE_INDEX.astype(np.int32),
        walls=walls,
        wall_partner_on_wall=on_wall,
        intent_action=np.stack([t.action for t in intents]).astype(np.int32),
        intent_layer=np.stack([t.layer for t in intents]).astype(np.int32),
        ratios=ratio_table(n, height),
        noop=table.noop,
        n=n,
        height=height,
        num_intents=intents[0].num_intents,
    )

