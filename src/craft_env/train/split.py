"""Train/validation split by target: no target structure has records in both files.

Targets are told apart by their content (the board, not the dataset's
name for it), so the same structure reached from two datasets or runs is one
target. The distinct targets, in a fixed order, are shuffled with
``random.Random(seed)`` and the first ``round(valid * count)`` go to the
validation file (at least one when ``valid > 0`` and there are two or more
targets, never all of them).
"""

from __future__ import annotations

import json
import random

from craft_env.core.board import Structure


def target_key(target: Structure) -> str:
    """A target's identity: its canonical JSON (cells and spans)."""
    return json.dumps(target.to_dict(views=False), sort_keys=True, separators=(",", ":"))


def validation_targets(keys: set[str], valid: float, seed: int) -> set[str]:
    """The target keys that go to the validation file."""
    if isinstance(valid, bool) or not isinstance(valid, (int, float)) or not 0 <= valid < 1:
        raise ValueError(f"valid: expected a fraction in [0, 1), got {valid!r}")
    ordered = sorted(keys)
    random.Random(seed).shuffle(ordered)
    count = round(valid * len(ordered))
    if valid > 0 and len(ordered) > 1:
        count = min(max(count, 1), len(ordered) - 1)
    return set(ordered[:count])
