"""The engine judge: exact answers, offline, to what the rules can decide from a log line.

The moves a director asks for are read by the text layer's own parser
(``craft_env.text.parse_director_message``, the one the scripted builder
listens with; the message first, the private reasoning when the message
names nothing), in the director's frame, and judged by the core rules
(``Structure.check``), the exact oracle (``craft_env.oracle.optimal_moves``)
and the failure taxonomy (``eval.taxonomy``). No rule is written here a
second time. What the rules cannot decide (is the message new, precise,
aware of the others...) is answered ``Unclear``; so is every question about
a message the parser cannot read. docs/judges.md has the table of which
question is decided how.

"Correct next moves" are the candidates the builder was shown on an oracle
turn, else every optimal move (SG4 always uses every optimal move: a
director never sees the shortlist).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from craft_env.core.board import Structure
from craft_env.core.intents import intent_table
from craft_env.core.moves import Move
from craft_env.core.views import seat_cells
from craft_env.eval.judges.items import JudgedItem
from craft_env.eval.judges.parse import Answer
from craft_env.eval.judges.questions import MM, PS, SG, family_questions
from craft_env.eval.results.taxonomy import classify
from craft_env.core.oracle import optimal_moves
from craft_env.text import find_positions, intent_move, parse_director_message

ENGINE = "engine"
UNDECIDED = "the engine cannot decide this from the log"
UNREAD = "the message names no move the text parser can read"


@functools.lru_cache(maxsize=65536)
def _intents(text: str, seat: str, n: int, height: int) -> tuple[int, ...]:
    return tuple(parse_director_message(text, seat, n, height))


@functools.lru_cache(maxsize=65536)
def _moves_named(text: str, seat: str, n: int, height: int) -> tuple[tuple[Move, ...], bool]:
    """``(moves the text asks for, whether it only says there is nothing to add)``."""
    intents = _intents(text, seat, n, height)
    table = intent_table(seat, n, height)
    moves = tuple(m for m in (intent_move(i, table) for i in intents if i) if m is not None)
    return moves, intents == (0,)


@functools.lru_cache(maxsize=4096)
def optimal_set(board: Structure, target: Structure) -> frozenset[Move]:
    return frozenset(optimal_moves(board, target))


def _offered(item: JudgedItem) -> list[Move]:
    moves = []
    for entry in item.record.get("oracle_moves") or []:
        try:
            moves.append(Move.from_dict(entry))
        except ValueError:
            continue
    return moves or sorted(optimal_set(item.board, item.target), key=str)


def director_moves(item: JudgedItem, seat: str) -> tuple[tuple[Move, ...], bool]:
    """What ``seat`` asked for this turn (message first, reasoning as a fallback) and whether it passed."""
    said = item.said.get(seat, {})
    n, height = item.board.n, item.board.height
    moves, passed = _moves_named(said.get("message", ""), seat, n, height)
    if not moves and not passed:
        moves, _ = _moves_named(said.get("think", ""), seat, n, height)
    return moves, passed


def _foreign_cells(item: JudgedItem, seat: str) -> list[tuple[int, int]]:
    said = item.said.get(seat, {})
    wall = set(seat_cells(seat, item.board.n))
    text = f"{said.get('message', '')}\n{said.get('think', '')}"
    return [cell for cell, _, _ in find_positions(text) if cell not in wall]


def _stack(structure: Structure, cell: tuple[int, int]) -> list[str]:
    return structure.stack(*cell)


def _target_block_at(item: JudgedItem, cell: tuple[int, int], layer: int) -> tuple[str | None, Any]:
    stack = _stack(item.target, cell)
    if layer >= len(stack):
        return None, None
    return stack[layer], item.target.partner(cell[0], cell[1], layer)


def _matches_target(item: JudgedItem, move: Move) -> bool:
    """The placed block is the target's block at that spot (both halves of a large one)."""
    for cell in move.cells:
        code, partner = _target_block_at(item, cell, move.layer)
        if code != move.block:
            return False
        if move.is_large:
            other = move.span_to if cell == move.position else move.position
            if partner != other:
                return False
    return True


def _board_holds(structure: Structure, move: Move) -> bool:
    """``move`` (a placement) already stands on ``structure`` at its layer."""
    i, j = move.position
    stack = _stack(structure, (i, j))
    if move.layer >= len(stack) or stack[move.layer] != move.block:
        return False
    return not move.is_large or structure.partner(i, j, move.layer) == move.span_to


def _top_is_correct(item: JudgedItem, move: Move) -> bool:
    i, j = move.position
    stack = _stack(item.board, (i, j))
    if not stack:
        return False
    top = len(stack) - 1
    code, partner = _target_block_at(item, (i, j), top)
    return code == stack[top] and partner == item.board.partner(i, j, top)


def _landing_ok(item: JudgedItem, move: Move) -> bool:
    heights = item.board.heights()
    if move.action == "remove":
        return int(heights[move.position]) - 1 == move.layer
    return all(int(heights[cell]) == move.layer for cell in move.cells)


def _yes(flag: bool, yes: str, no: str) -> Answer:
    return Answer("Yes", yes) if flag else Answer("No", no)


def sg_answers(item: JudgedItem) -> dict[str, Answer]:
    seat = item.seat
    moves, passed = director_moves(item, seat)
    foreign = _foreign_cells(item, seat)
    if foreign:
        sg7 = Answer("No", f"it names {', '.join(f'({i},{j})' for i, j in foreign)}, not on its wall")
    elif moves or passed:
        sg7 = Answer("Yes", "every cell it names is on its own wall")
    else:
        sg7 = Answer("Unclear", UNREAD)
    if not moves:
        if passed:

            wall = seat_cells(seat, item.board.n)
            missing = any(_stack(item.board, c) != _stack(item.target, c) for c in wall)
            sg1 = Answer("No", "it passes while its wall differs from the board") if missing else Answer(
                "N/A", "it passes and its wall is already built")
            rest = Answer("N/A", "it asks for no move")
            return {"SG1": sg1, "SG2": Answer("Yes", "it asks to change nothing"), "SG3": rest, "SG4": rest,
                    "SG5": rest, "SG6": rest, "SG7": sg7}
        unread = Answer("Unclear", UNREAD)
        return {**{f"SG{k}": unread for k in range(1, 7)}, "SG7": sg7}
    move = moves[0]
    reason = item.board.check(move)
    optimal = move in optimal_set(item.board, item.target)
    out = {
        "SG3": _yes(_landing_ok(item, move), f"{move}: the layer is where the block would go",
                    f"{move}: the stack height there says otherwise"),
        "SG4": _yes(optimal, f"{move} is an optimal move", f"{move} is not an optimal move"),
        "SG5": _yes(reason is None, f"{move} is legal now", f"{move} is illegal now: {reason}"),
        "SG7": sg7,
    }
    if move.action == "remove":
        correct_top = _top_is_correct(item, move)
        out["SG1"] = Answer("N/A", f"{move} removes a block")
        out["SG2"] = _yes(not correct_top, f"{move}: the top block there is wrong",
                          f"{move}: the top block there is already right")
        out["SG6"] = Answer("N/A", f"{move} removes a block")
        return {f"SG{k}": out[f"SG{k}"] for k in range(1, 8)}
    wanted = _matches_target(item, move)
    held = _board_holds(item.board, move)
    why_not = "the board already has it" if held else "the target has no such block there"
    out["SG1"] = _yes(wanted and not held, f"{move}: the target has this block and the board lacks it",
                      f"{move}: {why_not}")
    out["SG2"] = _yes(not held, f"{move} does not redo a correct block", f"{move} is already on the board")
    code, _ = _target_block_at(item, move.position, move.layer)
    if code is None:
        out["SG6"] = Answer("N/A", f"the target has no block at {move.position} layer {move.layer}")
    else:
        size = "large" if code.endswith("l") else "small"
        out["SG6"] = _yes(code[1:] == move.block[1:], f"the target block there is {size} too",
                          f"the target block there is {size}")
    return {f"SG{k}": out[f"SG{k}"] for k in range(1, 8)}


def mm_answers(item: JudgedItem) -> dict[str, Answer]:
    moves, passed = director_moves(item, item.seat)
    out = {q.code: Answer("Unclear", UNDECIDED) for q in family_questions(MM)}
    if moves:
        move = moves[0]
        if move.action == "place":
            out["MM2"] = _yes(not _board_holds(item.board, move), f"{move} has not been carried out",
                              f"{move} already stands on the board")
        out["MM6"] = Answer("Yes", f"it names one exact move: {move}")
    elif passed:
        out["MM6"] = Answer("N/A", "it asks for no move")
    return out


def _all_named(item: JudgedItem) -> tuple[set[Move], bool, bool]:
    """``(every move any director asked for, all passed, any message unread)``."""
    named: set[Move] = set()
    passes, unread = 0, 0
    said = item.said
    for seat in said:
        moves, passed = director_moves(item, seat)
        named.update(moves)
        passes += passed
        unread += not moves and not passed
    return named, bool(said) and passes == len(said), unread > 0


def _attempted(item: JudgedItem) -> Move | None:
    raw = item.record.get("move_attempted")
    try:
        move = Move.from_dict(raw) if raw else None
    except ValueError:
        return None
    return move if move is not None and move.action != "noop" else None


def ps_answers(item: JudgedItem) -> dict[str, Answer]:
    named, all_passed, unread = _all_named(item)
    offered = _offered(item)
    shapes = {(m.action, m.block if m.action == "place" else None, m.cells) for m in offered}
    out = {q.code: Answer("Unclear", UNDECIDED) for q in family_questions(PS)}
    if named:
        out["PS1"] = Answer("Yes", f"the messages name {len(named)} move(s)")
        shaped = any((m.action, m.block if m.action == "place" else None, m.cells) in shapes for m in named)
        out["PS2"] = _yes(shaped, "a named block and place match a correct move",
                          "no named block and place matches a correct move")
        exact = any(m in offered for m in named)
        out["PS3"] = _yes(exact, "a named move is a correct move", "no named move is a correct move")
    elif all_passed:
        none = Answer("No", "every director passed")
        out.update(PS1=none, PS2=none, PS3=none)
    elif unread:
        out.update({code: Answer("Unclear", UNREAD) for code in ("PS1", "PS2", "PS3")})
    move = _attempted(item)
    if named:
        out["PS5"] = _yes(move is not None and move in named, f"the builder did a named move ({move})",
                          "the builder did none of the named moves")
    if item.record.get("optimal"):
        out["PS6"] = Answer("N/A", "the builder's move was correct")
        return out
    category = classify(item.record.get("move_attempted"), False, [m.to_dict() for m in offered])
    if category in ("layer", "span"):
        out["PS6"] = Answer("No", f"a {category} slip by the builder (failure taxonomy)")
    elif move is not None and move in named:
        out["PS6"] = Answer("Yes", "the builder did what a director asked, and it was wrong")
    elif out["PS3"].answer == "No":
        out["PS6"] = Answer("Yes", "no director named a correct move")
    elif out["PS3"].answer == "Yes":
        out["PS6"] = Answer("No", "a director named a correct move and the builder did not take it")
    return out


ANSWERERS = {SG: sg_answers, MM: mm_answers, PS: ps_answers}


def engine_answers(item: JudgedItem) -> dict[str, Answer]:
    """The engine's answer to every question of the item's family (deterministic)."""
    return ANSWERERS[item.family](item)


def engine_reply(item: JudgedItem) -> str:
    """The engine's answers as a judge reply (the JSON a model is asked for)."""
    answers = engine_answers(item)
    return json.dumps({code: answer.to_dict() for code, answer in answers.items()}, ensure_ascii=True)
