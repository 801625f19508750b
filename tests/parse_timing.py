"""Growth of a parser's time with its input: a ratio, never a wall-clock bound.

``growth(parse, make)`` times ``parse(make(size))`` and ``parse(make(10 *
size))`` in CPU time of the calling thread (``time.thread_time``: another
process on a busy machine does not count), best of a few tries each, and
returns the ratio. A linear parser gives about 10
(less when fixed costs dominate); a quadratic one about 100.
"""

from __future__ import annotations

import time
from collections.abc import Callable

FACTOR = 10
#: Generous: linear is ~10, quadratic ~100.
LINEAR_LIMIT = 50.0


def best_time(parse: Callable[[str], object], text: str, tries: int = 5) -> float:
    best = float("inf")
    for _ in range(tries):
        start = time.thread_time()
        try:
            parse(text)
        except ValueError:
            pass
        best = min(best, time.thread_time() - start)
    return best


def growth(parse: Callable[[str], object], make: Callable[[int], str], size: int = 1500) -> float:
    """``time(10x input) / time(1x input)`` for ``parse`` on ``make(size)``."""
    small = best_time(parse, make(size))
    large = best_time(parse, make(FACTOR * size))
    return large / max(small, 5e-5)
