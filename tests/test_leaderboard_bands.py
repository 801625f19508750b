"""Rank bands (craft_env.eval.results.bands) on constructed data where the answer is known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from craft_env.eval.results.bands import NOT_COMPARABLE, PAIRED, UNPAIRED, Scores, rank_bands

STRUCTURES = [f"s{k:02d}" for k in range(20)]
BASE = np.random.default_rng(7).uniform(0.2, 0.7, size=len(STRUCTURES))


def entry(key, per_structure, runs=1, noise=0.0, seed=0):
    """An entry whose run r on structure s scores ``per_structure[s]`` plus seeded noise."""
    rng = np.random.default_rng(seed)
    by = {
        s: [float(v + noise * rng.standard_normal()) for _ in range(runs)]
        for s, v in zip(STRUCTURES, per_structure)
    }
    values = [v for runs_ in by.values() for v in runs_]
    sem = float(np.std(values, ddof=1) / math.sqrt(len(values)))
    return Scores(key, float(np.mean(values)), sem, by)


def placed(entries, **options):
    return {p.key: p for p in rank_bands(entries, **options)}


def test_two_identical_entries_share_a_band_and_a_rank():
    a = entry("a", BASE, runs=3, noise=0.05, seed=1)
    twin = Scores("twin", a.mean, a.sem, a.by_structure)
    found = placed([a, twin])
    assert found["a"].band == found["twin"].band == 1
    assert found["a"].rank == found["twin"].rank == 1
    first = min(found.values(), key=lambda p: p.position)
    assert first.to_next.method == PAIRED and first.to_next.low <= 0.0 <= first.to_next.high
    assert first.to_next.diff == 0.0


def test_a_clearly_better_entry_ranks_alone():
    better = entry("better", BASE + 0.2, runs=3, noise=0.05, seed=2)
    a = entry("a", BASE, runs=3, noise=0.05, seed=3)
    b = Scores("b", a.mean, a.sem, a.by_structure)
    found = placed([a, b, better])
    assert (found["better"].rank, found["better"].band, found["better"].position) == (1, 1, 1)
    assert found["better"].to_next.low > 0.1
    assert found["a"].band == found["b"].band == 2
    assert found["a"].rank == found["b"].rank == 2
    assert found["a"].beaten_by == ["better"]


def test_the_rank_is_one_plus_the_entries_that_beat_it_not_the_band():
    # A - B alternates +0.12 / -0.08 (mean +0.02), B - C alternates -0.08 / +0.12: neither adjacent
    # difference is told apart from zero, so all three share one band; but A - C is +0.04 on every
    # structure, so A beats C and C's rank is 2 while B, beaten by nobody, keeps rank 1.
    swing = np.array([0.12, -0.08] * 10)
    a = BASE + 0.2
    b = a - swing
    c = b - swing[::-1].copy()
    assert np.allclose(a - c, 0.04)
    found = placed([entry("C", c), entry("A", a), entry("B", b)])
    assert [found[k].band for k in "ABC"] == [1, 1, 1]
    assert [found[k].rank for k in "ABC"] == [1, 1, 2]
    assert found["C"].beaten_by == ["A"]


def test_four_levels_give_upper_bound_ranks_one_two_two_four():
    top = entry("top", BASE + 0.3)
    mid1 = entry("mid1", BASE + 0.1, runs=2, noise=0.02, seed=4)
    mid2 = Scores("mid2", mid1.mean, mid1.sem, mid1.by_structure)
    low = entry("low", BASE - 0.15)
    found = placed([low, mid2, top, mid1])
    assert [found[k].rank for k in ("top", "mid1", "mid2", "low")] == [1, 2, 2, 4]
    assert [found[k].band for k in ("top", "mid1", "mid2", "low")] == [1, 2, 2, 3]


def test_a_constant_paired_difference_has_a_zero_width_interval():
    found = placed([entry("a", BASE + 0.05), entry("b", BASE)])
    interval = found["a"].to_next
    assert interval.method == PAIRED and interval.structures == len(STRUCTURES)
    assert interval.low == pytest.approx(0.05) and interval.high == pytest.approx(0.05)


def test_published_rows_get_an_unpaired_interval_from_their_sem():
    ours = entry("ours", BASE)
    paper = Scores("paper", 0.30, 0.04, None)
    found = placed([ours, paper])
    first = min(found.values(), key=lambda p: p.position)
    interval = first.to_next
    spread = 1.959963984540054 * math.sqrt(ours.sem**2 + 0.04**2)
    assert interval.method == UNPAIRED
    assert interval.diff == pytest.approx(abs(ours.mean - 0.30))
    assert interval.high - interval.low == pytest.approx(2 * spread)
    assert found["paper"].interval == pytest.approx(
        (0.30 - 1.959963984540054 * 0.04, 0.30 + 1.959963984540054 * 0.04)
    )
    assert found["paper"].interval_method == UNPAIRED


def test_a_published_row_without_a_sem_cannot_be_told_apart():
    found = placed([Scores("p", 0.9, math.nan, None), Scores("q", 0.1, 0.01, None)])
    assert found["p"].band == found["q"].band == 1 and found["q"].rank == 1


def test_entries_sharing_fewer_than_two_structures_are_not_comparable():
    a = Scores("a", 0.6, 0.05, {"s00": [0.6], "s01": [0.6]})
    b = Scores("b", 0.5, 0.05, {"s01": [0.5], "s02": [0.5]})
    found = placed([a, b])
    interval = found["a"].to_next
    assert interval.method == NOT_COMPARABLE and "share 1 structure" in interval.reason
    assert math.isnan(interval.low) and math.isnan(interval.high)
    assert found["a"].rank == found["b"].rank == 1 and found["a"].band == found["b"].band
    assert found["b"].not_comparable == {"a": interval.reason}


def test_pairs_use_only_the_structures_both_played():
    a = entry("a", BASE + 0.1)
    b = Scores("b", 0.0, 0.0, {s: v for s, v in list(entry("b", BASE).by_structure.items())[:10]})
    interval = placed([a, b])["a"].to_next
    assert interval.structures == 10 and interval.diff == pytest.approx(0.1)


def test_the_result_depends_on_the_seed_only_not_on_the_input_order():
    entries = [
        entry(k, BASE + shift, runs=2, noise=0.05, seed=n)
        for n, (k, shift) in enumerate([("x", 0.0), ("y", 0.01), ("z", 0.03)])
    ]
    once = rank_bands(entries)
    again = rank_bands(list(reversed(entries)))
    assert [(p.key, p.rank, p.band, p.interval, p.to_next) for p in once] == [
        (p.key, p.rank, p.band, p.interval, p.to_next) for p in again
    ]
    other = rank_bands(entries, seed=1)
    assert [p.to_next for p in other] != [p.to_next for p in once]


def test_bad_input_is_refused_naming_it():
    with pytest.raises(ValueError, match="keys must be unique"):
        rank_bands([Scores("a", 0.1, 0.1), Scores("a", 0.2, 0.1)])
    with pytest.raises(ValueError, match="samples must be at least 100"):
        rank_bands([Scores("a", 0.1, 0.1)], samples=10)
