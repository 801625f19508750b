"""SFT records: a seat's chat and its reply, in TRL's conversational format (``docs/train.md``).

One record per kept seat turn: ``{"messages": [system, user, assistant],
"meta": {...}}``. The system and user messages are the seat's prompt
(``replay``), the assistant message its reply, without its ``<think>``
blocks unless ``with_think``.
"""

from __future__ import annotations

from typing import Any

from craft_env.train.outcome import record_meta
from craft_env.train.replay import SeatTurn, public_reply


def reply_text(turn: SeatTurn, with_think: bool) -> str:
    """The seat's reply as exported: whole, or without ``<think>`` (which the agents never read)."""
    return turn.reply if with_think else public_reply(turn.reply)


def sft_record(turn: SeatTurn, outcome: dict[str, Any], with_think: bool = False) -> dict[str, Any]:
    """The SFT record of one seat turn."""
    return {
        "messages": [*turn.messages, {"role": "assistant", "content": reply_text(turn, with_think)}],
        "meta": record_meta(turn, outcome),
    }
