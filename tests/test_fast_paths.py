"""What a single command loads: the interval quantile without scipy."""

from __future__ import annotations

from scipy import stats

from studies.stats import Z95, _z


def test_the_95_percent_quantile_is_scipys_without_loading_scipy() -> None:
    assert Z95 == float(stats.norm.ppf(0.975)) == _z(0.95)
    assert _z(0.9) == float(stats.norm.ppf(0.95))
