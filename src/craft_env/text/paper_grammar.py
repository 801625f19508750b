"""The paper's builder reply grammar, read in linear time.

The paper's builder answers one line (``docs/benchmark.md``, "Protocols"):

* ``PLACE:code:pos:L:CONFIRM:text`` (a small block, or a large one missing
  its partner) and ``PLACE:code:pos:L:span:CONFIRM:text``;
* ``REMOVE:pos:L[:span]:CONFIRM:text`` (a block code right after
  ``REMOVE`` is stripped, as the paper's engine does);
* ``CLARIFY:text``.

The layer is taken from its field. ``read_paper_reply`` looks at the first
line that starts with one of the three keywords (in capitals, as the paper
asks for them, optionally in Markdown emphasis); if there is
none the reply is not in this grammar and ``None`` is returned, so the
general reader (``text.moves``) takes over. A keyword line with bad fields
is a ``ParseError`` naming the field.

Tolerances (``tolerant_span``, the paper's move reading): a small block
written with a span is placed as a small block and the span ignored; a span
given with a remove is always ignored (our remove takes both halves of a
large block). Either way ``PaperReply.note`` says so.

Every step is a bounded ``str.split`` or a prefix test: no regular
expressions, so the time is linear in the text's length.

``move_from_paper`` reads a move as the paper's result logs record it (a
JSON dict: ``docs/paper-logs.md``), with the same tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from craft_env.core.encoding import BLOCK_CODES, parse_position
from craft_env.core.moves import Move
from craft_env.core.protocol import Protocol
from craft_env.text.errors import ParseError

KEYWORDS = ("PLACE", "REMOVE", "CLARIFY")
CONFIRM = "CONFIRM"
_MAX_FIELDS = 6  # PLACE:code:pos:L:span:CONFIRM:text is 7 pieces


@dataclass(frozen=True)
class PaperReply:
    """One reply in the paper's grammar: the move (the no-op for CLARIFY), its texts, a reading note."""

    move: Move
    confirmation: str | None = None
    question: str | None = None
    note: str | None = None


def paper_line(text: str) -> tuple[str, str] | None:
    """``(KEYWORD, line)`` for the first line starting with a keyword of the grammar, else ``None``."""
    for line in text.splitlines():
        stripped = line.strip().lstrip("*`> ").rstrip("*` ")
        head = stripped.split(":", 1)[0].strip()
        if head in KEYWORDS and ":" in stripped:
            return head, stripped
    return None


def _layer(value: str, raw: str) -> int:
    digits = value.strip()
    if digits[:1] in ("L", "l"):
        digits = digits[1:]
    if not digits.isdigit() or not digits.isascii():
        raise ParseError(f"layer: expected a layer number like 0, got {value.strip()!r}", raw)
    return int(digits)


def _cell(value: str, field: str, raw: str, n: int | None) -> tuple[int, int]:
    try:
        return parse_position(value.strip(), n, field=field)
    except ValueError as error:
        raise ParseError(str(error), raw) from None


def _tail(pieces: list[str], raw: str) -> tuple[str | None, str | None]:
    """``(span field or None, confirmation text)`` from what follows the layer field."""
    if not pieces:
        return None, None
    if pieces[0].strip().upper() == CONFIRM:
        return None, ":".join(pieces[1:]).strip() or None
    span = pieces[0]
    if len(pieces) > 1 and pieces[1].strip().upper() == CONFIRM:
        return span, ":".join(pieces[2:]).strip() or None
    if len(pieces) == 1:
        return span, None
    raise ParseError(f"expected CONFIRM after the layer (and span), got {pieces[0].strip()!r}", raw)


def read_paper_reply(text: str, tolerant_span: bool = False, n: int | None = None) -> PaperReply | None:
    """The reply in the paper's grammar (see the module docstring), or ``None`` if it is not in it.

    ``n``, when given, is the board side that positions must lie on.
    """
    found = paper_line(text)
    if found is None:
        return None
    keyword, line = found
    pieces = line.split(":", _MAX_FIELDS)
    if keyword == "CLARIFY":
        question = line.split(":", 1)[1].strip()
        return PaperReply(Move.noop(), question=question or None)
    fields = pieces[1:]
    if keyword == "REMOVE" and fields and fields[0].strip().lower() in BLOCK_CODES:
        fields = line.split(":", _MAX_FIELDS + 1)[2:]
    need = 3 if keyword == "PLACE" else 2
    if len(fields) < need:
        shape = "PLACE:code:pos:L" if keyword == "PLACE" else "REMOVE:pos:L"
        raise ParseError(f"expected {shape}[:span]:CONFIRM:text, got {line[:80]!r}", text)
    if keyword == "REMOVE":
        cell = _cell(fields[0], "position", text, n)
        layer = _layer(fields[1], text)
        span, confirmation = _tail(fields[2:], text)
        note = None
        if span is not None and span.strip():
            note = f"span_to {span.strip()} ignored: a remove takes the whole block at the top"
        return PaperReply(Move.remove(cell, layer), confirmation=confirmation, note=note)
    code = fields[0].strip().lower()
    if code not in BLOCK_CODES:
        raise ParseError(f"block: expected one of {', '.join(BLOCK_CODES)}, got {fields[0].strip()!r}", text)
    cell = _cell(fields[1], "position", text, n)
    layer = _layer(fields[2], text)
    span, confirmation = _tail(fields[3:], text)
    partner = _cell(span, "span_to", text, n) if span is not None and span.strip() else None
    note = None
    if partner is not None and not code.endswith("l"):
        if not tolerant_span:
            raise ParseError(
                f"span_to: a small block ({code!r}) covers one cell; got span_to={span.strip()!r}", text
            )
        note = f"span_to {span.strip()} ignored: {code} is a small block"
        partner = None
    try:
        move = Move.place(code, cell, partner, layer)
    except ValueError as error:
        raise ParseError(str(error), text) from None
    return PaperReply(move, confirmation=confirmation, note=note)


def move_from_paper(data: Any, protocol: Protocol) -> tuple[Move | None, str | None]:
    """``(move, note)`` from a move as the paper's logs record it (a dict); ``(None, reason)`` when it cannot be read at all.

    The layer is taken as logged (``int()`` as the paper does). A remove's
    code and span are ignored (our remove takes the whole top block); a
    small block's span is ignored under ``tolerant_span``.
    """
    if not isinstance(data, dict):
        return None, f"move: expected a dict, got {data!r}"
    action = str(data.get("action", "")).strip().lower()
    try:
        layer = None if data.get("layer") is None else int(data["layer"])
    except (TypeError, ValueError, OverflowError):  # int("x"), int(1e999)
        return None, f"layer: expected a layer number, got {data.get('layer')!r:.60}"
    try:
        if action == "remove":
            return Move.remove(data.get("position"), layer), None
        if action == "place":
            block = str(data.get("block", "")).strip().lower()
            span = data.get("span_to")
            note = None
            if span not in (None, "") and block.endswith("s") and protocol.tolerant_span:
                note, span = f"span_to {span} ignored: {block} is a small block", None
            return Move.place(block, data.get("position"), span if span not in ("",) else None, layer), note
    except (TypeError, ValueError) as error:
        return None, str(error)
    if action in ("clarify", "noop", "pass"):
        return Move.noop(), None
    return None, f"action: expected place or remove, got {data.get('action')!r}"
