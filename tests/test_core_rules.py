"""The rules (docs/rules.md#moves): the engine against the reference model, move by move.

A Hypothesis state machine plays random move sequences, legal and illegal
(full stacks, uneven spans, wrong layer claims, removals of a large block's
exposed half while the other half is covered, off-board cells), on boards of
side 2..6 and height 1..5, and after every attempt checks that the engine
and the model agree on legality, the reason, the resulting board and the
whole legal move set. Hand-drawn cases follow.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule
from reference_model import REASON_KEYWORDS, RefBoard, from_engine_move, remove, to_engine_move

from craft_env import IllegalMoveError, Move, Structure
from craft_env.core.encoding import BLOCK_CODES, action_table
from craft_env.core.moves import action_to_move

SMALL_CODES = [c for c in BLOCK_CODES if c[1] == "s"]
LARGE_CODES = [c for c in BLOCK_CODES if c[1] == "l"]
STEPS = {(-1, 0), (1, 0), (0, -1), (0, 1)}


def engine_legal_set(board: Structure) -> set:
    return {from_engine_move(m) for m in board.legal_moves()}


class RulesMachine(RuleBasedStateMachine):
    """Engine ``Structure`` and model ``RefBoard`` played side by side."""

    @initialize(n=st.integers(2, 6), height=st.integers(1, 5))
    def start(self, n: int, height: int) -> None:
        self.board = Structure.empty(n, height)
        self.model = RefBoard.empty(n, height)

    # ------------------------------------------------------------- helpers

    def attempt(self, move: Move) -> None:
        """Play ``move`` on both; they must agree on legality, reason category and result."""
        model_move = from_engine_move(move)
        expected = self.model.check(model_move)
        reason = self.board.check(move)
        if expected is None:
            assert reason is None, f"{move} on\n{self.board}\nengine says illegal: {reason}"
            after = self.board.apply(move)
            assert self.board.apply_action(move.to_action(self.board.n)) == after
            self.board = after
            self.model = self.model.apply(model_move)
        else:
            assert reason is not None, f"{move} on\n{self.board}\nengine says legal, model: {expected}"
            assert REASON_KEYWORDS[expected] in reason, (expected, reason)
            before = self.board
            with pytest.raises(IllegalMoveError) as raised:
                self.board.apply(move)
            assert raised.value.reason == reason
            assert raised.value.move == move
            assert isinstance(raised.value, ValueError)
            assert self.board == before

    def cell(self, data, off_board: bool = True) -> tuple[int, int]:
        top = self.board.n if off_board else self.board.n - 1
        return data.draw(st.tuples(st.integers(0, top), st.integers(0, top)), label="cell")

    def layer_claim(self, data) -> int | None:
        return data.draw(st.one_of(st.none(), st.integers(0, self.board.height)), label="layer")

    # --------------------------------------------------------------- rules

    @rule(data=st.data())
    def place_small(self, data) -> None:
        code = data.draw(st.sampled_from(SMALL_CODES), label="code")
        self.attempt(Move.place(code, self.cell(data), layer=self.layer_claim(data)))

    @rule(data=st.data())
    def place_large(self, data) -> None:
        code = data.draw(st.sampled_from(LARGE_CODES), label="code")
        i, j = self.cell(data, off_board=False)
        di, dj = data.draw(st.sampled_from(sorted(STEPS)), label="direction")
        other = (i + di, j + dj)
        if min(other) < 0:
            other = (i - di, j - dj)
        first, second = data.draw(st.permutations([(i, j), other]), label="halves")
        self.attempt(Move.place(code, first, second, layer=self.layer_claim(data)))

    @rule(data=st.data())
    def remove_any(self, data) -> None:
        block = data.draw(st.one_of(st.none(), st.sampled_from(BLOCK_CODES)), label="block claim")
        self.attempt(Move.remove(self.cell(data), layer=self.layer_claim(data), block=block))

    def covered_halves(self) -> list[tuple[int, int]]:
        out = []
        for cell, stack in self.model.stacks.items():
            if stack and stack[-1][1] is not None and self.model.level(stack[-1][1]) > len(stack):
                out.append(cell)
        return sorted(out)

    @precondition(lambda self: self.covered_halves())
    @rule(data=st.data())
    def remove_covered_half(self, data) -> None:
        cell = data.draw(st.sampled_from(self.covered_halves()), label="cell")
        assert self.model.check(remove(cell)) == "covered"
        self.attempt(Move.remove(cell, layer=self.layer_claim(data)))

    @rule(data=st.data())
    def play_legal(self, data) -> None:
        moves = sorted(self.model.legal_moves())
        move = data.draw(st.sampled_from(moves), label="legal move")
        self.attempt(to_engine_move(move))

    @rule(data=st.data())
    def play_action_id(self, data) -> None:
        table = action_table(self.board.n)
        action = data.draw(st.integers(0, table.num_actions - 1), label="action id")
        mask = self.board.legal_mask()
        if action == table.noop:
            assert mask[action] == 1
            assert self.board.apply_action(action) == self.board
            return
        move = action_to_move(action, self.board.n)
        assert bool(mask[action]) == (self.model.check(from_engine_move(move)) is None)
        self.attempt(move)

    # ----------------------------------------------------------- invariants

    @invariant()
    def boards_agree(self) -> None:
        assert RefBoard.from_structure(self.board) == self.model
        assert self.model.to_structure() == self.board
        assert self.model.is_valid()

    @invariant()
    def legal_sets_agree(self) -> None:
        legal = self.board.legal_moves()
        assert len(legal) == len(set(legal))
        assert engine_legal_set(self.board) == self.model.legal_moves()
        mask = self.board.legal_mask()
        assert mask.dtype == np.int8
        assert mask[-1] == 1
        assert sorted(np.flatnonzero(mask[:-1]).tolist()) == sorted(m.to_action(self.board.n) for m in legal)
        assert all(self.board.check(m) is None for m in legal)


RulesMachine.TestCase.settings = settings(stateful_step_count=30)
TestRulesMachine = RulesMachine.TestCase


# ------------------------------------------------------------ hand-drawn cases


def test_gravity_and_layers():
    board = Structure.from_ascii(
        """
        layer 0
          gs  ..  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    assert board.check(Move.place("bs", (0, 0), layer=1)) is None
    assert board.check(Move.place("bs", (0, 0), layer=0)).startswith("wrong layer")
    after = board.apply(Move.place("bs", (0, 0)))
    assert after.stack(0, 0) == ["gs", "bs"]
    assert board.stack(0, 0) == ["gs"], "apply must not change the original"


def test_large_block_needs_even_heights_and_free_layer():
    board = Structure.from_ascii(
        """
        layer 0
          gs  ..  ..
          ..  ..  ..
          ..  ..  ..
        """,
        height=1,
    )
    assert "same height" in board.check(Move.place("rl", (0, 0), (0, 1)))
    assert board.check(Move.place("rl", (0, 1), (0, 2))) is None
    assert "maximum height" in board.check(Move.place("ys", (0, 0)))
    full_pair = board.apply(Move.place("rl", (1, 0), (1, 1)))
    assert "maximum height" in full_pair.check(Move.place("ol", (1, 1), (1, 0)))


def test_removing_a_large_block_needs_both_halves_on_top():
    board = Structure.from_ascii(
        """
        layer 0
          bl==bl  ..
          ..  ..  ..
          ..  ..  ..
        layer 1
          ..  gs  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    reason = board.check(Move.remove((0, 0)))
    assert "covered" in reason and "(0,0)" in reason
    assert board.check(Move.remove((0, 1), layer=1)) is None
    cleared = board.apply(Move.remove((0, 1))).apply(Move.remove((0, 0), layer=0))
    assert cleared.is_empty()
    assert "nothing to remove" in cleared.check(Move.remove((2, 2)))


def test_remove_with_a_block_claim():
    board = Structure.from_ascii(
        """
        layer 0
          ys  ..  ..
          ..  ..  ..
          ..  ..  ..
        """
    )
    assert board.check(Move.remove((0, 0), block="ys")) is None
    assert board.check(Move.remove((0, 0), block="gs")).startswith("wrong block")


def test_noop_is_always_legal_and_changes_nothing():
    board = Structure.empty(3, 1)
    table = action_table(3)
    assert board.check(Move.noop()) is None
    assert board.apply(Move.noop()) == board
    assert board.legal_mask()[table.noop] == 1
    assert Move.noop() not in board.legal_moves()


def test_default_board_move_counts():
    board = Structure.empty()
    legal = board.legal_moves()
    assert len(legal) == 45 + 60
    assert all(m.layer == 0 for m in legal)
