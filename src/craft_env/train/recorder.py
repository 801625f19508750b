"""``TurnRecorder``: what ``runner.play_game`` writes to a run's log, kept in memory instead.

``play_game`` reports every turn (``turn``) and game event (``game_event``)
to the log object it is given; this one stores them for the caller (the
text environment reads the turn records for rewards and the engine's
verdict, the replay compares them with the logged ones).
"""

from __future__ import annotations

from typing import Any


class TurnRecorder:
    """Keeps the turn records and game events of the games played with it, in order."""

    def __init__(self) -> None:
        self.turns: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []

    def turn(
        self, index: int, structure_id: str | None, attempt: int, turn_number: int, fields: dict[str, Any]
    ) -> None:
        self.turns.append(
            {"structure_index": index, "structure_id": structure_id, "turn_number": turn_number, **fields}
        )

    def game_event(
        self, event: str, index: int, structure_id: str | None, attempt: int, turn_number: int, **fields: Any
    ) -> None:
        self.events.append(
            {
                "event": event,
                "structure_index": index,
                "structure_id": structure_id,
                "turn_number": turn_number,
                **fields,
            }
        )

    def take_turns(self) -> list[dict[str, Any]]:
        """The turn records since the last call."""
        turns, self.turns = self.turns, []
        return turns

    @property
    def ended(self) -> dict[str, Any] | None:
        """The game's last ``done``/``errored``/``stopped`` event, or ``None`` while it runs."""
        for event in reversed(self.events):
            if event["event"] in ("done", "errored", "stopped"):
                return event
        return None
