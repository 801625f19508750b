"""``Structure``: an immutable board (also used for targets) and the paper's JSON.

A ``Structure`` wraps a read-only int8 array ``(n*n, height)`` of cell values
(see ``encoding``). Every constructor validates, so a ``Structure`` always
holds a reachable board: stacks contiguous from layer 0 and every large half
matched by a same-colour half on the same layer of an orthogonal neighbour.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import numpy as np

from craft_env.core import rules
from craft_env.core.encoding import (
    COLOURS,
    DEFAULT_HEIGHT,
    DEFAULT_N,
    DIRECTION_OFFSETS,
    action_table,
    check_size,
    direction_between,
    format_position,
    large_value,
    parse_block_code,
    parse_position,
    small_value,
    value_code,
)
from craft_env.core.moves import Move, action_to_move
from craft_env.core.views import director_views, interpreted

#: ``rules.partner_cell`` run by the interpreter (``views.interpreted``): ``to_dict`` loads no kernel.
_PARTNER_CELL = interpreted(rules.partner_cell)

TIERS = ("simple", "medium", "complex")


@functools.lru_cache(maxsize=65536)
def _cell_layout(
    n: int, k: int, row: tuple[int, ...]
) -> tuple[str, tuple[str, ...], tuple[tuple[int, tuple[str, str]], ...]]:
    """Cell ``k``'s part of ``layout_dict``: its position, its stack's codes (bottom first), and
    ``(layer, (position, partner's position))`` for each large half that reaches right or down (the half
    whose span is listed). Remembered: boards of a run share most of their stacks."""
    position = format_position((k // n, k % n))
    spans = []
    for level, value in enumerate(row):
        if value >= 6 and (value - 6) % 4 in (1, 3):
            p = _PARTNER_CELL(n, k, value)
            spans.append((level, (position, format_position((p // n, p % n)))))
    return position, tuple(value_code(v) for v in row if v != 0), tuple(spans)


class IllegalMoveError(ValueError):
    """Raised by ``Structure.apply`` for an illegal move; ``.reason`` says why."""

    def __init__(self, move: Move, reason: str) -> None:
        super().__init__(f"illegal move {move}: {reason}")
        self.move = move
        self.reason = reason


@functools.lru_cache(maxsize=None)
def _move_cache(n: int, height: int) -> list[list[Move]]:
    """``[action][layer + 1]`` -> the Move with that layer (index 0: no layer)."""
    table = action_table(n)
    return [
        [action_to_move(a, n, None)] + [action_to_move(a, n, layer) for layer in range(height)]
        for a in range(table.num_actions)
    ]


def cached_move(n: int, height: int, action: int, layer: int) -> Move:
    """The shared ``Move`` object for ``action`` at ``layer`` (-1: no layer)."""
    return _move_cache(n, height)[action][layer + 1]


def cached_moves(n: int, height: int) -> list[list[Move]]:
    """All shared ``Move`` objects: ``cached_moves(n, height)[action][layer + 1]`` (index 0: no layer)."""
    return _move_cache(n, height)


@functools.lru_cache(maxsize=None)
def flat_moves(n: int, height: int) -> list[Move]:
    """``cached_moves`` in one list: ``flat_moves(n, height)[action * (height + 1) + layer + 1]``.

    The same objects; one index per move lets a kernel name a move with one
    int (``oracle.optimal_move_indices``).
    """
    return [move for row in _move_cache(n, height) for move in row]


@functools.lru_cache(maxsize=None)
def _default_wall_size(n: int) -> int:
    """How many cells lie on a default seat's wall (row 0, column 0 or column n-1)."""
    return sum(1 for i in range(n) for j in range(n) if i == 0 or j == 0 or j == n - 1)


def complexity_tier(entries: int, n: int = DEFAULT_N, height: int = DEFAULT_HEIGHT) -> str:
    """Tier by total cell entries: the paper's cut-offs (<=22 simple, <=24 medium) for 3x3x3.

    Other sizes use the same fractions of the hidden cells' possible fill
    (cells on no default wall hold 0..height-1 blocks): <= 1/4 simple,
    <= 3/4 medium, else complex.
    """
    wall = _default_wall_size(n)
    hidden_capacity = (n * n - wall) * (height - 1)
    extra = entries - wall * height
    if hidden_capacity <= 0:
        return TIERS[0]
    fraction = extra / hidden_capacity
    if fraction <= 0.25:
        return TIERS[0]
    return TIERS[1] if fraction <= 0.75 else TIERS[2]


def validate_array(cells: np.ndarray, n: int) -> None:
    """Raise ``ValueError`` unless ``cells`` is a reachable board of side ``n``."""
    height = cells.shape[1]
    for k in range(n * n):
        cell = (k // n, k % n)
        seen_gap = False
        for level in range(height):
            value = int(cells[k, level])
            if value == 0:
                seen_gap = True
                continue
            where = f"{format_position(cell)} layer {level}"
            if seen_gap:
                raise ValueError(f"structure: block at {where} floats above an empty layer")
            if not 0 < value < 26:
                raise ValueError(f"structure: invalid cell value {value} at {where}")
            if value >= 6:
                di, dj = DIRECTION_OFFSETS[(value - 6) % 4]
                pi, pj = cell[0] + di, cell[1] + dj
                expected = large_value((value - 6) // 4, ((value - 6) % 4) ^ 1)
                if not (0 <= pi < n and 0 <= pj < n) or int(cells[pi * n + pj, level]) != expected:
                    raise ValueError(f"structure: large block at {where} has no matching other half")


def _init_slots(structure, cells, n, height, id, complexity) -> None:
    """Set every slot of a new ``Structure`` (its ``__setattr__`` refuses assignment).

    The slot descriptors' setters are called directly: ``adopt`` runs once
    per env step, and this is several times cheaper than ``object.__setattr__``.
    """
    _set_cells(structure, cells)
    _set_n(structure, n)
    _set_height(structure, height)
    _set_id(structure, id)
    _set_complexity(structure, complexity)
    _set_hash(structure, None)


def _join_spans(board: np.ndarray, cells_in: dict, spans: object, n: int, height: int) -> None:
    """Write the large blocks that ``spans`` pairs into ``board`` (their cells hold -1 until joined)."""
    if not isinstance(spans, dict):
        raise ValueError(f"spans: expected a mapping of layer -> list of cell pairs, got {spans!r}")
    for layer_key, pairs in spans.items():
        try:
            level = int(layer_key)
        except (TypeError, ValueError):
            raise ValueError(f"spans: layer key {layer_key!r} is not an integer") from None
        if not 0 <= level < height:
            raise ValueError(f"spans: layer {layer_key!r} is outside 0..{height - 1}")
        if not isinstance(pairs, list):
            raise ValueError(f"spans: layer {layer_key!r} must hold a list of cell pairs, got {pairs!r}")
        for pair in pairs:
            if not isinstance(pair, (list, tuple)) or len(pair) != 2:
                raise ValueError(f"spans: expected a pair of positions on layer {level}, got {pair!r}")
            a = parse_position(pair[0], n, field="spans")
            b = parse_position(pair[1], n, field="spans")
            d = direction_between(a, b)
            if d < 0:
                raise ValueError(f"spans: {list(pair)!r} on layer {level} is not a pair of orthogonal neighbours")
            codes = []
            for cell in (a, b):
                stack = cells_in.get(cell, [])
                if level >= len(stack) or stack[level][1:] != "l":
                    raise ValueError(
                        f"spans: {list(pair)!r} on layer {level} names {format_position(cell)}, "
                        "which holds no large block on that layer"
                    )
                if board[cell[0] * n + cell[1], level] != -1:
                    raise ValueError(
                        f"spans: large block at {format_position(cell)} layer {level} is in two spans"
                    )
                codes.append(stack[level])
            if codes[0] != codes[1]:
                raise ValueError(
                    f"spans: {list(pair)!r} on layer {level} joins different colours {codes[0]!r} and {codes[1]!r}"
                )
            colour = COLOURS.index(codes[0][0])
            board[a[0] * n + a[1], level] = large_value(colour, d)
            board[b[0] * n + b[1], level] = large_value(colour, d ^ 1)


class Structure:
    """An immutable ``n x n`` board with at most ``height`` layers.

    Equality and hashing are by content (side, height, blocks); ``id`` and
    ``complexity`` are labels carried along when loaded or generated.
    """

    __slots__ = ("_cells", "n", "height", "id", "complexity", "_hash")

    def __init__(self, cells: np.ndarray, n: int, *, id: str | None = None, complexity: str | None = None,
                 _trusted: bool = False) -> None:
        if not _trusted:
            check_size(n, cells.shape[1] if cells.ndim == 2 else None)
            if cells.shape != (n * n, cells.shape[1]):
                raise ValueError(f"cells: expected shape ({n * n}, height), got {cells.shape}")
            cells = np.ascontiguousarray(cells, dtype=np.int8)
            validate_array(cells, n)
        if cells.flags.writeable:
            cells = cells.copy()
            cells.setflags(write=False)
        _init_slots(self, cells, n, cells.shape[1], id, complexity)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"Structure is immutable (cannot set {name!r}); make a new one")

    @classmethod
    def adopt(cls, cells: np.ndarray, n: int) -> Structure:
        """Wrap a valid cell array the caller hands over (no copy, no validation; it is made read-only).

        The engine's fast path for boards it has just computed; anything from
        outside goes through the validating constructors.
        """
        cells.setflags(write=False)
        structure = object.__new__(cls)
        _init_slots(structure, cells, n, cells.shape[1], None, None)
        return structure

    @classmethod
    def empty(cls, n: int = DEFAULT_N, height: int = DEFAULT_HEIGHT) -> Structure:
        check_size(n, height)
        return cls(np.zeros((n * n, height), np.int8), n, _trusted=True)

    @classmethod
    def from_array(cls, cells: np.ndarray, n: int | None = None, **labels: Any) -> Structure:
        """Wrap (a validated copy of) a cell-value array ``(n*n, height)``."""
        cells = np.asarray(cells)
        if n is None:
            n = int(round(cells.shape[0] ** 0.5))
        return cls(np.array(cells, dtype=np.int8), n, **labels)

    @property
    def array(self) -> np.ndarray:
        """The read-only int8 cell-value array ``(n*n, height)``."""
        return self._cells

    # ----------------------------------------------------------------- paper JSON

    @classmethod
    def from_dict(cls, data: object, n: int | None = None, height: int | None = None) -> Structure:
        """Read a paper entry (or any dict with ``"structure"`` and optional ``"spans"``).

        Without ``n``/``height`` (arguments or ``metadata``) the board is the
        default 3x3x3, or wider when a position needs it.
        """
        if not isinstance(data, dict) or not isinstance(data.get("structure"), dict):
            raise ValueError("structure: expected a dict with a 'structure' mapping of '(i,j)' -> stack")
        stacks_in: dict = data["structure"]
        metadata = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
        cells_in = {}
        keys_in = {}
        for key, stack in stacks_in.items():
            cell = parse_position(key, field="structure")
            if not isinstance(stack, list):
                raise ValueError(f"structure: stack at {key!r} must be a list of block codes, got {stack!r}")
            if cell in cells_in:
                raise ValueError(f"structure: {keys_in[cell]!r} and {key!r} name the same cell")
            cells_in[cell], keys_in[cell] = stack, key
        if n is None:
            n = metadata["n"] if metadata.get("n") is not None else None
            n = max(DEFAULT_N, max((max(c) + 1 for c in cells_in), default=0)) if n is None else n
        if height is None:
            height = metadata["height"] if metadata.get("height") is not None else DEFAULT_HEIGHT
        check_size(n, height)
        board = np.zeros((n * n, height), np.int8)
        for cell, stack in cells_in.items():
            if cell[0] >= n or cell[1] >= n:
                raise ValueError(f"structure: position {format_position(cell)} is outside the {n}x{n} board")
            if len(stack) > height:
                raise ValueError(
                    f"structure: stack at {format_position(cell)} has {len(stack)} blocks, "
                    f"taller than height {height}"
                )
            for level, code in enumerate(stack):
                colour, large = parse_block_code(code, f"structure {format_position(cell)} layer {level}")
                board[cell[0] * n + cell[1], level] = -1 if large else small_value(colour)
        _join_spans(board, cells_in, data.get("spans") or {}, n, height)
        missing = np.argwhere(board == -1)
        if len(missing):
            k, level = (int(x) for x in missing[0])
            raise ValueError(
                f"spans: large block {value_code_at(cells_in, k, n, level)!r} at "
                f"{format_position((k // n, k % n))} layer {level} has no partner in 'spans'"
            )
        complexity = data.get("complexity")
        return cls(board, n, id=data.get("id"), complexity=complexity)

    def layout_dict(self) -> dict[str, Any]:
        """``to_dict``'s ``structure`` and ``spans`` only (what a run logs for every turn's board)."""
        n = self.n
        structure: dict[str, list[str]] = {}
        by_level: list[list[list[str]]] = [[] for _ in range(self.height)]
        # plain ints, each cell's part read once per stack it holds: this runs for every logged turn's board
        for k, row in enumerate(self._cells.tolist()):
            position, codes, spans = _cell_layout(n, k, tuple(row))
            structure[position] = list(codes)
            for level, pair in spans:
                by_level[level].append(list(pair))
        spans = {str(level): pairs for level, pairs in enumerate(by_level) if pairs}
        return {"structure": structure, "spans": spans}

    def to_dict(self, views: bool = True) -> dict[str, Any]:
        """The paper format: ``structure`` ("(i,j)" keys), ``spans`` (string layer keys), views, metadata."""
        n = self.n
        layout = self.layout_dict()
        structure, spans = layout["structure"], layout["spans"]
        out: dict[str, Any] = {}
        if self.id is not None:
            out["id"] = self.id
        out["complexity"] = self.complexity or self.tier
        out["structure"] = structure
        out["spans"] = spans
        if views:
            out["director_views"] = director_views(self)
        out["metadata"] = {
            "total_blocks": self.num_entries,
            "filled_positions": int(np.count_nonzero(self._cells[:, 0])),
            "n": n,
            "height": self.height,
        }
        return out

    # ------------------------------------------------------------------- queries

    def stack(self, i: int, j: int) -> list[str]:
        """Block codes of cell ``(i, j)``, bottom first."""
        row = self._cells[i * self.n + j].tolist()  # plain ints: describe_board reads every cell each turn
        return [value_code(v) for v in row if v != 0]

    def stacks(self) -> dict[tuple[int, int], list[str]]:
        return {(k // self.n, k % self.n): self.stack(k // self.n, k % self.n) for k in range(self.n * self.n)}

    def heights(self) -> np.ndarray:
        """Stack height per cell as an int8 ``(n, n)`` array."""
        return np.count_nonzero(self._cells, axis=1).astype(np.int8).reshape(self.n, self.n)

    def partner(self, i: int, j: int, layer: int) -> tuple[int, int] | None:
        """The other half's cell of the large block at ``(i, j, layer)``, else ``None``."""
        value = int(self._cells[i * self.n + j, layer])
        if value < 6:
            return None
        p = rules.partner_cell(self.n, i * self.n + j, value)
        return (p // self.n, p % self.n)

    @property
    def num_entries(self) -> int:
        """Cell entries (a large block counts twice, as in the paper)."""
        return int(np.count_nonzero(self._cells))

    @property
    def num_blocks(self) -> int:
        """Distinct blocks (a large block counts once)."""
        large = int(np.count_nonzero(self._cells >= 6))
        return self.num_entries - large // 2

    @property
    def tier(self) -> str:
        return complexity_tier(self.num_entries, self.n, self.height)

    def is_empty(self) -> bool:
        return not self._cells.any()

    # --------------------------------------------------------------------- rules

    def _action_and_reason(self, move: Move) -> tuple[int, str | None]:
        if not isinstance(move, Move):
            raise TypeError(f"move: expected a Move, got {type(move).__name__}")
        try:
            action = move.to_action(self.n)
        except ValueError as error:
            return -1, str(error)
        table = action_table(self.n)
        code = rules.check_action(self._cells, self.n, action, table.kind, table.cell_a, table.cell_b)
        if code != rules.OK:
            return action, self._explain(move, code)
        reason = self._claims_reason(move, action)
        return action, reason

    def _claims_reason(self, move: Move, action: int) -> str | None:
        """Why the block or layer that a legal ``move`` claims is wrong (``None`` if right or unclaimed)."""
        if move.action == "remove" and move.block is not None:
            i, j = move.position
            top = self.stack(i, j)[-1]
            if top != move.block:
                return f"wrong block: the top of {format_position(move.position)} is {top}, not {move.block}"
        if move.layer is not None:
            table = action_table(self.n)
            layer = int(rules.landing_layer(self._cells, self.n, action, table.kind, table.cell_a))
            if layer != move.layer:
                verb = "removes from" if move.action == "remove" else "lands on"
                return f"wrong layer: this move {verb} layer {layer}, not layer {move.layer}"
        return None

    def _explain(self, move: Move, code: int) -> str:
        text = rules.REASONS[code]
        heights = self.heights()
        if code == rules.STACK_FULL:
            return f"{text} {self.height} at {format_position(move.position)}"
        if code == rules.UNEVEN_SPAN:
            a, b = move.position, move.span_to
            return f"{text} ({format_position(a)} has {heights[a]}, {format_position(b)} has {heights[b]})"
        if code in (rules.NOTHING_TO_REMOVE, rules.COVERED_HALF):
            return f"{text} ({format_position(move.position)})"
        return text

    def check(self, move: Move) -> str | None:
        """Why ``move`` is illegal here (``None`` when it is legal)."""
        return self._action_and_reason(move)[1]

    def is_legal(self, move: Move) -> bool:
        return self.check(move) is None

    def apply(self, move: Move) -> Structure:
        """The board after ``move``; raises ``IllegalMoveError`` (a ``ValueError``) when illegal."""
        if not isinstance(move, Move):
            raise TypeError(f"move: expected a Move, got {type(move).__name__}")
        try:
            action = move.to_action(self.n)
        except ValueError as error:
            raise IllegalMoveError(move, str(error)) from None
        if move.action == "remove" and move.block is not None:
            reason = self.check(move)
            if reason is not None:
                raise IllegalMoveError(move, reason)
        table = action_table(self.n)
        cells = np.empty_like(self._cells)
        claimed = -1 if move.layer is None else move.layer
        code = rules.check_and_apply(
            self._cells, self.n, action, claimed, table.kind, table.cell_a, table.cell_b, table.colour, cells
        )
        if code != rules.OK:
            raise IllegalMoveError(move, self.check(move) or rules.REASONS[code])
        return Structure.adopt(cells, self.n)

    def apply_action(self, action: int) -> Structure:
        """The board after the *legal* action id ``action`` (fast path for environments)."""
        table = action_table(self.n)
        cells = self._cells.copy()
        rules.apply_action_inplace(cells, self.n, action, table.kind, table.cell_a, table.cell_b, table.colour)
        return Structure.adopt(cells, self.n)

    def legal_mask(self) -> np.ndarray:
        table = action_table(self.n)
        out = np.empty(table.num_actions, np.int8)
        rules.fill_legal_mask(self._cells, self.n, table.kind, table.cell_a, table.cell_b, out)
        return out

    def legal_moves(self) -> list[Move]:
        """Every legal move (no-op excluded), each with the layer it acts on."""
        table = action_table(self.n)
        codes = np.empty(table.num_actions, np.int8)
        rules.fill_legal_layers(self._cells, self.n, table.kind, table.cell_a, table.cell_b, codes)
        moves = _move_cache(self.n, self.height)
        codes_list = codes.tolist()
        codes_list.pop()  # the no-op
        return [moves[action][code] for action, code in enumerate(codes_list) if code]

    # ------------------------------------------------------------- value/display

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Structure):
            return NotImplemented
        return self.n == other.n and self.height == other.height and np.array_equal(self._cells, other._cells)

    def __hash__(self) -> int:
        if self._hash is None:
            _set_hash(self, hash((self.n, self.height, self._cells.tobytes())))
        return self._hash

    def __repr__(self) -> str:
        label = f" id={self.id!r}" if self.id else ""
        return f"<Structure n={self.n} height={self.height} blocks={self.num_blocks}{label}>"

    def __str__(self) -> str:
        return to_ascii(self)

    @classmethod
    def from_ascii(cls, text: str, n: int | None = None, height: int | None = None) -> Structure:
        """Read the drawing that ``str(structure)`` prints (see ``to_ascii``)."""
        return from_ascii(text, n, height)


_set_cells, _set_n, _set_height, _set_id, _set_complexity, _set_hash = (
    Structure.__dict__[name].__set__ for name in Structure.__slots__
)


def value_code_at(cells_in: dict, k: int, n: int, level: int) -> str:
    return cells_in[(k // n, k % n)][level]


# ------------------------------------------------------------------ ASCII drawing

_LAYER_RE = re.compile(r"^\s*layer\s+(\d+)\s*$", re.IGNORECASE)


def to_ascii(structure: Structure) -> str:
    """Draw each layer (bottom first) as a grid seen from above, far row at the top.

    A cell shows its block code or ``..``; ``==`` joins the halves of a
    horizontal large block, ``||`` (between rows) those of a vertical one::

        layer 0
          ys  gs==gs
          ||
          yl  ..  os
    """
    n, cells = structure.n, structure.array
    top = int(np.count_nonzero(cells, axis=1).max()) if cells.any() else 1
    lines: list[str] = []
    for level in range(top):
        lines.append(f"layer {level}")
        for i in range(n):
            row = "  "
            links = "  "
            for j in range(n):
                value = int(cells[i * n + j, level])
                row += value_code(value) if value else ".."
                if j + 1 < n:
                    row += "==" if value >= 6 and (value - 6) % 4 == 3 else "  "
                links += ("||" if value >= 6 and (value - 6) % 4 == 1 else "  ") + ("  " if j + 1 < n else "")
            lines.append(row.rstrip())
            if i + 1 < n and links.strip():
                lines.append(links.rstrip())
    return "\n".join(lines)


def from_ascii(text: str, n: int | None = None, height: int | None = None) -> Structure:
    """Parse ``to_ascii`` output (missing layers are empty; indentation is free)."""
    layers: dict[int, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        if not raw.strip():
            continue
        match = _LAYER_RE.match(raw)
        if match:
            current = layers.setdefault(int(match.group(1)), [])
        elif current is None:
            raise ValueError(f"ascii: expected a 'layer K' header before {raw!r}")
        else:
            current.append(raw)
    if not layers:
        raise ValueError("ascii: no 'layer K' section found")
    stripped = {level: _dedent(rows) for level, rows in layers.items()}
    if n is None:
        first = next(iter(stripped.values()))
        n = sum(1 for row in first if not set(row.strip()) <= {"|", " "})
    if height is None:
        height = max(DEFAULT_HEIGHT, max(layers) + 1)
    check_size(n, height)
    placed: dict[tuple[int, int], dict[int, str]] = {(i, j): {} for i in range(n) for j in range(n)}
    spans: dict[str, list[list[str]]] = {}
    for level in sorted(stripped):
        rows = stripped[level]
        grid_rows = [r for r in rows if not set(r.strip()) <= {"|", " "}]
        if len(grid_rows) != n:
            raise ValueError(f"ascii: layer {level} has {len(grid_rows)} rows, expected {n}")
        row_index = -1
        for row in rows:
            if set(row.strip()) <= {"|", " "}:
                for j in range(n):
                    if row[4 * j: 4 * j + 2] == "||":
                        spans.setdefault(str(level), []).append(
                            [format_position((row_index, j)), format_position((row_index + 1, j))]
                        )
                continue
            row_index += 1
            for j in range(n):
                token = row[4 * j: 4 * j + 2]
                if token.strip() in ("..", ""):
                    continue
                placed[(row_index, j)][level] = token
                if j + 1 < n and row[4 * j + 2: 4 * j + 4] == "==":
                    spans.setdefault(str(level), []).append(
                        [format_position((row_index, j)), format_position((row_index, j + 1))]
                    )
    stacks: dict[str, list[str]] = {}
    for cell, by_level in placed.items():
        if sorted(by_level) != list(range(len(by_level))):
            raise ValueError(f"ascii: stack at {format_position(cell)} has a gap below its top block")
        stacks[format_position(cell)] = [by_level[level] for level in range(len(by_level))]
    return Structure.from_dict({"structure": stacks, "spans": spans}, n=n, height=height)


def _dedent(rows: list[str]) -> list[str]:
    indent = min(len(r) - len(r.lstrip()) for r in rows if r.strip() and not set(r.strip()) <= {"|"})
    return [r[indent:] for r in rows]
