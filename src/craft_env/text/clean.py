"""Model text made safe to keep and to show (docs/robustness.md, "Model text").

* ``valid_unicode(text)``: every lone surrogate (``\\ud800``...: a code point
  UTF-8 cannot encode, which JSON escapes and some model servers produce)
  becomes U+FFFD. Applied once where text enters the package (the model
  client, imported paper logs, a person's typing), so every reader and
  writer downstream can encode what it holds.
* ``printable(text)``: control characters written visibly (``\\x1b``,
  ``\\x07``, ``\\u202e``), so model text printed to a terminal cannot set the
  window title, clear the screen, move the cursor or reorder the line.
  Applied by everything that prints model text to a terminal (the command
  line's log handler through ``PrintableFormatter``); files keep the text
  as it is.

Both are one linear pass (a single-character class), whatever the text.
"""

from __future__ import annotations

import logging
import re
from typing import Any

__all__ = ["PrintableFormatter", "holds_surrogate_escape", "printable", "valid_unicode", "valid_unicode_data"]

_SURROGATE_RE = re.compile("[\ud800-\udfff]")
# The JSON escape of a UTF-16 surrogate (a backslash, u, then d800 to dfff): the only way a lone
# surrogate is read from UTF-8 JSON.
_SURROGATE_ESCAPE_TEXT_RE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES_RE = re.compile(_SURROGATE_ESCAPE_TEXT_RE.pattern.encode())  # the same, as bytes
# C0 controls except tab and newline, DEL, C1 controls (0x9b is a one-byte CSI), and the bidirectional
# embeddings, overrides and isolates (U+202A..U+202E, U+2066..U+2069) that reorder a line on screen.
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_OR_NEWLINE_RE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def valid_unicode(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD (the replacement character)."""
    return _SURROGATE_RE.sub("\ufffd", text)


def holds_surrogate_escape(json_text: str | bytes) -> bool:
    """Whether JSON text holds a surrogate's escape: only then can its strings need ``valid_unicode_data``."""
    pattern = _SURROGATE_ESCAPE_BYTES_RE if isinstance(json_text, bytes) else _SURROGATE_ESCAPE_TEXT_RE
    return pattern.search(json_text) is not None


def valid_unicode_data(data: Any) -> Any:
    """``data`` (JSON as ``json.loads`` gives it) with every string, keys included, made ``valid_unicode``.

    For logs written before text was made valid where it entered: a reader applies it to a record whose
    line holds a surrogate's JSON escape. Containers are changed in place and walked without recursion,
    so any depth ``json.loads`` accepted is fine.
    """
    if isinstance(data, str):
        return valid_unicode(data)
    pending = [data] if isinstance(data, (dict, list)) else []
    while pending:
        container = pending.pop()
        if isinstance(container, dict):
            items = [(valid_unicode(key) if isinstance(key, str) else key, item) for key, item in container.items()]
            container.clear()
            container.update(items)
            slots: Any = list(container.keys())
        else:
            slots = range(len(container))
        for slot in slots:
            item = container[slot]
            if isinstance(item, str):
                container[slot] = valid_unicode(item)
            elif isinstance(item, (dict, list)):
                pending.append(item)
    return data


def _escaped(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str, keep_newlines: bool = True) -> str:
    """``text`` with control characters escaped for a terminal (newlines and tabs kept unless told)."""
    return (_CONTROL_RE if keep_newlines else _CONTROL_OR_NEWLINE_RE).sub(_escaped, text)


class PrintableFormatter(logging.Formatter):
    """A log formatter for a terminal: the formatted record (message and traceback) passed through ``printable``."""

    def format(self, record: logging.LogRecord) -> str:
        return printable(super().format(record))
