"""Statistics for win rates: every figure comes with an interval and its sample size.

- one win rate: Wilson's score interval (default) or the exact Clopper-Pearson
  interval;
- two independent win rates (two variants on different deals): Newcombe's hybrid
  score interval for the difference (his method 10);
- two strategies on the same deals: McNemar's exact test on the discordant
  deals and Newcombe's interval for a paired difference (method 10 of his 1998
  paired-data paper, with the phi continuity correction);
- k strategies on the same deals: Cochran's Q, and pairwise McNemar tests with
  Holm's step-down correction;
- planning: how many deals an interval of a wanted half-width needs.

Quantiles and tails come from scipy, imported only when one is needed: the 95%
normal quantile of every default interval is a constant, and the two tails a
report needs (McNemar's binomial, Cochran's chi-square) come from
``scipy.special`` (a tenth of a second to load), so a report with dozens of
comparisons never loads ``scipy.stats`` (seconds to load).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations
from types import ModuleType

import numpy as np

METHODS = ("wilson", "clopper-pearson")

Z95 = 1.959963984540054
"""``scipy.stats.norm.ppf(0.975)`` (the same float): the normal quantile of 95% intervals, without loading scipy."""


def _scipy_special() -> ModuleType:
    """``scipy.special`` (the incomplete beta and chi-square tails behind scipy.stats' own), loaded on first use."""
    from scipy import special

    return special


def _scipy_stats() -> ModuleType:
    """``scipy.stats``, loaded on first use."""
    from scipy import stats

    return stats


def _z(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence {confidence!r} must lie strictly between 0 and 1, e.g. 0.95")
    return Z95 if confidence == 0.95 else float(_scipy_stats().norm.ppf(0.5 + confidence / 2))


def win_rate_interval(wins: int, n: int, confidence: float = 0.95, method: str = "wilson") -> tuple[float, float]:
    """The interval for a binomial proportion ``wins / n``."""
    if n <= 0:
        raise ValueError(f"an interval needs at least one deal; got n={n}")
    if not 0 <= wins <= n:
        raise ValueError(f"wins={wins} must lie in 0..n={n}")
    if method == "wilson":
        z = _z(confidence)
        p = wins / n
        denom = 1 + z * z / n
        centre = (p + z * z / (2 * n)) / denom
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
        return max(0.0, centre - half), min(1.0, centre + half)
    if method == "clopper-pearson":
        alpha = 1 - confidence
        stats = _scipy_stats()
        low = 0.0 if wins == 0 else float(stats.beta.ppf(alpha / 2, wins, n - wins + 1))
        high = 1.0 if wins == n else float(stats.beta.ppf(1 - alpha / 2, wins + 1, n - wins))
        return low, high
    raise ValueError(f"unknown interval method {method!r}; allowed: {', '.join(METHODS)}")


def difference_interval(wins1: int, n1: int, wins2: int, n2: int, confidence: float = 0.95) -> tuple[float, float, float]:
    """Difference p1 - p2 of two independent win rates: (difference, low, high), Newcombe's method 10."""
    p1, p2 = wins1 / n1, wins2 / n2
    l1, u1 = win_rate_interval(wins1, n1, confidence)
    l2, u2 = win_rate_interval(wins2, n2, confidence)
    d = p1 - p2
    return d, d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2), d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)


@dataclass(frozen=True)
class PairedComparison:
    """Two strategies on the same n deals.

    ``both`` and ``neither`` are the deals both or neither won; ``only_first``
    and ``only_second`` the discordant ones. ``difference`` is the first's win
    rate minus the second's, with its interval; ``p_value`` is McNemar's exact
    two-sided test.
    """

    n: int
    both: int
    only_first: int
    only_second: int
    neither: int
    difference: float
    low: float
    high: float
    p_value: float


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """McNemar's exact two-sided p-value from the two discordant counts."""
    m = only_first + only_second
    if m == 0:
        return 1.0
    k = min(only_first, only_second)  # k < m: P(X <= k) for X ~ Binomial(m, 1/2) is I_{1/2}(m - k, k + 1)
    return float(min(1.0, 2 * _scipy_special().betainc(m - k, k + 1, 0.5)))


def paired_comparison(first_won: np.ndarray, second_won: np.ndarray, confidence: float = 0.95) -> PairedComparison:
    """Compare two strategies' wins (boolean arrays over the same deals)."""
    x, y = np.asarray(first_won, dtype=bool), np.asarray(second_won, dtype=bool)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"paired comparison needs two equal-length, non-empty win arrays; got {x.shape} and {y.shape}")
    return paired_counts(int((x & y).sum()), int((x & ~y).sum()), int((~x & y).sum()), int((~x & ~y).sum()),
                         confidence)


def paired_counts(both: int, only_first: int, only_second: int, neither: int,
                  confidence: float = 0.95) -> PairedComparison:
    """`paired_comparison` from the four counts of the deals' 2 x 2 table (what a query over a store returns)."""
    a, b, c, d = both, only_first, only_second, neither
    n = a + b + c + d
    if n <= 0:
        raise ValueError("a paired comparison needs at least one deal")
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = win_rate_interval(a + b, n, confidence)
    l2, u2 = win_rate_interval(a + c, n, confidence)
    denom = math.sqrt((a + b) * (c + d) * (a + c) * (b + d))
    if denom == 0:
        phi = 0.0
    else:
        num = a * d - b * c
        phi = (max(num - n / 2, 0) if num > 0 else num) / denom
    diff = p1 - p2
    delta = math.sqrt(max((p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2, 0.0))
    eps = math.sqrt(max((u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2, 0.0))
    return PairedComparison(n, a, b, c, d, diff, max(-1.0, diff - delta), min(1.0, diff + eps), mcnemar_exact(b, c))


def cochrans_q(wins: np.ndarray) -> tuple[float, int, float]:
    """Cochran's Q for k strategies on the same deals (``wins``: deals x k, 0/1): (Q, df, p)."""
    w = np.asarray(wins, dtype=np.int64)
    if w.ndim != 2 or w.shape[1] < 2 or w.shape[0] == 0:
        raise ValueError(f"Cochran's Q needs a deals x strategies table with at least 2 strategies; got shape {w.shape}")
    row = w.sum(axis=1)
    return cochrans_q_sums([int(c) for c in w.sum(axis=0)], int((row**2).sum()))


def cochrans_q_sums(column_sums: list[int], row_squares: int) -> tuple[float, int, float]:
    """Cochran's Q from its sufficient statistics: each strategy's wins (``column_sums``) and the sum over deals of
    the squared number of strategies that won the deal (``row_squares``); (Q, df, p)."""
    k = len(column_sums)
    if k < 2:
        raise ValueError(f"Cochran's Q needs at least 2 strategies; got {k}")
    total = sum(column_sums)
    denom = k * total - row_squares
    if denom == 0:
        return 0.0, k - 1, 1.0
    q = (k - 1) * (k * sum(c * c for c in column_sums) - total**2) / denom
    return float(q), k - 1, float(_scipy_special().chdtrc(k - 1, q))


def holm(p_values: list[float] | np.ndarray) -> np.ndarray:
    """Holm's step-down adjusted p-values (family-wise error control)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    m = len(p)
    adjusted = np.empty(m)
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        adjusted[i] = running
    return adjusted


def pairwise_mcnemar(wins: np.ndarray, names: list[str]) -> list[tuple[str, str, PairedComparison, float]]:
    """Every pair of strategies: (first, second, comparison, Holm-adjusted p-value)."""
    w = np.asarray(wins, dtype=bool)
    return holm_pairs([(names[i], names[j], paired_comparison(w[:, i], w[:, j]))
                       for i, j in combinations(range(w.shape[1]), 2)])


def holm_pairs(pairs: list[tuple[str, str, PairedComparison]]) -> list[tuple[str, str, PairedComparison, float]]:
    """Each pair's comparison with its Holm-adjusted p-value over all of ``pairs``."""
    adjusted = holm([c.p_value for _, _, c in pairs])
    return [(a, b, c, float(p)) for (a, b, c), p in zip(pairs, adjusted, strict=True)]


def deals_needed(expected_rate: float, half_width: float, confidence: float = 0.95) -> int:
    """The fewest deals whose Wilson interval around ``expected_rate`` is at most +-``half_width`` wide."""
    if not 0 <= expected_rate <= 1:
        raise ValueError(f"expected_rate {expected_rate!r} must lie in 0..1")
    if not 0 < half_width < 0.5:
        raise ValueError(f"half_width {half_width!r} must lie strictly between 0 and 0.5, e.g. 0.005 for +-0.5 points")
    z = _z(confidence)

    def width(n: int) -> float:
        p = expected_rate
        return z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)

    hi = max(1, math.ceil(z * z * max(expected_rate * (1 - expected_rate), 1e-12) / half_width**2))
    while width(hi) > half_width:
        hi *= 2
    lo = 1
    while lo < hi:
        mid = (lo + hi) // 2
        if width(mid) <= half_width:
            hi = mid
        else:
            lo = mid + 1
    return lo
