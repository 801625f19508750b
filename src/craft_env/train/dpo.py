"""Preference pairs in TRL's conversational format: ``prompt``, ``chosen``, ``rejected`` (``docs/train.md``).

Builder pairs come from the engine. For a builder turn, the logged reply is
one side and a reply the engine writes is the other, on the same prompt:

* the logged move was optimal (the oracle's verdict under the run's
  protocol): it is chosen; rejected is a reply naming a legal move that
  lengthens the fewest-moves plan (seeded choice), or, when the board has
  none, an optimal move claimed on a wrong layer (illegal);
* otherwise (illegal, unreadable, a legal move that does not shorten the
  plan, a pass or a question while the target is unfinished): it is
  rejected; chosen is a reply naming an optimal move that is legal under
  the protocol, one of the candidates shown when the turn had them.

The engine's reply is written in the reply grammar the prompt asks for
(``agents.prompts.builder_reply``), naming the directors the logged reply
named, so the two sides differ in the move only. A turn where no such move
exists (a finished board; under protocol ``paper`` a board whose optimal
moves are all banned) gives no pair.

Director pairs come from the logs alone: two turns of the same seat whose
prompts are identical (same board, conversation, seat and archetype;
different runs, models or seeds that reached the same state), whose public
messages differ, and after which the builder's move was optimal in one
and not in the other; the first is chosen. Nothing else pairs a director's
message: the engine cannot say which message a builder will read
correctly, so it writes none.

A reply is never paired with itself: the two sides always differ in text,
and in a builder pair in the move.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from craft_env.agents.llm import messages_key
from craft_env.agents.prompts import builder_reply
from craft_env.core import oracle
from craft_env.core.board import Structure
from craft_env.core.moves import Move
from craft_env.core.protocol import Protocol, get_protocol, move_reason
from craft_env.text.replies import parse_director_reply
from craft_env.train.outcome import record_meta
from craft_env.train.replay import SeatTurn
from craft_env.train.sft import reply_text


def _assistant(text: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": text}]


def legal_moves(board: Structure, protocol: Protocol) -> list[Move]:
    """The moves legal on ``board`` under ``protocol`` (its ban, then the rules)."""
    return [move for move in board.legal_moves() if move_reason(board, move, protocol) is None]


def optimal_legal_moves(board: Structure, target: Structure, protocol: Protocol) -> list[Move]:
    """The oracle's optimal moves that ``protocol`` allows on ``board``."""
    return [
        move for move in oracle.optimal_moves(board, target) if move_reason(board, move, protocol) is None
    ]


def lengthening_moves(board: Structure, target: Structure, protocol: Protocol) -> list[Move]:
    """The legal moves after which the fewest-moves plan is longer."""
    distance = oracle.distance(board, target)
    return [
        move for move in legal_moves(board, protocol) if oracle.distance(board.apply(move), target) > distance
    ]


def wrong_layer_moves(board: Structure, target: Structure, protocol: Protocol) -> list[Move]:
    """Optimal moves claimed one layer too high: illegal ("wrong layer")."""
    moves = []
    for move in optimal_legal_moves(board, target, protocol):
        wrong = move.with_layer(move.layer + 1)
        if move_reason(board, wrong, protocol) is not None:
            moves.append(wrong)
    return moves


def _candidates(turn: SeatTurn) -> list[Move]:
    return [Move.from_dict(data) for data in turn.record.get("oracle_moves") or ()]


def engine_move(turn: SeatTurn, outcome: dict[str, Any], rng: random.Random) -> tuple[Move | None, str]:
    """``(move, kind)`` the engine writes against the logged reply (see the module docstring)."""
    board, target = turn.board_before, turn.target
    protocol = get_protocol(turn.protocol)
    if outcome["optimal"]:
        worse = lengthening_moves(board, target, protocol)
        if worse:
            return rng.choice(worse), "lengthens the plan"
        illegal = wrong_layer_moves(board, target, protocol)
        return (rng.choice(illegal), "illegal") if illegal else (None, "")
    best = optimal_legal_moves(board, target, protocol)
    shown = [move for move in _candidates(turn) if move in best]
    pool = shown or best
    return (rng.choice(pool), "optimal") if pool else (None, "")


def builder_pair(
    turn: SeatTurn, outcome: dict[str, Any], seed: int = 0, with_think: bool = False
) -> dict[str, Any] | None:
    """The engine pair of one builder turn, or ``None`` when the board allows none."""
    rng = random.Random(f"craft-dpo:{seed}:{turn.source}:{turn.run}:{turn.structure_index}:{turn.turn}")
    move, kind = engine_move(turn, outcome, rng)
    if move is None:
        return None
    logged = reply_text(turn, with_think)
    written = builder_reply(str(move), turn.followed)
    chosen, rejected = (logged, written) if outcome["optimal"] else (written, logged)
    if chosen == rejected:
        return None
    meta = record_meta(turn, outcome)
    meta["pair"] = {
        "kind": "builder-engine",
        "engine_side": "rejected" if outcome["optimal"] else "chosen",
        "engine_move": str(move),
        "engine_move_is": kind,
    }
    return {
        "prompt": turn.messages,
        "chosen": _assistant(chosen),
        "rejected": _assistant(rejected),
        "meta": meta,
    }


def director_pairs(
    turns: list[tuple[SeatTurn, dict[str, Any]]], with_think: bool = False
) -> list[tuple[SeatTurn, dict[str, Any]]]:
    """``(chosen turn, pair)`` for logged director turns on identical prompts whose builder outcomes differ.

    See the module docstring for what makes a pair.
    """
    groups: dict[str, list[tuple[SeatTurn, dict[str, Any]]]] = defaultdict(list)
    for turn, outcome in turns:
        groups[messages_key(turn.messages)].append((turn, outcome))
    pairs = []
    for group in groups.values():
        better = [item for item in group if item[1]["optimal"]]
        worse = [item for item in group if not item[1]["optimal"]]
        seen: set[tuple[str, str]] = set()
        for good, good_outcome in better:
            for bad, _ in worse:
                if parse_director_reply(good.reply)[1] == parse_director_reply(bad.reply)[1]:
                    continue
                chosen, rejected = reply_text(good, with_think), reply_text(bad, with_think)
                if chosen == rejected or (chosen, rejected) in seen:
                    continue
                seen.add((chosen, rejected))
                meta = record_meta(good, good_outcome)
                meta["pair"] = {
                    "kind": "director-logged",
                    "rejected_from": {
                        "source": bad.source,
                        "run": bad.run,
                        "game": bad.structure_id,
                        "turn": bad.turn,
                        "model": bad.model,
                    },
                }
                pairs.append(
                    (
                        good,
                        {
                            "prompt": good.messages,
                            "chosen": _assistant(chosen),
                            "rejected": _assistant(rejected),
                            "meta": meta,
                        },
                    )
                )
    return pairs
