"""An independent, slow, pure-Python model of the CRAFT rules, written from the rules as docs/rules.md states them.

This module is the yardstick the engine is tested against, so it shares no
code with it: no numba kernels, no cell-value encoding, no action table.
A board is a dict ``cell -> tuple of entries`` (bottom first), an entry is
``(code, partner)`` with ``code`` a paper block code (``"gs"``, ``"bl"``, ...)
and ``partner`` the cell of the other half of a large block (``None`` for a
small block). It meets the engine only at the edges, through public API:
``Structure.stacks()`` / ``Structure.partner()`` on the way in and
``Structure.from_dict`` on the way out, and ``Move``'s public fields.

Covered here:

* docs/rules.md#moves (moves): legal-move enumeration, the legality check with a
  reason *category* (``REASON_KEYWORDS`` maps each to a word the engine's
  sentence must contain), and apply;
* docs/rules.md#oracle (oracle): keep levels and distance, plus brute-force
  optimal moves and breadth-first shortest paths;
* docs/rules.md#metrics (metrics), from the formulas, with Python sets.

A model move is a tuple ``(action, code, cells, layer)``: ``action`` is
``"place"`` or ``"remove"``; ``code`` the block code (for a remove: ``None``,
or the block the mover claims is on top); ``cells`` a sorted tuple of one
cell (small block, remove) or two cells (large block); ``layer`` the layer
the mover claims, or ``None``.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Iterator

COLOURS = "gbryo"
CODES = tuple(colour + size for colour in COLOURS for size in "sl")

# Reason categories and a word the engine's human-readable reason must contain.
REASON_KEYWORDS = {
    "off board": "outside the",
    "full": "maximum height",
    "uneven": "same height",
    "empty": "nothing to remove",
    "covered": "covered",
    "wrong block": "wrong block",
    "wrong layer": "wrong layer",
}

Cell = tuple[int, int]
Entry = tuple[str, "Cell | None"]
RefMove = tuple[str, "str | None", tuple, "int | None"]


def place(code: str, *cells: Cell, layer: int | None = None) -> RefMove:
    """A model placement; a large block names both cells (in any order)."""
    return ("place", code, tuple(sorted(cells)), layer)


def remove(cell: Cell, layer: int | None = None, code: str | None = None) -> RefMove:
    """A model removal of the top block of ``cell``."""
    return ("remove", code, (cell,), layer)


def without_layer(move: RefMove) -> RefMove:
    return (move[0], move[1], move[2], None)


class RefBoard:
    """An immutable board: side ``n``, at most ``height`` layers, stacks of entries."""

    __slots__ = ("n", "height", "stacks")

    def __init__(self, n: int, height: int, stacks: dict[Cell, tuple[Entry, ...]]) -> None:
        self.n = n
        self.height = height
        self.stacks = {(i, j): tuple(stacks.get((i, j), ())) for i in range(n) for j in range(n)}

    # -------------------------------------------------------------- building

    @classmethod
    def empty(cls, n: int, height: int) -> RefBoard:
        return cls(n, height, {})

    @classmethod
    def from_structure(cls, structure) -> RefBoard:
        """Read an engine ``Structure`` through its public accessors only."""
        stacks = {}
        for (i, j), codes in structure.stacks().items():
            stacks[(i, j)] = tuple(
                (code, structure.partner(i, j, level) if code[1] == "l" else None)
                for level, code in enumerate(codes)
            )
        return cls(structure.n, structure.height, stacks)

    def to_paper_dict(self) -> dict:
        """The paper's JSON entry (``structure`` and ``spans``) for this board."""
        structure = {f"({i},{j})": [code for code, _ in stack] for (i, j), stack in self.stacks.items()}
        spans: dict[str, list[list[str]]] = {}
        for (i, j), stack in sorted(self.stacks.items()):
            for level, (code, partner) in enumerate(stack):
                if partner is not None and (i, j) < partner:
                    spans.setdefault(str(level), []).append([f"({i},{j})", f"({partner[0]},{partner[1]})"])
        return {"structure": structure, "spans": spans}

    def to_structure(self):
        """The engine ``Structure`` holding this board (via ``Structure.from_dict``)."""
        from craft_env import Structure

        return Structure.from_dict(self.to_paper_dict(), n=self.n, height=self.height)

    # --------------------------------------------------------------- queries

    def cells(self) -> list[Cell]:
        return [(i, j) for i in range(self.n) for j in range(self.n)]

    def on_board(self, cell: Cell) -> bool:
        return 0 <= cell[0] < self.n and 0 <= cell[1] < self.n

    def neighbours(self, cell: Cell) -> list[Cell]:
        i, j = cell
        around = [(i - 1, j), (i + 1, j), (i, j - 1), (i, j + 1)]
        return [c for c in around if self.on_board(c)]

    def level(self, cell: Cell) -> int:
        return len(self.stacks[cell])

    def blocks(self) -> set:
        """Distinct blocks, each as ``(layer, frozenset of its cells, code)``."""
        out = set()
        for cell, stack in self.stacks.items():
            for level, (code, partner) in enumerate(stack):
                out.add((level, frozenset([cell] if partner is None else [cell, partner]), code))
        return out

    def num_entries(self) -> int:
        return sum(len(stack) for stack in self.stacks.values())

    def is_valid(self) -> bool:
        """Stacks within height, halves paired with a same-colour neighbour on the same layer."""
        for cell, stack in self.stacks.items():
            if len(stack) > self.height:
                return False
            for level, (code, partner) in enumerate(stack):
                if code not in CODES or (code[1] == "l") != (partner is not None):
                    return False
                if partner is not None:
                    if partner not in self.neighbours(cell) or len(self.stacks[partner]) <= level:
                        return False
                    if self.stacks[partner][level] != (code, cell):
                        return False
        return True

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RefBoard):
            return NotImplemented
        return (self.n, self.height, self.stacks) == (other.n, other.height, other.stacks)

    def __hash__(self) -> int:
        return hash((self.n, self.height, tuple(sorted(self.stacks.items()))))

    def __repr__(self) -> str:
        rows = [f"{c}: {' '.join(code + ('' if p is None else '>' + str(p)) for code, p in s)}"
                for c, s in sorted(self.stacks.items()) if s]
        return f"RefBoard(n={self.n}, height={self.height}, {'; '.join(rows) or 'empty'})"

    # ----------------------------------------------------------------- moves

    def legal_moves(self, codes: Iterable[str] = CODES) -> set[RefMove]:
        """Every legal move, each carrying the layer it acts on (docs/rules.md#moves)."""
        codes = tuple(codes)
        moves: set[RefMove] = set()
        for cell in self.cells():
            h = self.level(cell)
            if h < self.height:
                for code in codes:
                    if code[1] == "s":
                        moves.add(place(code, cell, layer=h))
                for other in self.neighbours(cell):
                    if other > cell and self.level(other) == h:
                        for code in codes:
                            if code[1] == "l":
                                moves.add(place(code, cell, other, layer=h))
            if h > 0:
                code, partner = self.stacks[cell][-1]
                if partner is None or self.level(partner) == h:
                    moves.add(remove(cell, layer=h - 1))
        return moves

    def check(self, move: RefMove) -> str | None:
        """``None`` when ``move`` is legal, else its reason category (a key of ``REASON_KEYWORDS``)."""
        action, code, cells, layer = move
        if any(not self.on_board(c) for c in cells):
            return "off board"
        if action == "place":
            heights = {self.level(c) for c in cells}
            if len(cells) == 2:
                a, b = cells
                if b not in self.neighbours(a):
                    return "not adjacent"
                if len(heights) != 1:
                    return "uneven"
            (h,) = heights
            if h >= self.height:
                return "full"
            acts_on = h
        else:
            (cell,) = cells
            h = self.level(cell)
            if h == 0:
                return "empty"
            top, partner = self.stacks[cell][-1]
            if partner is not None and self.level(partner) != h:
                return "covered"
            if code is not None and code != top:
                return "wrong block"
            acts_on = h - 1
        if layer is not None and layer != acts_on:
            return "wrong layer"
        return None

    def apply(self, move: RefMove) -> RefBoard:
        """The board after a legal ``move``; ``ValueError`` with the category when illegal."""
        reason = self.check(move)
        if reason is not None:
            raise ValueError(f"illegal model move {move}: {reason}")
        action, code, cells, _ = move
        stacks = dict(self.stacks)
        if action == "place":
            if len(cells) == 1:
                stacks[cells[0]] = stacks[cells[0]] + ((code, None),)
            else:
                a, b = cells
                stacks[a] = stacks[a] + ((code, b),)
                stacks[b] = stacks[b] + ((code, a),)
        else:
            (cell,) = cells
            _, partner = stacks[cell][-1]
            stacks[cell] = stacks[cell][:-1]
            if partner is not None:
                stacks[partner] = stacks[partner][:-1]
        return RefBoard(self.n, self.height, stacks)


# -------------------------------------------------------------------- oracle


def keep_levels(current: RefBoard, target: RefBoard) -> dict[Cell, int]:
    """docs/rules.md#oracle: longest matching bottom prefix, then lowered by large blocks that must go."""
    keep = {}
    for cell in current.cells():
        mine, wanted = current.stacks[cell], target.stacks[cell]
        level = 0
        while level < len(mine) and level < len(wanted) and mine[level] == wanted[level]:
            level += 1
        keep[cell] = level
    changed = True
    while changed:
        changed = False
        for cell, stack in current.stacks.items():
            for level, (_, partner) in enumerate(stack):
                if partner is None:
                    continue
                if level >= keep[cell] or level >= keep[partner]:
                    for half in (cell, partner):
                        if keep[half] > level:
                            keep[half] = level
                            changed = True
    return keep


def distance(current: RefBoard, target: RefBoard) -> int:
    """Distinct current blocks at or above keep levels plus distinct target blocks at or above them."""
    keep = keep_levels(current, target)
    removed, placed = set(), set()
    for board, bucket in ((current, removed), (target, placed)):
        for cell, stack in board.stacks.items():
            for level in range(keep[cell], len(stack)):
                _, partner = stack[level]
                bucket.add((level, frozenset([cell] if partner is None else [cell, partner])))
    return len(removed) + len(placed)


def optimal_moves(current: RefBoard, target: RefBoard) -> set[RefMove]:
    """Brute force: the legal moves after which ``distance`` is exactly one lower."""
    d = distance(current, target)
    return {m for m in current.legal_moves() if distance(current.apply(m), target) == d - 1}


def bfs_distances(target: RefBoard, codes: Iterable[str]) -> dict[RefBoard, int]:
    """True shortest-path length from every board reachable with ``codes`` to ``target``.

    Every move can be undone by one move (a place by a remove and back), so
    the move graph is undirected and a search from ``target`` gives the
    distance *to* it. Restricting colours is exact for boards that use only
    ``codes``' colours: recolouring every block of a path into those colours
    keeps each move legal (legality never depends on colour) and leaves the
    two ends unchanged, so no shortest path needs another colour.
    """
    codes = tuple(codes)
    seen = {target: 0}
    queue = deque([target])
    while queue:
        board = queue.popleft()
        d = seen[board]
        for move in board.legal_moves(codes):
            nxt = board.apply(move)
            if nxt not in seen:
                seen[nxt] = d + 1
                queue.append(nxt)
    return seen


# ------------------------------------------------------------------- metrics


def score(current: RefBoard, target: RefBoard) -> dict[str, float]:
    """docs/rules.md#metrics with our documented edge cases, from the formulas, with sets."""
    cells = current.cells()
    target_entries = sum(len(target.stacks[c]) for c in cells)
    matched = 0
    for c in cells:
        mine, wanted = current.stacks[c], target.stacks[c]
        common = range(min(len(mine), len(wanted)))
        matched += sum(1 for level in common if mine[level][0] == wanted[level][0])
    if target_entries:
        completion = matched / target_entries
    else:
        completion = 1.0 if current.num_entries() == 0 else 0.0
    inter = union = 0
    same_sets = 0
    for c in cells:
        mine = {code for code, _ in current.stacks[c]}
        wanted = {code for code, _ in target.stacks[c]}
        inter += len(mine & wanted)
        union += len(mine | wanted)
        same_sets += mine == wanted
    iou = inter / union if union else 0.0
    position_accuracy = same_sets / len(cells)
    occupied = set()
    shared = set()
    for c in cells:
        for level, entry in enumerate(current.stacks[c]):
            occupied.add((c, level))
            if level < len(target.stacks[c]) and target.stacks[c][level] == entry:
                shared.add((c, level))
        for level in range(len(target.stacks[c])):
            occupied.add((c, level))
    voxel_iou = len(shared) / len(occupied) if occupied else 1.0
    return {
        "iou": iou,
        "completion": completion,
        "position_accuracy": position_accuracy,
        "progress": (iou + completion + position_accuracy) / 3,
        "voxel_iou": voxel_iou,
    }


# -------------------------------------------------------- engine <-> model moves


def from_engine_move(move) -> RefMove:
    """A model move from an engine ``Move`` (read through its public fields)."""
    if move.action == "place":
        cells = (move.position,) if move.span_to is None else (move.position, move.span_to)
        return place(move.block, *cells, layer=move.layer)
    if move.action == "remove":
        return remove(move.position, layer=move.layer, code=move.block)
    raise ValueError(f"the model has no no-op: {move}")


def to_engine_move(move: RefMove):
    """The engine ``Move`` for a model move."""
    from craft_env import Move

    action, code, cells, layer = move
    if action == "place":
        return Move.place(code, cells[0], cells[1] if len(cells) == 2 else None, layer=layer)
    return Move.remove(cells[0], layer=layer, block=code)


def random_walk(board: RefBoard, choices: Iterator[int], steps: int, remove_bias: bool = False) -> RefBoard:
    """Play up to ``steps`` legal moves picked by the integers drawn from ``choices``.

    Each step draws two integers: the first decides, when ``remove_bias`` is
    set and a removal is legal, whether to pick among removals only (odd) or
    among all legal moves (even); the second picks the move.
    """
    for _ in range(steps):
        moves = sorted(board.legal_moves())
        removals = [m for m in moves if m[0] == "remove"]
        pool = removals if remove_bias and removals and next(choices) % 2 else moves
        board = board.apply(pool[next(choices) % len(pool)])
    return board


# ----------------------------------------------------------------- generator


def generate(rng, n: int = 3, height: int = 3) -> RefBoard:
    """A target from the paper distribution (docs/rules.md#structures), drawn with ``rng`` (a ``random.Random``).

    Not byte-compatible with the engine's seeded generator (different random
    stream); it follows the same recipe, so the two agree in distribution.
    Other sizes as the engine documents: cells on a default wall (row 0,
    column 0, column n-1) are full, the others hold 0..height-1 blocks.
    """
    wall = {(i, j) for i in range(n) for j in range(n) if i == 0 or j == 0 or j == n - 1}
    size = {(i, j): height if (i, j) in wall else rng.randrange(height) for i in range(n) for j in range(n)}
    board = RefBoard.empty(n, height)
    stacks = {cell: [] for cell in size}
    for level in range(height):
        cells = list(size)
        rng.shuffle(cells)
        for cell in cells:
            if size[cell] <= level or len(stacks[cell]) > level:
                continue
            colour = COLOURS[rng.randrange(5)]
            free = [c for c in board.neighbours(cell) if size[c] > level and len(stacks[c]) == level]
            if free and rng.random() < 0.5:
                other = rng.choice(free)
                stacks[cell].append((colour + "l", other))
                stacks[other].append((colour + "l", cell))
            else:
                stacks[cell].append((colour + "s", None))
    return RefBoard(n, height, {cell: tuple(stack) for cell, stack in stacks.items()})
