"""Report tables of judge results: per-question scores per run directory, agreement, correlations."""

from __future__ import annotations

import math


def pm(mean: float, sem: float) -> str:
    """``0.512 ± 0.031``; ``n/a`` for no mean; a lone value when the SEM is undefined."""
    if mean is None or (isinstance(mean, float) and math.isnan(mean)):
        return "n/a"
    if sem is None or (isinstance(sem, float) and math.isnan(sem)):
        return f"{mean:.3f}"
    return f"{mean:.3f} ± {sem:.3f}"
