"""``craft-env transcript``: one logged game as a Markdown table, turn by turn.

The layout follows the paper's turn-by-turn traces (its Table 11): the
turn, the oracle's top candidate, each director's message, the builder's
move with its outcome (legal or the failure reason), and progress after the
turn. Meant for pasting into papers and issues; model text is flattened to
one line and table pipes are escaped. See docs/replay.md.
"""

from __future__ import annotations

import os
import re
from typing import Any

from craft_env.core.views import DEFAULT_SEATS
from craft_env.eval.logs.games import GameLog
from craft_env.eval.replay.page import RunGames, move_text, load_runs

_GAME_RE = re.compile(r"^(?:(?:run_)?(\d+)[/:])?(.+)$")
_TURNS_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_turns(text: str | None) -> tuple[int, int] | None:
    """``"5-9"`` -> ``(5, 9)``, ``"7"`` -> ``(7, 7)``; ``None`` stays ``None``."""
    if text is None:
        return None
    match = _TURNS_RE.match(text)
    if not match:
        raise ValueError(f"--turns: expected A-B or A (turn numbers), got {text!r}")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) else first
    if first < 1 or last < first:
        raise ValueError(f"--turns: expected 1 <= A <= B, got {text!r}")
    return first, last


def find_game(runs: list[RunGames], game_id: str) -> tuple[RunGames, GameLog]:
    """The game named ``game_id``: a structure id or index, maybe after ``run_K/`` (else the first run)."""
    match = _GAME_RE.match(game_id.strip())
    run_number = int(match.group(1)) if match and match.group(1) else None
    name = match.group(2) if match else game_id
    for run in runs:
        for game in run.games:
            if run_number is not None and game.run != run_number:
                continue
            if name == game.structure_id or (name.isdigit() and int(name) == game.structure_index):
                return run, game
    known = sorted({f"run_{g.run}/{g.structure_id}" for r in runs for g in r.games})
    shown = ", ".join(known[:6]) + (", ..." if len(known) > 6 else "")
    raise ValueError(f"--game: no game {game_id!r} in the logs (games: {shown or 'none'})")


def _cell(text: Any) -> str:
    """One Markdown table cell: a single line, pipes escaped."""
    flat = " ".join(str(text).split())
    return flat.replace("\\", "\\\\").replace("|", "\\|")


def _number(value: Any) -> str:
    return f"{value:.3f}" if isinstance(value, (int, float)) else "-"


def _outcome(turn: dict[str, Any]) -> str:
    builder = turn.get("builder") if isinstance(turn.get("builder"), dict) else {}
    followed = [str(s) for s in builder.get("followed") or []]
    who = "Builder follows " + "+".join(followed) if followed else "Builder follows nobody"
    move = turn.get("move") or move_text(turn.get("move_attempted"))
    if turn.get("question") and not move:
        what = f'asks "{turn["question"]}"'
    else:
        what = move or "no move"
    if not move and not turn.get("question") and turn.get("legal") is not False:
        result = "passes (no move)"
    elif turn.get("legal") is False:
        result = f"{what}: failed ({turn.get('reason') or 'no reason logged'})"
    else:
        result = f"{what} ✓" + (" (optimal)" if turn.get("optimal") else "")
    return f"{who} → {result}"


def transcript_markdown(run: RunGames, game: GameLog, turns: tuple[int, int] | None = None) -> str:
    """The Markdown transcript of ``game`` (all turns, or the inclusive range ``turns``)."""
    config = run.config
    oracle = config.get("oracle_n")
    lines = [
        f"# {game.structure_id or f'structure {game.structure_index}'}, {run.label}",
        "",
        f"Directors: {config.get('director_model', '?')} at "
        f"{','.join(config.get('seats') or DEFAULT_SEATS)}; "
        f"builder: {config.get('builder_model', '?')}; "
        f"oracle: {'?' if oracle is None else (oracle or 'off')}; status: {game.status}.",
        "",
        "| Turn | Oracle (top move) | Director messages | Builder move and outcome | Progress |",
        "|---|---|---|---|---|",
    ]
    shown = 0
    for turn in game.turns:
        number = turn.get("turn_number")
        if turns is not None and not (isinstance(number, int) and turns[0] <= number <= turns[1]):
            continue
        shown += 1
        offered = turn.get("oracle_moves")
        top = ("oracle off" if offered is None else
               (move_text(offered[0]) or "-") if offered else "none offered")
        messages = " · ".join(
            f'{d.get("director", "?")}: "{d.get("message")}"' if d.get("message") is not None
            else f'{d.get("director", "?")}: (no message)'
            for d in turn.get("director_responses") or [] if isinstance(d, dict)
        )
        progress = (turn.get("progress_data") or {}).get("progress")
        row = [f"T{number}", top, messages or "-", _outcome(turn), _number(progress)]
        lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
    if not shown:
        lines.append("| - | - | no turns " + ("in that range" if turns else "logged") + " | - | - |")
    return "\n".join(lines) + "\n"


def game_transcript(path: str | os.PathLike, game_id: str, turns: str | None = None) -> str:
    """``craft-env transcript DIR --game ID [--turns A-B]``."""
    span = parse_turns(turns)
    run, game = find_game(load_runs([path]), game_id)
    return transcript_markdown(run, game, span)
