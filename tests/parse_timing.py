"""Growth of a parser's time with its input: a ratio, never a wall-clock bound.

``growth(parse, make)`` times ``parse(make(size))`` and ``parse(make(10 *
size))`` in CPU time of the calling thread (``time.thread_time``: another
process on a busy machine does not count), best of a few tries each, and
returns the ratio. A linear parser gives about 10
(less when fixed costs dominate); a quadratic one about 100.

The parsers remember the texts they read up to a length (issue 33), so
every try starts with those memories forgotten (``forget_parses``): a
try that only looked a text up would time the memory, not the parse (a
1,500-character builder reply took 1 µs from memory against 2.6 ms for
ten times the text read, a "growth" of 52).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from craft_env.text import moves, replies, speech

#: Every parse the text layer remembers (``functools.lru_cache``); forgotten before each timed try.
PARSE_MEMOS = (
    moves._memo_read, replies._memo_director_reply, replies._memo_builder_action, speech._memo_parse,
)

FACTOR = 10
#: Generous: linear is ~10, quadratic ~100.
LINEAR_LIMIT = 50.0


def forget_parses() -> None:
    for memo in PARSE_MEMOS:
        memo.cache_clear()


def best_time(parse: Callable[[str], object], text: str, tries: int = 5) -> float:
    best = float("inf")
    for _ in range(tries):
        forget_parses()
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
