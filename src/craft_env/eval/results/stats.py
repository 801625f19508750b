"""Small statistics for reports: mean and SEM (of values, or of clusters' means), correlations with
p-values, weighted kappa.

Correlations come from ``scipy.stats`` (imported on first use). Every
function takes plain sequences, drops nothing silently (callers filter
missing values first), and returns NaN where the statistic is undefined
(too few values, no variance) instead of raising.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

NAN = float("nan")


def mean_sem(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard error (sample std, ddof 1, over sqrt(n)).

    The one rule for small samples (docs/benchmark.md, "Numbers in JSON
    files"): no values give NaN for both; one value gives its mean and a NaN
    SEM, since a spread cannot be measured from one game (reports print
    ``n/a``, JSON files ``null``).
    """
    n = len(values)
    if n == 0:
        return NAN, NAN
    mean = math.fsum(values) / n
    if n < 2:
        return mean, NAN
    variance = math.fsum((v - mean) ** 2 for v in values) / (n - 1)
    return mean, math.sqrt(variance / n)


def cluster_sem(values: Sequence[float], clusters: Sequence[object]) -> float:
    """Standard error of the mean of ``values`` when they come in clusters: ``mean_sem`` over the
    clusters' means (``clusters[i]`` names the cluster of ``values[i]``).

    Games of one structure are not independent draws: a team whose play
    does not depend on the seed plays the same game in every seed of a
    structure, so ``mean_sem`` over the games would count one game ten
    times and shrink the SEM by about sqrt(10). With equal-sized clusters
    the mean of the cluster means is the mean of the values, and this is
    its usual cluster-robust standard error. Fewer than two clusters give
    NaN (``mean_sem``'s rule).
    """
    if len(values) != len(clusters):
        raise ValueError(f"clusters: expected one per value ({len(values)}), got {len(clusters)}")
    groups: dict[object, list[float]] = {}
    for value, cluster in zip(values, clusters):
        groups.setdefault(cluster, []).append(value)
    return mean_sem([math.fsum(group) / len(group) for group in groups.values()])[1]


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[list[float], list[float]]:
    if len(x) != len(y):
        raise ValueError(f"correlation: x has {len(x)} values and y {len(y)}")
    keep = [(a, b) for a, b in zip(x, y) if not (math.isnan(a) or math.isnan(b))]
    return [a for a, _ in keep], [b for _, b in keep]


def _constant(values: Sequence[float]) -> bool:
    return max(values) - min(values) == 0.0


def pearson(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Pearson r and its two-sided p over the pairs where both are numbers (NaN below 3 pairs)."""
    a, b = _paired(x, y)
    if len(a) < 3 or _constant(a) or _constant(b):
        return NAN, NAN
    from scipy import stats

    result = stats.pearsonr(a, b)
    return float(result[0]), float(result[1])


def spearman(x: Sequence[float], y: Sequence[float]) -> tuple[float, float]:
    """Spearman rho and its two-sided p over the pairs where both are numbers (NaN below 3 pairs)."""
    a, b = _paired(x, y)
    if len(a) < 3 or _constant(a) or _constant(b):
        return NAN, NAN
    from scipy import stats

    result = stats.spearmanr(a, b)
    return float(result[0]), float(result[1])


def weighted_kappa(a: Sequence[int], b: Sequence[int], categories: int) -> float:
    """Cohen's kappa with linear weights for ordinal codes ``0..categories-1`` (NaN if undefined).

    kappa = 1 - sum(w_d * observed) / sum(w_d * expected), with disagreement
    weight ``w_d = |i - j| / (categories - 1)`` and ``expected`` the product
    of the two raters' marginals.
    """
    if len(a) != len(b):
        raise ValueError(f"kappa: rater a gave {len(a)} codes and rater b {len(b)}")
    n = len(a)
    if n == 0 or categories < 2:
        return NAN
    if any(not 0 <= v < categories for v in (*a, *b)):
        raise ValueError(f"kappa: codes must lie in 0..{categories - 1}")
    span = categories - 1
    observed = math.fsum(abs(i - j) / span for i, j in zip(a, b)) / n
    count_a = [0] * categories
    count_b = [0] * categories
    for i, j in zip(a, b):
        count_a[i] += 1
        count_b[j] += 1
    expected = math.fsum(
        count_a[i] * count_b[j] * abs(i - j) / span for i in range(categories) for j in range(categories)
    ) / (n * n)
    if expected == 0.0:
        return NAN
    return 1.0 - observed / expected
