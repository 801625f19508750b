"""Director speech: intents in words, in the speaking director's own frame, and back.

A director sees one wall from its seat. It calls positions along the wall
*slots* ("left", "middle", "right" for n=3, counted from its own left) or
*columns* of its wall picture, and layers *rows* or *layers* ("bottom",
"middle", "top" for height 3). A large block either lies along the wall
("across the middle and right of my bottom layer") or reaches inward, one
step into the board away from the seat.

``intent_to_text`` speaks an intent id of ``core.intents.intent_table`` in
plain English; ``text_to_intent`` reads one back and tolerates paraphrase;
``parse_director_message`` finds every intent in a free-form message (what
the scripted builder listens to). Cell coordinates such as ``(0,2)`` in a
director's message are understood too, when they name a cell on that
director's wall and a layer.
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import islice

from craft_env.core.encoding import COLOUR_NAMES, DEFAULT_HEIGHT, DEFAULT_N, check_size, format_position
from craft_env.core.intents import (
    ALONG_RIGHT,
    INTENT_NOOP,
    INTENT_REMOVE,
    INTENT_SMALL,
    INWARD,
    IntentTable,
    intent_for_action,
    intent_table,
    inward_cell,
)
from craft_env.core.moves import Move, action_to_move
from craft_env.core.views import SEAT_SIDES, seat_cells
from craft_env.text._vocab import bound_text, find_colour, find_size, negated
from craft_env.text.errors import ParseError
from craft_env.text.moves import find_positions, parse_move

__all__ = [
    "NOOP_TEXT",
    "describe_intents",
    "director_frame_description",
    "intent_move",
    "intent_to_text",
    "layer_name",
    "named_information",
    "parse_director_message",
    "slot_name",
    "text_to_intent",
]

NOOP_TEXT = "Nothing to add from me."

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth")
_ORDINAL_SUFFIX = ("1st", "2nd", "3rd", "4th", "5th", "6th")
_MAX_CLAUSES = 200
_MAX_CLAUSE_CHARS = 600


def slot_name(p: int, n: int) -> str:
    """Name of position ``p`` (0 = leftmost) along a wall of ``n`` cells, as its director says it.

    n=3: "left", "middle", "right"; n=2: "left", "right"; otherwise
    "leftmost", "2nd from left", ..., "rightmost".
    """
    if not 0 <= p < n:
        raise ValueError(f"slot: position {p!r} is outside a wall of {n} cells")
    if n == 3:
        return ("left", "middle", "right")[p]
    if n == 2:
        return ("left", "right")[p]
    if p == 0:
        return "leftmost"
    if p == n - 1:
        return "rightmost"
    return f"{_ORDINAL_SUFFIX[p]} from left"


def layer_name(layer: int, height: int) -> str:
    """Name of ``layer`` (0 = ground) on a board of ``height`` layers.

    "bottom" and "top" at the ends, "middle" for the middle of three, and
    ordinals otherwise ("second", "third"): ordinals rather than "layer 2"
    so a name never collides with the 0-based "layer k" / "Lk" notation.
    """
    if not 0 <= layer < height:
        raise ValueError(f"layer: {layer!r} is outside 0..{height - 1}")
    if layer == 0:
        return "bottom"
    if layer == height - 1:
        return "top"
    if height == 3:
        return "middle"
    return _ORDINALS[layer]


# ------------------------------------------------------------------ speaking


def intent_to_text(intent_id: int, table: IntentTable) -> str:
    """Plain English for ``intent_id`` in ``table``'s seat frame; ``text_to_intent`` reads it back.

    Examples (n=3, height 3): "put a small red block on my left column,
    bottom layer", "put a large blue block across the middle and right of my
    bottom layer", "put a large green block on my left column, middle layer,
    reaching inward", "take the top block off my left column (top layer)",
    and for the no-op "Nothing to add from me."
    """
    if isinstance(intent_id, bool) or not 0 <= int(intent_id) < table.num_intents:
        raise ValueError(f"intent: id must be in 0..{table.num_intents - 1}, got {intent_id!r}")
    i = int(intent_id)
    kind = int(table.kind[i])
    if kind == INTENT_NOOP:
        return NOOP_TEXT
    p, level = int(table.slot[i]), int(table.layer[i])
    slot, layer = slot_name(p, table.n), layer_name(level, table.height)
    if kind == INTENT_REMOVE:
        return f"take the top block off my {slot} column ({layer} layer)"
    colour = COLOUR_NAMES[int(table.colour[i])]
    if kind == INTENT_SMALL:
        return f"put a small {colour} block on my {slot} column, {layer} layer"
    if int(table.direction[i]) == INWARD:
        return f"put a large {colour} block on my {slot} column, {layer} layer, reaching inward"
    if p + 1 < table.n:
        neighbour = slot_name(p + 1, table.n)
        return f"put a large {colour} block across the {slot} and {neighbour} of my {layer} layer"
    return f"put a large {colour} block on my {slot} column, {layer} layer, reaching to my right"


def intent_move(intent_id: int, table: IntentTable) -> Move | None:
    """The builder move an intent asks for, with its layer; ``None`` for the no-op or an off-board span."""
    action = int(table.action[int(intent_id)])
    if int(table.kind[int(intent_id)]) == INTENT_NOOP or action < 0:
        return None
    return action_to_move(action, table.n, int(table.layer[int(intent_id)]))


def describe_intents(table: IntentTable, mask=None) -> str:
    """A numbered menu ``"<id>: <text>"`` of the intents ``mask`` allows (all real ones if ``None``).

    Intents that denote no builder action (a large block reaching off the
    board) are left out; the no-op is always listed.
    """
    lines = []
    for i in range(table.num_intents):
        if mask is not None and not mask[i]:
            continue
        if i != INTENT_NOOP and int(table.action[i]) < 0:
            continue
        lines.append(f"{i}: {intent_to_text(i, table)}")
    return "\n".join(lines)


@lru_cache(maxsize=256)
def director_frame_description(seat: str, n: int = DEFAULT_N, height: int | None = None) -> str:
    """One paragraph telling a director model where it sits and what its left, right and inward mean.

    With ``height`` the paragraph also names every layer ("bottom = layer 0,
    ..."); without it, only that layers count up from layer 0 on the ground.
    Remembered per arguments: every director's text observation holds it.
    """
    check_size(n, DEFAULT_HEIGHT if height is None else height)
    cells = seat_cells(seat, n)
    side = {
        "left": "on the builder's left",
        "far": "across the board from the builder, on the far side",
        "right": "on the builder's right",
        "near": "beside the builder, on the near side",
    }[SEAT_SIDES[seat]]
    wall = {"D1": "column j=0", "D2": "row i=0", "D3": f"column j={n - 1}", "D0": f"row i={n - 1}"}[seat]
    inner = inward_cell(seat, cells[0], n)
    inward = {"D1": "column j=1", "D2": "row i=1", "D3": f"column j={n - 2}", "D0": f"row i={n - 2}"}[seat]
    named = [f"your {slot_name(p, n)} column is {format_position(c)}" for p, c in enumerate(cells)]
    names = ", ".join(named[:-1]) + " and " + named[-1]
    di, dj = cells[1][0] - cells[0][0], cells[1][1] - cells[0][1]
    along = {
        (1, 0): "towards the builder (increasing row i)",
        (-1, 0): "away from the builder (decreasing row i)",
        (0, 1): "towards the builder's right (increasing column j)",
        (0, -1): "towards the builder's left (decreasing column j)",
    }[(di, dj)]
    if height is None:
        layers = "the bottom layer is layer 0, L0"
    else:
        layers = ", ".join(f"{layer_name(k, height)} = layer {k}" for k in range(height))
    same = "are" if (di, dj) == (0, 1) else "are not"
    return (
        f"You are {seat}, a director at the {n}x{n} board, sitting {side}. You see only the outer wall "
        f"on your side ({wall}), every layer, and you describe it from your own seat: left to right you see "
        f"{', '.join(format_position(c) for c in cells)}, so {names}. Your left and right {same} the "
        f"builder's: going to your right along your wall means moving {along}. Layers count up from the "
        f"ground ({layers}). A large block lies either along your wall (across two neighbouring columns "
        f"of your picture) or reaching inward, one step into the board away from you, towards {inward} "
        f"(for example from {format_position(cells[0])} to {format_position(inner)}). The builder uses "
        f"board coordinates (row i, column j), with row 0 the far row and column 0 the builder's left."
    )


# ------------------------------------------------------------------ listening

_INWARD_RE = re.compile(
    r"(?:\b(?:reaching|going|pointing|extending|running|sticking|stretching|spanning|heading|lying|laid"
    r"|facing)"
    r"\s+)?(?:\binwards?\b|\binto\s+the\s+(?:board|middle|grid|centre|center|structure|inside|interior)\b"
    r"|\btowards?\s+the\s+(?:centre|center|middle|inside|interior)\b|\baway\s+from\s+me\b"
    r"|\bdeeper\b|\b(?:reaching|going|pointing|extending)\s+in\b)"
)
_NOT_A_SLOT = r"(?!\s+(?:column|slot|side|one|position|of|cell|end|corner|half|edge|spot|block|hand))"
_ALONG_RIGHT_RE = re.compile(
    r"(?:\b(?:reaching|going|pointing|extending|running|stretching|spanning|heading|lying)\s+)?"
    r"(?:\b(?:to|towards?|into)\s+(?:my|the)\s+right\b" + _NOT_A_SLOT + r"|\brightwards?\b"
    r"|\b(?:reaching|going|pointing|extending|running|stretching|heading)\s+right\b" + _NOT_A_SLOT + ")"
)
_ALONG_LEFT_RE = re.compile(
    r"(?:\b(?:reaching|going|pointing|extending|running|stretching|spanning|heading|lying)\s+)?"
    r"(?:\b(?:to|towards?|into)\s+(?:my|the)\s+left\b" + _NOT_A_SLOT + r"|\bleftwards?\b"
    r"|\b(?:reaching|going|pointing|extending|running|stretching|heading)\s+left\b" + _NOT_A_SLOT + ")"
)
_TOP_BLOCK_RE = re.compile(r"\btop\s+(?:block|piece|one|cube|brick)s?\b|\bon\s+top(?:\s+of)?\b|\btop\s+of\b")
_LAYER_WORD = r"(?:layer|row|level|tier|floor|course)s?"
_NAMED_LAYER_RE = re.compile(
    r"\b(bottom|bottommost|lowest|ground|base|first|1st|second|2nd|third|3rd|fourth|4th|fifth|5th"
    r"|middle|top|topmost|highest|uppermost)\s+" + _LAYER_WORD + r"\b"
)
_NUMBERED_LAYER_RE = re.compile(r"\b(?:layer|row|level|tier)\s*(?:[#:=]\s*)?(\d{1,2})\b|\bl\s?(\d)\b")
_BARE_LAYER_RE = re.compile(r"\b(?:on\s+)?(?:the\s+)?(ground|bottom|bottommost|top|topmost)\b")
_LAYER_WORDS = {
    "bottom": 0, "bottommost": 0, "lowest": 0, "ground": 0, "base": 0, "first": 0, "1st": 0,
    "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3, "fifth": 4, "5th": 4,
}
_FROM_SLOT_RE = re.compile(
    r"\b(1st|2nd|3rd|4th|5th|6th|first|second|third|fourth|fifth|sixth)\s+(?:one\s+|column\s+|slot\s+)?"
    r"from\s+(?:the\s+|my\s+)?(left|right)\b"
)
_END_SLOT_RE = re.compile(r"\b(?:(leftmost|left\s+most|far\s+left)|(rightmost|right\s+most|far\s+right))\b")
_ORDINAL_SLOT_RE = re.compile(
    r"\b(1st|2nd|3rd|4th|5th|6th|first|second|third|fourth|fifth|sixth)\s+"
    r"(?:column|slot|position|spot|cell)\b"
)
_SIMPLE_SLOT_RE = re.compile(r"\b(left|right|middle|central|centre|center)\b")
_REMOVE_RE = re.compile(
    r"\b(?:remove|removing|delete|deleting|take|taking|get\s+rid\s+of|getting\s+rid\s+of|pick\s+up|lift"
    r"|clear|undo|knock\s+off)\b"
)
_VERB_SPLIT_RE = re.compile(
    r"\b(?=(?:place|put|add|stack|set|drop|build|lay|remove|delete|take|get\s+rid\s+of|pick\s+up|lift"
    r"|undo)\b)|\b(?:and\s+)?then\b|\balso\b|(?:,|\band)\s+(?=(?:a|an|another)\s)"
)
_SENTENCE_RE = re.compile(r"[.!?;\n]+(?!\d)")
_NOT_AN_INSTRUCTION_RE = re.compile(
    r"\b(?:confirm\w*|already|keep|leave|don'?t|do\s+not|never"
    r"|(?:is|are|looks?)\s+(?:correct|right|good|fine))\b"
)
_OTHER_SEAT_RE = re.compile(r"\b(?:d|director\s*)([0-3])(?:'s|s)\b")
_NOOP_RE = re.compile(
    r"\b(?:nothing\s+(?:to\s+add|more|else|from\s+me|new|to\s+do|needed|to\s+change)|no\s+changes?"
    r"|no\s+instructions?|no\s+op|noop|pass|i\s+have\s+nothing|all\s+(?:good|done|set)"
    r"|(?:my\s+wall|it|everything)\s+(?:is|looks)\s+(?:done|complete|finished|correct|right|good)|wait)\b"
)


class _Miss(Exception):
    """A clause that named no intent; ``score`` ranks how informative ``reason`` is."""

    def __init__(self, reason: str, score: int) -> None:
        super().__init__(reason)
        self.reason = reason
        self.score = score


def _normalise(text: str) -> str:
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return re.sub(r"[-_\u2013\u2014]+", " ", text)


def _blank(text: str, match: re.Match) -> str:
    return text[: match.start()] + " " * (match.end() - match.start()) + text[match.end():]


def _take_all(regex: re.Pattern, text: str) -> tuple[list[re.Match], str]:
    matches = list(regex.finditer(text))
    for match in matches:
        text = _blank(text, match)
    return matches, text


def _ordinal_index(word: str) -> int:
    return _ORDINALS.index(word) if word in _ORDINALS else _ORDINAL_SUFFIX.index(word)


def _layer_from_word(word: str, height: int) -> int:
    if word in ("top", "topmost", "highest", "uppermost"):
        return height - 1
    if word == "middle":
        if height % 2 == 0:
            raise _Miss(f"there is no single middle layer on a board of height {height}", 2)
        return height // 2
    return _LAYER_WORDS[word]


def _find_layer(text: str, height: int) -> tuple[int | None, str]:
    """The first layer named in ``text`` and the text with every layer phrase blanked."""
    found: list[tuple[int, int]] = []
    named, text = _take_all(_NAMED_LAYER_RE, text)
    found += [(m.start(), _layer_from_word(m.group(1), height)) for m in named]
    numbered, text = _take_all(_NUMBERED_LAYER_RE, text)
    found += [(m.start(), int(m.group(1) or m.group(2))) for m in numbered]
    if not found:
        bare, text = _take_all(_BARE_LAYER_RE, text)
        found += [(m.start(), _layer_from_word(m.group(1), height)) for m in bare]
    if not found:
        return None, text
    layer = min(found)[1]
    if not 0 <= layer < height:
        raise _Miss(f"layer {layer} is outside the board (layers 0..{height - 1}, 0 is the ground)", 2)
    return layer, text


def _find_slots(text: str, n: int) -> list[int]:
    """Wall positions named in ``text``, in the order written, without repeats."""
    found: list[tuple[int, int]] = []
    matches, text = _take_all(_FROM_SLOT_RE, text)
    for m in matches:
        k = _ordinal_index(m.group(1))
        found.append((m.start(), k if m.group(2) == "left" else n - 1 - k))
    matches, text = _take_all(_END_SLOT_RE, text)
    found += [(m.start(), 0 if m.group(1) else n - 1) for m in matches]
    matches, text = _take_all(_ORDINAL_SLOT_RE, text)
    found += [(m.start(), _ordinal_index(m.group(1))) for m in matches]
    for m in _SIMPLE_SLOT_RE.finditer(text):
        word = m.group(1)
        if word == "left":
            found.append((m.start(), 0))
        elif word == "right":
            found.append((m.start(), n - 1))
        elif n % 2 == 1:
            found.append((m.start(), n // 2))
        else:
            raise _Miss(f"a wall of {n} cells has no single middle column; say e.g. '2nd from left'", 2)
    slots: list[int] = []
    for _, p in sorted(found):
        if not 0 <= p < n:
            raise _Miss(f"there is no such column on a wall of {n} cells", 2)
        if p not in slots:
            slots.append(p)
    return slots


def _clause_intent(clause: str, table: IntentTable) -> int:
    """The intent named by one normalised clause, or ``_Miss``."""
    n, height = table.n, table.height
    direction = None
    for regex, value in ((_INWARD_RE, INWARD), (_ALONG_RIGHT_RE, ALONG_RIGHT), (_ALONG_LEFT_RE, -1)):
        match = regex.search(clause)
        if match and direction is None:
            direction = value
        clause = regex.sub(lambda m: " " * (m.end() - m.start()), clause)
    clause = _TOP_BLOCK_RE.sub(lambda m: " " * (m.end() - m.start()), clause)
    layer, clause = _find_layer(clause, height)
    slots = _find_slots(clause, n)
    if _REMOVE_RE.search(clause):
        if not slots:
            raise _Miss("say which column of your wall to take the top block off (e.g. 'my left column')", 1)
        if layer is None:
            raise _Miss("say which layer the block to remove is on (e.g. 'top layer')", 1)
        return table.remove(min(slots), layer)
    colour, _, unknown_colour = find_colour(clause)
    large, unknown_size = find_size(clause)
    if colour is None:
        if unknown_colour:
            raise _Miss(f"unknown colour {unknown_colour!r}: blocks are {', '.join(COLOUR_NAMES)}", 2)
        raise _Miss("say the block's colour (green, blue, red, yellow or orange)", 1 if slots else 0)
    if large is None and unknown_size:
        raise _Miss(f"unknown size {unknown_size!r}: blocks are small (one cell) or large (two cells)", 2)
    if not slots:
        raise _Miss("say which column of your wall (e.g. 'my left column')", 1)
    if layer is None:
        raise _Miss("say which layer (e.g. 'bottom layer')", 1)
    if large is None:
        large = direction is not None or len(slots) == 2
    if not large:
        if len(slots) > 1:
            raise _Miss("a small block goes on one column; name only one", 2)
        return table.small(slots[0], layer, colour)
    if direction is None:
        if len(slots) != 2:
            raise _Miss("say where the large block's other half goes: across two columns, or inward", 2)
        a, b = sorted(slots)
        if b - a != 1:
            raise _Miss("a large block covers two neighbouring columns", 2)
        return table.large(a, layer, colour, ALONG_RIGHT)
    if direction == INWARD:
        return table.large(slots[0], layer, colour, INWARD)
    if direction == ALONG_RIGHT:
        return table.large(min(slots), layer, colour, ALONG_RIGHT)
    start = max(slots) - 1
    if start < 0:
        raise _Miss("a large block reaching to the left of your leftmost column is off the board", 2)
    return table.large(start, layer, colour, ALONG_RIGHT)


def _coordinate_intent(clause: str, table: IntentTable) -> int | None:
    """A clause naming board cells ("place ol (0,1)-(0,2) L0"): its intent, if on this seat's wall."""
    try:
        move = parse_move(clause, table.n, table.height)
    except (ParseError, ValueError):
        return None
    if move.action == "noop" or move.layer is None:
        return None
    intent = intent_for_action(table, move.to_action(table.n), move.layer)
    return intent if intent >= 0 else None


def _clauses(text: str):
    """Clauses of ``text`` (sentences cut before verbs and at "then"/"and a"), and whether each is negated.

    A clause is negated when the words just before its verb say so ("Don't
    remove ...", "no need to add ...").
    """
    for sentence in islice(_SENTENCE_RE.split(text), _MAX_CLAUSES):
        previous = ""
        for clause in _VERB_SPLIT_RE.split(sentence):
            if clause and clause.strip():
                yield clause[:_MAX_CLAUSE_CHARS], negated(previous)
                previous = clause


def _scan(text: str, table: IntentTable) -> tuple[list[int], _Miss | None]:
    """Every intent in ``text`` (in order, without repeats) and the most informative miss."""
    intents: list[int] = []
    best: _Miss | None = None
    own = table.seat[1:]
    for count, (raw_clause, negated) in enumerate(_clauses(text)):
        if count >= _MAX_CLAUSES:
            break
        if negated:
            continue
        if find_positions(raw_clause):
            intent = _coordinate_intent(raw_clause.lower(), table)
            if intent is not None:
                if intent not in intents:
                    intents.append(intent)
                continue
        clause = _normalise(raw_clause)
        if _NOT_AN_INSTRUCTION_RE.search(clause):
            continue
        if any(m.group(1) != own for m in _OTHER_SEAT_RE.finditer(clause)):
            continue
        try:
            intent = _clause_intent(clause, table)
        except _Miss as miss:
            if best is None or miss.score > best.score:
                best = miss
            continue
        if intent not in intents:
            intents.append(intent)
    return intents, best


def _check_text(text: object) -> str:
    if not isinstance(text, str):
        raise ParseError(f"expected text, got {type(text).__name__}", text)
    return bound_text(text)


def text_to_intent(text: str, table: IntentTable) -> int:
    """The intent id ``text`` asks for, read in ``table``'s seat frame (the inverse of ``intent_to_text``).

    Tolerates paraphrase: colour names or codes, "big"/"large"/"long"/
    "domino", "small"/"single", "bottom row"/"first layer"/"layer 0"/"L0"/
    "ground", "take off"/"remove"/"get rid of", "middle and right" in either
    order, "reaching inward"/"into the board"/"toward the centre". A
    statement that there is nothing to add is the no-op (0). The first
    instruction wins when there are several. Raises ``ParseError``.
    """
    raw, text = text, _check_text(text)
    intents, best = _scan(text, table)
    if intents:
        return intents[0]
    if _NOOP_RE.search(_normalise(text[:_MAX_CLAUSE_CHARS * 4])):
        return INTENT_NOOP
    if best is not None and best.score > 0:
        raise ParseError(best.reason, raw)
    raise ParseError("no instruction found: expected e.g. 'put a small red block on my left column, "
                     "bottom layer' or 'Nothing to add from me.'", raw)


def parse_director_message(
    text: str, seat: str, n: int = DEFAULT_N, height: int = DEFAULT_HEIGHT
) -> list[int]:
    """Every intent in a free-form director message from ``seat``, in order, without repeats.

    Sentences and clauses ("..., then ...", "... and a large ...") are read
    one by one; clauses that confirm, negate ("don't ..."), or talk about
    another director's wall ("D1's bottom layer") are skipped, and so is
    anything not understood. A message that only says there is nothing to
    add gives ``[0]`` (the no-op intent); a message with nothing usable
    gives ``[]``. Never raises on text.

    The reading depends on nothing but its arguments, and games say the
    same sentences over and over (a scripted director's every message is
    one of its seat's intent texts), so messages up to ``_MEMO_CHARS``
    characters are read once and remembered (``_MEMO_SIZE`` of them).
    """

    if not isinstance(text, str):
        return []
    if len(text) <= _MEMO_CHARS:
        return list(_memo_parse(str(text), seat, n, height))
    return _parse(text, seat, n, height)


#: How long a message may be to be remembered, and how many are (a few MB at most).
_MEMO_CHARS = 1000
_MEMO_SIZE = 8192


@lru_cache(maxsize=_MEMO_SIZE)
def _memo_parse(text: str, seat: str, n: int, height: int) -> tuple[int, ...]:
    return tuple(_parse(text, seat, n, height))


def _parse(text: str, seat: str, n: int, height: int) -> list[int]:
    text = bound_text(text)
    table = intent_table(seat, n, height)
    intents, _ = _scan(text, table)
    if not intents and _NOOP_RE.search(_normalise(text[:_MAX_CLAUSE_CHARS * 4])):
        return [INTENT_NOOP]
    return intents


def named_information(text: object) -> frozenset[str]:
    """Which kinds of game information ``text`` names: a subset of ``{"block", "position", "layer"}``.

    The words are the ones this module reads instructions with: a block is
    a colour (name, code, or letter beside a block word) or a size word; a
    layer is a layer phrase ("bottom layer", "layer 1", "L0", "on the
    ground", "top"); a position is a board cell in coordinates ("(1,2)",
    "row 1 col 2") or a column of a wall ("left", "middle", "2nd from
    right") once the layer phrases are set aside ("middle layer" names a
    layer only). Nothing is checked against a board size. Never raises on
    text; anything that is not text names nothing.
    """
    if not isinstance(text, str):
        return frozenset()
    text = _normalise(bound_text(text))
    found = set()
    if find_colour(text)[0] is not None or find_size(text)[0] is not None:
        found.add("block")
    layers = [m.span() for regex in _LAYER_PHRASES for m in regex.finditer(text)]
    if layers:
        found.add("layer")
    slots = (m.start() for regex in _SLOT_PHRASES for m in regex.finditer(text))
    if find_positions(text) or any(not any(a <= start < b for a, b in layers) for start in slots):
        found.add("position")
    return frozenset(found)


_LAYER_PHRASES = (_NAMED_LAYER_RE, _NUMBERED_LAYER_RE, _BARE_LAYER_RE)
_SLOT_PHRASES = (_FROM_SLOT_RE, _END_SLOT_RE, _ORDINAL_SLOT_RE, _SIMPLE_SLOT_RE)
