"""``Move``: one builder move, in the paper's vocabulary, and its action id.

A move names what the builder does (place a block, remove the top of a cell,
or pass); ``layer`` is an optional *claim* of where it happens, checked
against the physics when the move is played ("wrong layer" otherwise).
Two moves are equal when they are the same action and do not claim
different layers; the two halves of a large block may be named in either
order.
"""

from __future__ import annotations

from typing import Any

from craft_env.core.encoding import (
    BLOCK_CODES,
    DEFAULT_N,
    KIND_LARGE,
    KIND_NOOP,
    KIND_REMOVE,
    KIND_SMALL,
    action_table,
    format_position,
    parse_block_code,
    parse_position,
)

PLACE = "place"
REMOVE = "remove"
NOOP = "noop"
_NOOP_ALIASES = {"noop", "no-op", "pass", "clarify", "wait"}


def _check_layer(layer: object) -> int | None:
    if layer is None:
        return None
    if isinstance(layer, bool) or not isinstance(layer, int) or layer < 0:
        raise ValueError(f"layer: must be a non-negative int or None, got {layer!r}")
    return layer


class Move:
    """An immutable builder move. Build one with ``place``, ``remove`` or ``noop``."""

    __slots__ = ("action", "block", "position", "span_to", "layer", "_key", "_text", "_action_id", "_dict")

    def __init__(
        self,
        action: str,
        block: str | None,
        position: tuple[int, int] | None,
        span_to: tuple[int, int] | None,
        layer: int | None,
    ) -> None:
        object.__setattr__(self, "action", action)
        object.__setattr__(self, "block", block)
        object.__setattr__(self, "position", position)
        object.__setattr__(self, "span_to", span_to)
        object.__setattr__(self, "layer", layer)
        if action == PLACE and span_to is not None:
            cells = (min(position, span_to), max(position, span_to))
        else:
            cells = (position,)
        identity_block = block if action == PLACE else None
        object.__setattr__(self, "_key", (action, identity_block, cells))
        object.__setattr__(self, "_text", None)
        object.__setattr__(self, "_action_id", None)
        object.__setattr__(self, "_dict", None)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Move is immutable")

    def __reduce__(self) -> tuple:
        """Pickle by the constructor's arguments (unpickling cannot set the slots of an immutable object)."""
        return (type(self), (self.action, self.block, self.position, self.span_to, self.layer))

    @classmethod
    def place(
        cls,
        block: str,
        position: object,
        span_to: object = None,
        layer: int | None = None,
    ) -> Move:
        """Place ``block`` at ``position``; a large block (``?l``) also needs ``span_to``."""
        _, large = parse_block_code(block, "block")
        cell = parse_position(position, field="position")
        partner = None if span_to is None else parse_position(span_to, field="span_to")
        if large and partner is None:
            raise ValueError(f"span_to: a large block ({block!r}) needs span_to, the cell of its other half")
        if not large and partner is not None:
            raise ValueError(f"span_to: a small block ({block!r}) covers one cell; got span_to={span_to!r}")
        if partner is not None and abs(partner[0] - cell[0]) + abs(partner[1] - cell[1]) != 1:
            raise ValueError(
                f"span_to: {format_position(partner)} is not an orthogonal neighbour of "
                f"{format_position(cell)}"
            )
        return cls(PLACE, block, cell, partner, _check_layer(layer))

    @classmethod
    def remove(cls, position: object, layer: int | None = None, block: str | None = None) -> Move:
        """Remove the top block of ``position`` (both halves if it is large)."""
        if block is not None:
            parse_block_code(block, "block")
        return cls(REMOVE, block, parse_position(position, field="position"), None, _check_layer(layer))

    @classmethod
    def noop(cls) -> Move:
        """The builder's pass / clarifying question: changes nothing, always legal."""
        return cls(NOOP, None, None, None, None)

    @property
    def is_large(self) -> bool:
        return self.action == PLACE and self.span_to is not None

    @property
    def cells(self) -> tuple[tuple[int, int], ...]:
        """The cells the move names (sorted for a large block)."""
        return self._key[2] if self.position is not None else ()

    def with_layer(self, layer: int | None) -> Move:
        return Move(self.action, self.block, self.position, self.span_to, _check_layer(layer))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        if self._key != other._key:
            return False
        return self.layer is None or other.layer is None or self.layer == other.layer

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Move({str(self)!r})"

    def __str__(self) -> str:
        if self._text is None:
            object.__setattr__(self, "_text", self._format())
        return self._text

    def _format(self) -> str:
        if self.action == NOOP:
            return "noop"
        layer = "" if self.layer is None else f" L{self.layer}"
        if self.action == REMOVE:
            block = f" {self.block}" if self.block else ""
            return f"remove{block} {format_position(self.position)}{layer}"
        where = format_position(self.position)
        if self.span_to is not None:
            where += "-" + format_position(self.span_to)
        return f"place {self.block} {where}{layer}"

    def to_dict(self) -> dict[str, Any]:
        """The paper's log format: ``{"action", "block", "position", "layer", "span_to"}``.

        A new dict each time, copied from the one made on the first call (a run logs the same
        candidate moves turn after turn)."""
        if self._dict is None:
            object.__setattr__(self, "_dict", self._make_dict())
        return dict(self._dict)

    def _make_dict(self) -> dict[str, Any]:
        if self.action == NOOP:
            return {"action": NOOP}
        out: dict[str, Any] = {"action": self.action}
        if self.block is not None:
            out["block"] = self.block
        out["position"] = format_position(self.position)
        out["layer"] = self.layer
        out["span_to"] = None if self.span_to is None else format_position(self.span_to)
        return out

    @classmethod
    def from_dict(cls, data: object) -> Move:
        """Read the paper's move format (``action`` place/remove, or noop/pass/clarify)."""
        if not isinstance(data, dict):
            raise ValueError(f"move: expected a dict, got {data!r}")
        action = data.get("action")
        if not isinstance(action, str):
            raise ValueError(f"action: expected 'place', 'remove' or 'noop', got {action!r}")
        name = action.strip().lower()
        if name in _NOOP_ALIASES:
            return cls.noop()
        layer = _check_layer(data.get("layer"))
        if name == PLACE:
            if "block" not in data:
                raise ValueError("block: a place move needs a block code")
            return cls.place(data["block"], data.get("position"), data.get("span_to"), layer)
        if name == REMOVE:
            return cls.remove(data.get("position"), layer, data.get("block"))
        raise ValueError(f"action: expected 'place', 'remove' or 'noop', got {action!r}")

    def to_action(self, n: int = DEFAULT_N) -> int:
        """This move's id in the action table for side ``n``; ``ValueError`` if off the board."""
        memo = self._action_id
        if memo is not None and memo[0] == n:
            return memo[1]
        action = self._compute_action(n)
        object.__setattr__(self, "_action_id", (n, action))
        return action

    def _compute_action(self, n: int) -> int:
        table = action_table(n)
        if self.action == NOOP:
            return table.noop
        for field, cell in (("position", self.position), ("span_to", self.span_to)):
            if cell is not None and not (0 <= cell[0] < n and 0 <= cell[1] < n):
                raise ValueError(f"{field}: position {format_position(cell)} is outside the {n}x{n} board")
        i, j = self.position
        if self.action == REMOVE:
            return table.remove_action(i * n + j)
        colour, large = parse_block_code(self.block)
        if not large:
            return table.small_action(i * n + j, colour)
        pi, pj = self.span_to
        return table.large_action(i * n + j, pi * n + pj, colour)


def action_to_move(action: int, n: int = DEFAULT_N, layer: int | None = None) -> Move:
    """The move with id ``action`` for side ``n`` (``layer`` as given)."""
    table = action_table(n)
    if isinstance(action, bool) or not 0 <= int(action) < table.num_actions:
        raise ValueError(f"action: id must be in 0..{table.num_actions - 1}, got {action!r}")
    action = int(action)
    kind = int(table.kind[action])
    if kind == KIND_NOOP:
        return Move.noop()
    a = int(table.cell_a[action])
    cell = (a // n, a % n)
    if kind == KIND_REMOVE:
        return Move(REMOVE, None, cell, None, layer)
    colour = int(table.colour[action])
    if kind == KIND_SMALL:
        return Move(PLACE, BLOCK_CODES[2 * colour], cell, None, layer)
    assert kind == KIND_LARGE
    b = int(table.cell_b[action])
    return Move(PLACE, BLOCK_CODES[2 * colour + 1], cell, (b // n, b % n), layer)

