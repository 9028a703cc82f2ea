"""Statistics against values computed independently (statsmodels, textbook examples, simulation)."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import cochrans_q as sm_cochrans_q
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from studies.stats import (
    cochrans_q,
    deals_needed,
    difference_interval,
    holm,
    mcnemar_exact,
    paired_comparison,
    pairwise_mcnemar,
    win_rate_interval,
)


@pytest.mark.parametrize(("wins", "n"), [(0, 10), (1, 10), (5, 10), (10, 10), (81, 263), (997, 1000), (3, 100000)])
@pytest.mark.parametrize(("method", "sm_method"), [("wilson", "wilson"), ("clopper-pearson", "beta")])
def test_single_rate_intervals_match_statsmodels(wins, n, method, sm_method):
    low, high = win_rate_interval(wins, n, method=method)
    ref = proportion_confint(wins, n, alpha=0.05, method=sm_method)
    assert low == pytest.approx(ref[0], abs=1e-10) and high == pytest.approx(ref[1], abs=1e-10)


def test_published_baker_figure():
    # docs/rules.md, section "Published figures": 997 of 1000 winnable -> Wilson 95%: 99.12-99.90% (the source printed 99.95)
    low, high = win_rate_interval(997, 1000)
    assert round(low * 100, 2) == pytest.approx(99.12, abs=0.01) and round(high * 100, 2) == pytest.approx(99.9, abs=0.06)


def test_difference_of_independent_rates_matches_newcombe():
    # Newcombe (1998), Statistics in Medicine 17:873, example (56/70 vs 48/80): 0.0524 to 0.3339 by method 10
    d, low, high = difference_interval(56, 70, 48, 80)
    ref = confint_proportions_2indep(56, 70, 48, 80, method="newcomb", compare="diff")
    assert d == pytest.approx(56 / 70 - 48 / 80)
    assert low == pytest.approx(ref[0], abs=1e-9) and high == pytest.approx(ref[1], abs=1e-9)
    assert low == pytest.approx(0.0524, abs=5e-5) and high == pytest.approx(0.3339, abs=5e-5)


@pytest.mark.parametrize(("b", "c"), [(0, 0), (3, 0), (5, 9), (40, 25), (101, 120), (7, 7)])
def test_mcnemar_exact_matches_statsmodels(b, c):
    ref = sm_mcnemar([[10, b], [c, 20]], exact=True).pvalue
    assert mcnemar_exact(b, c) == pytest.approx(ref, rel=1e-12)


def test_paired_comparison_counts_and_reduction_to_the_independent_interval():
    first = np.array([1] * 12 + [1] * 9 + [0] * 2 + [0] * 21, dtype=bool)
    second = np.array([1] * 12 + [0] * 9 + [1] * 2 + [0] * 21, dtype=bool)
    cmp = paired_comparison(first, second)
    assert (cmp.both, cmp.only_first, cmp.only_second, cmp.neither, cmp.n) == (12, 9, 2, 21, 44)
    assert cmp.difference == pytest.approx(7 / 44)
    assert cmp.low < cmp.difference < cmp.high
    assert cmp.p_value == pytest.approx(sm_mcnemar([[12, 9], [2, 21]], exact=True).pvalue)
    # With no correlation between the two players (a*d - b*c within n/2, so phi = 0), Newcombe's paired
    # interval is his independent one on the two margins, which statsmodels computes.
    a, b_, c, d = 10, 10, 10, 10
    x = np.array([1] * a + [1] * b_ + [0] * c + [0] * d, dtype=bool)
    y = np.array([1] * a + [0] * b_ + [1] * c + [0] * d, dtype=bool)
    paired = paired_comparison(x, y)
    ref = confint_proportions_2indep(a + b_, 40, a + c, 40, method="newcomb", compare="diff")
    assert paired.low == pytest.approx(ref[0], abs=1e-9) and paired.high == pytest.approx(ref[1], abs=1e-9)


def test_paired_interval_covers_the_truth_about_95_percent_of_the_time():
    rng = np.random.default_rng(7)
    probs = np.array([0.30, 0.12, 0.05, 0.53])  # both, only first, only second, neither
    truth = probs[1] - probs[2]
    hits = 0
    trials = 2000
    for _ in range(trials):
        cells = rng.choice(4, size=150, p=probs)
        first = (cells == 0) | (cells == 1)
        second = (cells == 0) | (cells == 2)
        c = paired_comparison(first, second)
        hits += c.low <= truth <= c.high
    assert 0.93 <= hits / trials <= 0.975


def test_cochrans_q_and_holm_match_statsmodels():
    rng = np.random.default_rng(3)
    wins = (rng.random((400, 4)) < np.array([0.2, 0.25, 0.3, 0.32])).astype(int)
    q, df, p = cochrans_q(wins)
    ref = sm_cochrans_q(wins)
    assert q == pytest.approx(ref.statistic) and p == pytest.approx(ref.pvalue) and df == 3
    raw = [0.01, 0.04, 0.03, 0.005, 0.2, 0.5]
    assert np.allclose(holm(raw), multipletests(raw, method="holm")[1])
    rows = pairwise_mcnemar(wins, ["a", "b", "c", "d"])
    assert [(x, y) for x, y, _, _ in rows] == [("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    assert np.allclose([r[3] for r in rows], multipletests([r[2].p_value for r in rows], method="holm")[1])


def test_deals_needed_gives_the_smallest_sufficient_sample():
    n = deals_needed(0.5, 0.005)
    assert win_rate_interval(n // 2, n)[1] - n / 2 / n <= 0.005 + 1e-12
    assert 38000 < n < 38500  # about z^2 / (4 h^2) = 38,415
    assert deals_needed(0.01, 0.005) < deals_needed(0.5, 0.005)
    with pytest.raises(ValueError, match="half_width"):
        deals_needed(0.5, 0)


@pytest.mark.parametrize(("call", "message"), [
    (lambda: win_rate_interval(1, 0), "at least one deal"),
    (lambda: win_rate_interval(5, 3), "must lie in 0..n"),
    (lambda: win_rate_interval(1, 3, method="wald"), "unknown interval method"),
    (lambda: win_rate_interval(1, 3, confidence=1.5), "strictly between 0 and 1"),
    (lambda: paired_comparison(np.ones(3), np.ones(4)), "equal-length"),
    (lambda: cochrans_q(np.ones((5, 1))), "at least 2 strategies"),
])
def test_bad_arguments_say_what_is_allowed(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(("only_first", "only_second"), [(0, 1), (3, 9), (20, 20), (1, 40), (1200, 1350),
                                                         (40_000, 40_900), (0, 2000)])
def test_mcnemar_exact_is_twice_scipys_binomial_tail(only_first, only_second):
    scipy_stats = pytest.importorskip("scipy.stats")
    m, k = only_first + only_second, min(only_first, only_second)
    expected = min(1.0, 2 * float(scipy_stats.binom.cdf(k, m, 0.5)))
    assert mcnemar_exact(only_first, only_second) == pytest.approx(expected, rel=1e-12, abs=1e-300)


def test_cochrans_q_p_value_is_scipys_chi_square_tail():
    scipy_stats = pytest.importorskip("scipy.stats")
    wins = np.random.default_rng(7).random((300, 5)) < [0.2, 0.25, 0.3, 0.2, 0.5]
    q, df, p = cochrans_q(wins)
    assert df == 4
    assert p == pytest.approx(float(scipy_stats.chi2.sf(q, df)), rel=1e-12, abs=1e-300)


def test_report_statistics_do_not_load_scipy_stats():
    # scipy.stats takes seconds to import; the report's tests (paired comparisons, Cochran's Q) must not need it
    import subprocess
    import sys

    code = ("import sys, numpy as np\n"
            "from studies.stats import cochrans_q, pairwise_mcnemar\n"
            "w = np.random.default_rng(1).random((500, 4)) < 0.3\n"
            "cochrans_q(w); pairwise_mcnemar(w, list('abcd'))\n"
            "print('scipy.stats' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["False"]
