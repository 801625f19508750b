"""Plain, compact, deterministic text of game state for language-model prompts.

Every function here returns the same string for the same input, so prompts
are reproducible and cacheable: the board cell by cell, a director's wall
top layer first, the builder's candidate moves, and the conversation.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

from craft_env.core import rules
from craft_env.core.board import Structure
from craft_env.core.encoding import format_position, value_code
from craft_env.core.moves import Move
from craft_env.core.views import interpreted, seat_cells
from craft_env.text.moves import format_move
from craft_env.text.speech import layer_name, slot_name

__all__ = ["describe_board", "describe_candidates", "describe_conversation", "describe_message", "describe_view"]

VIEW_NOTE = "(1 wide: a small block, or a large block whose other half is not on this wall)"


#: ``rules.partner_cell`` run by the interpreter (``core.views.interpreted``): one scalar call per large half.
_PARTNER_CELL = interpreted(rules.partner_cell)


def describe_board(structure: Any) -> str:
    """Every cell's stack, bottom to top, one line per cell in row-major order.

    ``(0,0): L0 ys, L1 ol (spans to (1,0)), L2 gs``; an empty cell reads
    ``(1,1): empty``. Rows count from the far side (row 0), columns from the
    builder's left (column 0).
    """
    n = structure.n
    if isinstance(structure, Structure):
        return _describe_cells(structure.array.tolist(), n)
    lines = []
    for i in range(n):
        for j in range(n):
            parts = []
            for level, code in enumerate(structure.stack(i, j)):
                part = f"L{level} {code}"
                partner = structure.partner(i, j, level)
                if partner is not None:
                    part += f" (spans to {format_position(partner)})"
                parts.append(part)
            lines.append(f"{format_position((i, j))}: {', '.join(parts) if parts else 'empty'}")
    return "\n".join(lines)


def _describe_cells(rows: list[list[int]], n: int) -> str:
    """``describe_board`` of a ``Structure`` from its cells as plain ints (one conversion per board, not
    one numpy read per block; it runs whenever a text observation's board changes): the same
    ``stack`` (the non-empty values, bottom first) and ``partner`` (of the cell's value at that index)."""
    return "\n".join([_cell_line(n, k, tuple(row)) for k, row in enumerate(rows)])


@lru_cache(maxsize=65536)
def _cell_line(n: int, k: int, row: tuple[int, ...]) -> str:
    """Cell ``k``'s line of ``describe_board``, remembered (boards of a game share most of their stacks)."""
    parts = []
    for level, value in enumerate([v for v in row if v != 0]):
        part = f"L{level} {value_code(value)}"
        held = row[level]
        if held >= 6:
            p = _PARTNER_CELL(n, k, held)
            part += f" (spans to {format_position((p // n, p % n))})"
        parts.append(part)
    return f"{format_position((k // n, k % n))}: {', '.join(parts) if parts else 'empty'}"


def _layer_keys(view: Mapping[str, Any]) -> list[tuple[int, str]]:
    keys = []
    for key in view:
        suffix = str(key).rsplit("_", 1)[-1]
        if suffix.isdigit():
            keys.append((int(suffix), key))
    return sorted(keys)


def _entry(cell: Any) -> tuple[str | None, int]:
    if not isinstance(cell, Mapping):
        return None, 0
    colour = cell.get("color", cell.get("colour"))
    size = cell.get("size", 1 if colour else 0)
    return (colour if colour else None), (int(size) if isinstance(size, (int, float)) else 1)


def describe_view(view: Mapping[str, Any], seat: str) -> str:
    """A director's wall (``core.views.seat_view`` format) in that director's own words, top layer first.

    Each layer lists the wall's columns left to right from the seat by name
    ("left", "middle", "right"); a large block lying along the wall (size 2)
    is shown once across its two columns; size 1 is "1 wide", which may be a
    large block seen end-on. The header maps the names to board cells.
    """
    layers = _layer_keys(view)
    height = len(layers)
    width = max((len(view[key]) for _, key in layers), default=0)
    if width < 2:
        return f"{seat}'s wall: nothing to show"
    cells = seat_cells(seat, width)
    legend = ", ".join(f"{slot_name(p, width)} {format_position(c)}" for p, c in enumerate(cells))
    lines = [f"{seat}'s wall, left to right from {seat}'s seat: {legend}. Top layer first:"]
    for level, key in reversed(layers):
        row = list(view[key])
        parts = []
        p = 0
        while p < len(row):
            colour, size = _entry(row[p])
            name = slot_name(p, width)
            if colour is None:
                parts.append(f"{name} empty")
            elif size >= 2 and p + 1 < len(row) and _entry(row[p + 1]) == (colour, size):
                parts.append(f"{name}+{slot_name(p + 1, width)} {colour} (large, 2 wide)")
                p += 1
            else:
                parts.append(f"{name} {colour} ({'1 wide' if size < 2 else 'large, 2 wide'})")
            p += 1
        lines.append(f"{layer_name(level, height)} layer (L{level}): {' | '.join(parts)}")
    lines.append(VIEW_NOTE)
    return "\n".join(lines)


def describe_candidates(moves: Iterable[Move]) -> str:
    """A numbered list of candidate moves, one canonical move line each (``1. place gs (0,0) L0``)."""
    lines = [f"{k}. {format_move(move)}" for k, move in enumerate(moves, start=1)]
    return "\n".join(lines) if lines else "(no candidate moves)"


def _speaker_and_text(message: Any) -> tuple[str, str]:
    if type(message) is tuple and len(message) == 2:  # the common case, before the abstract-class checks
        return str(message[0]), str(message[1])
    if isinstance(message, Mapping):
        speaker = message.get("speaker", message.get("role", message.get("name", "?")))
        text = message.get("text", message.get("content", ""))
        return str(speaker), str(text)
    if isinstance(message, Sequence) and not isinstance(message, str) and len(message) == 2:
        return str(message[0]), str(message[1])
    return "?", str(message)


def describe_conversation(messages: Iterable[Any]) -> str:
    """The conversation as ``speaker: text`` lines, oldest first.

    ``messages`` holds ``(speaker, text)`` pairs (mappings with
    ``speaker``/``text`` or ``role``/``content`` also work). Continuation
    lines of a multi-line message are indented so speakers stay visible.
    """
    lines = [describe_message(*_speaker_and_text(message)) for message in messages]
    return "\n".join(lines) if lines else "(no messages yet)"


def describe_message(speaker: str, text: str) -> str:
    """One entry of ``describe_conversation``: ``speaker: text``, continuation lines indented."""
    body = text.strip().splitlines()
    if len(body) <= 1:  # one line (most messages): nothing to indent
        return f"{speaker}: {body[0].rstrip() if body else ''}".rstrip()
    lines = [f"{speaker}: {body[0].rstrip()}".rstrip()]
    lines.extend(f"    {line.rstrip()}" for line in body[1:] if line.strip())
    return "\n".join(lines)
