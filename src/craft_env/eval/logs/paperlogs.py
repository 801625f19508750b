"""The paper's result logs, read and written: replayed with our engine, imported and exported.

The paper's code writes one JSON file per game,
``<condition>_run<R>/<director>_<builder>/craft_<structure_id>_<R>.json``
(``condition`` is ``oracle<N>_tools``, ``oracle<N>_no_tools``,
``no_oracle_tools`` or ``no_oracle_no_tools``) holding
``{"experiment_info": ..., "games": [game]}``; ``docs/paper-logs.md``
lists the fields this module reads and writes.

* ``read_paper_games(path)``: every game under a file or a directory,
  replayed move by move with our engine under the protocol the log
  declares (``experiment_info["protocol"]``, else ``paper``). Each turn
  becomes a turn record of our log format (``eval.logs``) and every place
  where the replay disagrees with the log (board before the move, whether
  the move failed, the metrics after it, the final progress) is listed
  with both values. A move our rules (or the protocol's ban) reject is a
  failed turn with the reason. Unknown fields are kept (``paper_turn``,
  ``paper_game``); missing optional ones are tolerated.
* ``import_paper_logs(path, out)`` (``import_paper_files`` says what it
  skipped): those games as our run directories
  (``config.json``, ``structures.json``, ``run_<R>/log.jsonl``), one per
  (condition, director, builder), so ``craft-env report`` reads them.
* ``export_paper_logs(run_dir, out)``: one of our runs in the paper's
  format (flat ``structure_before`` + ``spans_before``, large removals
  carrying their ``span_to``, the tracker record in ``progress_data``).

Export then import gives back the same games, moves and metrics (tested).

Reading is bounded and file by file (docs/robustness.md, "Paper logs"): a
file above ``MAX_PAPER_LOG_BYTES`` is refused before it is read, JSON
nested deeper than ``MAX_JSON_DEPTH`` is refused, every number used as a
size or an index (``structure_index``, ``run``, ``max_turns``,
``num_oracle``, turn numbers) is checked against its range before anything
is made from it, and text is made valid Unicode (``text.clean``). A file or
game that breaks a rule is a ``PaperLogFailure`` naming the file and the
field; the other files are read.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from craft_env.core import metrics, oracle
from craft_env.core.board import Structure
from craft_env.core.encoding import format_position, parse_position
from craft_env.core.moves import Move
from craft_env.core.protocol import Protocol, get_protocol, is_completed, move_reason
from craft_env.core.views import DEFAULT_SEATS, seat_cells
from craft_env.datasets import load_dataset, save_structures
from craft_env.models.jsonl import json_safe
from craft_env.text.clean import holds_surrogate_escape, valid_unicode_data
from craft_env.text.paper_grammar import move_from_paper
from craft_env.eval.logs.games import CONFIG_NAME, LOG_NAME, MAX_RUNS, GameLog, RunLog, read_games

log = logging.getLogger(__name__)

#: The paper's logs seat D1, D2, D3 only (our default seats): other seat sets cannot be exported.
SEATS = DEFAULT_SEATS
TOLERANCE = 1e-6
#: The largest paper result file read; one game of the paper's logs, prompts included, is well under 1 MiB.
MAX_PAPER_LOG_BYTES = 16 * 2**20
#: The deepest JSON nesting read; the format itself needs 8 levels.
MAX_JSON_DEPTH = 32
#: Ranges of the numbers a log gives that size or index something (inclusive).
MAX_STRUCTURE_INDEX = 9_999
MAX_TURNS = 10_000
MAX_GAMES = 1_000
MAX_ORACLE = 1_000
#: How much of a directory's ``*.json`` file is looked at to tell a paper log (its first keys) from others.
_SNIFF_BYTES = 4096
# Our metric name -> the paper tracker's name.
PAPER_METRICS = {
    "iou": "iou_score",
    "completion": "completion_percentage",
    "position_accuracy": "position_accuracy",
    "progress": "overall_progress",
}
_SAFE_STEM_RE = re.compile(r"[A-Za-z0-9._-]{1,100}")
_DIR_RE = re.compile(r"^(oracle\d+|no_oracle)_(tools|no_tools)_run(\d+)$")
_START_CATEGORY = {
    "empty": "empty",
    "first_layer": "firstLayer",
    "first_two_layers": "firstTwoLayers",
    "wall_D1": "D1Wall",
    "wall_D2": "D2Wall",
    "wall_D3": "D3Wall",
}
_START_OF_CATEGORY = {v: k for k, v in _START_CATEGORY.items()}


def condition_name(oracle_n: int, tools: bool) -> str:
    """The paper's condition directory stem, e.g. ``oracle5_no_tools`` or ``no_oracle_tools``."""
    return f"{f'oracle{oracle_n}' if oracle_n else 'no_oracle'}_{'tools' if tools else 'no_tools'}"


def _model_dir_name(name: str) -> str:
    folder = str(name).split(",,", 1)[0].replace("/", "-").replace("\\", "-").replace("\0", "")
    return folder if folder.strip(".") else "_"


def file_stem(structure_id: str | None, index: int) -> str:
    """``structure_id`` as one file-name part: itself when it is letters, digits, ``.``, ``_`` and ``-``
    (the paper's ids); otherwise those characters kept, the rest ``_``, and the structure index appended
    so that two ids never share a file (an id such as ``../x`` never leaves its folder)."""
    text = str(structure_id or "")
    if _SAFE_STEM_RE.fullmatch(text) and not text.startswith("."):
        return text
    return f"{re.sub(r'[^A-Za-z0-9._-]+', '_', text).lstrip('.')[:80]}-{index}"


class PaperLogError(ValueError):
    """A paper log (or one of its games) that breaks a reading rule; the message names the field."""


@dataclass(frozen=True)
class PaperLogFailure:
    """A file, or one game of it (1-based ``game``), that was not read, and why."""

    path: str
    reason: str
    game: int | None = None

    def __str__(self) -> str:
        return f"{self.path}{'' if self.game is None else f' game {self.game}'}: {self.reason}"


def checked_int(value: Any, name: str, low: int, high: int) -> int:
    """``value`` as an int in ``low..high`` (a whole float such as ``5.0`` counts); ``PaperLogError`` naming
    ``name`` otherwise (``1e999``, ``{}``, ``-5``, ``2**63``, ``true``)."""
    number = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        number = int(value)
    if number is None or not low <= number <= high:
        shown = repr(value) if len(repr(value)) <= 60 else repr(value)[:57] + "..."
        raise PaperLogError(f"{name}: expected an int from {low} to {high:,}, got {shown}")
    return number


def _optional_int(mapping: dict[str, Any], key: str, name: str, low: int, high: int, default: int) -> int:
    """``mapping[key]`` checked by ``checked_int``; ``default`` when it is absent, null, 0 or false."""
    value = mapping.get(key)
    return default if value in (None, 0, False, "") else checked_int(value, name, low, high)


# ------------------------------------------------------------------ replay engine


@dataclass
class Step:
    """One replayed move: legality (with the reason), the boards around it and what the oracle says."""

    legal: bool
    reason: str | None
    before: Structure
    after: Structure
    metrics: dict[str, float]
    optimal: bool
    remove_prescribed: bool


class Replayer:
    """Plays moves on a board under a protocol, with our engine (``core``), scoring after each."""

    def __init__(self, target: Structure, protocol: Protocol, board: Structure | None = None) -> None:
        self.target = target
        self.protocol = protocol
        self.board = board if board is not None else Structure.empty(target.n, target.height)

    def check(self, move: Move) -> str | None:
        """Why ``move`` is illegal now under the protocol, or ``None``."""
        return move_reason(self.board, move, self.protocol)

    def step(self, move: Move | None) -> Step:
        before = self.board
        optimal_moves = oracle.optimal_moves(before, self.target)
        reason = None if move is None else self.check(move)
        if move is not None and move.action != "noop" and reason is None:
            self.board = before.apply(move)
        scores = metrics.score(self.board, self.target)
        scores["distance"] = int(oracle.distance(self.board, self.target))
        legal = reason is None
        return Step(
            legal=legal,
            reason=reason,
            before=before,
            after=self.board,
            metrics=scores,
            optimal=bool(legal and move is not None and move.action != "noop" and move in optimal_moves),
            remove_prescribed=any(m.action == "remove" for m in optimal_moves),
        )


# ------------------------------------------------------------------- reading logs


def _spans(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def board_from_paper(structure: Any, spans: Any, n: int = 3, height: int = 3) -> Structure:
    """A board from the paper's flat ``{cell: [codes]}`` and ``{"L": [[a, b]]}``; ``ValueError`` if invalid."""
    if not isinstance(structure, dict):
        raise ValueError(f"structure: expected a mapping of '(i,j)' -> stack, got {structure!r}")
    cells: dict[str, list[str]] = {}
    for key, stack in structure.items():
        cells[format_position(parse_position(key, n, field="structure"))] = stack
    return Structure.from_dict({"structure": cells, "spans": _spans(spans)}, n=n, height=height)


@dataclass
class PaperGame:
    """One game of a paper log, replayed: our turn records, the disagreements, where it came from."""

    path: str
    condition: str
    director: str
    builder: str
    run: int
    structure_index: int
    structure_id: str
    target: Structure
    protocol: Protocol
    max_turns: int
    oracle_n: int
    tools: bool
    turns: list[dict[str, Any]] = field(default_factory=list)
    disagreements: list[dict[str, Any]] = field(default_factory=list)
    final: dict[str, float] = field(default_factory=dict)
    completed: bool = False
    paper_game: dict[str, Any] = field(default_factory=dict)
    experiment_info: dict[str, Any] = field(default_factory=dict)
    start: str = "empty"

    @property
    def group(self) -> tuple[str, str, str]:
        return (self.condition, self.director, self.builder)


def _looks_like_paper_log(path: Path) -> bool:
    """Whether the head of ``path`` names a paper log's keys (``games``, ``experiment_info``)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_SNIFF_BYTES)
    except OSError:
        return False
    return head.lstrip()[:1] == b"{" and (b'"games"' in head or b'"experiment_info"' in head)


def paper_log_files(path: str | os.PathLike) -> list[Path]:
    """The paper result files under ``path``: the file itself, or every ``*.json`` whose head names a paper
    log's keys (read by ``load_paper_log``, which may still refuse it)."""
    root = Path(path)
    if root.is_file():
        return [root]
    return [candidate for candidate in sorted(root.rglob("*.json")) if _looks_like_paper_log(candidate)]


def is_paper_log_path(path: str | os.PathLike) -> bool:
    """Whether ``path`` is a paper result file, or a directory with some but no run logs of ours."""
    root = Path(path)
    if root.is_file():
        return root.suffix == ".json"
    if not root.is_dir() or (root / "log.jsonl").exists() or any(root.glob("run_*/log.jsonl")):
        return False
    return bool(paper_log_files(root))


def _finite_or_text(token: str) -> Any:
    """A JSON number as ``json.loads`` reads it, except that a non-finite one (``1e999``, ``Infinity``,
    ``NaN``) is written as ``json_safe`` writes it, so the number can be logged again."""
    return json_safe(float(token))


def _checked_depth(data: Any) -> None:
    """``PaperLogError`` when ``data`` nests deeper than ``MAX_JSON_DEPTH``.

    Containers are walked level by level; a list of plain numbers costs one ``map`` over it.
    """
    level, depth = [data] if isinstance(data, (dict, list)) else [], 1
    while level:
        if depth > MAX_JSON_DEPTH:
            raise PaperLogError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
        below = []
        for container in level:
            values = container.values() if isinstance(container, dict) else container
            kinds = set(map(type, values))
            if dict in kinds or list in kinds:
                below += [item for item in values if isinstance(item, (dict, list))]
        level, depth = below, depth + 1


def load_paper_log(path: str | os.PathLike) -> dict[str, Any]:
    """One paper result file as a dict with a ``games`` list, read within the limits of the module docstring.

    Raises ``PaperLogError`` (the message starts with the field, or says what is wrong with the file).
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_PAPER_LOG_BYTES:
            raise PaperLogError(
                f"{size:,} bytes is above the limit of {MAX_PAPER_LOG_BYTES} bytes "
                f"({MAX_PAPER_LOG_BYTES // 2**20} MiB) for one paper log"
            )
        raw = path.read_bytes()[: MAX_PAPER_LOG_BYTES + 1]
    except OSError as error:
        raise PaperLogError(f"cannot be read ({error.strerror or type(error).__name__})") from None
    try:
        text = raw.decode("utf-8")
        data = json.loads(text, parse_constant=_finite_or_text, parse_float=_finite_or_text)
    except UnicodeDecodeError as error:
        raise PaperLogError(f"not UTF-8 (byte {error.start})") from None
    except RecursionError:
        raise PaperLogError(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as error:
        raise PaperLogError(f"not JSON ({error.msg} at line {error.lineno})") from None
    except ValueError as error:  # an integer of more digits than Python converts
        raise PaperLogError(f"not readable JSON ({error})") from None
    _checked_depth(data)
    if holds_surrogate_escape(text):  # strings (keys too) made valid in place: a file at the limit is held once
        data = valid_unicode_data(data)
    if not isinstance(data, dict) or not isinstance(data.get("games"), list):
        raise PaperLogError("games: expected a JSON object with a 'games' list")
    if len(data["games"]) > MAX_GAMES:
        raise PaperLogError(f"games: expected at most {MAX_GAMES:,} games in one file, got {len(data['games']):,}")
    if data.get("experiment_info") is not None and not isinstance(data["experiment_info"], dict):
        raise PaperLogError("experiment_info: expected a JSON object")
    return data


def _where(path: Path, info: dict[str, Any]) -> tuple[str, str, str, int | None]:
    """``(condition, director, builder, run)`` from the directory names, else ``experiment_info``."""
    models = info.get("models") if isinstance(info.get("models"), dict) else {}
    director = _model_dir_name(models.get("director", "?"))
    builder = _model_dir_name(models.get("builder", "?"))
    run = None
    oracle_n = (
        _optional_int(info, "num_oracle", "experiment_info.num_oracle", 0, MAX_ORACLE, 0)
        if info.get("use_oracle")
        else 0
    )
    condition = condition_name(oracle_n, bool(info.get("builder_tool_use")))
    matched = _DIR_RE.match(path.parent.parent.name) if len(path.parts) >= 3 else None
    if matched:
        condition = f"{matched.group(1)}_{matched.group(2)}"
        run = checked_int(int(matched.group(3)), "the run in the folder name", 1, MAX_RUNS)
        if not models and "_" in path.parent.name:
            director, builder = path.parent.name.split(",,", 1)[0].split("_", 1)
    return condition, director, builder, run


def _index_of(info: dict[str, Any], game: dict[str, Any]) -> int:
    """The structure index: ``experiment_info.structure_index``, else the last number of ``structure_id``, - 1."""
    if info.get("structure_index") is not None:
        return checked_int(info["structure_index"], "experiment_info.structure_index", 0, MAX_STRUCTURE_INDEX)
    digits = re.findall(r"\d{1,9}", str(game.get("structure_id", ""))[:200])
    if not digits:
        return 0
    return checked_int(int(digits[-1]) - 1, "the structure index of structure_id", 0, MAX_STRUCTURE_INDEX)


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return not (math.isfinite(a) and math.isfinite(b) and abs(a - b) <= TOLERANCE)
    return a != b


def _disagree(game: PaperGame, turn: int, name: str, logged: Any, replayed: Any) -> None:
    game.disagreements.append(
        {
            "game": game.structure_id,
            "path": game.path,
            "turn": turn,
            "field": name,
            "logged": logged,
            "replayed": replayed,
        }
    )


def _board_text(board: Structure) -> dict[str, Any]:
    data = board.to_dict(views=False)
    return {"structure": data["structure"], "spans": data["spans"]}


def _director_entries(responses: Any, archetypes: dict[str, Any]) -> list[dict[str, Any]]:
    entries = []
    for order, (seat, reply) in enumerate((responses or {}).items() if isinstance(responses, dict) else ()):
        reply = reply if isinstance(reply, dict) else {"public_message": str(reply)}
        entries.append(
            {
                "director": seat,
                "agent": f"director_{str(seat)[1:]}",
                "order": order,
                "archetype": archetypes.get(seat),
                "think": str(reply.get("internal_thinking") or ""),
                "message": str(reply.get("public_message") or ""),
                "reason": None,
                "intent": None,
                "calls": 0,
                "tokens": {"prompt": 0, "completion": 0},
                "cost": 0.0,
                "latency": 0.0,
                "raw": reply.get("raw_response"),
            }
        )
    return entries


def _replay_turn(game: PaperGame, replayer: Replayer, turn: dict[str, Any], number: int) -> dict[str, Any]:
    """One paper turn as our turn record, replayed; disagreements are added to ``game``."""
    _check_board_before(game, replayer, turn, number)
    raw_move = turn.get("move_attempted") or turn.get("builder_move_raw")
    clarify = "clarification" in turn and raw_move is None
    move, note = (
        (Move.noop(), None) if clarify or raw_move is None else move_from_paper(raw_move, game.protocol)
    )
    unreadable = None if move is not None else note
    step = replayer.step(move)
    legal = step.legal and unreadable is None
    _check_turn_outcome(game, turn, number, step, legal, clarify)
    offered = turn.get("oracle_moves")
    offered = [m for m in offered if isinstance(m, dict)] if isinstance(offered, list) else None
    candidates = [move_from_paper(m, game.protocol)[0] for m in offered or ()]
    move_dict = None if move is None or move.action == "noop" else move.to_dict()
    record = {
        "structure_before": _board_text(step.before),
        "director_order": list((turn.get("director_responses") or {}).keys())
        if isinstance(turn.get("director_responses"), dict)
        else [],
        "director_responses": _director_entries(
            turn.get("director_responses"), game.paper_game.get("archetypes", {})
        ),
        "oracle_moves": None if offered is None and not game.oracle_n else [m for m in offered or ()],
        "builder": _paper_builder_entry(turn, note if move is not None else None),
        "move_attempted": move_dict,
        "move": None if move_dict is None else str(move),
        "question": turn.get("clarification") if clarify else None,
        "legal": legal,
        "failed": not legal,
        "executed": legal and move is not None and move.action != "noop",
        "reason": unreadable or step.reason,
        "followed_oracle": bool(
            move is not None and move.action != "noop" and move in [c for c in candidates if c]
        ),
        "optimal": step.optimal and unreadable is None,
        "remove_prescribed": step.remove_prescribed,
        "remove_attempted": bool(move is not None and move.action == "remove"),
        "progress_data": dict(step.metrics),
        **_no_usage(),
        "paper_turn": turn,
        "turn_number": number,
    }
    if isinstance(turn.get("tool_calls"), list):
        record["tool_calls"] = turn["tool_calls"]
    record["replay_disagreements"] = [d for d in game.disagreements if d["turn"] == number]
    return record


def _no_usage() -> dict[str, Any]:
    """The usage fields of a turn record (``eval.logs``), fresh each time: a paper log records no calls,
    tokens, cost or latency."""
    return {"calls": 0, "tokens": {"prompt": 0, "completion": 0}, "cost": 0.0, "latency": 0.0}


def _check_board_before(game: PaperGame, replayer: Replayer, turn: dict[str, Any], number: int) -> None:
    """A disagreement when the logged board before the move is unreadable or not the replayed board."""
    if "structure_before" not in turn:
        return
    try:
        logged_before = board_from_paper(turn["structure_before"], turn.get("spans_before"))
    except ValueError as error:
        _disagree(game, number, "structure_before", f"unreadable: {error}", _board_text(replayer.board))
        return
    if logged_before != replayer.board:
        _disagree(
            game,
            number,
            "structure_before",
            turn["structure_before"],
            _board_text(replayer.board)["structure"],
        )


def _check_turn_outcome(
    game: PaperGame, turn: dict[str, Any], number: int, step: Step, legal: bool, clarify: bool
) -> None:
    """Disagreements when the log's ``failed_move`` or its tracker metrics after a legal move differ from the
    replay (``PAPER_METRICS``, within ``TOLERANCE``)."""
    logged_failed = turn.get("failed_move")
    if isinstance(logged_failed, bool) and not clarify and logged_failed == legal:
        _disagree(game, number, "failed_move", logged_failed, not legal)
    progress = turn.get("progress_data") if isinstance(turn.get("progress_data"), dict) else {}
    logged_metrics = progress.get("metrics") if isinstance(progress.get("metrics"), dict) else None
    if logged_metrics is not None and legal:
        for ours, theirs in PAPER_METRICS.items():
            if theirs in logged_metrics and _differs(logged_metrics[theirs], step.metrics[ours]):
                _disagree(game, number, theirs, logged_metrics[theirs], step.metrics[ours])


def _paper_builder_entry(turn: dict[str, Any], reason: str | None) -> dict[str, Any]:
    """The builder entry of a turn record for a paper turn: the confirmation it sent and why its move was
    read as it was; the paper logs no thinking, followed candidates or usage."""
    return {
        "think": "",
        "followed": [],
        "reason": reason,
        "sent": turn.get("builder_confirmation"),
        "action_id": None,
        **_no_usage(),
    }


def replay_paper_game(path: Path, info: dict[str, Any], data: dict[str, Any]) -> PaperGame:
    """One game dict of a paper log, replayed (see the module docstring)."""
    condition, director, builder, run = _where(path, info)
    protocol = get_protocol(str(info.get("protocol", "paper")), "experiment_info.protocol")
    target = board_from_paper(data.get("target_structure"), data.get("target_spans"))
    index = _index_of(info, data)
    structure_id = str(data.get("structure_id") or f"structure_{index + 1:03d}")
    complexity = data.get("complexity") if isinstance(data.get("complexity"), str) else None
    target = Structure(target.array, target.n, id=structure_id, complexity=complexity, _trusted=True)
    if run is None:
        run = _optional_int(info, "run", "experiment_info.run", 1, MAX_RUNS, 1)
    if data.get("turns") is not None and not isinstance(data["turns"], list):
        raise PaperLogError(f"turns: expected a list of turns, got {type(data['turns']).__name__}")
    if len(data.get("turns") or ()) > MAX_TURNS:
        raise PaperLogError(f"turns: expected at most {MAX_TURNS:,} turns, got {len(data['turns']):,}")
    archetypes = {seat: data.get(f"{seat} Archetype") for seat in SEATS if data.get(f"{seat} Archetype")}
    kept = {k: v for k, v in data.items() if k != "turns"}
    kept["archetypes"] = archetypes
    game = PaperGame(
        path=os.fspath(path),
        condition=condition,
        director=director,
        builder=builder,
        run=run,
        structure_index=index,
        structure_id=structure_id,
        target=target,
        protocol=protocol,
        max_turns=_optional_int(info, "max_turns", "experiment_info.max_turns", 1, MAX_TURNS, 20),
        oracle_n=_optional_int(info, "num_oracle", "experiment_info.num_oracle", 0, MAX_ORACLE, 0)
        if info.get("use_oracle")
        else 0,
        tools=bool(info.get("builder_tool_use")),
        paper_game=kept,
        experiment_info=info,
        start=_START_OF_CATEGORY.get(str(data.get("partialCompletionCategory", "empty")), "empty"),
    )
    turns = [t for t in data.get("turns") or () if isinstance(t, dict)]
    start = None
    if turns and "structure_before" in turns[0]:
        try:
            start = board_from_paper(turns[0]["structure_before"], turns[0].get("spans_before"))
        except ValueError:
            start = None
    replayer = Replayer(target, protocol, start)
    for position, turn in enumerate(turns):
        number = _optional_int(turn, "turn_number", f"turns[{position}].turn_number", 1, MAX_TURNS, position + 1)
        game.turns.append(_replay_turn(game, replayer, turn, number))
    game.final = dict(game.turns[-1]["progress_data"]) if game.turns else dict(replayer.step(None).metrics)
    exact = game.final.get("distance", 1) == 0
    game.completed = is_completed(protocol, game.final.get("progress", 0.0), exact)
    if isinstance(data.get("completed"), bool) and data["completed"] != game.completed:
        _disagree(game, 0, "completed", data["completed"], game.completed)
    return game


#: Errors that a game of a paper log may raise while it is read besides ``PaperLogError``: the engine's
#: ``ValueError`` for a board or a move it refuses. Anything else is a bug, reported as an internal error.
_GAME_ERRORS = (ValueError,)


def read_paper_file(path: str | os.PathLike) -> tuple[list[PaperGame], list[PaperLogFailure]]:
    """Every game of one paper log, replayed, and the file or the games that could not be read."""
    path = Path(path)
    try:
        data = load_paper_log(path)
    except PaperLogError as error:
        return [], [PaperLogFailure(os.fspath(path), str(error))]
    info = data.get("experiment_info") or {}
    games, failures = [], []
    for number, entry in enumerate(data["games"], 1):
        if not isinstance(entry, dict) or "target_structure" not in entry:  # the paper's record of a crash
            crash = entry.get("error") if isinstance(entry, dict) else entry
            log.warning("%s game %d: no target_structure (error: %.200r); skipped", path, number, crash)
            continue
        try:
            games.append(replay_paper_game(path, info, entry))
        except _GAME_ERRORS as error:
            failures.append(PaperLogFailure(os.fspath(path), str(error), number))
        except Exception as error:  # a bug must not stop the other files; it is logged and reported
            log.exception("%s: game %d", path, number)
            failures.append(PaperLogFailure(os.fspath(path), f"internal error: {type(error).__name__}", number))
    return games, failures


def read_paper_logs(path: str | os.PathLike) -> tuple[list[PaperGame], list[PaperLogFailure]]:
    """Every game of every paper log under ``path``, replayed, and what could not be read (file by file).

    ``ValueError`` when ``path`` holds no paper result files at all.
    """
    if not Path(path).exists():
        raise ValueError(f"path: {os.fspath(path)!r} does not exist")
    files = paper_log_files(path)
    if not files:
        raise ValueError(f"path: no paper result files (JSON with 'games') under {os.fspath(path)!r}")
    games, failures = [], []
    for file in files:
        read, failed = read_paper_file(file)
        games += read
        failures += failed
    return games, failures


def read_paper_games(path: str | os.PathLike) -> list[PaperGame]:
    """Every game of every paper log under ``path``, replayed; what cannot be read is skipped with a warning."""
    games, failures = read_paper_logs(path)
    for failure in failures:
        log.warning("%s; skipped", failure)
    return games


# ------------------------------------------------------------ as our logs and rows


def game_level(game: PaperGame) -> list[dict[str, Any]]:
    """The disagreements about the game as a whole (turn 0: ``completed``)."""
    return [d for d in game.disagreements if d["turn"] == 0]


def game_logs(games: list[PaperGame]) -> list[GameLog]:
    """The replayed paper games as our game records, in (run, structure) order."""
    out = []
    for game in sorted(games, key=lambda g: (g.run, g.structure_index)):
        marker = {
            "kind": "game",
            "event": "done",
            "final": game.final,
            "completed": game.completed,
            "replay_disagreements": game_level(game),
        }
        out.append(
            GameLog(game.run, game.structure_index, game.structure_id, "done", 1, 1, game.turns, marker)
        )
    return out


def group_config(games: list[PaperGame]) -> dict[str, Any]:
    """Run settings (``config.json`` keys) that one group of paper games shares."""
    first = games[0]
    return {
        "director_model": first.director,
        "builder_model": first.builder,
        "oracle_n": first.oracle_n,
        "builder_tools": first.tools,
        "protocol": first.protocol.name,
        "turns": first.max_turns,
        "runs": len({g.run for g in games}),
        "start": first.start,
        "condition": first.condition,
        "source": "paper logs",
    }


def group_games(games: list[PaperGame]) -> dict[tuple[str, str, str], list[PaperGame]]:
    """Paper games by (condition, director, builder), in sorted order."""
    groups: dict[tuple[str, str, str], list[PaperGame]] = {}
    for game in games:
        groups.setdefault(game.group, []).append(game)
    return dict(sorted(groups.items()))


@dataclass
class PaperImport:
    """What ``import_paper_files`` did: the run directories written, the games in them, what was skipped."""

    written: list[Path]
    games: int
    failures: list[PaperLogFailure]


def import_paper_logs(path: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """Write the paper logs under ``path`` as our run directories in ``out`` (one per group if several).

    What cannot be read is skipped with a warning; ``ValueError`` when nothing could be imported.
    """
    result = import_paper_files(path, out)
    for failure in result.failures:
        log.warning("%s; skipped", failure)
    if not result.written:
        raise ValueError(nothing_imported(path, result.failures))
    return result.written


def nothing_imported(path: str | os.PathLike, failures: list[PaperLogFailure]) -> str:
    """The error of an import that found no readable game."""
    files = len({f.path for f in failures})
    return f"import: nothing imported from {os.fspath(path)!r}: no readable game ({files} file(s) with errors)"


def import_paper_files(path: str | os.PathLike, out: str | os.PathLike) -> PaperImport:
    """``import_paper_logs`` file by file: the readable games are written, the rest listed in ``failures``.

    Writes nothing when no game is readable. ``ValueError`` when ``path`` holds no paper result files or
    a run directory to write already holds a run (checked before anything is written).
    """
    games, failures = read_paper_logs(path)
    groups = group_games(games)
    targets = {
        key: Path(out) if len(groups) == 1 else Path(out) / f"{key[0]}__{key[1]}_{key[2]}" for key in groups
    }
    for target_dir in targets.values():
        if (target_dir / CONFIG_NAME).exists():
            raise ValueError(f"out: {os.fspath(target_dir)!r} already holds a run; choose another -o")
    written = []
    for key, games in groups.items():
        target_dir = targets[key]
        target_dir.mkdir(parents=True, exist_ok=True)
        size = max(g.structure_index for g in games) + 1
        structures = [Structure.empty()] * size
        for game in games:
            structures[game.structure_index] = game.target
        save_structures(structures, target_dir / "structures.json")
        config = group_config(games)
        config.update(
            dataset=os.path.abspath(target_dir / "structures.json"),
            created=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        )
        (target_dir / CONFIG_NAME).write_text(
            json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
        for run in sorted({g.run for g in games}):
            writer = RunLog(target_dir, run)
            try:
                for game in sorted((g for g in games if g.run == run), key=lambda g: g.structure_index):
                    writer.game_event(
                        "start",
                        game.structure_index,
                        game.structure_id,
                        1,
                        0,
                        protocol=game.protocol.name,
                        paper_game=game.paper_game,
                        experiment_info=game.experiment_info,
                    )
                    for record in game.turns:
                        writer.turn(game.structure_index, game.structure_id, 1, record["turn_number"], record)
                    writer.game_event(
                        "done",
                        game.structure_index,
                        game.structure_id,
                        1,
                        len(game.turns),
                        final=game.final,
                        completed=game.completed,
                        replay_disagreements=game_level(game),
                    )
            finally:
                writer.close()
        written.append(target_dir)
    return PaperImport(written, sum(len(g) for g in groups.values()), failures)


# ------------------------------------------------------------------------ export


def _flat(board: Structure) -> tuple[dict[str, list[str]], dict[str, list[list[str]]]]:
    data = board.to_dict(views=False)
    return data["structure"], data["spans"]


def _tracker_metrics(board: Structure, target: Structure, scores: dict[str, float]) -> dict[str, Any]:
    """The paper tracker's metric record (section 4 of the paper notes) for ``board``."""
    n = board.n
    sym = union_sizes = correct = 0
    for i in range(n):
        for j in range(n):
            cur, tgt = board.stack(i, j), target.stack(i, j)
            sym += len(set(cur) ^ set(tgt))
            union_sizes += len(set(cur)) + len(set(tgt))
            correct += sum(1 for k, code in enumerate(cur) if k < len(tgt) and tgt[k] == code)
    return {
        "iou_score": scores["iou"],
        "distance_score": 1.0 - sym / union_sizes if union_sizes else 1.0,
        "completion_percentage": scores["completion"],
        "position_accuracy": scores["position_accuracy"],
        "overall_progress": scores["progress"],
        "blocks_placed_correctly": correct,
        "blocks_total_target": target.num_entries,
        "blocks_total_current": board.num_entries,
    }


def _placement(move: Move, before: Structure, after: Structure, target: Structure) -> dict[str, bool]:
    i, j = move.position
    layer = move.layer if move.layer is not None else 0
    target_stack = target.stack(i, j)
    if move.action == "place":
        right = layer < len(target_stack) and target_stack[layer] == move.block
    else:
        removed = before.stack(i, j)[layer] if layer < len(before.stack(i, j)) else None
        right = layer >= len(target_stack) or target_stack[layer] != removed
    on_wall = any((i, j) in seat_cells(seat, before.n) for seat in SEATS)
    overall = all(
        all(
            k < len(target.stack(a, b)) and target.stack(a, b)[k] == code
            for k, code in enumerate(after.stack(a, b))
        )
        for a in range(after.n)
        for b in range(after.n)
    )
    return {
        "correct_structure_placement": right,
        "correct_side_placement": right and on_wall,
        "overall_structure_correctness": overall,
    }


def _paper_move(move: Move, before: Structure) -> dict[str, Any]:
    """Our move as the paper logs it: a remove names the block it takes, and its partner if large."""
    data = move.to_dict()
    i, j = move.position
    layer = move.layer if move.layer is not None else len(before.stack(i, j))
    data["layer"] = layer
    if move.action == "remove":
        top = len(before.stack(i, j)) - 1
        if top >= 0:
            data["layer"] = top if move.layer is None else move.layer
            data["block"] = before.stack(i, j)[top]
            partner = before.partner(i, j, top)
            data["span_to"] = None if partner is None else format_position(partner)
    return data


@dataclass
class _Export:
    """One game under export: our engine replaying its moves, and what the paper's log carries from turn to
    turn (the conversation so far, the overall progress after each legal move, each seat's archetype)."""

    target: Structure
    protocol: Protocol
    created: str
    replayer: Replayer
    history: list[str] = field(default_factory=list)
    progress: list[float] = field(default_factory=list)
    archetypes: dict[str, str] = field(default_factory=dict)

    @property
    def last_progress(self) -> float:
        """The overall progress after the last legal move (0 before any)."""
        return self.progress[-1] if self.progress else 0.0


def _export_game(game, config: dict[str, Any], target: Structure, protocol: Protocol, created: str) -> dict:
    """One of our games (a ``GameLog``) as a game of the paper's log: every turn replayed from the game's
    first board with our engine, so the boards, metrics and tracker records are the engine's."""
    first = game.turns[0]["structure_before"] if game.turns else None
    start = Structure.from_dict(first, n=target.n, height=target.height) if first else None
    export = _Export(target, protocol, created, Replayer(target, protocol, start))
    turns_out = [_export_turn(export, record) for record in game.turns]
    return _export_game_record(game, config, export, turns_out)


def _export_turn(export: _Export, record: dict[str, Any]) -> dict[str, Any]:
    """One turn record of ours as the paper's turn: the directors' replies, then the builder's move (or its
    clarification, or an unreadable reply), replayed."""
    number = int(record["turn_number"])
    structure, spans = _flat(export.replayer.board)
    turn: dict[str, Any] = {
        "turn_number": number,
        "timestamp": export.created,
        "structure_before": structure,
        "spans_before": spans,
    }
    responses = _export_directors(export, record)
    turn["director_responses"] = responses
    move = None if record.get("move_attempted") is None else Move.from_dict(record["move_attempted"])
    if move is not None and move.action == "noop":
        move = None
    step = export.replayer.step(move)
    if move is None and not record.get("legal", True):  # an unreadable reply: a failed turn, no move
        unreadable = {"action": "unreadable", "text": (record.get("builder") or {}).get("sent")}
        turn |= {
            "builder_confirmation": "",
            "builder_move_raw": unreadable,
            "move_attempted": unreadable,
            "move_executed": False,
            "failed_move": True,
            "progress_data": {"error": record.get("reason")},
        }
        export.history.append(f"Builder: FAILED - {record.get('reason')}")
    elif move is None:
        turn["clarification"] = record.get("question") or ""
        turn["move_executed"] = False
        export.history.append(f"Builder: {turn['clarification']}")
    else:
        turn |= _export_move(export, record, move, step, responses)
    achieved = is_completed(export.protocol, step.metrics["progress"], step.metrics["distance"] == 0)
    turn["target_achieved"] = achieved
    if not achieved:
        turn["conversation_snapshot"] = list(export.history[-50:])
    if record.get("tool_calls"):
        turn["tool_calls"] = record["tool_calls"]
    return turn


def _export_directors(export: _Export, record: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The directors' replies of a turn as the paper's ``director_responses``; each seat's first archetype
    and every message are kept for the game record and the conversation."""
    responses = {}
    for entry in record.get("director_responses") or ():
        seat = entry["director"]
        export.archetypes.setdefault(seat, entry.get("archetype"))
        responses[seat] = {
            "internal_thinking": entry.get("think", ""),
            "public_message": entry.get("message", ""),
            "raw_response": entry.get("raw") or entry.get("message", ""),
        }
        export.history.append(f"{seat}: {entry.get('message', '')}")
    return responses


def _export_move(
    export: _Export, record: dict[str, Any], move: Move, step: Step, responses: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """The paper's fields of a turn whose builder made a move: the move as logged, whether it ran, and after
    a legal one the tracker record (``progress_data``) and the placement flags."""
    paper_move = _paper_move(move, step.before)
    confirmation = (record.get("builder") or {}).get("think") or str(move)
    fields: dict[str, Any] = {"builder_confirmation": confirmation, "builder_move_raw": dict(paper_move)}
    offered = record.get("oracle_moves")
    if offered:
        fields["oracle_moves"] = offered
        fields["builder_followed_oracle"] = bool(record.get("followed_oracle"))
    fields["move_attempted"] = paper_move
    fields["move_executed"] = step.legal
    fields["failed_move"] = not step.legal
    fields["director_discussion_full"] = "\n".join(
        f"{s}: {r['public_message']}" for s, r in responses.items()
    )
    if not step.legal:
        fields["progress_data"] = {"error": step.reason}
        export.history.append(f"Builder: FAILED - {step.reason}")
        return fields
    tracker = _tracker_metrics(step.after, export.target, step.metrics)
    fields["progress_data"] = {
        "turn_number": int(record["turn_number"]),
        "move": paper_move,
        "metrics": tracker,
        "progress_delta": tracker["overall_progress"] - export.last_progress if export.progress else 0.0,
        "structure_snapshot": _flat(step.after)[0],
    }
    export.progress.append(tracker["overall_progress"])
    fields.update(_placement(move, step.before, step.after, export.target))
    export.history.append(f"Builder: {confirmation}")
    return fields


def _export_game_record(
    game, config: dict[str, Any], export: _Export, turns_out: list[dict[str, Any]]
) -> dict[str, Any]:
    """The paper's game record around the exported turns: the target, the final board, how the game
    stopped, the archetypes and the progress summary."""
    replayer, target = export.replayer, export.target
    final_structure, final_spans = _flat(replayer.board)
    final_progress = export.last_progress
    completed = is_completed(export.protocol, final_progress, replayer.board == target)
    target_dict = target.to_dict(views=True)
    return {
        "structure_id": game.structure_id,
        "structure_idx": 0,
        "complexity": target.complexity or target.tier,
        "target_structure": target_dict["structure"],
        "target_spans": target_dict["spans"],
        "target_director_views": target_dict["director_views"],
        "completed": bool(completed),
        "turns_taken": len(turns_out),
        "final_progress": final_progress,
        "final_structure": final_structure,
        "final_spans": final_spans,
        "stopping_reason": "target_achieved"
        if turns_out and turns_out[-1]["target_achieved"]
        else "max_turns_reached",
        "partialCompletion": True,
        "partialCompletionCategory": _START_CATEGORY.get(config.get("start", "empty"), "empty"),
        **{f"{seat} Archetype": export.archetypes.get(seat) for seat in SEATS},
        "progress_summary": _progress_summary(export, len(turns_out)),
        "turns": turns_out,
    }


def _progress_summary(export: _Export, turns: int) -> dict[str, Any]:
    """The paper tracker's ``progress_summary`` at the end of the game: the final scores and the trend of
    the last three progress changes."""
    deltas = [b - a for a, b in itertools.pairwise(export.progress)][-3:]
    trend = sum(deltas) / len(deltas) if deltas else 0.0
    board, scores = export.replayer.board, export.replayer.step(None).metrics
    return {
        "current_turn": turns,
        "overall_progress": export.last_progress,
        "completion_percentage": scores["completion"],
        "blocks_correct": _tracker_metrics(board, export.target, scores)["blocks_placed_correctly"],
        "blocks_total_needed": export.target.num_entries,
        "recent_trend": trend,
        "is_improving": trend > -0.05,
        "estimated_turns_remaining": None,
    }


def export_paper_logs(run_dir: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    """Write the run in ``run_dir`` (a ``craft-env run`` output directory) in the paper's format."""
    root = Path(run_dir)
    config_path = root / CONFIG_NAME
    if not config_path.exists():
        raise ValueError(f"export: {os.fspath(run_dir)!r} holds no run ({CONFIG_NAME} missing)")
    config = json.loads(config_path.read_text(encoding="utf-8"))
    seats = tuple(config.get("seats") or SEATS)
    if seats != SEATS:
        raise ValueError(
            f"export: the paper's logs seat {', '.join(SEATS)} only; the run in {os.fspath(run_dir)!r} "
            f"seated {', '.join(seats)}"
        )
    protocol = get_protocol(config.get("protocol", "craft"), "config.protocol")
    structures = load_dataset(config.get("dataset") or "craft")
    oracle_n = int(config.get("oracle_n") or 0)
    tools = bool(config.get("builder_tools"))
    created = str(config.get("created", ""))[:19].replace("T", " ")
    written = []
    for log_path in sorted(root.glob(f"run_*/{LOG_NAME}")):
        for (run, index), game in sorted(read_games(log_path).items()):
            if game.status != "done":
                continue
            target = structures[index]
            folder = (
                Path(out)
                / f"{condition_name(oracle_n, tools)}_run{run}"
                / f"{_model_dir_name(config.get('director_model', '?'))}_"
                f"{_model_dir_name(config.get('builder_model', '?'))}"
            )
            folder.mkdir(parents=True, exist_ok=True)
            info = {
                "timestamp": time.strftime("%Y%m%d_%H%M%S"),
                "dataset_path": config.get("dataset"),
                "structure_index": index,
                "max_turns": config.get("turns", 20),
                "models": {"director": config.get("director_model"), "builder": config.get("builder_model")},
                "use_oracle": bool(oracle_n),
                "num_oracle": oracle_n or 5,
                "builder_tool_use": tools,
                "use_common_ground": False,
                "run": run,
                "max_tokens": config.get("max_tokens"),
                "partial_completion": True,
                "protocol": protocol.name,
            }
            exported = _export_game(game, config, target, protocol, created)
            path = folder / f"craft_{file_stem(game.structure_id, index)}_{run}.json"
            path.write_text(
                json.dumps({"experiment_info": info, "games": [exported]}, indent=2) + "\n", encoding="utf-8"
            )
            written.append(path)
    return written
