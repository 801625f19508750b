"""The paper's metrics on ``Structure`` objects (SPEC section 7).

``score(current, target)`` returns ``iou``, ``completion``,
``position_accuracy``, ``progress`` (mean of the first three, the paper's
headline number) and our strict ``voxel_iou``. See
``craft_env.core.metrics`` for the formulas and edge cases.
"""

from __future__ import annotations

from craft_env.core.board import Structure
from craft_env.core.metrics import METRIC_NAMES, score_arrays


def score(current: Structure, target: Structure) -> dict[str, float]:
    """All five metrics of ``current`` against ``target``, each in [0, 1]."""
    if current.n != target.n or current.height != target.height:
        raise ValueError(
            f"target: size {target.n}x{target.n}x{target.height} differs from the current board's "
            f"{current.n}x{current.n}x{current.height}"
        )
    return score_arrays(current.array, target.array, current.n)


__all__ = ["METRIC_NAMES", "score"]
