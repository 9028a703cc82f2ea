"""The sequential test on paired outcomes: its bounds, and its error rates measured on synthetic pairs of known difference."""

from __future__ import annotations

import json
import math
from pathlib import Path

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


@pytest.mark.parametrize("alpha, each, delta", [(0.05, 0.05, 0.02), (0.10, 0.05, 0.02), (0.05, 0.0075, 0.01)])
def test_false_positive_rate_at_most_alpha(alpha, each, delta):
    """Equal strategies (``each`` of the deals won only by each; the last case a discordance rate of 1.5%, near
    delta, as between two weak players): declared different at most alpha of the time."""
    v = simulate(each, each, alpha, 0.05, delta, seed=1)
    wrong = (v["first"] + v["second"]) / SIMULATIONS
    assert wrong <= alpha + three_se(alpha), v
    assert v["equal"] / SIMULATIONS >= 0.8, v  # and it does decide: mostly "equal" within 20,000 deals


def test_power_near_one_minus_beta():
    """The first better by exactly delta (6% against 4% discordant): found better at least 1 - beta of the time."""
    beta = 0.10
    v = simulate(0.06, 0.04, 0.05, beta, 0.02, seed=2)
    assert v["first"] / SIMULATIONS >= 1 - beta - three_se(beta), v
    assert v["second"] / SIMULATIONS <= 0.01, v


def test_power_at_a_low_discordance_rate():
    """1.25% against 0.25% discordant (1.5% in all, a difference of exactly delta = 1 point): the estimate of the
    discordance rate is rough on few discordant deals, and the power measured is 91% rather than 95%."""
    v = simulate(0.0125, 0.0025, 0.05, 0.05, 0.01, seed=5)
    assert v["first"] / SIMULATIONS >= 0.88, v
    assert v["second"] == 0, v


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


# --- the tournament in rounds ---------------------------------------------------------------------


def fake_player(rates: dict[str, float], seed: int = 0):
    """A `studies.paired.Player` whose strategies win each deal with the given chances (deal by deal the same
    whoever asks, as stored rows are), without playing anything."""
    def play(spec):
        rng = np.random.default_rng([seed, spec.first])
        draws = rng.random(spec.deals)
        return None, draws < rates[spec.strategy]
    return play


def test_rounds_stop_once_every_adjacent_pair_is_decided():
    from sim.rules import Rules
    from studies.rounds import play_rounds

    rates = {"weak": 0.02, "mid": 0.10, "strong": 0.30}
    seen = []
    result = play_rounds(Rules(), list(rates), fake_player(rates), max_deals=50_000, round_deals=500, delta=0.03,
                         on_round=lambda deals, pairs: seen.append(deals))
    assert result.decided and result.deals_played < 50_000
    assert result.ranking == ["strong", "mid", "weak"]
    assert [p.test.decision for p in result.pairs] == ["first", "first"]
    assert all(p.needed is not None and p.needed <= result.deals_played for p in result.pairs)
    assert seen == list(range(500, result.deals_played + 1, 500))  # told after every round


def test_rounds_stop_at_the_maximum_when_undecided():
    from sim.rules import Rules
    from studies.rounds import play_rounds

    rates = {"a": 0.10, "b": 0.105}
    result = play_rounds(Rules(), list(rates), fake_player(rates), max_deals=700, round_deals=300, delta=0.005)
    assert result.deals_played == 700  # two full rounds and a last one of 100
    assert not result.decided and result.pairs[0].needed is None


def cli(*args: str):
    from click.testing import CliRunner

    from bakers_dozen.cli import main

    return CliRunner().invoke(main, list(args))


def test_sequential_tournament_stops_early_with_the_stronger_first():
    r = cli("tournament", "--strategies", "greedy;heuristic", "--sequential", "--deals", "3000", "--round-deals", "100",
            "--delta", "3", "-j", "1", "-q", "--store", "st", "--out", "rep", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["deals_played"] < 3000 and out["deals_played"] % 100 == 0
    assert out["ranking"] == ["heuristic", "greedy"]
    (pair,) = out["sequential"]["pairs"]
    assert pair["decision"] == "first" and pair["llr"] >= pair["upper"] and pair["deals_needed"] <= out["deals_played"]
    assert "Sequential tests" in r.output
    assert "Sequential tests" in Path("rep/sequential.md").read_text() and Path("rep/charts/sequential-llr.svg").is_file()


def test_json_on_tournament_and_compare_ends_with_the_ranking():
    r = cli("tournament", "--strategies", "greedy,heuristic", "--deals", "200", "-j", "1", "-q", "--store", "st", "--out", "t",
            "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["deals_played"] == 200 and out["ranking"] == ["heuristic", "greedy"]
    r = cli("compare", "--variants", "bakers-dozen,kings-into-empty", "-s", "heuristic", "--deals", "200", "-j", "1", "-q",
            "--store", "st", "--out", "c", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.output.strip().splitlines()[-1])
    assert out["deals_played"] == 200 and sorted(out["ranking"]) == ["bakers-dozen", "kings-into-empty"]
    wins = {run["variant"]: run["wins"] for run in out["runs"]}
    assert wins[out["ranking"][0]] >= wins[out["ranking"][1]]


@pytest.mark.parametrize("option", [["--alpha", "0"], ["--beta", "0.7"], ["--delta", "0"], ["--round-deals", "0"]])
def test_sequential_options_out_of_range_are_one_line(option):
    r = cli("tournament", "--strategies", "greedy;heuristic", "--sequential", *option, "--store", "st", "--out", "rep")
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert not Path("st").exists()
