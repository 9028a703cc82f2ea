"""A sequential probability ratio test on paired outcomes: stop comparing two strategies once it is decided.

Two strategies play the same deals. Only the discordant deals (one won, the other lost) say which is
better; let ``b`` be the deals only the first won, ``c`` those only the second won, ``m = b + c`` and ``n``
the deals played. With ``p_A``, ``p_B`` the win rates and ``r`` the discordance rate (the chance that a deal
is discordant), a discordant deal favours the first with probability

    q = P(only A | discordant) = (r + (p_A - p_B)) / (2 r) = 1/2 + (p_A - p_B) / (2 r),

because ``P(only A) - P(only B) = p_A - p_B`` and ``P(only A) + P(only B) = r``. The test is Wald's SPRT
on the discordant deals, a binomial sequence in ``q``:

- H0: ``q = q0 = 1/2`` (equal win rates);
- H1: ``q = q1 = 1/2 + delta / (2 r)`` (the first wins ``delta`` more of the deals: the smallest
  difference worth detecting), with ``r`` estimated by the discordance rate so far, ``m / n`` (and ``q1``
  kept at most `Q1_MAX`, as a single discordant deal against the first would otherwise end the test
  when ``r`` is near ``delta``).

Its log-likelihood ratio is ``LLR = b log(q1 / q0) + c log((1 - q1) / (1 - q0))``, and Wald's bounds are
``A = log(beta / (1 - alpha))`` below and ``B = log((1 - beta) / alpha)`` above: the test accepts H1 when
``LLR >= B``, H0 when ``LLR <= A``, and plays on between them; its false-positive rate is then at most about
``alpha`` and its power at least about ``1 - beta``. Plugging in ``r`` makes it a generalised SPRT (as
fishtest's tests are, which plug in the variance); the error rates are checked by simulation in the tests:
false positives at most ``alpha`` at discordance rates from 1.5% to 10%, power ``1 - beta`` at 10%, and
somewhat less where the discordance rate is near ``delta`` (91% for a nominal 95% at 1.5% and delta 1
point), where few discordant deals make its estimate rough.

Which of the two is better is not known in advance, so `two_sided` runs the test in both directions, each
at ``alpha / 2``: the pair is decided when one direction accepts its H1 (that strategy is better by at least
about ``delta``) or both accept H0 (neither is better by ``delta``). The chance of declaring a difference
between two equal strategies is then at most about ``alpha``. A tournament looks only at the end of each
round of deals; the tests check the error rates with such looks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

Q1_MAX = 0.95
"""The largest ``q1``: a discordance rate near ``delta`` would make H1 say that every discordant deal favours the first."""


@dataclass(frozen=True)
class Sprt:
    """Wald's SPRT on discordant pairs with false-positive rate ``alpha``, power ``1 - beta`` at a difference
    of ``delta`` in win rate (a fraction: 0.01 is one percentage point)."""

    alpha: float = 0.05
    beta: float = 0.05
    delta: float = 0.01

    def __post_init__(self) -> None:
        for name in ("alpha", "beta"):
            if not 0 < getattr(self, name) < 0.5:
                raise ValueError(f"{name}={getattr(self, name)!r} must lie strictly between 0 and 0.5")
        if not 0 < self.delta < 1:
            raise ValueError(f"delta={self.delta!r} must lie strictly between 0 and 1 (a fraction of the deals)")

    @property
    def lower(self) -> float:
        """Accept H0 at or below this log-likelihood ratio: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this log-likelihood ratio: ``log((1 - beta) / alpha)``."""
        return math.log((1 - self.beta) / self.alpha)

    def q1(self, discordant: int, n: int) -> float:
        """``q`` under H1 for a discordance rate estimated as ``discordant / n`` (see the module docstring)."""
        rate = max(discordant / n, self.delta) if n else 1.0
        return min(0.5 + self.delta / (2 * rate), Q1_MAX)

    def llr(self, only_first: int, only_second: int, n: int) -> float:
        """The log-likelihood ratio of H1 (the first better by ``delta``) against H0 after ``n`` deals."""
        if only_first < 0 or only_second < 0 or only_first + only_second > n:
            raise ValueError(f"counts {only_first} and {only_second} do not fit {n} deals")
        q1 = self.q1(only_first + only_second, n)
        return only_first * math.log(2 * q1) + only_second * math.log(2 * (1 - q1))

    def verdict(self, llr: float) -> str | None:
        """"H1", "H0" or None (play on) for a log-likelihood ratio."""
        return "H1" if llr >= self.upper else ("H0" if llr <= self.lower else None)


@dataclass(frozen=True)
class PairTest:
    """The state of the two-sided test of one pair: ``llr`` tests "the first is better by delta", ``llr_reverse``
    "the second is", both against ``lower`` and ``upper``; ``decision`` is "first", "second", "equal" or None."""

    n: int
    only_first: int
    only_second: int
    llr: float
    llr_reverse: float
    lower: float
    upper: float
    decision: str | None

    @property
    def decided(self) -> bool:
        return self.decision is not None


def two_sided(only_first: int, only_second: int, n: int, alpha: float = 0.05, beta: float = 0.05,
              delta: float = 0.01) -> PairTest:
    """The SPRT in both directions, each at ``alpha / 2`` (see the module docstring)."""
    test = Sprt(alpha / 2, beta, delta)
    forward = test.llr(only_first, only_second, n)
    reverse = test.llr(only_second, only_first, n)
    ahead, behind = test.verdict(forward), test.verdict(reverse)
    if ahead == "H1" and behind != "H1":
        decision: str | None = "first"
    elif behind == "H1" and ahead != "H1":
        decision = "second"
    elif ahead == "H0" and behind == "H0":
        decision = "equal"
    else:
        decision = None
    return PairTest(n, only_first, only_second, forward, reverse, test.lower, test.upper, decision)
