"""``craft-env replay``: every logged game in one self-contained HTML file (docs/replay.md).

Python does the game work and the page only draws: for each game this
module reads the log (``logs.read_games``), finds the target in the run's
dataset, rebuilds the board after every turn, computes each director's
view of the target with ``craft_env.core.views`` (apparent sizes), the
taxonomy category of every move (``taxonomy.classify``) and the final
Table-1 metrics, and embeds it all as one JSON block. The page script
(``assets/replay.js``, after ``assets/draw.js``, the drawing it shares
with the leaderboard) draws boards as isometric SVG and shows the turn's
conversation, candidates and outcome.

Safety: the data block is JSON with ``<``, ``>``, ``&`` and the line
separators escaped, so no text can close the script element; the page
inserts every logged text with ``textContent``; a Content-Security-Policy
meta allows only the page's own script and style (by hash) and ``data:``
images, so nothing can be fetched.

Logs are read tolerantly: a missing optional field shows as absent, and a
board that cannot be read (nor rebuilt from the one before and the move) is
shown as missing.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import os
import re
from dataclasses import dataclass, field
from html import escape
from importlib import resources
from pathlib import Path
from typing import Any

from craft_env.core.board import Structure
from craft_env.core.encoding import (
    COLOUR_NAMES,
    DEFAULT_HEIGHT,
    DEFAULT_N,
    DIRECTION_OFFSETS,
    format_position,
    parse_position,
    value_colour,
)
from craft_env.core.moves import Move
from craft_env.core.views import DEFAULT_SEATS, SEAT_SIDES, hidden_cells, seat_cells, seat_view
from craft_env.datasets import load_dataset
from craft_env.envs.render import BLOCK_RGB, face_colours
from craft_env.models.jsonl import read_jsonl
from craft_env.eval.logs.games import LOG_NAME, GameLog, read_config, read_games, run_dirs
from craft_env.eval.results.table import METRICS, final_metrics
from craft_env.eval.results.taxonomy import classify

log = logging.getLogger(__name__)

#: The metrics shown per turn (``progress_data`` keys).
TURN_METRICS = ("progress", "distance", "completion", "position_accuracy", "iou", "voxel_iou")


# ----------------------------------------------------------------------------- colours


def block_colours() -> list[dict[str, str]]:
    """CSS colours of each block colour (``COLOURS`` order): base and the three face shades of render.py."""
    def css(rgb: Any) -> str:
        return "#" + "".join(f"{int(round(float(v))):02x}" for v in rgb)

    return [
        {"base": css(BLOCK_RGB[c]), **{face: css(rgb) for face, rgb in face_colours(c).items()}}
        for c in range(len(BLOCK_RGB))
    ]


# ----------------------------------------------------------------------------- games


@dataclass
class RunGames:
    """The games of one ``run_<k>`` directory with its run settings."""

    label: str
    config: dict[str, Any]
    games: list[GameLog] = field(default_factory=list)


def _latest_attempt_turns(log_path: Path, games: dict[tuple[int, int], GameLog]) -> None:
    """Give unfinished games the turns of their last attempt (``read_games`` keeps only done games' turns)."""
    open_games = {key: game for key, game in games.items() if game.status != "done"}
    if not open_games:
        return
    found: dict[tuple[int, int], dict[int, dict[str, Any]]] = {}
    for record in read_jsonl(log_path):
        if record.get("kind") != "turn":
            continue
        try:
            key = (int(record["run"]), int(record["structure_index"]))
            attempt, number = int(record.get("attempt", 1)), int(record["turn_number"])
        except (KeyError, TypeError, ValueError):
            continue
        game = open_games.get(key)
        if game is not None and attempt == game.attempts:
            found.setdefault(key, {})[number] = record
    for key, by_number in found.items():
        open_games[key].turns = [by_number[k] for k in sorted(by_number)]


def load_runs(paths: list[str | os.PathLike]) -> list[RunGames]:
    """Every run under ``paths`` (output directories of ``craft-env run`` or single ``run_<k>`` dirs)."""
    runs: list[RunGames] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            raise ValueError(f"replay: {os.fspath(raw)!r} is not a directory")
        found = run_dirs(path)
        if not found:
            raise ValueError(f"replay: no run logs (run_<k>/{LOG_NAME}) under {os.fspath(raw)!r}")
        out = path.parent if found == [path] else path
        config = read_config(out)
        for run in found:
            games = read_games(run / LOG_NAME)
            _latest_attempt_turns(run / LOG_NAME, games)
            ordered = sorted(games.values(), key=lambda g: (g.run, g.structure_index))
            runs.append(RunGames(f"{out.name}/{run.name}", config, ordered))
    return runs


class _Targets:
    """Targets by dataset and index (a bundled set by name; ours, ``craft``, when a run names none)."""

    def __init__(self) -> None:
        self._sets: dict[str | None, list[Any] | None] = {}

    def get(self, config: dict[str, Any], game: GameLog) -> Any:
        dataset = config.get("dataset")
        if dataset not in self._sets:
            self._sets[dataset] = self._load(dataset)
        structures = self._sets[dataset]
        if not structures or not 0 <= game.structure_index < len(structures):
            return None
        target = structures[game.structure_index]
        if target.id is not None and game.structure_id is not None and target.id != game.structure_id:
            log.warning(
                "replay: structure %d of the dataset is %s, the log says %s; target not shown",
                game.structure_index, target.id, game.structure_id,
            )
            return None
        return target

    @staticmethod
    def _load(dataset: str | None) -> list[Any] | None:
        try:
            return load_dataset("craft" if dataset is None else dataset)
        except (OSError, ValueError) as error:
            log.warning("replay: dataset %s unreadable (%s); targets not shown", dataset, error)
            return None


# ----------------------------------------------------------------------------- boards


def board_boxes(board: Any) -> list[list[int]]:
    """The blocks of ``board`` as ``[i, j, layer, colour, i2, j2]``.

    A large block is listed once, ``(i2, j2)`` being its other half; a small one has ``(i2, j2) == (i, j)``.
    """
    n = board.n
    cells = board.array
    boxes = []
    for k, level in zip(*cells.nonzero()):
        value = int(cells[k, level])
        i, j = divmod(int(k), n)
        if value < 6:
            boxes.append([i, j, int(level), value_colour(value), i, j])
            continue
        di, dj = DIRECTION_OFFSETS[(value - 6) % 4]
        if (di, dj) > (0, 0):
            boxes.append([i, j, int(level), value_colour(value), i + di, j + dj])
    return boxes


def _read_board(data: Any, n: int | None, height: int | None) -> Any:
    if not isinstance(data, dict):
        return None
    try:
        return Structure.from_dict(data, n, height)
    except ValueError:
        return None


def _apply(board: Any, move: Any) -> Any:
    if board is None or not isinstance(move, dict):
        return board
    try:
        return board.apply(Move.from_dict(move))
    except ValueError:
        return board


def move_text(move: Any) -> str | None:
    """A logged move (its JSON dict) as the move grammar writes it; the JSON itself when it is no valid move."""
    if not isinstance(move, dict):
        return None
    try:
        return str(Move.from_dict(move))
    except ValueError:
        return json.dumps(move, sort_keys=True)


def _highlight(board: Any, move: Any) -> list[list[int]]:
    """The cells ``[i, j, layer]`` of a placed block on the board after it (empty for other moves)."""
    if board is None or not isinstance(move, dict) or move.get("action") != "place":
        return []
    cells = []
    for key in ("position", "span_to"):
        if not move.get(key):
            continue
        try:
            i, j = parse_position(move[key], board.n)
        except ValueError:
            return []
        top = len(board.stack(i, j)) - 1
        if top >= 0:
            cells.append([i, j, top])
    return cells


def _seats(config: dict[str, Any]) -> tuple[str, ...]:
    """The run's seated directors (``DEFAULT_SEATS`` when its config predates seats)."""
    return tuple(config.get("seats") or DEFAULT_SEATS)


def _walls(target: Any, seats: tuple[str, ...] = DEFAULT_SEATS) -> dict[str, Any]:
    """Each seated director's view of the target: cells left to right, ``[colour, size]`` per slot, layer."""
    walls = {}
    for seat in seats:
        view = seat_view(target, seat)
        layers = []
        for level in range(target.height):
            layers.append(
                [
                    [-1, 0] if slot["color"] is None else [COLOUR_NAMES.index(slot["color"]), slot["size"]]
                    for slot in view[f"row_{level}"]
                ]
            )
        walls[seat] = {
            "side": SEAT_SIDES[seat],
            "cells": [format_position(c) for c in seat_cells(seat, target.n)],
            "layers": layers,
        }
    return walls


# ----------------------------------------------------------------------------- records


def _text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _director(entry: Any) -> dict[str, Any]:
    entry = entry if isinstance(entry, dict) else {}
    return {
        "seat": _text(entry.get("director") or entry.get("agent")) or "?",
        "arch": _text(entry.get("archetype")),
        "msg": _text(entry.get("message")),
        "think": _text(entry.get("think")),
        "reason": _text(entry.get("reason")),
    }


def _numbers(data: Any, keys: tuple[str, ...]) -> dict[str, float]:
    """The finite numbers of ``data`` under ``keys`` (missing or non-numeric values are left out)."""
    data = data if isinstance(data, dict) else {}
    return {
        k: data[k]
        for k in keys
        if isinstance(data.get(k), (int, float)) and not isinstance(data[k], bool) and math.isfinite(data[k])
    }


def _final(game: GameLog) -> dict[str, Any]:
    """``table.final_metrics``, tolerating a last turn without ``progress_data``."""
    if not (game.marker or {}).get("final") and game.turns and not isinstance(
        game.turns[-1].get("progress_data"), dict
    ):
        return {}
    return final_metrics(game)


def _turn_record(turn: dict[str, Any], after: Any) -> dict[str, Any]:
    builder = turn.get("builder") if isinstance(turn.get("builder"), dict) else {}
    offered = turn.get("oracle_moves")
    move = turn.get("move_attempted")
    optimal = bool(turn.get("optimal"))
    legal = turn.get("legal")
    return {
        "t": turn.get("turn_number"),
        "after": None if after is None else board_boxes(after),
        "hl": _highlight(after, move) if turn.get("executed") else [],
        "dirs": [_director(d) for d in turn.get("director_responses") or []],
        "builder": {
            "think": _text(builder.get("think")),
            "sent": _text(builder.get("sent")),
            "followed": [str(s) for s in builder.get("followed") or []],
            "reason": _text(builder.get("reason")),
        },
        "question": _text(turn.get("question")),
        "oracle": None if offered is None else [move_text(m) for m in offered],
        "move": _text(turn.get("move")) or move_text(move),
        "legal": None if legal is None else bool(legal),
        "reason": _text(turn.get("reason")),
        "optimal": optimal,
        "followed_oracle": bool(turn.get("followed_oracle")),
        "cat": classify(move, optimal, offered) if offered else None,
        "m": _numbers(turn.get("progress_data"), TURN_METRICS),
    }


def _condition(config: dict[str, Any]) -> str:
    oracle = config.get("oracle_n")
    parts = [
        f"{config.get('director_model', '?')} / {config.get('builder_model', '?')}",
        "oracle " + ("?" if oracle is None else (str(oracle) if oracle else "off")),
    ]
    start = config.get("start")
    if start and start != "empty":
        parts.append(f"start {start}")
    if config.get("seats") and tuple(config["seats"]) != DEFAULT_SEATS:
        parts.append(f"seats {','.join(config['seats'])}")
    return ", ".join(parts)


def game_record(run: RunGames, game: GameLog, target: Any) -> dict[str, Any]:
    """One game as the page draws it (see the module docstring)."""
    n = target.n if target is not None else None
    height = target.height if target is not None else None
    turns = game.turns
    boards = [_read_board(t.get("structure_before"), n, height) for t in turns]
    records = []
    for k, turn in enumerate(turns):
        after = boards[k + 1] if k + 1 < len(boards) and boards[k + 1] is not None else None
        if after is None:
            after = _apply(boards[k], turn.get("move_attempted")) if turn.get("executed") else boards[k]
        records.append(_turn_record(turn, after))
    final = _numbers(_final(game), METRICS + ("voxel_iou",))
    legal = [t.get("legal") for t in turns if t.get("legal") is not None]
    start = boards[0] if boards else None
    shape_of = target if target is not None else start
    picture = target_picture(target, _seats(run.config)) if target is not None else {}
    marker = game.marker or {}
    completed = marker.get("completed")
    if completed is None:
        completed = final.get("completion", 0.0) >= 1.0 and final.get("voxel_iou", 0.0) >= 1.0
    return {
        "run": run.label,
        "sid": game.structure_id or f"structure {game.structure_index}",
        "index": game.structure_index,
        "complexity": _text(target.complexity or target.tier) if target is not None else None,
        "condition": _condition(run.config),
        "status": game.status,
        "error": _text(marker.get("error")) if game.status == "errored" else None,
        "completed": bool(completed),
        "final": {k: final[k] for k in METRICS if k in final},
        "fail": (sum(1 for x in legal if not x) / len(legal)) if legal else None,
        "n": shape_of.n if shape_of is not None else DEFAULT_N,
        "h": shape_of.height if shape_of is not None else DEFAULT_HEIGHT,
        "target": picture.get("target"),
        "walls": picture.get("walls"),
        "hidden": _hidden(shape_of, _seats(run.config)),
        "start": board_boxes(start) if start is not None else [],
        "turns": records,
    }


def target_picture(target: Any, seats: tuple[str, ...] = DEFAULT_SEATS) -> dict[str, Any]:
    """What the page script needs to draw a target: its size, its blocks, each seat's wall, the unseen cells.

    The leaderboard's structure cards draw their targets from this too (``craft_env.eval.leaderboard``).
    """
    return {
        "n": target.n,
        "h": target.height,
        "target": board_boxes(target),
        "walls": _walls(target, seats),
        "hidden": _hidden(target, seats),
    }


def _hidden(structure: Any, seats: tuple[str, ...] = DEFAULT_SEATS) -> list[list[int]]:
    if structure is None:
        return []
    return [list(c) for c in hidden_cells(structure.n, seats)]


def replay_data(paths: list[str | os.PathLike]) -> dict[str, Any]:
    """The page's data: colours and every game of the runs under ``paths``."""
    targets = _Targets()
    games = [game_record(run, g, targets.get(run.config, g)) for run in load_runs(paths) for g in run.games]
    return {"colours": block_colours(), "games": games}


# ----------------------------------------------------------------------------- page


def _asset(name: str) -> str:
    return (resources.files("craft_env.eval.replay") / "assets" / name).read_text(encoding="utf-8")


def json_for_html(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script type="application/json">`` element."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    for raw, escaped in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


_SLOT = re.compile(r"\{\{(CSP|TITLE|STYLE|SCRIPT|DATA)\}\}")


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def page_html(template: str, style: str, script: str, data: Any, title: str) -> str:
    """A self-contained page: ``template``'s ``{{HEAD}}`` (``assets/head.html``: the policy, title and
    style), ``{{TITLE}}``, ``{{SCRIPT}}`` and ``{{DATA}}`` filled in, under a policy that runs only this
    script and style (by hash) and fetches nothing.

    The leaderboard's page is made by the same function (``craft_env.eval.leaderboard.page``).
    """
    policy = (
        f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    values = {
        "CSP": escape(policy, quote=False),  # single quotes stay readable; the policy has no double quote
        "TITLE": escape(title),
        "STYLE": style,
        "SCRIPT": script,
        "DATA": json_for_html(data),
    }
    page = template.replace("{{HEAD}}", _asset("head.html"), 1)
    return _SLOT.sub(lambda match: values[match.group(1)], page)


def drawing_script() -> str:
    """``draw.js``: the board and wall drawing the replay page and the leaderboard share."""
    return _asset("draw.js")


def render_html(data: dict[str, Any], title: str = "CRAFT replay") -> str:
    """The whole page: template, style, script (the shared drawing first) and the data block."""
    script = drawing_script() + _asset("replay.js")
    return page_html(_asset("replay.html"), _asset("replay.css"), script, data, title)


def write_replay(paths: list[str | os.PathLike], output: str | os.PathLike) -> tuple[Path, int]:
    """Write the replay of every game under ``paths`` to ``output``; return the path and the game count."""
    data = replay_data(paths)
    names = ", ".join(Path(p).resolve().name for p in paths)
    out = Path(output)
    out.write_text(render_html(data, f"CRAFT replay: {names}"), encoding="utf-8")
    return out, len(data["games"])
