"""The scripted director's choice, as a numba kernel (the offline default team).

A scripted director compares what it can see of the current board on its
own wall with its private target wall, both as a person at its seat sees
them (colour and apparent size: a large block looks wide only when both
halves are on that wall). It fixes the first difference, lowest layer
first, then left to right from its seat:

* a block is there but looks wrong: take the top block of that column off;
* the spot is empty: put the target block there (small if it looks small,
  a large block along the wall if it looks wide).

It only says what is legal right now (its intent mask); if the first fix is
not possible yet it moves on to the next, and says nothing when it sees no
difference. A half of a large block whose partner is off its wall looks
small: the director cannot know, and that ambiguity is the benchmark's.

The text agents speak this choice in words and the vector env uses it for
fixed directors, so both teams play the same policy.
"""

from __future__ import annotations

from numba import njit

from craft_env.core.rules import partner_cell, stack_height
from craft_env.core.views import view_code, wall_slot


@njit(cache=True)
def scripted_intent(board, target, n, wall, mask):
    """The intent id the scripted director at the seat with cells ``wall`` says (0 = nothing to add)."""
    h = board.shape[1]
    slots = wall.shape[0]
    total_slots = slots * h
    for level in range(h):
        for p in range(slots):
            seen = view_code(board, n, wall, p, level)
            wanted = view_code(target, n, wall, p, level)
            if seen == wanted:
                continue
            cell = wall[p]
            intent = -1
            if seen != 0:
                top = stack_height(board, cell) - 1
                intent = 1 + 15 * total_slots + p * h + top
            else:
                colour = (wanted - 1) // 2
                if (wanted - 1) % 2 == 0:
                    intent = 1 + (p * h + level) * 5 + colour
                else:
                    v = target[cell, level]
                    q = wall_slot(wall, partner_cell(n, cell, v))
                    left = p if q == p + 1 else q
                    intent = 1 + 5 * total_slots + ((left * h + level) * 2 + 0) * 5 + colour
            if intent >= 0 and mask[intent]:
                return intent
    return 0
