"""The prompts language-model agents see, written from ``docs/rules.md`` and ``docs/environment.md``.

A prompt is a system message (the game's rules, the agent's role, and the
answer format) and a user message (the agent's text observation from the
environment: seat and frame, private target wall, board, conversation,
candidates). Change anything here and bump ``PROMPT_VERSION``: the version
goes into every run's config and log, so results from different prompts
are never mixed silently (and the replay cache keys change with the text).

Directors get one of five personality archetypes (the paper's names,
descriptions in our own words), fixed per (structure index, run, seat) by a
sha256 hash, never by Python's process-salted ``hash()``. Protocol ``paper``
uses the paper's own assignment instead (``paper_archetype_for``) and adds
a paragraph on the paper's rules to both system prompts.
"""

from __future__ import annotations

import functools
import hashlib
import random
from typing import Any, Sequence

from craft_env.core.protocol import ARCHETYPES_PAPER, CRAFT, Protocol
from craft_env.core.views import DEFAULT_SEATS

PROMPT_VERSION = "craft-prompts-v1"

ARCHETYPES: dict[str, str] = {
    "assertive": (
        "You are confident and direct. You form a view quickly, say it plainly, and change it "
        "when another director gives you good evidence."
    ),
    "cautious": (
        "You are careful and methodical. You check what the others have said against what you "
        "see before adding your own reading, and you prefer one safe step to a risky one."
    ),
    "observant": (
        "You notice patterns and things that do not fit. You point out contradictions between "
        "the directors and link what different walls show."
    ),
    "skeptical": (
        "You question assumptions, your own included. You test claims before you accept them and "
        "you are at ease saying what you are unsure of."
    ),
    "synthesizer": (
        "You pull everyone's observations together into one picture, reconcile disagreements, "
        "and steer the group toward a shared plan."
    ),
}
ARCHETYPE_NAMES = tuple(ARCHETYPES)


@functools.lru_cache(maxsize=4096)  # every director turn asks; a game asks the same three
def archetype_for(structure_index: int, run: int, seat: str) -> str:
    """The archetype of director ``seat`` in game (``structure_index``, ``run``): stable across processes."""
    digest = hashlib.sha256(f"craft-archetype:{structure_index}:{run}:{seat}".encode()).digest()
    return ARCHETYPE_NAMES[int.from_bytes(digest[:8], "big") % len(ARCHETYPE_NAMES)]


@functools.lru_cache(maxsize=4096)
def paper_archetype_for(structure_index: int, run: int, seat: str) -> str:
    """The paper's archetype of ``seat`` for 0-based ``structure_index`` and ``run`` (its ``--run``).

    The paper seeds ``random.Random`` with CPython's hash of the int tuple
    (index, director 0..2, run) modulo 2**32 and picks from the five names
    in the order of ``ARCHETYPE_NAMES``. The hash of a tuple of small ints
    is the same in every process (only str/bytes hashes are salted).
    """
    seed = hash((int(structure_index), int(seat[1:]) - 1, int(run))) % 2**32
    return random.Random(seed).choice(ARCHETYPE_NAMES)


def archetype_of(protocol: Protocol, structure_index: int, run: int, seat: str) -> str:
    """The archetype of ``seat`` in game (``structure_index``, ``run``) as ``protocol`` assigns it."""
    if protocol.archetypes == ARCHETYPES_PAPER:
        return paper_archetype_for(structure_index, run, seat)
    return archetype_for(structure_index, run, seat)


PAPER_RULES = (
    "Rules of this game (the paper's protocol). Each turn three speaking slots are drawn at random "
    "among the directors, so a director may speak twice or not at all. A large block may not touch a "
    "cell that is on no director's wall. The game is won once the structure is at least 95% right."
)
PAPER_DIRECTOR_SEES = (
    "You see only the three walls of the current board, and the conversation as it stood before this "
    "turn began (not what the others say this turn)."
)
_COUNTS = {1: "one", 2: "two", 3: "three", 4: "four"}
#: Where each seat sits, as the rules paragraph says it.
SEAT_PLACES = {
    "D0": "D0 beside the builder on the near side",
    "D1": "D1 on the builder's left",
    "D2": "D2 on the far side",
    "D3": "D3 on the builder's right",
}


def _seated(seats: Sequence[str]) -> str:
    """The rules' sentence naming the seated directors (the paper's wording for the default seats)."""
    places = ", ".join(SEAT_PLACES[seat] for seat in seats)
    if len(seats) == 1:
        return f"One director sits at the grid: {places}."
    return f"{_COUNTS[len(seats)].capitalize()} directors sit around the grid: {places}."


def _seat_list(seats: Sequence[str]) -> str:
    """``D1, D2 or D3``: the seats a builder may name."""
    return seats[0] if len(seats) == 1 else ", ".join(seats[:-1]) + " or " + seats[-1]


def _paper_notes(seats: Sequence[str], sees: str) -> list[str]:
    """The paper protocol's paragraphs, counted for ``seats`` (its own wording at the default seats)."""
    count = _COUNTS[len(seats)]
    rules = PAPER_RULES.replace("three speaking slots", f"{count} speaking slot{'s' * (len(seats) > 1)}")
    return [rules, sees.replace("the three walls", f"the {count} wall{'s' * (len(seats) > 1)}")]
PAPER_BUILDER_SEES = "You see the whole board but only this turn's messages, not earlier turns."


def _rules(n: int, height: int, seats: Sequence[str] = DEFAULT_SEATS) -> str:
    last = n - 1
    return (
        f"The game. A builder is assembling a structure of coloured blocks on a {n}x{n} grid, at most "
        f"{height} layers high. A cell is (row, column): row 0 is the far side, row {last} the near side "
        f"where the builder sits; column 0 is the builder's left, column {last} the builder's right. Layer 0 "
        "is the ground. Blocks are green, blue, red, yellow or orange, and small (one cell) or large (two "
        "neighbouring cells on the same layer). A block always lands on top of the stack below it; only "
        "the top block of a stack can be removed, and a large block only when nothing sits on either half.\n"
        f"{_seated(seats)} Each director privately sees only the outer wall of the target structure on its "
        "own side, every layer, from where it sits. A large block looks small to a director who sees only "
        "one of its halves. Some cells are on no director's wall. The builder never sees the target.\n"
        "Every turn each director sends one message, then the builder makes one move or asks a question. "
        "The team wins when the board equals the target."
    )


def _protocol_notes(protocol: Protocol, sees: str, seats: Sequence[str] = DEFAULT_SEATS) -> list[str]:
    return _paper_notes(seats, sees) if protocol.directors_see_walls else []


def director_system_prompt(
    seat: str, archetype: str, n: int, height: int, protocol: Protocol = CRAFT,
    seats: Sequence[str] = DEFAULT_SEATS,
) -> str:
    """The director's standing instructions: rules, seat, personality, answer format."""
    if archetype not in ARCHETYPES:
        raise ValueError(f"archetype: expected one of {', '.join(ARCHETYPE_NAMES)}, got {archetype!r}")
    return _director_system_prompt(seat, archetype, n, height, protocol, tuple(seats))


@functools.lru_cache(maxsize=1024)  # asked for on every turn; the same few settings all run long
def _director_system_prompt(
    seat: str, archetype: str, n: int, height: int, protocol: Protocol, seats: tuple[str, ...]
) -> str:
    return "\n\n".join(
        [
            f"You are director {seat} in CRAFT, a cooperative building game.",
            _rules(n, height, seats),
            *_protocol_notes(protocol, PAPER_DIRECTOR_SEES, seats),
            f"Your personality ({archetype}): {ARCHETYPES[archetype]}",
            "Your job: compare your private target wall with the current board and help the builder fix "
            "the most important difference first, usually the lowest wrong layer. Speak in your own frame "
            "(left, middle, right as you see your wall from your seat; bottom, middle, top layer) or in "
            "the builder's (row, column) cells. Name one concrete step: the colour and size of the block "
            "and where it goes, or which block to take off. Read the other directors' messages; do not "
            "repeat them, and correct them when your wall shows they are wrong. If your wall already "
            "matches, say so briefly.",
            "Answer format: first your private reasoning inside <think>...</think> (no one else sees it), "
            "then your public message to the builder and the other directors inside "
            "<message>...</message>. Keep the message to one or two sentences.",
        ]
    )


def builder_system_prompt(
    n: int, height: int, oracle: bool, protocol: Protocol = CRAFT, seats: Sequence[str] = DEFAULT_SEATS
) -> str:
    """The builder's standing instructions: rules, move syntax, answer format."""
    return _builder_system_prompt(n, height, bool(oracle), protocol, tuple(seats))


@functools.lru_cache(maxsize=1024)
def _builder_system_prompt(n: int, height: int, oracle: bool, protocol: Protocol, seats: tuple[str, ...]) -> str:
    last, top = n - 1, min(2, height - 1)
    choose = (
        "Each turn you are shown a short list of candidate moves, all of which are legal. Choose the one "
        "that best matches what the directors ask for, and copy it exactly."
        if oracle
        else "Choose the move that best matches what the directors ask for; it must be legal on the board."
    )
    examples = [
        (f"place rs (0,{last}) L0", f"small red on cell (0,{last}), layer 0"),
        ("place bl (1,0)-(2,0) L1", "large blue covering (1,0) and (2,0), layer 1"),
        (
            f"remove ({last},{last}) L{top}",
            f"take the top block off ({last},{last}), which is on layer {top}",
        ),
    ]
    syntax = "\n".join(f"  {move.ljust(26)}{meaning}" for move, meaning in examples)
    return "\n\n".join(
        [
            "You are the builder in CRAFT, a cooperative building game.",
            _rules(n, height, seats),
            *_protocol_notes(protocol, PAPER_BUILDER_SEES, seats),
            "Your job: read the directors' messages, work out which cells they mean (a director's left "
            "and right are as seen from its own seat), and make one move. " + choose,
            "Move syntax (block codes: colour letter g b r y o, then s for small or l for large):\n" + syntax,
            "Answer format: your private reasoning inside <think>...</think>, then exactly these lines:\n"
            "MOVE: <one move in the syntax above>\n"
            f"FOLLOWED: <the director whose message you acted on: {_seat_list(seats)}>\n"
            "If you truly cannot tell what to do, write QUESTION: <one short question> instead of the "
            "MOVE line; the turn then passes without a move.",
        ]
    )


def director_messages(
    observation_text: str, seat: str, archetype: str, n: int, height: int, protocol: Protocol = CRAFT,
    seats: Sequence[str] = DEFAULT_SEATS,
) -> list[dict[str, Any]]:
    """The chat messages for a director's turn (``seats``: every seated director)."""
    return [
        {"role": "system", "content": director_system_prompt(seat, archetype, n, height, protocol, seats)},
        {
            "role": "user",
            "content": observation_text.strip() + "\n\nWrite your <think> and your <message> for this turn.",
        },
    ]


def director_reply(message: str, think: str | None = None) -> str:
    """A director's answer in the format its prompt asks for: ``<think>`` (when given), then ``<message>``."""
    private = "" if think is None else f"<think>{think}</think>\n"
    return f"{private}<message>{message}</message>"


def builder_reply(
    move: str | None, followed: Sequence[str] = (), think: str | None = None, question: str | None = None
) -> str:
    """A builder's answer in the format its prompt asks for: ``<think>`` (when given), MOVE or QUESTION, FOLLOWED.

    ``move`` is a move line (``place gs (0,0) L0``) or ``None``: then the
    ``question`` is asked, or the turn passes (``MOVE: pass``) without one.
    ``followed`` names the directors acted on (``none`` when empty).
    """
    private = "" if think is None else f"<think>{think}</think>\n"
    if move is not None:
        action = f"MOVE: {move}"
    elif question:
        action = f"QUESTION: {question}"
    else:
        action = "MOVE: pass"
    return f"{private}{action}\nFOLLOWED: {', '.join(followed) or 'none'}"


def tool_instructions(max_tool_calls: int) -> str:
    """The builder's paragraph on the ``simulate_move`` tool (``agents.tools``)."""
    return (
        f"You have a tool, simulate_move, that tries a move on a copy of the board and tells you whether it "
        f"is legal and how close to the target the board would be after it. You may call it at most "
        f"{max_tool_calls} times this turn (try the moves the directors ask for), then answer with your "
        "move as below. Never answer with a move the tool called illegal; ask a question instead."
    )


def builder_messages(
    observation_text: str,
    n: int,
    height: int,
    oracle: bool,
    protocol: Protocol = CRAFT,
    max_tool_calls: int = 0,
    seats: Sequence[str] = DEFAULT_SEATS,
) -> list[dict[str, Any]]:
    """The chat messages for a builder's turn (``max_tool_calls`` > 0: the tool condition)."""
    system = builder_system_prompt(n, height, oracle, protocol, seats)
    if max_tool_calls:
        system += "\n\n" + tool_instructions(max_tool_calls)
    return [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": observation_text.strip()
            + "\n\nWrite your <think>, then MOVE (or QUESTION) and FOLLOWED.",
        },
    ]
