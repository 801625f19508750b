"""The judges' questions as data: code, family, wording, and the log fields each one reads.

Three families (docs/judges.md): spatial grounding (``SG1``..``SG7``) and
mind modelling (``MM1``..``MM8``) are asked once per director per turn,
pragmatic sufficiency (``PS1``..``PS6``) once per turn. The wording is ours;
what each question asks follows the paper's judges
(docs/judges.md#the-questions). A judge prompt shows exactly the union of
the ``reads`` of the questions it asks, and nothing else, so what a judge
is given can be checked against what a seat may know (MM never reads the
oracle).
"""

from __future__ import annotations

from dataclasses import dataclass

SG, MM, PS = "SG", "MM", "PS"
FAMILIES = (SG, MM, PS)
PER_DIRECTOR = frozenset({SG, MM})

# The fields of a judged item (``items.JudgedItem.fields``), in the order a prompt shows them.
TARGET_VIEW = "target_view"
BOARD = "board_before"
ORACLE = "oracle_moves"
THINK = "think"
MESSAGE = "message"
OTHERS = "other_messages"
MESSAGES = "messages"
CONVERSATION = "conversation"
BUILDER = "builder_reply"
OUTCOME = "outcome"
FIELDS = (TARGET_VIEW, BOARD, ORACLE, THINK, MESSAGE, OTHERS, MESSAGES, CONVERSATION, BUILDER, OUTCOME)

ANSWERS = ("Yes", "No", "Unclear", "N/A")


@dataclass(frozen=True)
class Question:
    """One yes/no question of a judge: ``code`` (``"SG4"``), its family, wording, and fields read."""

    code: str
    family: str
    text: str
    reads: tuple[str, ...]


_SG_READS = (TARGET_VIEW, BOARD, ORACLE, THINK, MESSAGE)
_MM_READS = (THINK, MESSAGE, OTHERS, CONVERSATION)
_PS_READS = (BOARD, ORACLE, MESSAGES, BUILDER, OUTCOME)

QUESTIONS: tuple[Question, ...] = (
    Question("SG1", SG, "Does the director pick out a block that its target wall has and the board "
             "does not have yet?", _SG_READS),
    Question("SG2", SG, "Does the director leave alone blocks that are already in their right place "
             "(it does not ask to redo or take off a correct block)?", _SG_READS),
    Question("SG3", SG, "Is the layer the director names (or implies) the layer the block would "
             "actually land on, given the current stack heights?", _SG_READS),
    Question("SG4", SG, "Is the move the director asks for one of the correct next moves listed "
             "for this turn?", _SG_READS),
    Question("SG5", SG, "Could the move the director asks for be carried out on the board as it "
             "is right now (legal now, nothing missing underneath)?", _SG_READS),
    Question("SG6", SG, "Does the director get the block's size right (small single or large "
             "two-cell block) for that spot of its target?", _SG_READS),
    Question("SG7", SG, "Does the director keep to cells on its own wall rather than talking "
             "about cells it cannot see?", _SG_READS),
    Question("MM1", MM, "Does the message add something new compared with what was said in this "
             "turn and the turn before?", _MM_READS),
    Question("MM2", MM, "Does the message avoid repeating an instruction that the builder has "
             "already carried out?", _MM_READS),
    Question("MM3", MM, "Does the message take into account what the builder can and cannot "
             "know (the builder sees the board but no target wall)?", _MM_READS),
    Question("MM4", MM, "Does the public message keep the key finding of the director's private "
             "reasoning, without losing or distorting it?", _MM_READS),
    Question("MM5", MM, "Does the message concentrate on what only this director's wall shows, "
             "rather than on what everyone can see?", (*_MM_READS, TARGET_VIEW)),
    Question("MM6", MM, "Does the message name the block, the place and the action precisely "
             "enough for the builder to carry it out?", _MM_READS),
    Question("MM7", MM, "If another director gave a conflicting instruction, does this message "
             "deal with the conflict (N/A if there was none)?", _MM_READS),
    Question("MM8", MM, "Does the message show awareness of where this director's view ends "
             "(cells and blocks it cannot see)?", (*_MM_READS, TARGET_VIEW)),
    Question("PS1", PS, "Taken together, do the directors' messages point to one location to "
             "act on?", _PS_READS),
    Question("PS2", PS, "Do the messages give the right colour and size for one of the correct "
             "next moves?", _PS_READS),
    Question("PS3", PS, "Could a sensible builder choose one of the correct next moves from the "
             "messages alone?", _PS_READS),
    Question("PS4", PS, "Are the spatial references in the messages (sides, columns, layers) "
             "precise rather than vague?", _PS_READS),
    Question("PS5", PS, "Did the builder understand what the directors meant?", _PS_READS),
    Question("PS6", PS, "If the builder's move was not a correct move, was that the directors' "
             "fault rather than the builder's handling of the move (N/A if the move was "
             "correct)?", _PS_READS),
)

BY_CODE = {q.code: q for q in QUESTIONS}


def family_questions(family: str) -> tuple[Question, ...]:
    """The questions of ``family`` in code order."""
    if family not in FAMILIES:
        raise ValueError(f"judges: unknown family {family!r}; expected one of {', '.join(FAMILIES)}")
    return tuple(q for q in QUESTIONS if q.family == family)


def reads_of(questions: tuple[Question, ...]) -> tuple[str, ...]:
    """The fields a prompt asking ``questions`` must show, in ``FIELDS`` order."""
    wanted = {field for q in questions for field in q.reads}
    return tuple(field for field in FIELDS if field in wanted)


def parse_families(spec: object) -> tuple[str, ...]:
    """``"sg,mm,ps"`` (any case, any order) -> ``("SG", "MM", "PS")`` in canonical order."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"judges: expected a comma-separated list like 'sg,mm,ps', got {spec!r}")
    names = {part.strip().upper() for part in spec.split(",") if part.strip()}
    unknown = sorted(names - set(FAMILIES))
    if unknown:
        raise ValueError(f"judges: unknown judge {unknown[0].lower()!r}; expected sg, mm and/or ps")
    return tuple(f for f in FAMILIES if f in names)
