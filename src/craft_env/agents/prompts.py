"""The prompts language-model agents see, written from ``docs/rules.md`` and ``docs/environment.md``.

A prompt is a system message (the game's rules, the agent's role, and the
answer format) and a user message (the agent's text observation from the
environment: seat and frame, private target wall, board, conversation,
candidates). Change anything here and bump ``PROMPT_VERSION``: the version
goes into every run's config and log, so results from different prompts
are never mixed silently (and the replay cache keys change with the text).

Directors get one of five personality archetypes (the paper's names,
descriptions in our own words), fixed per (structure index, run, seat) by a
sha256 hash, never by Python's process-salted ``hash()``.
"""

from __future__ import annotations

import hashlib
from typing import Any

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


def archetype_for(structure_index: int, run: int, seat: str) -> str:
    """The archetype of director ``seat`` in game (``structure_index``, ``run``): stable across processes."""
    digest = hashlib.sha256(f"craft-archetype:{structure_index}:{run}:{seat}".encode()).digest()
    return ARCHETYPE_NAMES[int.from_bytes(digest[:8], "big") % len(ARCHETYPE_NAMES)]


def _rules(n: int, height: int) -> str:
    last = n - 1
    return (
        f"The game. A builder is assembling a structure of coloured blocks on a {n}x{n} grid, at most "
        f"{height} layers high. A cell is (row, column): row 0 is the far side, row {last} the near side "
        f"where the builder sits; column 0 is the builder's left, column {last} the builder's right. Layer 0 "
        "is the ground. Blocks are green, blue, red, yellow or orange, and small (one cell) or large (two "
        "neighbouring cells on the same layer). A block always lands on top of the stack below it; only "
        "the top block of a stack can be removed, and a large block only when nothing sits on either half.\n"
        "Three directors sit around the grid: D1 on the builder's left, D2 on the far side, D3 on the "
        "builder's right. Each director privately sees only the outer wall of the target structure on its "
        "own side, every layer, from where it sits. A large block looks small to a director who sees only "
        "one of its halves. Some cells are on no director's wall. The builder never sees the target.\n"
        "Every turn each director sends one message, then the builder makes one move or asks a question. "
        "The team wins when the board equals the target."
    )


def director_system_prompt(seat: str, archetype: str, n: int, height: int) -> str:
    """The director's standing instructions: rules, seat, personality, answer format."""
    if archetype not in ARCHETYPES:
        raise ValueError(f"archetype: expected one of {', '.join(ARCHETYPE_NAMES)}, got {archetype!r}")
    return "\n\n".join(
        [
            f"You are director {seat} in CRAFT, a cooperative building game.",
            _rules(n, height),
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


def builder_system_prompt(n: int, height: int, oracle: bool) -> str:
    """The builder's standing instructions: rules, move syntax, answer format."""
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
            _rules(n, height),
            "Your job: read the directors' messages, work out which cells they mean (a director's left "
            "and right are as seen from its own seat), and make one move. " + choose,
            "Move syntax (block codes: colour letter g b r y o, then s for small or l for large):\n" + syntax,
            "Answer format: your private reasoning inside <think>...</think>, then exactly these lines:\n"
            "MOVE: <one move in the syntax above>\n"
            "FOLLOWED: <the director whose message you acted on: D1, D2 or D3>\n"
            "If you truly cannot tell what to do, write QUESTION: <one short question> instead of the "
            "MOVE line; the turn then passes without a move.",
        ]
    )


def director_messages(
    observation_text: str, seat: str, archetype: str, n: int, height: int
) -> list[dict[str, Any]]:
    """The chat messages for a director's turn."""
    return [
        {"role": "system", "content": director_system_prompt(seat, archetype, n, height)},
        {
            "role": "user",
            "content": observation_text.strip() + "\n\nWrite your <think> and your <message> for this turn.",
        },
    ]


def builder_messages(observation_text: str, n: int, height: int, oracle: bool) -> list[dict[str, Any]]:
    """The chat messages for a builder's turn."""
    return [
        {"role": "system", "content": builder_system_prompt(n, height, oracle)},
        {
            "role": "user",
            "content": observation_text.strip()
            + "\n\nWrite your <think>, then MOVE (or QUESTION) and FOLLOWED.",
        },
    ]
