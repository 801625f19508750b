"""The two turn protocols (``docs/rules.md#two-protocols``): ours, ``craft``, and the paper's, ``paper``.

A ``Protocol`` is one frozen record with one named switch per difference
between the two (the table in ``docs/rules.md#two-protocols`` names each
switch and what it does under either protocol). Everything else (metrics,
seeds, log formats) is the same under both, and every run, log and report
names the protocol it was played under.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields

import numpy as np

from craft_env.core.encoding import KIND_LARGE, action_table
from craft_env.core.views import hidden_cells

SPEAKERS_EACH_ONCE = "each_once"
SPEAKERS_WITH_REPLACEMENT = "with_replacement"
CANDIDATES_EXACT = "exact"
CANDIDATES_PAPER = "paper"
ARCHETYPES_CRAFT = "craft"
ARCHETYPES_PAPER = "paper"


@dataclass(frozen=True)
class Protocol:
    """Every rule in which protocol ``paper`` differs from protocol ``craft``."""

    name: str
    """``"craft"`` or ``"paper"``: the name written into configs, logs and reports."""

    hidden_span_ban: bool = False
    """Large blocks may not touch a hidden cell (one on no director's wall: (1,1) and (2,1) at 3x3).

    The paper's engine rejects such placements while its generator makes
    targets that need them; such a target is still played (it cannot be
    finished).
    """

    speakers: str = SPEAKERS_EACH_ONCE
    """``each_once``: every director speaks once a turn in a seeded order.
    ``with_replacement``: three speaking slots drawn with replacement from
    the episode's seeded RNG (a director may speak twice, another not at all).
    """

    complete_at: float | None = None
    """``None``: a game is complete when the board equals the target.
    A number: it ends and counts as completed once progress reaches it
    (the paper: 0.95).
    """

    candidates: str = CANDIDATES_EXACT
    """``exact``: the oracle offers moves that shorten the shortest plan.
    ``paper``: the paper's greedy per-cell candidate list and order,
    sampled with our seeded RNG.
    """

    tolerant_span: bool = False
    """A small block written with a ``span_to`` is accepted, the ``span_to``
    ignored and the reason says so (the paper's move reading)."""

    directors_see_walls: bool = False
    """Directors see only the walls of the current board and the
    conversation frozen before the turn began; the builder sees only this
    turn's discussion (the paper's prompts)."""

    archetypes: str = ARCHETYPES_CRAFT
    """``craft``: our stable hash of (structure index, run, director).
    ``paper``: the paper's assignment, so the same index and run give the
    paper's archetypes."""


CRAFT = Protocol(name="craft")
PAPER = Protocol(
    name="paper",
    hidden_span_ban=True,
    speakers=SPEAKERS_WITH_REPLACEMENT,
    complete_at=0.95,
    candidates=CANDIDATES_PAPER,
    tolerant_span=True,
    directors_see_walls=True,
    archetypes=ARCHETYPES_PAPER,
)
PROTOCOLS = {CRAFT.name: CRAFT, PAPER.name: PAPER}
SWITCHES = tuple(f.name for f in fields(Protocol) if f.name != "name")


def get_protocol(value: object, field: str = "protocol") -> Protocol:
    """A ``Protocol`` from its name (or itself); a ``ValueError`` names ``field`` and the value."""
    if isinstance(value, Protocol):
        return value
    if isinstance(value, str) and value in PROTOCOLS:
        return PROTOCOLS[value]
    raise ValueError(f"{field}: must be one of {', '.join(PROTOCOLS)}, got {value!r}")


@functools.lru_cache(maxsize=None)
def _hidden_span_actions(n: int) -> np.ndarray:
    table = action_table(n)
    hidden = np.zeros(n * n, bool)
    for i, j in hidden_cells(n):
        hidden[i * n + j] = True
    large = table.kind == KIND_LARGE
    touches = large & (hidden[np.maximum(table.cell_a, 0)] | hidden[np.maximum(table.cell_b, 0)])
    return touches


def protocol_action_mask(protocol: Protocol, n: int) -> np.ndarray:
    """int8 per action id of side ``n``: 1 where the protocol's own rules allow the action at all.

    The rules of ``core.rules`` decide legality on a board; this mask is
    what a protocol forbids on every board (``hidden_span_ban``: large
    placements touching a hidden cell). A new, writeable array.
    """
    mask = np.ones(action_table(n).num_actions, np.int8)
    if protocol.hidden_span_ban:
        mask[_hidden_span_actions(n)] = 0
    return mask
