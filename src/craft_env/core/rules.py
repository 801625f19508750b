"""The rules of ``docs/rules.md#moves`` as numba kernels on board arrays.

All kernels take a board ``(n*n, h)`` int8 array (see ``encoding``), the
side ``n``, and the action table arrays, and never allocate in their inner
loops. ``check_action`` returns a reason code; ``REASONS`` turns it into the
sentence a person reads.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from craft_env.core.encoding import KIND_LARGE, KIND_NOOP, KIND_REMOVE, KIND_SMALL

OK = 0
STACK_FULL = 1
UNEVEN_SPAN = 2
NOTHING_TO_REMOVE = 3
COVERED_HALF = 4
WRONG_LAYER = 5
UNKNOWN_ACTION = 6
HIDDEN_SPAN = 7

REASONS = {
    OK: "legal",
    STACK_FULL: "the stack is already at the maximum height",
    UNEVEN_SPAN: "unsupported span: the two cells of a large block must have the same height",
    NOTHING_TO_REMOVE: "nothing to remove: the cell is empty",
    COVERED_HALF: "the other half of that large block is covered by another block",
    WRONG_LAYER: "wrong layer",
    UNKNOWN_ACTION: "unknown action id",
    HIDDEN_SPAN: "large blocks may not touch a hidden cell (protocol paper)",
}


@njit(cache=True, inline="always")
def partner_cell(n, cell, value):
    """Cell index of the other half of the large block ``value`` sitting in ``cell``."""
    d = (value - 6) % 4
    if d == 0:
        return cell - n
    if d == 1:
        return cell + n
    if d == 2:
        return cell - 1
    return cell + 1


@njit(cache=True, inline="always")
def direction_to(n, cell_a, cell_b):
    """Direction index (see ``encoding``) from ``cell_a`` to its neighbour ``cell_b``."""
    delta = cell_b - cell_a
    if delta == -n:
        return 0
    if delta == n:
        return 1
    if delta == -1:
        return 2
    return 3


@njit(cache=True, inline="always")
def stack_height(board, cell):
    h = board.shape[1]
    level = 0
    while level < h and board[cell, level] != 0:
        level += 1
    return level


@njit(cache=True)
def check_action(board, n, action, kind, cell_a, cell_b):
    """Reason code (``OK`` when legal) for playing ``action`` on ``board``."""
    if action < 0 or action >= kind.shape[0]:
        return UNKNOWN_ACTION
    k = kind[action]
    h = board.shape[1]
    if k == KIND_NOOP:
        return OK
    a = cell_a[action]
    ha = stack_height(board, a)
    if k == KIND_SMALL:
        return OK if ha < h else STACK_FULL
    if k == KIND_LARGE:
        hb = stack_height(board, cell_b[action])
        if ha >= h or hb >= h:
            return STACK_FULL if ha == hb else UNEVEN_SPAN
        return OK if ha == hb else UNEVEN_SPAN
    if ha == 0:
        return NOTHING_TO_REMOVE
    top = board[a, ha - 1]
    if top >= 6:
        p = partner_cell(n, a, top)
        if stack_height(board, p) != ha:
            return COVERED_HALF
    return OK


@njit(cache=True, inline="always")
def landing_layer_at(kind, height):
    """The layer an action of ``kind`` acts on at a stack of ``height``: the landing layer rule.

    A placement lands on top (layer ``height``), a removal takes the top
    (layer ``height - 1``); the no-op acts on no layer (-1).
    """
    if kind == KIND_NOOP:
        return -1
    return height - 1 if kind == KIND_REMOVE else height


@njit(cache=True)
def landing_layer(board, n, action, kind, cell_a):
    """The layer a legal ``action`` acts on (placements: where it lands; removals: the top); -1 for the no-op."""
    k = kind[action]
    if k == KIND_NOOP:
        return -1
    return landing_layer_at(k, stack_height(board, cell_a[action]))


@njit(cache=True)
def apply_action_inplace(board, n, action, kind, cell_a, cell_b, colour):
    """Play a *legal* ``action`` on ``board`` in place (callers check first)."""
    k = kind[action]
    if k == KIND_NOOP:
        return
    a = cell_a[action]
    ha = stack_height(board, a)
    if k == KIND_SMALL:
        board[a, ha] = 1 + colour[action]
    elif k == KIND_LARGE:
        b = cell_b[action]
        c = colour[action]
        board[a, ha] = 6 + 4 * c + direction_to(n, a, b)
        board[b, ha] = 6 + 4 * c + direction_to(n, b, a)
    else:
        top = board[a, ha - 1]
        board[a, ha - 1] = 0
        if top >= 6:
            board[partner_cell(n, a, top), ha - 1] = 0


@njit(cache=True, inline="always")
def fill_heights(board, cells, heights):
    """``stack_height`` of every cell, branch-free: the length of the non-empty bottom run."""
    h = board.shape[1]
    for c in range(cells):
        alive = 1
        level = 0
        for layer in range(h):
            alive &= board[c, layer] != 0
            level += alive
        heights[c] = level


@njit(cache=True, inline="always")
def _partner_offset(n, d):
    """``partner_cell``'s step for direction ``d`` (0..3), without branches."""
    return (d == 1) * n - (d == 0) * n + (d == 3) * 1 - (d == 2) * 1


@njit(cache=True)
def legal_from_heights(board, n, pairs, large_offset, remove_offset, heights, out):
    """The int8 legal-move mask (``fill_legal_mask``) when ``heights`` holds the stack heights.

    Written range by range of the action table (``pairs``: the two cells of
    each large-block pair), branch-free: legality is data, not control flow.
    """
    cells = n * n
    h = board.shape[1]
    for c in range(cells):
        v = np.int8(heights[c] < h)
        base = c * 5
        for colour in range(5):
            out[base + colour] = v
    for p in range(pairs.shape[0]):
        ha = heights[pairs[p, 0]]
        v = np.int8((ha < h) & (ha == heights[pairs[p, 1]]))
        base = large_offset + p * 5
        for colour in range(5):
            out[base + colour] = v
    for c in range(cells):
        hc = heights[c]
        # An empty stack reads layer 0 (empty, so "small"); a large top checks its partner's height.
        top = board[c, max(hc - 1, 0)]
        large = top >= 6
        partner = c + large * _partner_offset(n, (top - 6) & 3)
        out[remove_offset + c] = np.int8((hc > 0) & ((top < 6) | (heights[partner] == hc)))
    out[remove_offset + cells] = 1


@njit(cache=True)
def fill_legal_layers(board, n, kind, cell_a, cell_b, out):
    """Write ``1 +`` the layer each legal action acts on into ``out`` (int8, 0: illegal; the no-op gets 1)."""
    cells = n * n
    h = board.shape[1]
    heights = np.empty(cells, np.int8)
    for c in range(cells):
        heights[c] = stack_height(board, c)
    for action in range(kind.shape[0]):
        k = kind[action]
        legal = True
        ha = 0
        if k == KIND_SMALL:
            ha = heights[cell_a[action]]
            legal = ha < h
        elif k == KIND_LARGE:
            ha = heights[cell_a[action]]
            legal = ha < h and ha == heights[cell_b[action]]
        elif k == KIND_REMOVE:
            a = cell_a[action]
            ha = heights[a]
            legal = ha > 0
            if legal:
                top = board[a, ha - 1]
                legal = top < 6 or heights[partner_cell(n, a, top)] == ha
        if k == KIND_NOOP:
            out[action] = 1
        else:
            out[action] = landing_layer_at(k, ha) + 1 if legal else 0


@njit(cache=True)
def fill_legal_mask(board, n, kind, cell_a, cell_b, out):
    """Write the int8 legal-move mask of ``board`` into ``out`` (one entry per action id)."""
    fill_legal_layers(board, n, kind, cell_a, cell_b, out)
    for action in range(out.shape[0]):
        if out[action]:
            out[action] = 1


@njit(cache=True)
def check_and_apply(board, n, action, claimed_layer, kind, cell_a, cell_b, colour, out):
    """Check ``action`` (and a claimed layer, -1 for none); when legal write the new board into ``out``.

    Returns the reason code; ``out`` is only written when it is ``OK``. One
    call instead of check + layer + copy + apply for ``Structure.apply``.
    """
    code = check_action(board, n, action, kind, cell_a, cell_b)
    if code != OK:
        return code
    if claimed_layer >= 0 and landing_layer(board, n, action, kind, cell_a) != claimed_layer:
        return WRONG_LAYER
    out[:, :] = board
    apply_action_inplace(out, n, action, kind, cell_a, cell_b, colour)
    return OK
