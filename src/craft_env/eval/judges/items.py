"""Judged items: the units the judges score, built from run logs alone.

An SG or MM item is one director's message in one turn (every director
that spoke that turn; when a seat spoke twice, its last message, as the
paper judges); a PS item is one turn. Each item carries its fields as text
(``questions.FIELDS``), rendered by the text layer, plus what only the
engine judge uses (the board before the move, the whole target, the turn's
log line). A prompt shows only the fields its questions read.

Where the fields come from (docs/judges.md):

* ``target_view``: the seat's wall of the target (``core.views.seat_view``);
  the target comes from a ``target`` in the game's start marker (imported
  logs may carry one), else from the run's dataset (``config.json``);
* ``board_before``, ``think``, ``message``, ``other_messages``,
  ``messages``, ``builder_reply``, ``outcome``: the turn's log line;
* ``oracle_moves``: the candidates the builder was shown, or, on a turn
  without the oracle, every optimal move (``craft_env.oracle``);
* ``conversation``: the last ``WINDOW`` entries of the game's public
  conversation rebuilt from the log, up to and including this turn's
  builder move (the paper's judges read the snapshot taken after the move).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.core.views import seat_view
from craft_env.envs.game import CraftGame
from craft_env.models.jsonl import read_jsonl
from craft_env.eval.judges.questions import (
    BOARD,
    BUILDER,
    CONVERSATION,
    MESSAGE,
    MESSAGES,
    ORACLE,
    OTHERS,
    OUTCOME,
    PS,
    TARGET_VIEW,
    THINK,
)
from craft_env.eval.logs.games import CONFIG_NAME, LOG_NAME, GameLog, read_games
from craft_env.eval.run.settings import RunSettings
from craft_env.core.oracle import optimal_moves
from craft_env.text import describe_board, describe_candidates, describe_conversation, describe_view

WINDOW = 12


class TurnText:
    """The fields of one turn as text, rendered on first use (the engine judge never needs them)."""

    def __init__(self, record: dict[str, Any], board: Structure, target: Structure,
                 window: list[tuple[str, str]], said: dict[str, dict[str, Any]]) -> None:
        self._args = (record, board, target, window, said)
        self._texts: dict[str | None, dict[str, str]] | None = None

    def fields(self, seat: str | None) -> dict[str, str]:
        if self._texts is None:
            self._texts = _fields(*self._args)
        return self._texts[seat]


@dataclass(frozen=True, eq=False)
class JudgedItem:
    """One unit a judge scores (see the module docstring); ``said`` is the turn's ``responses``."""

    family: str
    game_run: int
    structure_index: int
    structure_id: str | None
    turn: int
    seat: str | None
    board: Structure
    target: Structure
    record: dict[str, Any] = field(repr=False)
    said: dict[str, dict[str, Any]] = field(repr=False, default_factory=dict)
    text: TurnText | None = field(repr=False, default=None)

    @property
    def fields(self) -> dict[str, str]:
        """Every field's text for this item's seat (``questions.FIELDS``)."""
        if self.text is None:
            raise ValueError("judged item: built without its text")
        return self.text.fields(self.seat)

    @property
    def key(self) -> str:
        """Identifies the item within a judged directory: game run, structure, turn, family, seat."""
        return f"{self.game_run}:{self.structure_index}:{self.turn}:{self.family}:{self.seat or 'turn'}"

    @property
    def followed_oracle(self) -> bool:
        """The oracle offered moves and the builder played one of them."""
        return self.oracle_available and bool(self.record.get("followed_oracle"))

    @property
    def oracle_available(self) -> bool:
        return bool(self.record.get("oracle_moves"))


def responses(record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The turn's director responses by seat, speaking order kept, a seat's last message winning.

    Reads our list form and the paper's ``{seat: {internal_thinking, public_message}}`` form.
    """
    raw = record.get("director_responses") or []
    out: dict[str, dict[str, Any]] = {}
    if isinstance(raw, dict):
        for seat, entry in raw.items():
            entry = entry if isinstance(entry, dict) else {}
            out[str(seat)] = {
                "think": str(entry.get("think", entry.get("internal_thinking", "")) or ""),
                "message": str(entry.get("message", entry.get("public_message", "")) or ""),
            }
        return out
    for entry in raw:
        if isinstance(entry, dict) and entry.get("director"):
            seat = str(entry["director"])
            out.pop(seat, None)
            out[seat] = {"think": str(entry.get("think") or ""), "message": str(entry.get("message") or "")}
    return out


def _board(record: dict[str, Any], n: int, height: int) -> Structure:
    data = record.get("structure_before")
    if isinstance(data, dict) and "structure" not in data:
        data = {"structure": data, "spans": record.get("spans_before") or {}}
    return Structure.from_dict(data, n=n, height=height)


def _moves(raw: Any) -> list[Move]:
    moves = []
    for entry in raw or []:
        try:
            moves.append(Move.from_dict(entry))
        except ValueError:
            continue
    return moves


def builder_line(record: dict[str, Any]) -> str:
    """The builder's turn as one conversation line (the environment's own wording)."""
    builder = record.get("builder") or {}
    outcome = {
        "question": record.get("question"),
        "move": record.get("move"),
        "legal": bool(record.get("legal", not record.get("failed", False))),
        "text": builder.get("sent"),
        "reason": record.get("reason"),
    }
    return CraftGame.builder_note(outcome)


def conversation_entries(turns: list[dict[str, Any]]) -> list[list[tuple[str, str]]]:
    """Per turn, that turn's public conversation lines (directors in speaking order, then the builder)."""
    out = []
    for record in turns:
        number = int(record.get("turn_number", 0))
        lines = [(f"turn {number} {seat}", r["message"]) for seat, r in responses(record).items()]
        lines.append((f"turn {number} builder", builder_line(record)))
        out.append(lines)
    return out


def _outcome_text(record: dict[str, Any]) -> str:
    move = record.get("move") or (record.get("move_attempted") or {}).get("action") or "no move"
    if record.get("question") and not record.get("move"):
        done = f"the builder asked a question: {record['question']}"
    elif record.get("legal", not record.get("failed", False)):
        done = f"{move}: carried out"
    else:
        done = f"{move}: failed ({record.get('reason') or 'no reason logged'})"
    lines = [done, f"was it one of the correct next moves: {'yes' if record.get('optimal') else 'no'}"]
    if record.get("oracle_moves"):
        lines.append(f"was it one of the listed moves: {'yes' if record.get('followed_oracle') else 'no'}")
    else:
        lines.append("(no moves were listed to the builder)")
    return "\n".join(lines)


def _builder_text(record: dict[str, Any]) -> str:
    builder = record.get("builder") or {}
    followed = builder.get("followed") or []
    if isinstance(followed, str):
        followed = [followed]
    parts = [
        f"builder's reasoning: {builder.get('think') or '(none)'}",
        f"builder's move: {record.get('move') or record.get('question') or builder.get('sent') or '(none)'}",
        f"directors the builder says it followed: {', '.join(map(str, followed)) or '(none)'}",
    ]
    return "\n".join(parts)


def _fields(
    record: dict[str, Any],
    board: Structure,
    target: Structure,
    window: list[tuple[str, str]],
    said: dict[str, dict[str, Any]],
) -> dict[str | None, dict[str, str]]:
    """Text of every field, per seat (key ``None``: the turn's fields)."""
    offered = _moves(record.get("oracle_moves"))
    if offered:
        oracle = "The builder was shown these correct next moves:\n" + describe_candidates(offered)
    else:
        oracle = "The oracle was off this turn; every correct next move:\n" + describe_candidates(
            optimal_moves(board, target))
    common = {
        BOARD: describe_board(board),
        ORACLE: oracle,
        MESSAGES: describe_conversation([(seat, r["message"]) for seat, r in said.items()]),
        CONVERSATION: describe_conversation(window),
        BUILDER: _builder_text(record),
        OUTCOME: _outcome_text(record),
    }
    out: dict[str | None, dict[str, str]] = {None: common}
    for seat, response in said.items():
        others = [(s, r["message"]) for s, r in said.items() if s != seat]
        out[seat] = {
            **common,
            TARGET_VIEW: describe_view(seat_view(target, seat), seat),
            THINK: response["think"] or "(none)",
            MESSAGE: response["message"] or "(nothing)",
            OTHERS: describe_conversation(others) if others else "(no other director spoke)",
        }
    return out


def game_items(
    game: GameLog, target: Structure, families: tuple[str, ...], max_turn: int | None = None
) -> Iterator[JudgedItem]:
    """The judged items of one finished game, in turn order (``max_turn``: only turns up to it)."""
    history: list[tuple[str, str]] = []
    for record, lines in zip(game.turns, conversation_entries(game.turns)):
        history.extend(lines)
        number = int(record.get("turn_number", 0))
        if max_turn is not None and number > max_turn:
            break
        board = _board(record, target.n, target.height)
        said = responses(record)
        text = TurnText(record, board, target, history[-WINDOW:], said)
        base = dict(game_run=game.run, structure_index=game.structure_index, structure_id=game.structure_id,
                    turn=number, board=board, target=target, record=record, said=said, text=text)
        for family in families:
            if family == PS:
                yield JudgedItem(family=PS, seat=None, **base)
                continue
            for seat in said:
                yield JudgedItem(family=family, seat=seat, **base)


# ---------------------------------------------------------------------- directories


def run_logs(path: str | os.PathLike) -> tuple[Path, list[Path]]:
    """``(output directory, its run_<k>/log.jsonl files)`` for an output or a single run directory."""
    path = Path(path)
    if not path.is_dir():
        raise ValueError(f"judge: {os.fspath(path)!r} is not a directory")
    if (path / LOG_NAME).exists():
        return path.parent, [path / LOG_NAME]
    logs = [p / LOG_NAME for p in path.glob("run_*") if (p / LOG_NAME).exists()]

    def number(log: Path) -> int:
        suffix = log.parent.name.split("_", 1)[1]
        return int(suffix) if suffix.isdigit() else 0

    if not logs:
        raise ValueError(f"judge: no run logs (run_<k>/{LOG_NAME}) under {os.fspath(path)!r}")
    return path, sorted(logs, key=number)


def read_config(out: Path) -> dict[str, Any]:
    path = out / CONFIG_NAME
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        raise ValueError(f"judge: {os.fspath(path)!r} is not valid JSON") from None
    return data if isinstance(data, dict) else {}


def dataset_structures(out: Path, config: dict[str, Any]) -> list[Structure]:
    """The structures the run played (its ``config.json`` dataset; the bundled set by default)."""
    try:
        return RunSettings.from_dict({**config, "out": os.fspath(out)}).load_structures()
    except ValueError as error:
        raise ValueError(f"judge: cannot load the targets of {os.fspath(out)!r}: {error}") from None


def _logged_targets(log: Path) -> dict[tuple[int, int, int], Structure]:
    """Targets written into start markers, keyed by ``(run, structure_index, attempt)``."""
    found = {}
    for record in read_jsonl(log):
        if record.get("kind") == "game" and record.get("event") == "start" and record.get("target"):
            try:
                key = (int(record["run"]), int(record["structure_index"]), int(record.get("attempt", 1)))
                found[key] = Structure.from_dict(record["target"])
            except (KeyError, TypeError, ValueError):
                continue
    return found


def load_items(
    path: str | os.PathLike, families: tuple[str, ...], max_turn: int | None = None
) -> tuple[Path, list[JudgedItem]]:
    """``(output directory, every judged item of its finished games)`` in a stable order."""
    out, logs = run_logs(path)
    config = read_config(out)
    structures: list[Structure] | None = None
    items: list[JudgedItem] = []
    for log in logs:
        logged = _logged_targets(log)
        for _, game in sorted(read_games(log).items()):
            if game.status != "done":
                continue
            target = logged.get((game.run, game.structure_index, game.attempt))
            if target is None:
                if structures is None:
                    structures = dataset_structures(out, config)
                if game.structure_index >= len(structures):
                    raise ValueError(
                        f"judge: structure_index {game.structure_index} of {os.fspath(log)!r} is outside "
                        f"the run's dataset ({len(structures)} structures)"
                    )
                target = structures[game.structure_index]
            items.extend(game_items(game, target, families, max_turn))
    return out, items
