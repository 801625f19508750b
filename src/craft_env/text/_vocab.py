"""Words shared by the move parser and the director-speech parser.

Kept in one place so that "large", "domino", "gl" or "orange" mean the same
thing whether a builder or a director wrote them.
"""

from __future__ import annotations

import re

from craft_env.core.encoding import COLOUR_NAMES, COLOURS

COLOUR_INDEX = {name: index for index, name in enumerate(COLOUR_NAMES)}

#: Colour words a model might use that are not in the game; naming one is a
#: parse error with that word in the reason instead of a silent guess.
OTHER_COLOURS = (
    "purple", "violet", "pink", "white", "black", "brown", "grey", "gray", "cyan", "magenta",
    "indigo", "teal", "gold", "golden", "silver", "beige", "turquoise", "lime", "navy", "maroon",
    "tan", "crimson", "amber",
)

_CODE_RE = re.compile(r"\b([gbryo])([sl])\b")
_NAME_RE = re.compile(r"\b(green|blue|red|yellow|orange)s?\b")
_LETTER_RE = re.compile(
    r"\bcolou?r\s*(?:[:=]\s*)?([gbryo])\b"
    r"|\b([gbryo])\s+(?=(?:block|piece|cube|brick|small|large|big|long|domino|single)\b)"
    r"|\b(?:small|large|single|big|long)\s+([gbryo])\b(?!')"
)
_OTHER_COLOUR_RE = re.compile(r"\b(" + "|".join(OTHER_COLOURS) + r")\b")

_LARGE_RE = re.compile(
    r"\b(large|big|long|domino(?:es)?|double|wide|huge|giant|2\s*x\s*1|1\s*x\s*2|two[\s-]cell|2[\s-]cell"
    r"|two[\s-]wide|2[\s-]wide)\b"
)
_SMALL_RE = re.compile(r"\b(small|little|tiny|1\s*x\s*1|one[\s-]cell|1[\s-]cell|one[\s-]wide|1[\s-]wide)\b")
_WEAK_SMALL_RE = re.compile(r"\b(single|cube)\b")
_OTHER_SIZE_RE = re.compile(r"\b(medium|mid[\s-]?sized?|triple|3\s*x\s*1|1\s*x\s*3|tall|half[\s-]sized?)\b")

#: The negation rule (docs/robustness.md, "Refusals are no moves"), shared by every parser. A move verb is
#: refused when (a) the words just before it give a reason or an alternative instead of an instruction
#: ("because placing ...", "instead of placing ...", "no need to add ..."), or (b) a refusing word stands
#: anywhere before it in its clause ("I will not, under any circumstances, place ...", "I refuse to
#: place ...", "I decided against placing ..."). A clause starts after a sentence end (. ! ? ; : or a
#: line break), after a word that turns the sentence ("but", "however", "yet", "so", "then", "therefore",
#: "thus", "anyway"), after a comma that a new subject follows (", I'll ...", ", let me ...") and after
#: the previous verb; so "Not sure, but place ..." and "Don't worry, I will place ..." still play.
_REASON_BEFORE_RE = re.compile(
    r"(?:\b(?:no\s+need\s+to|stop|instead\s+of|rather\s+than|without|because|since))\s*$"
)
_CLAUSE_START_RE = re.compile(
    r"[.!?;:\n]|\b(?:but|however|yet|so|then|therefore|thus|anyway)\b"
    r"|,\s*(?=(?:i|we|let\s+me|let's|you)\b)"
)
_REFUSING_RE = re.compile(
    r"\b(?:not|never|cannot|refus(?:e|es|ed|ing)|declin(?:e|es|ed|ing)|against|avoid(?:s|ed|ing)?|neither"
    r"|nor|no\s+way|under\s+no\s+circumstances|by\s+no\s+means|in\s+no\s+way|dont|wont|cant)\b|n't\b"
)
#: How far before a verb the rule looks (a clause is cut there).
_NEGATION_WINDOW = 200

#: The longest text a parser reads whole. Longer text is read as its head and
#: its tail (half of this each): a reply of a megabyte then costs what one of
#: this length costs, and both a move written first (a ``<move>`` tag) and
#: one concluded last survive. See docs/robustness.md.
MAX_PARSE_CHARS = 60_000

_FENCE_RE = re.compile(r"^[ \t]*(```|~~~)[\w+-]*[ \t]*$", re.MULTILINE)


def bound_text(text: str, limit: int = MAX_PARSE_CHARS) -> str:
    """``text`` itself, or its first and last ``limit // 2`` characters when it is longer than ``limit``."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return text[:half] + "\n" + text[-half:]


def negated(before: str) -> bool:
    """Whether the words before a verb (``before``: same sentence, since the previous verb) refuse it.

    The rule is stated above ``_REASON_BEFORE_RE``; one regex scan of at most ``_NEGATION_WINDOW``
    characters per verb, so every parser stays linear. Shared by the builder's move parser and the
    director-speech parser so a refusal reads the same whoever writes it.
    """
    tail = before[-_NEGATION_WINDOW:].lower().replace("\u2019", "'")
    if _REASON_BEFORE_RE.search(tail):
        return True
    start = 0
    for boundary in _CLAUSE_START_RE.finditer(tail):
        start = boundary.end()
    return _REFUSING_RE.search(tail, start) is not None


def strip_fences(text: str) -> str:
    """Drop Markdown code-fence lines (```` ```json ```` ...) and inline backticks, keeping their content."""
    return _FENCE_RE.sub("", text).replace("`", " ")


def find_code(text: str) -> re.Match | None:
    """The first two-letter block code (``gs``, ``bl``...) in lower-case ``text``."""
    return _CODE_RE.search(text)


def find_colour(text: str) -> tuple[int | None, int, str | None]:
    """Earliest colour in lower-case ``text``: ``(colour, offset, unknown_word)``.

    A colour is a name (``orange``), a block code (``os``) or a lone letter
    next to a block word (``r block``, ``small g``). When there is none,
    ``unknown_word`` is a non-game colour the text names (``purple``), so the
    caller can say what was wrong.
    """
    best: tuple[int, int] | None = None
    for regex in (_NAME_RE, _CODE_RE, _LETTER_RE):
        match = regex.search(text)
        if match is None:
            continue
        word = next(g for g in match.groups() if g)
        colour = COLOUR_INDEX[word] if len(word) > 1 else COLOURS.index(word)
        if best is None or match.start() < best[1]:
            best = (colour, match.start())
    if best is not None:
        return best[0], best[1], None
    other = _OTHER_COLOUR_RE.search(text)
    return None, -1, other.group(1) if other else None


def find_size(text: str) -> tuple[bool | None, str | None]:
    """Whether lower-case ``text`` names a large block: ``(is_large or None, unknown_size_word)``.

    A block code decides; otherwise the earliest size word ("large", "domino",
    "small", ...), with "single"/"cube" only as a last resort because they
    also appear next to real size words ("a single large block").
    """
    code = _CODE_RE.search(text)
    if code:
        return code.group(2) == "l", None
    large, small = _LARGE_RE.search(text), _SMALL_RE.search(text)
    if large and small:
        return large.start() < small.start(), None
    if large or small:
        return bool(large), None
    if _WEAK_SMALL_RE.search(text):
        return False, None
    other = _OTHER_SIZE_RE.search(text)
    return None, other.group(1) if other else None
