"""The one place a report formats its numbers, so every table, caption and terminal line agrees.

Percentages have two decimals ("10.29%"), counts thousands separators ("27,139"),
p-values four decimals or "< 0.0001", and deal numbers are written as ranges
("1–40,000").
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal

import numpy as np

P_FLOOR = 1e-4
"""Below this a p-value is written "< 0.0001"."""


def pct(x: float) -> str:
    """A rate as a percentage with two decimals: 0.1029 -> "10.29%"."""
    return f"{x:.2%}"


def exact_pct(wins: int, deals: int, places: int = 2) -> str:
    """``wins`` of ``deals`` as a percentage with ``places`` decimals, rounded from the exact fraction, half up:
    11,321 of 20,000 -> "56.61%". `pct` of the float 0.56605 gives "56.60%" or "56.61%" as the binary
    float falls; counts give every table, caption and page the same figure."""
    exact = Decimal(100 * int(wins)) / Decimal(int(deals))
    return f"{exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)}%"


def count(n: int) -> str:
    """A count with thousands separators: 27139 -> "27,139"."""
    return f"{int(n):,}"


def interval(low: float, high: float) -> str:
    """A 95% interval of a rate: "9.99% – 10.59%"."""
    return f"{low:.2%} – {high:.2%}"


def signed_interval(d: float, low: float, high: float) -> str:
    """A difference of rates with its interval: "+0.64% (+0.41% to +0.87%)"."""
    return f"{d:+.2%} ({low:+.2%} to {high:+.2%})"


def verified(checked: int, wins: int) -> str:
    """Which wins of a figure the referee replayed and accepted (`studies.store` column ``verified``): "all",
    "none", "3 of 5", or "no wins" when there are none."""
    if wins == 0:
        return "no wins"
    return "all" if checked == wins else "none" if checked == 0 else f"{count(checked)} of {count(wins)}"


def verified_sentence(checked: int, wins: int) -> str:
    """`verified` as a sentence for a figure's notes: "Wins verified by the referee: all."."""
    return f"Wins verified by the referee: {verified(checked, wins)}."


def p_value(p: float) -> str:
    """A p-value for a table cell: "0.0123", "< 0.0001", or "–" when there is none."""
    if not np.isfinite(p):
        return "–"
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.4f}"


def p_clause(p: float) -> str:
    """A p-value in a sentence: "p = 0.0123" or "p < 0.0001" (never "p = < 0.0001")."""
    text = p_value(p)
    return "p " + (text if text.startswith("<") else f"= {text}")


def deal_ranges(deals: Iterable[int]) -> str:
    """Deal numbers as their runs of consecutive numbers: [1, 2, 3, 7] -> "1–3, 7"."""
    return runs_text(segments(deals))


def runs_text(runs: list[tuple[int, int]]) -> str:
    """(first, last) runs of deal numbers (`segments`) as text: [(1, 3), (7, 7)] -> "1–3, 7"."""
    return ", ".join(count(a) if a == b else f"{count(a)}–{count(b)}" for a, b in runs) if runs else "none"


def segments(deals: Iterable[int]) -> list[tuple[int, int]]:
    """Deal numbers as (first, last) runs of consecutive numbers."""
    d = np.asarray(deals if hasattr(deals, "__array__") else list(deals), dtype=np.int64)
    if d.size == 0:
        return []
    if not (d[1:] > d[:-1]).all():  # a run's deals come sorted and distinct; others are made so
        d = np.sort(d)
        d = d[np.r_[True, d[1:] != d[:-1]]]
    breaks = np.flatnonzero(np.diff(d) != 1)
    return [(int(a), int(b)) for a, b in zip(np.r_[d[0], d[breaks + 1]], np.r_[d[breaks], d[-1]], strict=True)]
