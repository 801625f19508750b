"""Rank bands: which differences in progress between entries are real (docs/leaderboard.md, "Rank bands").

The unit is the structure. An entry with per-structure results is scored
by the mean over its structures of its mean over runs on each (repeated
runs of one structure are nearly identical, so they are not independent
samples), and entries are ordered by that score. For two such entries the
difference is bootstrapped *paired by structure*: each of ``samples``
draws picks the structures both entries played, with replacement, and
within each drawn structure each entry's runs, with replacement; the
statistic is the mean over the drawn structures of each entry's mean over
its drawn runs, and the 95% interval of the difference is the 2.5th to
97.5th percentile of the drawn differences. An entry known only by its mean
and SEM (a published row) is compared *unpaired*: the difference of the
scores ± z·sqrt(SEM_a² + SEM_b²) (normal, z = 1.96 for 95%), where an entry
with per-structure results contributes the SEM of its structure means.

* **Comparable.** Two entries are compared only on the same structures:
  two entries with per-structure results when they share at least two
  structures; otherwise when both played the same set of structures (an
  entry whose set is not known, ``Scores.played`` unset, is taken to have
  played any). Other pairs are *not comparable*: their interval says why
  and has no bounds, and neither counts against the other's rank.
* **Bands**: walking down the order, an entry shares the band of the one
  above it when the interval of their difference contains zero or the two
  are not comparable, and opens a new band otherwise.
* **Rank** (the upper-bound rank Chatbot Arena shows): 1 + the number of
  comparable entries whose difference over this one has its whole interval
  above zero. Entries that cannot be told apart get the same rank.

Every draw is seeded from ``seed`` and the names of the structures (and,
for runs within structures, the entry's key), so the result depends on
neither the order the entries are given in nor the machine. The draws are
made in blocks of at most ``BLOCK_CELLS`` (sample, structure) cells, so
memory does not grow with the number of structures; 50 entries of 60
games take well under a second (benchmarks/bench_leaderboard.py).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from statistics import NormalDist

import numpy as np

from craft_env.eval.results.stats import mean_sem

SAMPLES = 10_000
LEVEL = 0.95
SEED = 0
PAIRED = "paired bootstrap"
UNPAIRED = "unpaired, from SEM"
NOT_COMPARABLE = "not comparable"
#: The most (sample, structure) cells drawn at once: 2**18 cells of int64 picks are 2 MiB (a board of 20
#: structures draws its 10,000 samples in one block).
BLOCK_CELLS = 2**18


@dataclass(frozen=True)
class Scores:
    """One entry's progress as the bands see it.

    ``by_structure`` maps a structure's name to the progress of each run on
    it; ``None`` for an entry known only by its mean and SEM (a published row),
    which ``played`` may name the structures of. With ``by_structure`` the
    bands score the entry from it (``level``), and ``mean`` and ``sem`` are
    not used.
    """

    key: str
    mean: float
    sem: float
    by_structure: Mapping[str, Sequence[float]] | None = None
    played: frozenset[str] | None = None

    @property
    def paired(self) -> bool:
        return bool(self.by_structure)

    @property
    def structures(self) -> frozenset[str] | None:
        """The structures the entry played (``None``: not known, taken to be any set)."""
        return frozenset(self.by_structure) if self.by_structure else self.played

    @cached_property
    def level(self) -> tuple[float, float]:
        """The entry's score and its SEM with the structure as the unit (``mean`` and ``sem`` without
        per-structure results): the mean of its structure means, and their SEM (NaN below two)."""
        if not self.by_structure:
            return self.mean, self.sem
        return mean_sem([math.fsum(v) / len(v) for v in self.by_structure.values()])


@dataclass(frozen=True)
class Interval:
    """The difference ``a - b`` in progress with its interval and how it was found."""

    diff: float
    low: float
    high: float
    method: str
    structures: int = 0
    reason: str | None = None

    @property
    def comparable(self) -> bool:
        return self.method != NOT_COMPARABLE

    @property
    def separates(self) -> bool:
        """Whether the whole interval lies on one side of zero (NaN bounds never separate)."""
        return self.low > 0.0 or self.high < 0.0


@dataclass
class Placement:
    """Where one entry lands: its rank, band, own interval and the interval to the entry below it."""

    key: str
    position: int
    rank: int
    band: int
    mean: float
    interval: tuple[float, float]
    interval_method: str
    to_next: Interval | None = None
    beaten_by: list[str] = field(default_factory=list)
    not_comparable: dict[str, str] = field(default_factory=dict)


def _digest(*parts: str) -> list[int]:
    """Seed words from text: the same names give the same draws on every machine."""
    raw = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return [int.from_bytes(raw[k : k + 4], "little") for k in range(0, 16, 4)]


def _rng(seed: int, *parts: str) -> np.random.Generator:
    return np.random.default_rng([seed, *_digest(*parts)])


def _z(level: float) -> float:
    return NormalDist().inv_cdf(0.5 + level / 2.0)


def _unpaired(a: Scores, b: Scores, level: float) -> Interval:
    (mean_a, sem_a), (mean_b, sem_b) = a.level, b.level
    diff = mean_a - mean_b
    spread = _z(level) * math.sqrt(sem_a**2 + sem_b**2)
    return Interval(diff, diff - spread, diff + spread, UNPAIRED)


def _not_comparable(reason: str) -> Interval:
    return Interval(math.nan, math.nan, math.nan, NOT_COMPARABLE, 0, reason)


def _sets_differ(a: Scores, b: Scores) -> str | None:
    """Why comparing ``a`` and ``b`` unpaired would be over different structures (``None``: it would not)."""
    mine, theirs = a.structures, b.structures
    if mine is None or theirs is None or mine == theirs:
        return None
    return (
        f"{a.key} played {len(mine)} structures and {b.key} {len(theirs)}, {len(mine & theirs)} of them "
        "the same: their means are over different structures"
    )


class _Draws:
    """Bootstrap means of entries over one set of structures (shared structure draws: the pairing).

    The structure picks are drawn in blocks of rows (samples) of at most ``BLOCK_CELLS`` cells, from one
    seeded generator, so every entry sees the same picks and memory does not grow with the structures.
    """

    def __init__(self, structures: tuple[str, ...], samples: int, seed: int) -> None:
        self.structures = structures
        self.samples = samples
        self.seed = seed
        self.rows = max(1, BLOCK_CELLS // len(structures))
        self._means: dict[str, np.ndarray] = {}

    def _blocks(self) -> Iterator[np.ndarray]:
        rng = _rng(self.seed, "structures", *self.structures)
        n = len(self.structures)
        for start in range(0, self.samples, self.rows):
            yield rng.integers(0, n, size=(min(self.rows, self.samples - start), n))

    def means(self, entry: Scores) -> np.ndarray:
        """``samples`` bootstrap values of the entry's mean progress over these structures."""
        if entry.key in self._means:
            return self._means[entry.key]
        runs = [np.asarray(entry.by_structure[s], dtype=float) for s in self.structures]
        counts = np.array([len(r) for r in runs])
        width = int(counts.max())
        values = np.full((len(runs), width), np.nan)
        for row, r in enumerate(runs):
            values[row, : len(r)] = r
        rng = _rng(self.seed, "runs", entry.key, *self.structures)
        parts = []
        for picks in self._blocks():
            drawn = values[picks, 0] if width == 1 else self._within_runs(rng, picks, values, counts)
            parts.append(drawn.mean(axis=1))
        result = np.concatenate(parts)
        self._means[entry.key] = result
        return result

    @staticmethod
    def _within_runs(
        rng: np.random.Generator, picks: np.ndarray, values: np.ndarray, counts: np.ndarray
    ) -> np.ndarray:
        """(rows, structures) means over runs drawn with replacement within each drawn structure.

        With unequal run counts each drawn cell draws as many runs as its structure has, all cells' draws
        in one vector, cut into pieces of at most ``BLOCK_CELLS`` draws: the work and the memory follow
        the runs drawn, not the cells times the largest count.
        """
        width = values.shape[1]
        flat = values.ravel()
        start = picks * width
        if bool((counts == width).all()):
            total = np.zeros(picks.shape)
            for _ in range(width):
                total += flat.take(start + rng.integers(0, width, size=picks.shape))
            return total / width
        n = counts[picks].ravel().astype(np.int64)
        first = start.ravel()
        ends = np.cumsum(n)
        sums = np.empty(n.size)
        low = 0
        while low < n.size:
            before = int(ends[low - 1]) if low else 0
            high = max(low + 1, int(np.searchsorted(ends, before + BLOCK_CELLS, side="right")))
            runs = n[low:high]
            chosen = (rng.random(int(ends[high - 1]) - before) * np.repeat(runs, runs)).astype(np.int64)
            taken = flat.take(np.repeat(first[low:high], runs) + chosen)
            sums[low:high] = np.add.reduceat(taken, np.cumsum(runs) - runs)
            low = high
        return (sums / n).reshape(picks.shape)


def _percentiles(values: np.ndarray, level: float) -> np.ndarray:
    tail = (1.0 - level) / 2.0
    return np.quantile(values, [tail, 1.0 - tail], axis=-1)


class _Comparer:
    """Intervals of differences between entries, paired where both have per-structure results."""

    def __init__(self, entries: Sequence[Scores], samples: int, seed: int, level: float) -> None:
        self.samples, self.seed, self.level = samples, seed, level
        self._draws: dict[tuple[str, ...], _Draws] = {}
        self._cache: dict[tuple[str, str], Interval] = {}
        self._structure_means = {
            e.key: {s: math.fsum(v) / len(v) for s, v in e.by_structure.items()} for e in entries if e.paired
        }

    def mean_over(self, entry: Scores, structures: tuple[str, ...]) -> float:
        """The entry's statistic on ``structures``: the mean over them of its mean over runs."""
        means = self._structure_means[entry.key]
        return math.fsum(means[s] for s in structures) / len(structures)

    def draws(self, structures: tuple[str, ...]) -> _Draws:
        if structures not in self._draws:
            self._draws[structures] = _Draws(structures, self.samples, self.seed)
        return self._draws[structures]

    @staticmethod
    def common(a: Scores, b: Scores) -> tuple[str, ...]:
        if not (a.paired and b.paired):
            return ()
        return tuple(sorted(set(a.by_structure) & set(b.by_structure)))

    def against(self, a: Scores, others: Sequence[Scores]) -> list[Interval]:
        """Intervals of ``a - b`` for every ``b`` of ``others`` (one quantile call per structure set)."""
        found: list[Interval | None] = [None] * len(others)
        by_set: dict[tuple[str, ...], list[int]] = {}
        for k, b in enumerate(others):
            cached = self._cache.get((a.key, b.key))
            if cached is not None:
                found[k] = cached
                continue
            if a.paired and b.paired:
                shared = self.common(a, b)
                if len(shared) >= 2:
                    by_set.setdefault(shared, []).append(k)
                else:
                    found[k] = _not_comparable(
                        f"{a.key} and {b.key} share {len(shared)} "
                        f"structure{'' if len(shared) == 1 else 's'}; a paired comparison needs 2"
                    )
                continue
            differ = _sets_differ(a, b)
            found[k] = _unpaired(a, b, self.level) if differ is None else _not_comparable(differ)
        for shared, ks in by_set.items():
            draws = self.draws(shared)
            mine = draws.means(a)
            theirs = np.stack([draws.means(others[k]) for k in ks])
            low, high = _percentiles(mine[None, :] - theirs, self.level)
            base = self.mean_over(a, shared)
            for row, k in enumerate(ks):
                diff = base - self.mean_over(others[k], shared)
                found[k] = Interval(diff, float(low[row]), float(high[row]), PAIRED, len(shared))
        for b, interval in zip(others, found):
            self._cache[(a.key, b.key)] = interval
            self._cache[(b.key, a.key)] = Interval(
                -interval.diff,
                -interval.high,
                -interval.low,
                interval.method,
                interval.structures,
                interval.reason,
            )
        return found  # type: ignore[return-value]

    def own_interval(self, entry: Scores) -> tuple[tuple[float, float], str]:
        """The entry's own interval of mean progress (bootstrap over its structures, or mean ± z·SEM)."""
        if entry.paired and len(entry.by_structure) >= 2:
            structures = tuple(sorted(entry.by_structure))
            low, high = _percentiles(self.draws(structures).means(entry), self.level)
            return (float(low), float(high)), PAIRED
        mean, sem = entry.level
        spread = _z(self.level) * sem
        return (mean - spread, mean + spread), UNPAIRED


def order(entries: Sequence[Scores]) -> list[Scores]:
    """Best first by score (``Scores.level``); ties (and NaN, last) by key, so the order never depends on the
    input's."""

    def rank_key(entry: Scores) -> tuple[bool, float, str]:
        mean = entry.level[0]
        return (math.isnan(mean), -mean if not math.isnan(mean) else 0.0, entry.key)

    return sorted(entries, key=rank_key)


def rank_bands(
    entries: Sequence[Scores], samples: int = SAMPLES, seed: int = SEED, level: float = LEVEL
) -> list[Placement]:
    """Rank, band and intervals of each entry (best first; see the module docstring)."""
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        raise ValueError(f"rank_bands: entry keys must be unique, got {sorted(keys)}")
    if samples < 100:
        raise ValueError(f"rank_bands: samples must be at least 100, got {samples}")
    ranked = order(entries)
    compare = _Comparer(ranked, samples, seed, level)
    placements = []
    band = 1
    for position, entry in enumerate(ranked):
        others = [e for e in ranked if e.key != entry.key]
        intervals = compare.against(entry, others)
        beaten_by = [other.key for other, iv in zip(others, intervals) if iv.high < 0.0]
        apart = {other.key: iv.reason or "" for other, iv in zip(others, intervals) if not iv.comparable}
        to_next = intervals[position] if position + 1 < len(ranked) else None  # others[position] is the next
        own, method = compare.own_interval(entry)
        placements.append(
            Placement(
                entry.key,
                position + 1,
                1 + len(beaten_by),
                band,
                entry.level[0],
                own,
                method,
                to_next,
                beaten_by,
                apart,
            )
        )
        if to_next is not None and to_next.separates:
            band += 1
    return placements
