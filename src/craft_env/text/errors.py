"""``ParseError``: text that the language layer could not turn into a move or an intent."""

from __future__ import annotations

_PREVIEW = 80


class ParseError(ValueError):
    """Text could not be understood.

    ``reason`` is a sentence a person (or a model being re-prompted) can act
    on; ``text`` is the raw input, kept whole so callers can log it. The
    message shows only a short preview so that a 100k-character reply does
    not flood a traceback.
    """

    def __init__(self, reason: str, text: object = "") -> None:
        self.reason = reason
        self.text = text if isinstance(text, str) else repr(text)
        preview = self.text if len(self.text) <= _PREVIEW else self.text[: _PREVIEW - 3] + "..."
        super().__init__(f"{reason} (in {preview!r})" if preview.strip() else reason)
