"""The sequential test on paired outcomes: its bounds, and its error rates measured on synthetic pairs of known difference."""

from __future__ import annotations

import math

import numpy as np
import pytest

from studies.sequential import Q1_MAX, Sprt, two_sided

SIMULATIONS = 2000
ROUND, ROUNDS = 250, 80
"""Looks at the end of rounds of 250 deals, as a tournament makes them, up to 20,000 deals."""


def simulate(only_first: float, only_second: float, alpha: float, beta: float, delta: float, seed: int) -> dict[str, int]:
    """How often the two-sided test decides each way over `SIMULATIONS` matches whose deals are discordant
    for the first with probability ``only_first`` and for the second with ``only_second``."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(ROUND, [only_first, only_second, 1 - only_first - only_second], size=(SIMULATIONS, ROUNDS))
    cumulative = counts.cumsum(axis=1)
    verdicts = {"first": 0, "second": 0, "equal": 0, None: 0}
    for s in range(SIMULATIONS):
        decision = None
        for k in range(ROUNDS):
            b, c, _ = cumulative[s, k]
            decision = two_sided(int(b), int(c), (k + 1) * ROUND, alpha, beta, delta).decision
            if decision is not None:
                break
        verdicts[decision] += 1
    return verdicts


def three_se(p: float) -> float:
    return 3 * math.sqrt(p * (1 - p) / SIMULATIONS)


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_false_positive_rate_at_most_alpha(alpha):
    """Equal strategies (5% of deals won only by each): declared different at most alpha of the time."""
    v = simulate(0.05, 0.05, alpha, 0.05, 0.02, seed=1)
    wrong = (v["first"] + v["second"]) / SIMULATIONS
    assert wrong <= alpha + three_se(alpha), v
    assert v["equal"] / SIMULATIONS >= 0.8, v  # and it does decide: mostly "equal" within 20,000 deals


def test_power_near_one_minus_beta():
    """The first better by exactly delta (6% against 4% discordant): found better at least 1 - beta of the time."""
    beta = 0.10
    v = simulate(0.06, 0.04, 0.05, beta, 0.02, seed=2)
    assert v["first"] / SIMULATIONS >= 1 - beta - three_se(beta), v
    assert v["second"] / SIMULATIONS <= 0.01, v


def test_larger_difference_is_found_sooner_and_in_the_right_direction():
    """The second strategy far better: the test says "second" on nearly every match."""
    v = simulate(0.02, 0.08, 0.05, 0.05, 0.02, seed=3)
    assert v["second"] / SIMULATIONS >= 0.99, v


def test_bounds_and_llr_are_walds():
    test = Sprt(0.05, 0.1, 0.02)
    assert test.lower == pytest.approx(math.log(0.1 / 0.95))
    assert test.upper == pytest.approx(math.log(0.9 / 0.05))
    # 1,000 deals, 100 discordant: q1 = 1/2 + 0.02 / (2 * 0.1) = 0.6
    assert test.q1(100, 1000) == pytest.approx(0.6)
    assert test.llr(60, 40, 1000) == pytest.approx(60 * math.log(1.2) + 40 * math.log(0.8))
    assert test.q1(1, 1000) == Q1_MAX  # a discordance rate below delta: q1 capped
    assert test.llr(0, 0, 0) == 0.0


@pytest.mark.parametrize("bad", [dict(alpha=0), dict(alpha=0.5), dict(beta=-1), dict(delta=0), dict(delta=1.5)])
def test_refuses_impossible_settings(bad):
    with pytest.raises(ValueError):
        Sprt(**bad)


def test_counts_that_do_not_fit_are_refused():
    with pytest.raises(ValueError):
        Sprt().llr(6, 5, 10)
