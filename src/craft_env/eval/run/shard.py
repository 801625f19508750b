"""Sharded runs: ``craft-env run --shard I/N`` plays a fixed, disjoint share of a run's games.

A run's games are its ``(run, structure index)`` pairs in one order: runs
1..R, and in each the selected structures in ascending order. Shard ``I``
of ``N`` (``1 <= I <= N``) plays the games at positions ``I-1``, ``I-1+N``,
``I-1+2N``, ... of that list (counting from 0), so every game is in exactly one shard whatever
``N`` is, the shards differ in size by at most one game, and the split
depends on the settings alone: N machines (a batch scheduler's array, a Ray
job: docs/scale.md) given the same settings and ``1/N`` .. ``N/N`` play the
whole run between them, and ``craft-env merge`` (``merge``) puts their
directories back together.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

_SHAPE = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based) of ``count``."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if not 1 <= self.index <= self.count:
            raise ValueError(f"shard: expected I/N with 1 <= I <= N (e.g. 2/3), got {self.index}/{self.count}")

    @classmethod
    def parse(cls, text: object) -> Shard:
        """``"2/3"`` -> ``Shard(2, 3)``; anything else is a ``ValueError`` naming ``shard`` and the value."""
        match = _SHAPE.fullmatch(text) if isinstance(text, str) else None
        if match is not None and 1 <= int(match.group(1)) <= int(match.group(2)):
            return cls(int(match.group(1)), int(match.group(2)))
        raise ValueError(f"shard: expected I/N with 1 <= I <= N (e.g. 2/3), got {text!r}")

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def take(self, games: Sequence[T]) -> list[T]:
        """This shard's games out of the run's whole game list (in its order)."""
        return list(games[self.index - 1 :: self.count])


def canonical_shard(value: object) -> str | None:
    """``None`` stays ``None``; ``" 02/3"`` becomes ``"2/3"``; a bad value raises ``ValueError``."""
    if value is None:
        return None
    return str(value if isinstance(value, Shard) else Shard.parse(value))


def run_games(runs: int, selected: Sequence[int]) -> list[tuple[int, int]]:
    """Every ``(run, structure index)`` of a run, in the order shards are dealt from."""
    return [(run, index) for run in range(1, runs + 1) for index in selected]


def owner_of(game: T, games: Sequence[T], count: int) -> Shard:
    """The shard of ``count`` that deals ``game`` out of the run's game list ``games``."""
    return Shard(games.index(game) % count + 1, count)


def shard_games(shard: str | Shard | None, runs: int, selected: Sequence[int]) -> list[tuple[int, int]]:
    """The ``(run, structure index)`` games that ``shard`` plays (all of them when ``shard`` is ``None``)."""
    games = run_games(runs, selected)
    if shard is None:
        return games
    shard = shard if isinstance(shard, Shard) else Shard.parse(shard)
    share = shard.take(games)
    if not share:
        raise ValueError(
            f"shard: {shard} holds no games: the run has {len(games)} ({runs} run(s) x {len(selected)} "
            f"structure(s)); use at most {len(games)} shards"
        )
    return share
