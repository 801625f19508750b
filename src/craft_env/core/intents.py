"""Director intents: a small discrete vocabulary of things a director can say.

Like Hanabi's hints, a director's RL action is a plain ``Discrete`` id. An
intent names a builder move *in the director's own frame*: a slot on its
wall (position ``p`` counted left to right from its seat, and a layer) and,
for a large block, a direction (along the wall to its right, or inward,
away from its seat). The same intents are spoken in words by
``craft_env.text``, so RL agents and language models share one language.

Layout for side ``n`` and height ``h`` (``S = n * h`` slots, slot
``s = p * h + layer``):

=====================  ================================  ==============
range                  meaning                           count (3x3)
=====================  ================================  ==============
0                      no-op (nothing to add)            1
1 + s*5 + c            place small colour c at slot s    45
1 + 5S + (s*2+d)*5+c   place large colour c at slot s,   90
                       d = 0 to my right, 1 inward
1 + 15S + s            remove the top block at slot s    9
=====================  ================================  ==============

Every intent denotes at most one builder action (``IntentTable.action``);
a large "to my right" at the rightmost slot denotes none. A director's
mask allows the no-op and the intents whose builder action is legal on the
current board *and* acts on the named layer.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from numba import njit

from craft_env.core.encoding import KIND_LARGE, KIND_REMOVE, action_table, check_size
from craft_env.core.rules import fill_legal_mask, landing_layer_at, stack_height
from craft_env.core.views import seat_cells

INTENT_NOOP = 0
INTENT_SMALL = 1
INTENT_LARGE = 2
INTENT_REMOVE = 3
ALONG_RIGHT = 0
INWARD = 1


def num_intents(n: int, height: int) -> int:
    slots = n * height
    return 1 + 15 * slots + slots


def inward_cell(seat: str, cell: tuple[int, int], n: int) -> tuple[int, int]:
    """The neighbour of wall ``cell`` one step into the board, away from ``seat``."""
    i, j = cell
    return {"D1": (i, 1), "D2": (1, j), "D3": (i, n - 2), "D0": (n - 2, j)}[seat]


@dataclass(frozen=True)
class IntentTable:
    """Parallel arrays describing every intent id of one seat (see module docstring)."""

    seat: str
    n: int
    height: int
    kind: np.ndarray
    slot: np.ndarray
    layer: np.ndarray
    colour: np.ndarray
    direction: np.ndarray
    action: np.ndarray

    @property
    def num_intents(self) -> int:
        return int(self.kind.shape[0])

    def small(self, slot: int, layer: int, colour: int) -> int:
        return 1 + (slot * self.height + layer) * 5 + colour

    def large(self, slot: int, layer: int, colour: int, direction: int) -> int:
        slots = self.n * self.height
        return 1 + 5 * slots + ((slot * self.height + layer) * 2 + direction) * 5 + colour

    def remove(self, slot: int, layer: int) -> int:
        slots = self.n * self.height
        return 1 + 15 * slots + slot * self.height + layer


@functools.lru_cache(maxsize=None)
def intent_table(seat: str, n: int = 3, height: int = 3) -> IntentTable:
    """The (cached) intent table of ``seat`` on an ``n x n x height`` board."""
    check_size(n, height)
    wall = seat_cells(seat, n)
    table = action_table(n)
    total = num_intents(n, height)
    kind = np.zeros(total, np.int8)
    slot = np.full(total, -1, np.int8)
    layer = np.full(total, -1, np.int8)
    colour = np.full(total, -1, np.int8)
    direction = np.full(total, -1, np.int8)
    action = np.full(total, -1, np.int16)

    def flat(cell: tuple[int, int]) -> int:
        return cell[0] * n + cell[1]

    index = 1
    for p in range(n):
        for level in range(height):
            for c in range(5):
                kind[index], slot[index], layer[index], colour[index] = INTENT_SMALL, p, level, c
                action[index] = table.small_action(flat(wall[p]), c)
                index += 1
    for p in range(n):
        for level in range(height):
            for d in (ALONG_RIGHT, INWARD):
                partner = wall[p + 1] if d == ALONG_RIGHT and p + 1 < n else None
                if d == INWARD:
                    partner = inward_cell(seat, wall[p], n)
                for c in range(5):
                    kind[index], slot[index], layer[index] = INTENT_LARGE, p, level
                    colour[index], direction[index] = c, d
                    if partner is not None:
                        action[index] = table.large_action(flat(wall[p]), flat(partner), c)
                    index += 1
    for p in range(n):
        for level in range(height):
            kind[index], slot[index], layer[index] = INTENT_REMOVE, p, level
            action[index] = table.remove_action(flat(wall[p]))
            index += 1
    assert index == total
    for array in (kind, slot, layer, colour, direction, action):
        array.flags.writeable = False
    return IntentTable(seat, n, height, kind, slot, layer, colour, direction, action)


@njit(cache=True)
def fill_director_mask(board, n, kind, cell_a, cell_b, intent_action, intent_layer, builder_mask, out):
    """Write a director's int8 intent mask into ``out`` (``builder_mask`` is scratch, length = actions)."""
    fill_legal_mask(board, n, kind, cell_a, cell_b, builder_mask)
    out[0] = 1
    for intent in range(1, intent_action.shape[0]):
        action = intent_action[intent]
        if action < 0 or builder_mask[action] == 0:
            out[intent] = 0
            continue
        level = landing_layer_at(kind[action], stack_height(board, cell_a[action]))
        out[intent] = 1 if level == intent_layer[intent] else 0


def intent_for_action(intents: IntentTable, action: int, layer: int) -> int:
    """The intent of ``intents``' seat that denotes builder ``action`` acting on ``layer``; -1 if none.

    For a large block seen from a wall, the slot is the half on the wall with
    the partner to its right or inward (the lowest matching intent id).
    """
    matches = np.flatnonzero((intents.action == action) & (intents.layer == layer))
    return int(matches[0]) if len(matches) else -1


def intent_groups(intent_tables, n: int, height: int, allowed=None) -> tuple[np.ndarray, np.ndarray]:
    """The director masks' structure, derived from the intent tables: ``(groups, bucket_ptr)``.

    A *group* is a run of consecutive intent ids of one seat that denote
    builder actions of one kind on the same cells and layer (they differ
    only in colour), so their mask entries are equal. ``groups`` is int16
    ``(seats, G, 6)``: ``start, length, cell_a, cell_b, need, remove``.
    Such an intent is allowed (its action is legal and acts on the intent's
    layer ``L``; ``fill_director_mask``) iff ``height(cell_a) == need`` and
    ``height(cell_b) == need``, where ``need`` is ``L`` for a placement
    (``cell_b = cell_a`` for a small block) and ``L + 1`` for a removal,
    which must also be removable (a large top's partner not covered).

    Groups are sorted by ``key = cell_a * (height + 1) + need``;
    ``bucket_ptr[s, key] .. bucket_ptr[s, key + 1]`` are seat ``s``'s groups
    with that key, so a board with ``height(c) = k`` only ever checks the
    groups in bucket ``c * (height + 1) + k``. Intents that denote no action
    belong to no group (always 0), and so do those whose action ``allowed``
    (int8 per action id, e.g. ``protocol.protocol_action_mask``) forbids.
    """
    table = action_table(n)
    keys = n * n * (height + 1)
    per_seat = []
    for intents in intent_tables:
        runs: list[list[int]] = []
        for intent in range(1, intents.num_intents):
            action = int(intents.action[intent])
            if action < 0 or (allowed is not None and not allowed[action]):
                continue
            kind = int(table.kind[action])
            cell_a = int(table.cell_a[action])
            cell_b = int(table.cell_b[action]) if kind == KIND_LARGE else cell_a
            layer = int(intents.layer[intent])
            # The stack height at which the action acts on ``layer`` (the landing-layer rule, inverted).
            need = layer + 1 if kind == KIND_REMOVE else layer
            key = [cell_a, cell_b, need, 1 if kind == KIND_REMOVE else 0]
            if runs and runs[-1][2:] == key and runs[-1][0] + runs[-1][1] == intent:
                runs[-1][1] += 1
            else:
                runs.append([intent, 1, *key])
        runs.sort(key=lambda run: (run[2] * (height + 1) + run[4], run[0]))
        per_seat.append(runs)
    width = max(len(runs) for runs in per_seat)
    groups = np.zeros((len(per_seat), width, 6), np.int16)
    bucket_ptr = np.zeros((len(per_seat), keys + 1), np.int16)
    for s, runs in enumerate(per_seat):
        groups[s, : len(runs)] = runs
        counts = np.bincount([run[2] * (height + 1) + run[4] for run in runs], minlength=keys)
        bucket_ptr[s, 1:] = np.cumsum(counts)
    return groups, bucket_ptr
