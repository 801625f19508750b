"""What a seat's turn achieved, by the engine, and which turns ``--keep`` selects (``docs/train.md``).

A turn's outcome is read from its logged record and the target: the
builder's move (legal, executed, optimal), the team's progress (the paper's
metric, ``docs/rules.md``, "Metrics") before and after it, and the oracle
distance before and after it.

``--keep`` rules:

* ``all``: every turn of the chosen seats in every finished game;
* ``progress``: turns in which the builder's move executed and the
  progress after it is higher than before;
* ``oracle-correct``: turns in which the builder's move was optimal (it
  shortened the fewest-moves plan by one: the oracle's verdict, under the
  run's protocol, ``optimal`` in the log).

A director's turn counts under ``progress`` and ``oracle-correct`` only when,
besides, the builder named that director among those it followed.
"""

from __future__ import annotations

from typing import Any

from craft_env.core import metrics, oracle
from craft_env.core.board import Structure
from craft_env.train.clients import BUILDER
from craft_env.train.options import KEEP_RULES
from craft_env.train.replay import SeatTurn


def turn_change(
    record: dict[str, Any], target: Structure, previous: dict[str, Any] | None = None
) -> dict[str, float]:
    """The team's progress (paper metric) and oracle distance before and after one logged turn.

    ``previous``: the same game's record of the turn before. The board after
    its move is this turn's board before, so its metrics are the ``before``
    values and the board is not read and scored again (it is when
    ``previous`` is missing or not the turn just before).
    """
    after = record["progress_data"]
    if previous is not None and previous.get("turn_number") == record.get("turn_number", 0) - 1:
        before = previous["progress_data"]
        progress_before, distance_before = float(before["progress"]), int(before["distance"])
    else:
        board = Structure.from_dict(record["structure_before"], n=target.n, height=target.height)
        progress_before = metrics.score(board, target)["progress"]
        distance_before = int(oracle.distance(board, target))
    return {
        "progress_before": progress_before,
        "progress_after": float(after["progress"]),
        "distance_before": distance_before,
        "distance_after": int(after["distance"]),
    }


def turn_outcome(turn: SeatTurn, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    """The turn's verdict: ``legal``, ``executed``, ``optimal``, ``reason``, progress and distance.

    ``previous``: the game's record of the turn before (``turn_change``).
    """
    record = turn.record
    return {
        "legal": bool(record["legal"]),
        "executed": bool(record["executed"]),
        "optimal": bool(record["optimal"]),
        "reason": record.get("reason"),
        **turn_change(record, turn.target, previous),
    }


def kept(turn: SeatTurn, outcome: dict[str, Any], keep: str) -> bool:
    """Whether ``keep`` (one of ``KEEP_RULES``) selects ``turn`` (see the module docstring)."""
    if keep not in KEEP_RULES:
        raise ValueError(f"keep: expected one of {', '.join(KEEP_RULES)}, got {keep!r}")
    if keep == "all":
        return True
    if turn.seat != BUILDER and turn.seat not in turn.followed:
        return False
    if keep == "progress":
        return outcome["executed"] and outcome["progress_after"] > outcome["progress_before"]
    return outcome["optimal"]


def record_meta(turn: SeatTurn, outcome: dict[str, Any]) -> dict[str, Any]:
    """The ``meta`` field of an exported record (trainers ignore it): the turn's origin and outcome."""
    return {
        "source": turn.source,
        "run": turn.run,
        "game": turn.structure_id,
        "structure_index": turn.structure_index,
        "turn": turn.turn,
        "seat": turn.seat,
        "model": turn.model,
        "protocol": turn.protocol,
        "prompt": turn.prompt,
        "outcome": outcome,
    }
