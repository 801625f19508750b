"""Rewards of the text environment, from the turn records the runner keeps (``docs/train.md``).

All are the team's, paid for each turn the game played since the seat's
last reply (a builder's step covers its own move; a director's covers the
rest of its turn and, under protocol ``paper``, any turn it was not drawn
to speak in):

* ``progress_delta`` (default): the paper's progress after the turn minus
  before it (``docs/rules.md``, "Metrics"); an episode's sum is its final
  progress minus its starting progress;
* ``distance``: the oracle distance before the turn minus after it (+1 for
  an optimal move, -1 for one that lengthens the plan, 0 for a pass or a
  failed turn);
* ``sparse``: 1 on the turn the game is completed (the protocol's
  completion), else 0.

Shaping: ``failed_turn_penalty`` is subtracted for every turn whose move
failed (illegal, or a reply the parser could not read).
"""

from __future__ import annotations

from typing import Any

from craft_env.core.board import Structure
from craft_env.core.game import REWARDS
from craft_env.core.protocol import get_protocol, is_completed
from craft_env.train.outcome import turn_change


def check_reward(name: str) -> str:
    if name not in REWARDS:
        raise ValueError(f"reward: expected one of {', '.join(REWARDS)}, got {name!r}")
    return name


def turn_reward(
    record: dict[str, Any],
    target: Structure,
    name: str = "progress_delta",
    protocol: str = "craft",
    failed_turn_penalty: float = 0.0,
    previous: dict[str, Any] | None = None,
) -> float:
    """The reward ``name`` for one turn record (see the module docstring).

    ``previous``: the same game's turn record just before ``record``. The
    board after its move is this turn's board before, so its metrics are the
    ``before`` values and the board is not read and scored again.
    """
    change = turn_change(record, target, previous)
    if name == "progress_delta":
        value = change["progress_after"] - change["progress_before"]
    elif name == "distance":
        value = float(change["distance_before"] - change["distance_after"])
    else:
        done = is_completed(get_protocol(protocol), change["progress_after"], change["distance_after"] == 0)
        value = 1.0 if done else 0.0
    return value - (failed_turn_penalty if record.get("failed") else 0.0)

