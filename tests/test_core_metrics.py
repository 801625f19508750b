"""The metrics (docs/rules.md#metrics) against the reference formulas, and the edge cases we chose.

Edge cases (documented in ``craft_env.core.metrics``):

* ``voxel_iou`` shares a position only when both boards hold the same block
  there, partner included, so ``completion == voxel_iou == 1`` exactly when
  the boards are equal;
* an empty target has ``completion`` 1 only when the board is empty too;
* two empty boards have ``voxel_iou`` 1;
* ``iou`` is 0 when the union is empty (the paper's rule).
"""

from __future__ import annotations

import math

import pytest
from conftest import board_pairs, random_pair
from hypothesis import given
from reference_model import score as ref_score

from craft_env import Structure, generate_structure, metrics
from craft_env.core.metrics import METRIC_NAMES


def check_scores(current_model, target_model) -> dict[str, float]:
    current, target = current_model.to_structure(), target_model.to_structure()
    got = metrics.score(current, target)
    want = ref_score(current_model, target_model)
    assert tuple(got) == METRIC_NAMES
    for name in METRIC_NAMES:
        assert math.isclose(got[name], want[name], rel_tol=1e-12, abs_tol=1e-12), (name, got, want)
        assert 0.0 <= got[name] <= 1.0
        assert isinstance(got[name], float)
    assert math.isclose(got["progress"], (got["iou"] + got["completion"] + got["position_accuracy"]) / 3)
    equal = current == target
    assert (got["completion"] == 1.0 and got["voxel_iou"] == 1.0) == equal
    assert (got["voxel_iou"] == 1.0) == equal
    if equal:
        assert got["position_accuracy"] == 1.0
    return got


@given(board_pairs())
def test_metrics_match_reference(pair):
    check_scores(*pair)


def test_metrics_on_seeded_mid_game_boards():
    for seed in range(150):
        check_scores(*random_pair(seed, *((3, 3) if seed % 2 else (None, None))))


def test_empty_boards():
    empty = Structure.empty()
    both = metrics.score(empty, empty)
    assert both == {"iou": 0.0, "completion": 1.0, "position_accuracy": 1.0,
                    "progress": pytest.approx(2 / 3), "voxel_iou": 1.0}
    target = generate_structure(3)
    start = metrics.score(empty, target)
    assert start["completion"] == 0.0 and start["iou"] == 0.0 and start["voxel_iou"] == 0.0
    # (1,1) or (2,1) may be empty in the target: those cells already agree.
    hidden_empty = sum(1 for cell in ((1, 1), (2, 1)) if not target.stack(*cell))
    assert start["position_accuracy"] == pytest.approx(hidden_empty / 9)
    junk = Structure.from_ascii("layer 0\n  gs  ..  ..\n  ..  ..  ..\n  ..  ..  ..")
    wrong = metrics.score(junk, empty)
    assert wrong["completion"] == 0.0 and wrong["voxel_iou"] == 0.0 and wrong["iou"] == 0.0
    assert wrong["position_accuracy"] == pytest.approx(8 / 9)


def test_turned_dominoes_complete_the_codes_but_not_the_voxels():
    target = Structure.from_ascii(
        """
        layer 0
          gl==gl  ..
          gl==gl  ..
          ..  ..  ..
        """
    )
    turned = Structure.from_ascii(
        """
        layer 0
          gl  gl  ..
          ||  ||
          gl  gl  ..
          ..  ..  ..
        """
    )
    got = metrics.score(turned, target)
    assert got["completion"] == 1.0 and got["iou"] == 1.0 and got["position_accuracy"] == 1.0
    assert got["voxel_iou"] == 0.0
    assert turned != target


def test_set_based_iou_ignores_order_and_repeats():
    target = Structure.from_ascii(
        """
        layer 0
          gs  ..
          ..  ..
        layer 1
          bs  ..
          ..  ..
        layer 2
          bs  ..
          ..  ..
        """
    )
    swapped = Structure.from_ascii(
        """
        layer 0
          bs  ..
          ..  ..
        layer 1
          gs  ..
          ..  ..
        """
    )
    got = metrics.score(swapped, target)
    assert got["iou"] == 1.0 and got["position_accuracy"] == 1.0
    assert got["completion"] == 0.0 and got["voxel_iou"] == 0.0


def test_extra_blocks_keep_completion_but_not_voxel_iou():
    target = Structure.from_ascii("layer 0\n  gs  ..\n  ..  ..", height=2)
    taller = Structure.from_ascii("layer 0\n  gs  ..\n  ..  ..\nlayer 1\n  rs  ..\n  ..  ..", height=2)
    got = metrics.score(taller, target)
    assert got["completion"] == 1.0
    assert got["voxel_iou"] == 0.5
    assert got["iou"] == 0.5
    assert got["position_accuracy"] == pytest.approx(3 / 4)


def test_size_mismatch_names_target():
    with pytest.raises(ValueError, match="target"):
        metrics.score(Structure.empty(3, 3), Structure.empty(3, 4))
