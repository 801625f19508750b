"""What the server sends: a seat's frame (its observation, drawn) and the organiser's frame (everything).

A seat's frame is made from that seat's ``AgentContext`` alone, the one the
runner hands the seat when it is its turn (``agents.base``): the words of
its observation (``"text"``), the board and, for a director, its own wall
decoded from its numeric observation (``agents.decode``, as a scripted
director reads them), the conversation entries its observation's text
holds (the rest is left out, so a protocol that shows a director only the
talk before its turn shows the page no more), the builder's candidates,
and a director's instructions the action mask allows. Nothing else about
the game goes to a seat, and never the target: the organiser's frame
(``spectator_frame``) is the only one that holds it.

Boards and walls are in the replay page's drawing form
(``eval.replay.page.board_boxes``, ``target_picture``), so the page draws
them with the replay page's own script (``draw.js``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from craft_env.agents.base import AgentContext
from craft_env.agents.decode import UNSEEN, decode_board, decode_wall_view
from craft_env.core.board import Structure
from craft_env.core.encoding import format_position
from craft_env.core.intents import intent_table
from craft_env.core.views import BUILDER, SEAT_SIDES, seat_cells
from craft_env.envs.game import CraftGame
from craft_env.envs.textobs import ascii_text
from craft_env.eval.replay.page import board_boxes, target_picture
from craft_env.text import describe_conversation, describe_intents, format_move, intent_to_text

#: The keys a seat's frame may hold (tests/test_web_frames.py holds every frame to this list).
SEAT_KEYS = frozenset({
    "seat", "turn", "max_turns", "n", "h", "text", "conversation", "board", "unseen", "wall",
    "options", "candidates",
})


def seat_name(context: AgentContext) -> str:
    """``"builder"`` or the director's seat (``"D1"``..)."""
    return context.seat or BUILDER


def entry_line(entry: dict[str, Any], context: AgentContext) -> tuple[str, str]:
    """One conversation entry as ``(speaker, text)``, written as the text observation writes it
    (``envs.textobs.conversation_lines``): a builder's turn as its note, an intent id in words."""
    text = entry.get("text")
    if entry.get("outcome") is not None:
        text = CraftGame.builder_note(entry["outcome"])
    elif text is None and entry.get("intent") is not None:
        text = intent_to_text(int(entry["intent"]), intent_table(entry["speaker"], context.n, context.height))
    return f"turn {entry['turn']} {entry['speaker']}", text or ""


def visible_conversation(context: AgentContext) -> list[dict[str, Any]]:
    """The conversation entries the seat's text observation holds, oldest first.

    An entry is kept when its line, written as the observation writes it,
    is in the observation's text: what the protocol hides from this seat
    (or what a long text dropped) is not.
    """
    text = context.text
    shown = []
    for entry in context.conversation:
        speaker, said = entry_line(entry, context)
        if ascii_text(describe_conversation([(speaker, said)])) in text:
            shown.append({"turn": int(entry["turn"]), "speaker": str(entry["speaker"]), "text": said})
    return shown


def wall_picture(view: np.ndarray, seat: str, n: int) -> dict[str, Any]:
    """A decoded wall (``decode_wall_view`` codes) in the drawing's form: side, cells, ``[colour, size]``."""
    slots, height = view.shape
    layers = []
    for level in range(height):
        layers.append([
            [-1, 0] if not code else [(int(code) - 1) // 2, 2 if (int(code) - 1) % 2 else 1]
            for code in view[:, level]
        ])
    cells = [format_position(c) for c in seat_cells(seat, n)]
    return {"side": SEAT_SIDES[seat], "cells": cells, "layers": layers}


def director_board(context: AgentContext) -> tuple[list[list[int]], list[list[int]]]:
    """``(boxes, unseen cells)`` of the board as the director's numeric observation shows it."""
    n, height = context.n, context.height
    cells = decode_board(context.observation["observation"], n, height)
    unseen = [list(divmod(cell, n)) for cell in range(n * n) if (cells[cell] == UNSEEN).all()]
    known = np.where(cells == UNSEEN, 0, cells).astype(np.int8)
    return board_boxes(Structure.adopt(known, n)), unseen


def director_options(context: AgentContext) -> list[dict[str, Any]]:
    """The instructions the director's action mask allows, ``{"id", "text"}``: the menu a director model
    is offered (``text.describe_intents``), the no-op first."""
    table = intent_table(context.seat, context.n, context.height)
    menu = describe_intents(table, context.observation.get("action_mask"))
    options = []
    for line in menu.splitlines():
        number, text = line.split(": ", 1)
        options.append({"id": int(number), "text": text})
    return options


def seat_frame(context: AgentContext) -> dict[str, Any]:
    """Everything the seat whose context this is may be shown (see the module docstring)."""
    frame: dict[str, Any] = {
        "seat": seat_name(context),
        "turn": context.turn,
        "max_turns": context.max_turns,
        "n": context.n,
        "h": context.height,
        "text": context.text,
        "conversation": visible_conversation(context),
    }
    if context.seat is None:
        frame["board"] = board_boxes(context.board)
        frame["unseen"] = []
        frame["candidates"] = [format_move(m) for m in context.candidates or ()]
        return frame
    frame["board"], frame["unseen"] = director_board(context)
    view = decode_wall_view(context.observation["observation"], context.n, context.height)
    frame["wall"] = wall_picture(view, context.seat, context.n)
    frame["options"] = director_options(context)
    return frame


def spectator_frame(
    target: Structure, seats: tuple[str, ...], context: AgentContext | None
) -> dict[str, Any]:
    """The organiser's view: the target with every wall and the unseen cells, the board and the whole
    conversation as of the latest turn of any seat (``context``; ``None`` before the first)."""
    frame: dict[str, Any] = {"target": target_picture(target, seats)}
    if context is None:
        frame.update(board=[], conversation=[], turn=0)
        return frame
    frame["board"] = board_boxes(context.board)
    frame["turn"] = context.turn
    frame["conversation"] = [
        {"turn": int(e["turn"]), "speaker": str(e["speaker"]), "text": entry_line(e, context)[1]}
        for e in context.conversation
    ]
    return frame
