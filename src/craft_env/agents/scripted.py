"""The scripted team: the offline default, in plain English, with no model.

``ScriptedDirector`` compares the board with its own target wall (both
decoded from its numeric observation), picks the first difference it can
fix now (lowest layer first, then left to right from its seat; the policy
is ``craft_env.core.scripted``) and says it in its own frame through
``craft_env.text.intent_to_text``. It sees a large
block as large only when both halves are on its wall, so it will sometimes
ask for a small block where the target has a domino: the paper's ambiguity,
kept on purpose.

``ScriptedBuilder`` reads this turn's messages with
``craft_env.text.parse_director_message``, maps each director's frame to
board cells through that seat's intent table, and acts. With the oracle's
candidates it plays the candidate that best matches what it heard (the
first candidate when nobody asked for anything it can match); without them
it plays the legal move most directors asked for, or passes. It never reads
the target.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from craft_env.agents.base import NO_USAGE, AgentContext, BuilderReply, DirectorReply
from craft_env.agents.decode import decode_wall_view, decoded_visible, wall_cells
from craft_env.core.encoding import (
    COLOUR_NAMES,
    KIND_LARGE,
    KIND_REMOVE,
    action_table,
    direction_between,
    large_value,
    small_value,
)
from craft_env.core.intents import intent_table
from craft_env.core.observation import board_dim, view_dim
from craft_env.core.scripted import scripted_intent
from craft_env.core.views import seat_cell_indices
from craft_env.text import intent_to_text, parse_director_message


@lru_cache(maxsize=64)
def _wall_array(seat: str, n: int) -> np.ndarray:
    """``seat_cell_indices`` made once per seat and size, for the kernel (which only reads it; not shared)."""
    return seat_cell_indices(seat, n)


def _describe_code(code: int) -> str:
    if code == 0:
        return "nothing"
    colour, wide = (code - 1) // 2, (code - 1) % 2
    return f"{'large' if wide else 'small'} {COLOUR_NAMES[colour]}"


def wall_target(view: np.ndarray, seat: str, n: int) -> np.ndarray:
    """A board holding exactly what ``seat``'s target wall view shows, for the shared policy kernel.

    Slots that look wide are paired with the neighbouring wide slot of the
    same code (greedily, left to right from the seat); everything off the
    wall stays empty. The kernel reads only the wall, so this stands in for
    the target without revealing anything the director does not see.
    """
    wall = wall_cells(seat, n)
    slots, height = view.shape
    codes = view.T.tolist()
    board = np.zeros((n * n, height), np.int8)
    for level in range(height):
        row = codes[level]
        slot = 0
        while slot < slots:
            code = row[slot]
            cell = wall[slot]
            if code == 0:
                slot += 1
                continue
            colour, wide = (code - 1) // 2, (code - 1) % 2 == 1
            if wide and slot + 1 < slots and row[slot + 1] == code:
                other = wall[slot + 1]
                here, there = (cell // n, cell % n), (other // n, other % n)
                board[cell, level] = large_value(colour, direction_between(here, there))
                board[other, level] = large_value(colour, direction_between(there, here))
                slot += 2
                continue
            board[cell, level] = small_value(colour)
            slot += 1
    return board


@lru_cache(maxsize=64)
def intent_texts(seat: str, n: int, height: int) -> tuple[str, ...]:
    """``intent_to_text`` of every intent id of ``seat``'s table, made once per seat and size."""
    table = intent_table(seat, n, height)
    return tuple(intent_to_text(intent, table) for intent in range(table.num_intents))


@lru_cache(maxsize=64)
def _wall_partners(seat: str, n: int) -> tuple[tuple[int, tuple[int, ...]], ...]:
    """Per slot of ``seat``'s wall: its cell, and per direction of a large half (``core.encoding``'s order)
    whether the partner cell is on the wall too (``agents.decode.apparent_wall``'s test)."""
    wall = wall_cells(seat, n)
    steps = ((-1, 0), (1, 0), (0, -1), (0, 1))
    return tuple(
        (cell, tuple(int((cell // n + di) * n + (cell % n + dj) in wall) for di, dj in steps))
        for cell in wall
    )


def _first_difference(rows: list[list[int]], seat: str, n: int, wanted: list[list[int]]) -> str | None:
    """Where what ``seat`` sees of the board first differs from its target wall, in words (or ``None``).

    ``rows``: the board's cells as plain ints; ``wanted``: the target wall's codes by layer, then slot.
    The board is coded as ``agents.decode.apparent_wall`` codes it (a large half looks large only when its
    partner is on the wall too), lowest layer first, then slot by slot; plain ints, stopping at the first
    difference: it runs for every director's turn.
    """
    partners = _wall_partners(seat, n)
    for level, target_row in enumerate(wanted):
        for slot, (cell, on_wall) in enumerate(partners):
            value = rows[cell][level]
            if value <= 0:
                seen = 0
            elif value < 6:
                seen = 2 * value - 1
            else:
                seen = 1 + 2 * ((value - 6) // 4) + on_wall[(value - 6) % 4]
            if seen != target_row[slot]:
                return (
                    f"slot {slot} layer {level}: board shows {_describe_code(seen)}, "
                    f"my target shows {_describe_code(target_row[slot])}"
                )
    return None


@lru_cache(maxsize=64)
def _parts(n: int, height: int) -> tuple[int, int]:
    """Where a director's observation holds its target wall view (``core.observation``'s layout)."""
    start = board_dim(n, height)
    return start, start + view_dim(n, height)


class ScriptedDirector:
    """A rule-based director speaking plain English (see the module docstring).

    The choice itself is ``craft_env.core.scripted.scripted_intent``, the
    same kernel the vector env's fixed directors use, fed only with what
    this director's observation holds.
    """

    name = "scripted"
    #: It reads the numeric observation only (the runner renders it no text observation).
    reads_text = False
    #: ``(key, wall_target(...), the view's rows by layer)`` of the last choice's target view (the kernel
    #: only reads the board), keyed by the seat, size and the view's part of the observation.
    _target: tuple | None = None

    def choose(self, vector: np.ndarray, mask: np.ndarray, seat: str, n: int, height: int) -> tuple[int, str]:
        """``(intent id, private note)`` for a numeric observation and intent mask."""
        visible = decoded_visible(vector, n, height)  # read only here: the kept reading itself
        start, end = _parts(n, height)
        key = (seat, n, height, np.asarray(vector[start:end]).tobytes())
        kept = self._target  # one read: a director shared between threads may replace it meanwhile
        if kept is None or kept[0] != key:  # the target view is the episode's
            view = decode_wall_view(vector, n, height)
            kept = self._target = (key, wall_target(view, seat, n), view.T.tolist())
        _, target, wanted = kept
        intent = int(scripted_intent(visible, target, n, _wall_array(seat, n), np.asarray(mask, np.int8)))
        first = _first_difference(visible.tolist(), seat, n, wanted)
        if first is None:
            return intent, "my wall matches the target"
        if intent == 0:
            return intent, f"{first}; nothing I can ask for is possible right now"
        return intent, first

    def decide(self, context: AgentContext) -> DirectorReply:
        seat, board = context.seat, context.board
        n, height = board.n, board.height
        obs = context.observation
        intent, note = self.choose(obs["observation"], obs["action_mask"], seat, n, height)
        message = intent_texts(seat, n, height)[intent]
        return DirectorReply(message=message, think=note, intent=intent, usage=NO_USAGE)

    async def act(self, context: AgentContext) -> DirectorReply:
        return self.decide(context)


def _cells(table, action: int) -> set[int]:
    cells = {int(table.cell_a[action])}
    if table.kind[action] == KIND_LARGE:
        cells.add(int(table.cell_b[action]))
    return cells


def similarity(table, heard: int, heard_layer: int, candidate: int, candidate_layer: int) -> float:
    """How well ``candidate`` matches an instruction ``heard`` (both action ids with layers)."""
    if heard == candidate:
        return 10.0 + (1.0 if heard_layer == candidate_layer else 0.0)
    kind_h, kind_c = int(table.kind[heard]), int(table.kind[candidate])
    if kind_h == KIND_REMOVE or kind_c == KIND_REMOVE:
        return 1.0 if kind_h == kind_c else 0.0
    score = 0.0
    overlap = bool(_cells(table, heard) & _cells(table, candidate))
    same_colour = int(table.colour[heard]) == int(table.colour[candidate])
    if overlap:
        score += 4.0
    if same_colour:
        score += 3.0 if overlap else 1.0
    if overlap or same_colour:
        score += (1.0 if kind_h == kind_c else 0.0) + (1.0 if heard_layer == candidate_layer else 0.0)
    return score


@lru_cache(maxsize=65536)
def _board_similarity(n: int, heard: int, heard_layer: int, candidate: int, candidate_layer: int) -> float:
    """``similarity`` on ``action_table(n)``, remembered (a builder scores every candidate against
    every instruction each turn, and games repeat the same pairs)."""
    return similarity(action_table(n), heard, heard_layer, candidate, candidate_layer)


class ScriptedBuilder:
    """A rule-based builder that understands the scripted directors' English."""

    name = "scripted"
    #: It reads the numeric observation only (the runner renders it no text observation).
    reads_text = False

    def hear(self, context: AgentContext) -> list[tuple[str, int, int, float]]:
        """This turn's instructions as ``(seat, action id, layer, weight)``."""
        n, height = context.n, context.height
        heard = []
        for seat, text in context.messages_this_turn():
            try:
                intents = parse_director_message(text, seat, n, height)
            except ValueError:
                continue
            table = intent_table(seat, n, height)
            meant = [(int(table.action[i]), int(table.layer[i])) for i in intents if table.action[i] >= 0]
            for action, layer in meant:
                heard.append((seat, action, layer, 1.0 / len(meant)))
        return heard

    def decide(self, context: AgentContext) -> BuilderReply:
        table = action_table(context.n)
        heard = self.hear(context)
        if context.candidates is not None:
            return self._pick_candidate(context, table, heard)
        mask = context.observation["action_mask"]
        votes: dict[int, float] = {}
        voters: dict[int, list[str]] = {}
        for seat, action, _, weight in heard:
            if mask[action]:
                votes[action] = votes.get(action, 0.0) + weight
                voters.setdefault(action, []).append(seat)
        if not votes:
            return BuilderReply(action=table.noop, think="nothing I heard is possible on this board")
        best = max(votes, key=lambda a: (votes[a], -list(votes).index(a)))
        return BuilderReply(
            action=best,
            followed=tuple(dict.fromkeys(voters[best])),
            think=f"{votes[best]:.2f} vote(s) for this move",
        )

    def _pick_candidate(self, context: AgentContext, table, heard) -> BuilderReply:
        candidates = [
            (m.to_action(context.n), -1 if m.layer is None else m.layer) for m in context.candidates
        ]
        if not candidates:
            return BuilderReply(action=table.noop, think="no candidates")
        n = context.n
        scores = []
        for action, layer in candidates:
            scores.append(sum(w * _board_similarity(n, h, hl, action, layer) for _, h, hl, w in heard))
        best = int(np.argmax(scores))
        action, layer = candidates[best]
        if scores[best] <= 0:
            return BuilderReply(action=action, think="no instruction matches a candidate; taking the first")
        followed = tuple(
            dict.fromkeys(seat for seat, h, hl, _ in heard if _board_similarity(n, h, hl, action, layer) > 0)
        )
        return BuilderReply(action=action, followed=followed, think=f"best match scores {scores[best]:.2f}")

    async def act(self, context: AgentContext) -> BuilderReply:
        return self.decide(context)


__all__ = ["ScriptedBuilder", "ScriptedDirector", "similarity", "wall_target"]
