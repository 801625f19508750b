"""The paper's metrics (``docs/rules.md#metrics``): a numba kernel, and ``score`` on ``Structure``s.

The paper's IoU and position accuracy compare *sets* of block codes per cell:
layer order and repeats are ignored. That is deliberate (results must be
comparable with the paper's Table 1); ``voxel_iou`` is our strict variant.
Cell sets are 10-bit masks over block-code indices, so set operations are
bit operations.

Strictness and edge cases (ours, documented in ``docs/rules.md#metrics``):

* ``voxel_iou`` counts a position as shared only when both boards hold the
  same block there: same code *and*, for a large block, the same partner.
  With that, ``completion == voxel_iou == 1`` exactly when the boards are
  equal (two vertical dominoes are not two horizontal ones).
* An empty target has ``completion`` 1 when the board is empty too, else 0;
  two empty boards have ``voxel_iou`` 1. ``iou`` keeps the paper's rule
  (0 when the union is empty).

``score(current, target)`` (the public ``craft_env.metrics.score``) returns
all five, ``progress`` being the paper's headline number.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from craft_env.core.board import Structure
from craft_env.core.encoding import VALUE_TO_CODE_INDEX

METRIC_NAMES = ("iou", "completion", "position_accuracy", "progress", "voxel_iou")


@njit(cache=True, inline="always")
def _popcount(x):
    count = 0
    while x:
        x &= x - 1
        count += 1
    return count


@njit(cache=True)
def fill_scores(current, target, n, code_of, out):
    """Write ``iou, completion, position_accuracy, progress, voxel_iou`` into ``out`` (float64[5])."""
    cells = n * n
    h = current.shape[1]
    inter = 0
    union = 0
    matched_cells = 0
    correct = 0
    target_entries = 0
    voxel_both = 0
    voxel_either = 0
    for c in range(cells):
        set_c = 0
        set_t = 0
        for level in range(h):
            vc = current[c, level]
            vt = target[c, level]
            if vc == 0 and vt == 0:
                break
            if vt != 0:
                target_entries += 1
                set_t |= 1 << code_of[vt]
            if vc != 0:
                set_c |= 1 << code_of[vc]
            voxel_either += 1
            if vc != 0 and vt != 0 and code_of[vc] == code_of[vt]:
                correct += 1
                if vc == vt:
                    voxel_both += 1
        inter += _popcount(set_c & set_t)
        union += _popcount(set_c | set_t)
        if set_c == set_t:
            matched_cells += 1
    out[0] = inter / union if union > 0 else 0.0
    if target_entries > 0:
        out[1] = correct / target_entries
    else:
        out[1] = 1.0 if voxel_either == 0 else 0.0
    out[2] = matched_cells / cells
    out[3] = (out[0] + out[1] + out[2]) / 3.0
    out[4] = voxel_both / voxel_either if voxel_either > 0 else 1.0


def score_arrays(current: np.ndarray, target: np.ndarray, n: int) -> dict[str, float]:
    """``score`` on two board arrays of side ``n`` (no checks: the caller's arrays match)."""
    out = np.empty(len(METRIC_NAMES), np.float64)
    fill_scores(current, target, n, VALUE_TO_CODE_INDEX, out)
    return dict(zip(METRIC_NAMES, out.tolist()))


def score(current: Structure, target: Structure) -> dict[str, float]:
    """All five metrics of ``current`` against ``target``, each in [0, 1]."""
    if current.n != target.n or current.height != target.height:
        raise ValueError(
            f"target: size {target.n}x{target.n}x{target.height} differs from the current board's "
            f"{current.n}x{current.n}x{current.height}"
        )
    return score_arrays(current.array, target.array, current.n)
