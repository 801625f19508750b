"""Builder moves in text: the canonical line, a forgiving parser, and builder replies.

The canonical line is ``str(Move)``: ``place gl (1,1)-(1,2) L0``,
``place gs (0,0) L1``, ``remove (0,2) L2``, ``noop``. Language models rarely
write exactly that, so ``parse_move`` also reads the paper's JSON move
format (inside code fences or prose), upper case, spelled-out blocks
("large green"), ``[1,1]`` / ``1,1`` / ``row 1 col 2`` coordinates, "layer 0"
and the like. Anything it cannot read is a ``ParseError`` whose ``reason`` a
model can be re-prompted with; it never raises anything else on text.

``parse_builder_reply`` reads a whole builder turn: a move (from a
``<move>`` tag, a ``MOVE:`` line, a JSON object or a bare move phrase), or
else a clarifying question (the move is then the no-op), plus which
director the builder says it followed.
"""

from __future__ import annotations

import ast
import json
import math
import re
import warnings
from collections import deque
from functools import lru_cache
from itertools import islice
from dataclasses import dataclass

from craft_env.core.encoding import BLOCK_CODES, COLOURS, DEFAULT_HEIGHT, DEFAULT_N, check_size
from craft_env.core.moves import Move
from craft_env.text._vocab import bound_text, find_code, find_colour, find_size, negated, strip_fences
from craft_env.text.errors import ParseError
from craft_env.text.paper_grammar import read_paper_reply

__all__ = ["ParsedBuilderReply", "format_move", "parse_builder_reply", "parse_move", "find_positions"]

NO_MOVE_FOUND = (
    "no move found: expected e.g. 'place gs (0,0) L0', 'place gl (1,1)-(1,2) L0', 'remove (0,2) L2' or 'noop'"
)
NO_MOVE_OR_QUESTION = "no move or question found"

# Bounds that keep every parse linear and fast on adversarial input.
_MAX_HITS = 64
_MAX_CLAUSE = 400
_MAX_JSON_SPANS = 32
_MAX_JSON_LENGTH = 20_000

_ACTION_RE = re.compile(
    r"\b(?:(?P<place>place|placing|placed|put|putting|add|adding|set|drop|build|lay)"
    r"|(?P<remove>remove|removing|delete|deleting|take|taking|get\s+rid\s+of|getting\s+rid\s+of"
    r"|pick\s+up|picking\s+up)"
    r"|(?P<noop>no[\s_-]?op|pass|passing|clarify|clarifying|skip|skipping|do\s+nothing|no\s+move|wait"
    r"|waiting))\b"
)
_COMMIT_WINDOW = 40
_COMMIT_RE = re.compile(
    r"\b(?:i\s*(?:'ll|\u2019ll|will|shall|am\s+going\s+to|'m\s+going\s+to|choose\s+to|decide\s+to|should)"
    r"|let\s+me|let's|going\s+to|my\s+move|so|therefore|thus|finally|final|now|instead|decision)\b[^.!?;\n]*$"
)
_SENTENCE_END_RE = re.compile(r"[.!?;\n](?!\d)")

_POSITION_RE = re.compile(
    r"[(\[{<]\s*(?:[ij]\s*[=:]\s*)?(-?\d{1,6})\s*[,;]\s*(?:[ij]\s*[=:]\s*)?(-?\d{1,6})\s*[)\]}>]"
    r"|\brow\s*(?:[=:#]\s*)?(-?\d{1,6})\s*(?:,\s*)?(?:and\s+|&\s*)?(?:col|column)\s*(?:[=:#]\s*)?"
    r"(-?\d{1,6})\b"
    r"|\b(?:col|column)\s*(?:[=:#]\s*)?(-?\d{1,6})\s*(?:,\s*)?(?:and\s+|&\s*)?row\s*(?:[=:#]\s*)?"
    r"(-?\d{1,6})\b"
    r"|(?<![\w.])(\d{1,6})\s*,\s*(\d{1,6})(?!\w|\.\d)",
    re.IGNORECASE,
)
_LAYER_RE = re.compile(
    r"\b(?:l|layer|level|lvl|z)\s*(?:[=:#]\s*)?(\d{1,6})\b"
    r"|\b(?:on\s+)?(?:the\s+)?(?:ground|bottom)\s+(?:layer|level|floor)\b|\bon\s+the\s+ground\b",
    re.IGNORECASE,
)
_DIRECTION_RE = re.compile(
    r"\b(?:to|toward|towards|extending|going|reaching|spanning|pointing)\s+(?:the\s+)?"
    r"(right|left|east|west|north|south|far|back|near|front)\b"
)
_DIRECTION_STEPS = {
    "right": (0, 1), "east": (0, 1), "left": (0, -1), "west": (0, -1),
    "far": (-1, 0), "back": (-1, 0), "north": (-1, 0),
    "near": (1, 0), "front": (1, 0), "south": (1, 0),
}
_SPAN_GAP_RE = re.compile(
    r"span|-|\u2013|\u2014|\u2192|\bto\b|\band\b|&|\+|/|\bthrough\b|\bthru\b|\bacross\b|\bwith\b|\bover\b"
)
_COLOURS_HINT = "blocks are green, blue, red, yellow or orange"
_NOOP_WORDS = {
    "noop", "no-op", "no_op", "no op", "pass", "clarify", "wait", "skip", "none", "nothing", "question",
}
_PLACE_WORDS = {"place", "put", "add", "build", "set", "drop"}
_REMOVE_WORDS = {"remove", "delete", "take", "take off", "take_off", "pick up"}


def format_move(move: Move) -> str:
    """The canonical one-line form of ``move`` (the same as ``str(move)``)."""
    return str(move)


# ------------------------------------------------------------------ positions


def find_positions(text: str) -> list[tuple[tuple[int, int], int, int]]:
    """Every cell written in ``text`` as ``((i, j), start, end)``, in order.

    Reads ``(1,2)``, ``( 1 , 2 )``, ``[1,2]``, ``(i=1, j=2)``, ``1,2``,
    ``row 1 col 2`` and ``column 2 row 1``; bounds are not checked here.
    """
    out = []
    for match in _POSITION_RE.finditer(text):
        groups = match.groups()
        if groups[0] is not None:
            cell = (int(groups[0]), int(groups[1]))
        elif groups[2] is not None:
            cell = (int(groups[2]), int(groups[3]))
        elif groups[4] is not None:
            cell = (int(groups[5]), int(groups[4]))
        else:
            cell = (int(groups[6]), int(groups[7]))
        out.append((cell, match.start(), match.end()))
    return out


def _check_cell(cell: tuple[int, int], n: int, raw: str) -> tuple[int, int]:
    if not (0 <= cell[0] < n and 0 <= cell[1] < n):
        raise ParseError(
            f"position ({cell[0]},{cell[1]}) is outside the {n}x{n} board (rows and columns 0..{n - 1})", raw
        )
    return cell


def _check_layer(layer: int | None, height: int, raw: str) -> int | None:
    if layer is not None and not 0 <= layer < height:
        raise ParseError(f"layer {layer} is outside the board (layers 0..{height - 1}, 0 is the ground)", raw)
    return layer


# ------------------------------------------------------------------ prose


class _Miss(Exception):
    """A clause that did not parse; ``score`` ranks how informative ``reason`` is."""

    def __init__(self, reason: str, score: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.score = score


def _take_layer(clause: str) -> tuple[int | None, str]:
    """The first layer the clause names, and the clause with layer phrases blanked out."""
    layer = None
    for match in _LAYER_RE.finditer(clause):
        if layer is None:
            layer = int(match.group(1)) if match.group(1) is not None else 0
    blanked = _LAYER_RE.sub(lambda m: " " * (m.end() - m.start()), clause)
    return layer, blanked


def _parse_clause(kind: str, clause: str, n: int, height: int, raw: str) -> Move:
    """Read one move of ``kind`` ("place"/"remove") from the lower-case text after its verb."""
    try:
        return _read_clause(kind, clause, n, height, raw)
    except ParseError as error:  # a cell or layer off the board: the most specific miss
        raise _Miss(error.reason, 4) from None


def _read_clause(kind: str, clause: str, n: int, height: int, raw: str) -> Move:
    layer, rest = _take_layer(clause)
    positions = find_positions(rest)
    if kind == "remove":
        if not positions:
            raise _Miss("a remove needs the cell whose top block goes, e.g. 'remove (0,2) L2'", 1)
        cell = _check_cell(positions[0][0], n, raw)
        _check_layer(layer, height, raw)
        code = find_code(rest)
        return Move.remove(cell, layer, code.group(0) if code else None)
    colour, _, unknown_colour = find_colour(rest)
    large, unknown_size = find_size(rest)
    if not positions:
        if colour is not None or unknown_colour:
            raise _Miss("a place move needs a cell, e.g. 'place gs (0,0) L0'", 1)
        raise _Miss(NO_MOVE_FOUND, 0)
    if colour is None:
        if unknown_colour:
            raise _Miss(f"unknown colour {unknown_colour!r}: {_COLOURS_HINT}", 3)
        code = re.search(r"\b([a-z])([sl])\b", rest[: positions[0][1]])
        if code and code.group(0) not in ("is", "as", "us"):
            raise _Miss(f"unknown block code {code.group(0)!r}: expected one of {', '.join(BLOCK_CODES)}", 3)
        raise _Miss("a place move needs a block colour (green, blue, red, yellow or orange)", 2)
    if large is None and unknown_size:
        raise _Miss(f"unknown size {unknown_size!r}: blocks are small (one cell) or large (two cells)", 3)
    first = _check_cell(positions[0][0], n, raw)
    spans = len(positions) >= 2 and _is_span_gap(rest[positions[0][2]: positions[1][1]])
    if large is None:
        large = spans
    layer = _check_layer(layer, height, raw)
    code = COLOURS[colour] + ("l" if large else "s")
    if not large:
        if spans:
            raise _Miss(f"a small block ({code}) covers one cell; use a large block for two cells", 3)
        return Move.place(code, first, None, layer)
    if len(positions) >= 2:
        partner = _check_cell(positions[1][0], n, raw)
    else:
        direction = _DIRECTION_RE.search(rest)
        if direction is None:
            raise _Miss(
                f"a large block ({code}) needs both cells, e.g. 'place {code} (1,1)-(1,2) L0'", 3
            )
        di, dj = _DIRECTION_STEPS[direction.group(1)]
        partner = _check_cell((first[0] + di, first[1] + dj), n, raw)
    if abs(partner[0] - first[0]) + abs(partner[1] - first[1]) != 1:
        raise _Miss(
            f"the two cells of a large block must be orthogonal neighbours; "
            f"({first[0]},{first[1]}) and ({partner[0]},{partner[1]}) are not",
            3,
        )
    return Move.place(code, first, partner, layer)


def _is_span_gap(gap: str) -> bool:
    """Whether the text between two cells joins them into one large block ("-", "to", "spanning"...)."""
    gap = gap.strip()
    return gap in ("", ",") or (len(gap) <= 30 and _SPAN_GAP_RE.search(gap) is not None)


def _clause_end(lowered: str, start: int, stop: int) -> int:
    end = _SENTENCE_END_RE.search(lowered, start, min(stop, start + _MAX_CLAUSE))
    return end.start() if end else min(stop, start + _MAX_CLAUSE)


def _move_from_prose(lowered: str, n: int, height: int, raw: str) -> Move:
    """The move a piece of prose settles on.

    Every verb ("place", "remove", "take ... off", "pass"...) opens a
    clause that runs to the end of its sentence or the next verb. When
    several clauses read as moves, the writer's commitment wins ("..., so
    I'll place ..."), else the last one: models reason first and conclude
    last. A pass, or a refused move (``negated``), counts only when no
    clause reads as a move.
    """
    hits = list(deque(_ACTION_RE.finditer(lowered), maxlen=_MAX_HITS))
    best: _Miss | None = None
    saw_noop = False
    found: list[tuple[bool, Move]] = []
    for index, hit in enumerate(hits):
        kind = hit.lastgroup
        # The words before the verb in the same sentence ("At (0,0), place a small green block").
        floor = max(hits[index - 1].end() if index else 0, hit.start() - _MAX_CLAUSE)
        before = _SENTENCE_END_RE.split(lowered[floor: hit.start()])[-1]
        refused = negated(before)
        if kind == "noop" or refused:  # a refused move ("I will not place ...") is a pass; "I won't wait" is not
            saw_noop |= kind != "noop" or not refused
            continue
        stop = hits[index + 1].start() if index + 1 < len(hits) else len(lowered)
        clause = lowered[hit.end(): _clause_end(lowered, hit.end(), stop)]
        # The words before the verb matter only when they hold a cell, which is written with digits.
        with_before = any(c.isdigit() for c in before)
        for attempt in (clause, before + " " + clause) if with_before else (clause,):
            try:
                move = _parse_clause(kind, attempt, n, height, raw)
            except _Miss as miss:
                if best is None or miss.score > best.score:
                    best = miss
                continue
            found.append((_COMMIT_RE.search(before[-_COMMIT_WINDOW:]) is not None, move))
            break
    if found:
        committed = [move for commits, move in found if commits]
        return (committed or [move for _, move in found])[-1]
    if saw_noop:
        return Move.noop()
    if not hits:
        # No verb: read "gs (0,0) L1" or "large green (1,1)-(1,2)" as a placement.
        start = 0
        for _ in range(_MAX_HITS):
            if start >= len(lowered):
                break
            end = _clause_end(lowered, start, len(lowered))
            try:
                return _parse_clause("place", lowered[start:end], n, height, raw)
            except _Miss as miss:
                if miss.score > 1 and (best is None or miss.score > best.score):
                    best = miss
            start = end + 1
    if best is None or best.score == 0:
        raise ParseError(NO_MOVE_FOUND, raw)
    raise ParseError(best.reason, raw)


# ------------------------------------------------------------------ JSON


def _json_objects(text: str):
    """Dicts written in ``text`` as JSON (or Python literals), outermost first, bounded in count and size."""
    if "{" not in text:
        return
    spans: list[tuple[int, int]] = []
    stack: list[int] = []
    for match in re.finditer(r"[{}]", text):
        if match.group() == "{":
            if len(stack) < 64:
                stack.append(match.start())
        elif stack:
            spans.append((stack.pop(), match.end()))
            if len(spans) >= 4 * _MAX_JSON_SPANS:
                break
    spans.sort()
    tried = 0
    for start, end in spans:
        if end - start > _MAX_JSON_LENGTH:
            continue
        tried += 1
        if tried > _MAX_JSON_SPANS:
            return
        chunk = text[start:end]
        value = None
        try:
            value = json.loads(chunk)
        except Exception:  # noqa: BLE001 - any failure just means "not JSON"
            try:
                with warnings.catch_warnings():  # "1e999x" would print a SyntaxWarning per reply
                    warnings.simplefilter("ignore")
                    value = ast.literal_eval(chunk)
            except Exception:  # noqa: BLE001
                value = None
        if isinstance(value, dict):
            yield value


def _norm_keys(data: dict) -> dict:
    return {str(k).strip().lower().replace(" ", "_").replace("-", "_"): v for k, v in data.items()}


def _first(keys: dict, *names: str):
    for name in names:
        if name in keys and keys[name] is not None:
            return keys[name]
    return None


def _is_move_mapping(keys: dict) -> bool:
    inner = keys.get("move")
    if isinstance(inner, dict):
        return _is_move_mapping(_norm_keys(inner))
    if isinstance(inner, str):
        return True
    return any(k in keys for k in ("action", "move_type", "block", "position"))


def _cell_value(value: object, field: str, raw: str) -> tuple[int, int] | None:
    if value is None:
        return None
    if isinstance(value, str):
        found = find_positions(value)
        if not found:
            raise ParseError(f"{field}: bad position {value!r}; expected a string like '(1,2)'", raw)
        return found[0][0]
    if isinstance(value, dict):
        keys = _norm_keys(value)
        i, j = _first(keys, "row", "i", "r"), _first(keys, "col", "column", "j", "c")
        value = [i, j]
    if isinstance(value, (list, tuple)) and len(value) == 2:
        i, j = (_whole_number(x) for x in value)
        if i is not None and j is not None:
            return i, j
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    raise ParseError(f"{field}: bad position {shown}; expected whole numbers like '(1,2)'", raw)


def _whole_number(value: object) -> int | None:
    """``value`` as an int when it is exactly one (``2``, ``2.0``, ``"2"``), else ``None``: -0.5 is no 0."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return int(value) if math.isfinite(value) and value.is_integer() else None
    if isinstance(value, str) and re.fullmatch(r"\s*-?\d{1,6}\s*", value):
        return int(value)
    return None


def _layer_value(value: object, raw: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        if value.strip().lower() in ("", "none", "null", "auto", "any", "?"):
            return None
        match = re.search(r"\d{1,6}", value)
        if match:
            return int(match.group())
    raise ParseError(f"layer: expected a layer number, got {value!r}", raw)


def _block_from_fields(keys: dict, raw: str) -> str | None:
    block = _first(keys, "block", "block_type", "block_code", "code", "piece")
    if isinstance(block, str) and block.strip().lower() in BLOCK_CODES:
        return block.strip().lower()
    words = " ".join(
        str(v) for v in (block, _first(keys, "color", "colour"), _first(keys, "size")) if v is not None
    ).lower()
    words = re.sub(r"\b2\b", "large", re.sub(r"\b1\b", "small", words))
    words = re.sub(r"\bl\b", "large", re.sub(r"\bs\b", "small", words))
    if not words.strip():
        return None
    colour, _, unknown = find_colour(words)
    large, unknown_size = find_size(words)
    if colour is None:
        what = f"unknown colour {unknown!r}" if unknown else f"unknown block {words.strip()!r}"
        raise ParseError(f"{what}: expected one of {', '.join(BLOCK_CODES)}", raw)
    if large is None:
        if unknown_size:
            raise ParseError(f"unknown size {unknown_size!r}: blocks are small or large", raw)
        large = _first(keys, "span_to", "spanto", "span", "partner") is not None
    return COLOURS[colour] + ("l" if large else "s")


def _move_from_mapping(data: dict, n: int, height: int, raw: str, depth: int = 0) -> Move:
    """Read the paper's move dict (and common variants of its keys) into a ``Move``."""
    keys = _norm_keys(data)
    inner = keys.get("move")
    if isinstance(inner, dict) and depth < 4:
        return _move_from_mapping(inner, n, height, raw, depth + 1)
    action = _first(keys, "action", "move_type", "type")
    if action is None and isinstance(inner, str):
        return _move_from_text(inner, n, height, raw)
    if action is None and "position" in keys:
        action = "place" if _first(keys, "block", "color", "colour") is not None else None
    if not isinstance(action, str):
        raise ParseError(f"action: expected 'place', 'remove' or 'noop', got {action!r}", raw)
    name = re.sub(r"[\s_-]+", " ", action.strip().lower())
    if name in _NOOP_WORDS:
        return Move.noop()
    if name not in _PLACE_WORDS and name not in _REMOVE_WORDS:
        if " " in name or "(" in name:
            return _move_from_text(action, n, height, raw)
        raise ParseError(f"action: expected 'place', 'remove' or 'noop', got {action!r}", raw)
    layer = _check_layer(_layer_value(_first(keys, "layer", "level", "z", "l"), raw), height, raw)
    position = _cell_value(_first(keys, "position", "pos", "cell", "at", "from", "start", "location"),
                           "position", raw)
    if position is None:
        raise ParseError("position: a move needs a cell, e.g. \"position\": \"(1,2)\"", raw)
    _check_cell(position, n, raw)
    if name in _REMOVE_WORDS:
        block = _first(keys, "block", "block_type", "code")
        block = block.strip().lower() if isinstance(block, str) else None
        block = block if block in BLOCK_CODES else None
        return Move.remove(position, layer, block)
    code = _block_from_fields(keys, raw)
    if code is None:
        raise ParseError("block: a place move needs a block code, e.g. \"block\": \"gs\"", raw)
    partner = _cell_value(_first(keys, "span_to", "spanto", "span", "partner", "to", "end", "position2"),
                          "span_to", raw)
    written = _first(keys, "position", "pos", "cell", "at", "from", "start", "location")
    if partner is None and isinstance(written, str) and len(find_positions(written)) >= 2:
        partner = find_positions(written)[1][0]
    if partner == position and code.endswith("s"):
        partner = None
    if partner is not None:
        _check_cell(partner, n, raw)
    try:
        return Move.place(code, position, partner, layer)
    except ValueError as error:
        raise ParseError(str(error), raw) from None


def _json_move(text: str, n: int, height: int, raw: str) -> tuple[Move, dict] | None:
    """The first JSON object in ``text`` that describes a move, with its normalised keys."""
    for value in _json_objects(text):
        keys = _norm_keys(value)
        if _is_move_mapping(keys):
            return _move_from_mapping(value, n, height, raw), keys
    return None


# ------------------------------------------------------------------ parse_move


def _move_from_text(text: str, n: int, height: int, raw: str) -> Move:
    body = strip_fences(text)
    found = _json_move(body, n, height, raw)
    if found is not None:
        return found[0]
    return _move_from_prose(body.lower(), n, height, raw)


def parse_move(text: str, n: int = DEFAULT_N, height: int = DEFAULT_HEIGHT) -> Move:
    """Read one builder move from ``text`` on an ``n x n`` board of ``height`` layers.

    Accepts the canonical line, the paper's JSON move (also inside code
    fences or prose) and free phrasings. When several moves are written, a
    JSON object wins, then the phrase the writer commits to ("so I'll place
    ..."), then the last one. A missing layer gives ``layer=None``; a
    remove carries a block code only when one is written
    (``remove os (0,2) L0``). Raises ``ParseError``
    (never another exception) for text that names no move, a colour or size
    the game lacks, or a cell or layer off the board.
    """
    check_size(n, height)
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}", text)
    return _move_from_text(bound_text(text), n, height, text)


# ------------------------------------------------------------------ builder replies


@dataclass(frozen=True)
class ParsedBuilderReply:
    """A parsed builder turn.

    ``move`` is the move to play (the no-op when the builder asks a
    question instead); ``question`` the clarifying question, if any;
    ``followed`` the (first) director the builder says it followed
    ("D0".."D3") and ``followed_seats`` every one it names, in order;
    ``raw`` the text as received; ``note`` what a tolerant reading ignored
    (``text.paper_grammar``).
    """

    move: Move | None
    question: str | None
    followed: str | None
    raw: str
    note: str | None = None
    followed_seats: tuple[str, ...] = ()


def _tag(name: str) -> re.Pattern:
    return re.compile(rf"<\s*{name}\s*>(.*?)(?:<\s*/\s*{name}\s*>|\Z)", re.IGNORECASE | re.DOTALL)


def _field(names: str) -> re.Pattern:
    return re.compile(
        rf"^[ \t>*_#-]*(?:{names})[ \t*_]*[:=][ \t*_]*(.*)$", re.IGNORECASE | re.MULTILINE
    )


_MOVE_TAG = _tag("(?:move|action)")
_MOVE_LINE = _field(r"(?:final[ \t]+)?(?:move|action|builder[ \t]+move)")
_QUESTION_TAG = _tag("question")
_QUESTION_LINE = _field(r"(?:clarifying[ \t]+)?question")
_FOLLOWED_TAG = _tag("follow(?:ed|ing|s)?")
_FOLLOWED_LINE = _field(r"follow(?:ed|ing|s)?(?:[ \t_]+director)?|director[ \t_]+followed")
_SEAT_RE = re.compile(r"\b(?:d|director[\s_]*|dir[\s_]*)([0-3])\b", re.IGNORECASE)
_SEAT_WORDS = (
    (re.compile(r"\bleft\b"), "D1"), (re.compile(r"\b(?:far|back|across)\b"), "D2"),
    (re.compile(r"\bright\b"), "D3"), (re.compile(r"\b(?:near|front)\b"), "D0"),
)
_FOLLOW_PROSE = (
    re.compile(
        r"\bfollow(?:ing|ed|s)?\b[^.\n]{0,40}?\b(?:d|director[\s_]*)([0-3])\b", re.IGNORECASE
    ),
    re.compile(
        r"\b(?:d|director[\s_]*)([0-3])(?:'s|\u2019s)\s+(?:\w+\s+){0,2}?"
        r"(?:instruction|suggestion|advice|request|message|direction|guidance|lead|plan|idea)s?\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:as|per)\s+(?:d|director[\s_]*)([0-3])\b", re.IGNORECASE),
)
_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.!?\n])")
_NULL_VALUES = {"", "none", "null", "n/a", "na", "-", "no", "nothing", "no question"}


def _clean(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip().strip("*_\"'` ").strip()
    return None if value.lower() in _NULL_VALUES else value


def _seat_from(value: object) -> str | None:
    if not isinstance(value, str):
        return None if value is None else _seat_from(str(value))
    match = _SEAT_RE.search(value)
    if match:
        return f"D{match.group(1)}"
    bare = re.fullmatch(r"\s*([0-3])\s*", value)
    if bare:
        return f"D{bare.group(1)}"
    lowered = value.lower()
    for regex, seat in _SEAT_WORDS:
        if regex.search(lowered):
            return seat
    return None


def _seats_from(value: object) -> tuple[str, ...]:
    """Every seat ``value`` names, in order, once each ("D3, D2" -> D3, D2; "1 and 3"; "left")."""
    if value is None:
        return ()
    text = value if isinstance(value, str) else str(value)
    text = text[:200]
    seats = [f"D{m.group(1)}" for m in _SEAT_RE.finditer(text)]
    if not seats:
        seats = [f"D{digit}" for digit in re.findall(r"(?<![\w.])([0-3])(?![\w.])", text)]
    if not seats:
        seat = _seat_from(text)
        seats = [seat] if seat else []
    return tuple(dict.fromkeys(seats))


def _find_followed(body: str) -> tuple[str, ...]:
    for regex in (_FOLLOWED_TAG, _FOLLOWED_LINE):
        match = regex.search(body)
        if match:
            seats = _seats_from(match.group(1))
            if seats:
                return seats
    found = []
    for regex in _FOLLOW_PROSE:
        found += [(m.start(), f"D{m.group(1)}") for m in islice(regex.finditer(body), 8)]
    return tuple(dict.fromkeys(seat for _, seat in sorted(found)))


def _reply(
    move: Move, question: str | None, seats: tuple[str, ...], text: str, note: str | None = None
) -> ParsedBuilderReply:
    return ParsedBuilderReply(move, question, seats[0] if seats else None, text, note=note, followed_seats=seats)


_WORD_RE = re.compile(r"[A-Za-z]{2,}")


def _find_question(body: str) -> str | None:
    for regex in (_QUESTION_TAG, _QUESTION_LINE):
        match = regex.search(body)
        if match:
            return _clean(match.group(1))
    return None


def _sentences(body: str) -> list[str]:
    """``body`` cut after every '.', '!', '?' and newline (a linear split; the pieces rejoin to ``body``)."""
    return _SENTENCE_SPLIT_RE.split(body)


def _asked(body: str) -> str | None:
    """The sentences of ``body`` that end with a question mark and contain a word, joined; else ``None``.

    A run of punctuation ending in '?' (``"}{ %%% ???"``) is garbage, not a question.
    """
    asked = [s.strip().strip("*_\"' ") for s in _sentences(body) if s.endswith("?")]
    asked = [s for s in asked if _WORD_RE.search(s)][:8]
    return " ".join(asked) if asked else None


def _statements(body: str) -> str:
    """``body`` without its questions, so that "Should I place gs at (0,0)?" is not read as a move."""
    return "".join(s for s in _sentences(body) if not s.endswith("?"))


def parse_builder_reply(
    text: str, n: int = DEFAULT_N, height: int = DEFAULT_HEIGHT, tolerant_span: bool = False
) -> ParsedBuilderReply:
    """Read a builder's turn: its move, or a clarifying question, and whom it followed.

    A reply in the paper's grammar (``PLACE:code:pos:L[:span]:CONFIRM:...``,
    ``REMOVE:...``, ``CLARIFY:...``) is read by ``text.paper_grammar``
    (``tolerant_span``: the paper's reading of a small block with a span;
    ``note`` says what was ignored). Otherwise the move comes from, in this
    order, a ``<move>...</move>`` tag, a ``MOVE:`` line, a JSON object, or a
    bare move phrase in the prose. If
    none is there but the text asks something (``<question>``, a
    ``QUESTION:`` line, a sentence ending in '?'), the reply is that question
    with the no-op move. A sentence that is itself a question ("Should I
    place gs at (0,0)?") is read as a question, not a move. Raises
    ``ParseError``: "no move or question found" when nothing is
    understandable, or the specific reason when a move was attempted but
    cannot be read.

    A reply is read once per game and again by whoever logs or replays it,
    and the same replies recur across games, so readings of replies up to
    ``_MEMO_CHARS`` characters are remembered (the result is immutable).
    """
    check_size(n, height)
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}", text)
    if len(text) <= _MEMO_CHARS and type(text) is str:
        return _memo_read(text, n, height, bool(tolerant_span))
    return _read(text, n, height, tolerant_span)


#: How long a reply may be to be remembered, and how many are (a few MB at most).
_MEMO_CHARS = 2000
_MEMO_SIZE = 4096


@lru_cache(maxsize=_MEMO_SIZE)
def _memo_read(text: str, n: int, height: int, tolerant_span: bool) -> ParsedBuilderReply:
    return _read(text, n, height, tolerant_span)


def _read(text: str, n: int, height: int, tolerant_span: bool) -> ParsedBuilderReply:
    body = strip_fences(bound_text(text))
    followed = _find_followed(body)
    paper = read_paper_reply(body, tolerant_span, n)
    if paper is not None:
        return _reply(paper.move, paper.question, followed, text, paper.note)
    question = _find_question(body)

    explicit = _MOVE_TAG.search(body)
    content = explicit.group(1) if explicit else None
    if explicit is None:
        line = _MOVE_LINE.search(body)
        if line is not None:
            content = line.group(1) if line.group(1).strip() else body[line.end():]
    if content is not None:
        try:
            return _reply(_move_from_text(content, n, height, text), question, followed, text)
        except ParseError:
            if question is None:
                if not content.strip():
                    raise ParseError(NO_MOVE_OR_QUESTION, text) from None
                raise

    if content is None:
        found = _json_move(body, n, height, text)
        if found is not None:
            move, keys = found
            followed = _seats_from(_first(keys, "followed", "following", "followed_director")) or followed
            asked = _first(keys, "question", "clarifying_question")
            question = question or (_clean(asked) if isinstance(asked, str) else None)
            return _reply(move, question, followed, text)

        statements = _statements(_QUESTION_TAG.sub(" ", _QUESTION_LINE.sub(" ", body)))
        try:
            move = _move_from_prose(statements.lower(), n, height, text)
            return _reply(move, question or _asked(body), followed, text)
        except ParseError as error:
            question = question or _asked(body)
            if question is None:
                if error.reason == NO_MOVE_FOUND:
                    raise ParseError(NO_MOVE_OR_QUESTION, text) from None
                raise
    return _reply(Move.noop(), question, followed, text)
