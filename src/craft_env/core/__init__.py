"""The rules of CRAFT on numpy arrays, numba-jitted: nothing else.

No PettingZoo, Gymnasium or litellm here. Modules: ``encoding`` (codes,
cell values, action table), ``rules`` (legal masks, apply, reasons),
``oracle`` (keep levels, distance, optimal moves, plan), ``metrics``,
``generator``, ``views`` (seats and walls), ``board`` (``Structure``) and
``moves`` (``Move``).
"""

from craft_env.core.board import IllegalMoveError, Structure
from craft_env.core.moves import Move

__all__ = ["IllegalMoveError", "Move", "Structure"]
