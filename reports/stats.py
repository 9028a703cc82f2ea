"""Statistics for win rates: intervals that come with every figure.

Intervals are two-sided at the given confidence; Wilson's score interval by
default, the exact Clopper-Pearson interval on request (from scipy's beta
distribution).
"""

from __future__ import annotations

import math

from scipy import stats

METHODS = ("wilson", "clopper-pearson")


def win_rate_interval(wins: int, n: int, confidence: float = 0.95, method: str = "wilson") -> tuple[float, float]:
    """The interval for a binomial proportion ``wins / n``."""
    if n <= 0:
        raise ValueError(f"an interval needs at least one deal; got n={n}")
    if not 0 <= wins <= n:
        raise ValueError(f"wins={wins} must lie in 0..n={n}")
    if method == "wilson":
        z = stats.norm.ppf(0.5 + confidence / 2)
        p = wins / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return max(0.0, centre - half), min(1.0, centre + half)
    if method == "clopper-pearson":
        alpha = 1 - confidence
        low = 0.0 if wins == 0 else float(stats.beta.ppf(alpha / 2, wins, n - wins + 1))
        high = 1.0 if wins == n else float(stats.beta.ppf(1 - alpha / 2, wins + 1, n - wins))
        return low, high
    raise ValueError(f"unknown interval method {method!r}; allowed: {', '.join(METHODS)}")
