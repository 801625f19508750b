"""Checked values of files a person hands over (entry files, their counts): one function per kind of field.

Each function returns the value when it is of its kind and within its
range, and otherwise raises a ``ValueError`` that starts with the field's
name and shows the value (cut to 60 characters, so a 400-digit number or a
megabyte string is never printed whole). A bool is never a number, and a
number is finite: ``NaN``, ``Infinity`` and ``1e308`` where a share is
expected are refused by their field, before any sum can overflow.
"""

from __future__ import annotations

import math
from typing import Any

#: The largest count a file may state (turns, tokens, messages...): far above any real run, and small
#: enough that every ratio and sum of counts stays a finite float.
MAX_COUNT = 10**12
#: The longest text field (a model name, a key, a path).
MAX_TEXT = 1_000


def shown(value: Any) -> str:
    """``repr(value)``, cut to 60 characters."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**60:
        return f"an int of {len(str(abs(value)))} digits"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integer(value: Any, where: str, low: int, high: int) -> int:
    """``value`` if it is an int (not a bool) in ``low..high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ValueError(f"{where}: expected an int from {low} to {high:,}, got {shown(value)}")
    return value


def count(value: Any, where: str, high: int = MAX_COUNT) -> int:
    """``value`` if it is a count: an int from 0 to ``high``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= high:
        raise ValueError(f"{where}: expected a count (an int from 0 to {high:,}), got {shown(value)}")
    return value


def number(value: Any, where: str, low: float, high: float) -> float:
    """``value`` as a float if it is a finite int or float (not a bool) in ``low..high``."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    if ok and isinstance(value, int):
        ok = abs(value) <= MAX_COUNT
    if not ok or not math.isfinite(value) or not low <= value <= high:
        raise ValueError(f"{where}: expected a number from {low:g} to {high:g}, got {shown(value)}")
    return float(value)


def share(value: Any, where: str) -> float:
    """``value`` if it is a number from 0 to 1 (a rate, a progress)."""
    return number(value, where, 0.0, 1.0)


def text(value: Any, where: str, longest: int = MAX_TEXT) -> str:
    """``value`` if it is a string of 1 to ``longest`` characters."""
    if not isinstance(value, str) or not 0 < len(value) <= longest:
        raise ValueError(f"{where}: expected a text of 1 to {longest:,} characters, got {shown(value)}")
    return value


def flag(value: Any, where: str) -> bool:
    """``value`` if it is ``true`` or ``false``."""
    if not isinstance(value, bool):
        raise ValueError(f"{where}: expected true or false, got {shown(value)}")
    return value


def mapping(value: Any, where: str) -> dict[str, Any]:
    """``value`` if it is a JSON object."""
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object, got {shown(value)}")
    return value


def sequence(value: Any, where: str, longest: int) -> list[Any]:
    """``value`` if it is a JSON list of at most ``longest`` items."""
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {shown(value)}")
    if len(value) > longest:
        raise ValueError(f"{where}: expected at most {longest:,} items, got {len(value):,}")
    return value
