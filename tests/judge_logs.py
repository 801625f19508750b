"""Hand-built run logs for the judge, credit and rate tests (our log format, ``eval.logs``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from craft_env.core.board import Structure, from_ascii
from craft_env.core.moves import Move
from craft_env.eval.logs.games import RunLog

# Target: small green (0,0), small red (0,2), a large blue across (2,0)-(2,1), all on layer 0.
TARGET = from_ascii(
    """
    layer 0
      gs  ..  rs
      ..  ..  ..
      bl==bl  ..
    """
)
# Before the move: only the green block stands.
BOARD = from_ascii(
    """
    layer 0
      gs  ..  ..
      ..  ..  ..
      ..  ..  ..
    """
)


def board_fields(board: Structure) -> dict[str, Any]:
    data = board.to_dict(views=False)
    return {"structure": data["structure"], "spans": data["spans"]}


def turn_record(
    number: int,
    said: dict[str, str],
    *,
    board: Structure = BOARD,
    move: str | None = "place rs (0,2) L0",
    optimal: bool = True,
    legal: bool = True,
    followed: list[str] | None = None,
    offered: list[str] | None = None,
    followed_oracle: bool | None = None,
    remove_prescribed: bool = False,
    remove_attempted: bool = False,
    progress: float = 0.5,
    think: dict[str, str] | None = None,
) -> dict[str, Any]:
    from craft_env.text import parse_move

    attempted = parse_move(move).to_dict() if move else None
    oracle = [parse_move(m).to_dict() for m in offered] if offered is not None else None
    if followed_oracle is None:
        followed_oracle = bool(offered) and move in (offered or [])
    return {
        "structure_before": board_fields(board),
        "director_order": list(said),
        "director_responses": [
            {"director": seat, "think": (think or {}).get(seat, ""), "message": text, "order": k}
            for k, (seat, text) in enumerate(said.items())
        ],
        "oracle_moves": oracle,
        "builder": {"think": "", "followed": list(followed or []), "sent": move},
        "move_attempted": attempted,
        "move": move if legal else None,
        "question": None,
        "legal": legal,
        "failed": not legal,
        "executed": legal and move is not None,
        "reason": None if legal else "wrong layer",
        "followed_oracle": followed_oracle,
        "optimal": optimal,
        "remove_prescribed": remove_prescribed,
        "remove_attempted": remove_attempted,
        "progress_data": {"progress": progress, "completion": progress, "position_accuracy": progress,
                          "iou": progress, "voxel_iou": progress, "distance": 3},
    }


def write_run(
    out: Path, games: list[list[dict[str, Any]]], *, run: int = 1, target: Structure = TARGET,
    config: dict[str, Any] | None = None,
) -> Path:
    """Write ``games`` (lists of turn records) as finished games of run ``run`` (targets in start markers)."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(config or {"turns": 20, "oracle_n": 5}), encoding="utf-8")
    log = RunLog(out, run)
    for index, turns in enumerate(games):
        log.game_event("start", index, f"g{index}", 1, 0, target=target.to_dict(views=False))
        for number, record in enumerate(turns, 1):
            log.turn(index, f"g{index}", 1, number, record)
        final = turns[-1]["progress_data"] if turns else {}
        log.game_event("done", index, f"g{index}", 1, len(turns), final=final)
    log.close()
    return out


def move(text: str) -> Move:
    from craft_env.text import parse_move

    return parse_move(text)
