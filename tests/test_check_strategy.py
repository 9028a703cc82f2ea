"""`check-strategy`: every built-in and the example plug-in pass; each kind of broken strategy fails the right check."""

from __future__ import annotations

import itertools
import time
from typing import ClassVar

import numba as nb
import numpy as np
import pytest
from click.testing import CliRunner

import strategies.check as check_module
from bakers_dozen.cli import main
from sim.engine import pile_base
from sim.notation import Move
from sim.rules import find_variant
from strategies.base import CompiledPolicy, Param, PolicyStrategy, Strategy, StrategyError
from strategies.check import FAIL, PASS, SKIP, check_strategy

CHECKS = ("identity", "code", "plays", "returns", "determinism", "tiers")


def statuses(report) -> dict[str, str]:
    return {r.name: r.status for r in report.results}


def assert_only_fails(report, *failing: str, skipped: tuple[str, ...] = ()) -> None:
    """The named checks fail, ``skipped`` are skipped, every other check passes."""
    want = {name: FAIL if name in failing else SKIP if name in skipped else PASS for name in CHECKS}
    assert statuses(report) == want, report.text()
    assert report.passed == (not failing)


# --- the built-ins and the example pass ---------------------------------------------------------------------

@pytest.mark.parametrize("spec", ["greedy", "random", "heuristic:preset=balanced",
                                  "examples.lowest_first:LowestFirst"])
def test_fast_builtins_and_the_example_pass_every_check(spec):
    report = check_strategy(spec, deals=2)
    assert_only_fails(report)
    assert "face-down deals, hidden cards blanked" in report.result("tiers").detail
    assert "deals/s" in report.speed


@pytest.mark.slow
@pytest.mark.parametrize("spec", ["lookahead", "lookahead:mode=search,depth=2",
                                  "sampling:samples=2,sample_nodes=200,nodes=20000", "solver:nodes=20000"])
def test_searching_builtins_pass_every_check(spec):
    report = check_strategy(spec, deals=2)
    assert_only_fails(report)


@pytest.mark.slow
def test_the_clairvoyant_solver_is_said_to_be_shown_hidden_cards():
    report = check_strategy("solver:nodes=5000", deals=1)
    assert_only_fails(report)
    assert "clairvoyant (peeks)" in report.result("tiers").detail


# --- broken strategies fail the right check ----------------------------------------------------------------

_calls = itertools.count()


class Fickle(Strategy):
    """Python tier only; its choice depends on how many calls came before, in any game."""

    name: ClassVar[str] = "fickle"

    def choose(self, view, moves):
        return moves[next(_calls) % len(moves)]


def test_a_strategy_that_depends_on_earlier_games_fails_determinism():
    report = check_strategy(Fickle(), deals=2)
    assert_only_fails(report, "determinism", skipped=("tiers",))
    assert "python tier): first" in report.result("determinism").detail


@nb.njit
def leaky_policy(st, prm, moves, n, pparams, rng, scratch):
    pparams[0] += 1  # state kept across games in an array compiled() hands out again
    return pparams[0] % n


class Leaky(PolicyStrategy):
    """Both tiers run a policy that counts its calls in a shared parameter array."""

    name: ClassVar[str] = "leaky"

    def __init__(self, **params):
        super().__init__(**params)
        self._counter = np.zeros(1, dtype=np.int64)

    def compiled(self, rules):
        return CompiledPolicy(leaky_policy, self._counter)


def test_a_compiled_policy_that_keeps_state_across_games_fails_determinism():
    report = check_strategy(Leaky(), deals=2, variants=[find_variant("bakers-dozen")])
    assert report.result("determinism").status == FAIL, report.text()
    assert report.result("determinism").detail.startswith("6 of 6 games: ")  # 2 deals: python, compiled, batch


@nb.njit
def last_move_policy(st, prm, moves, n, pparams, rng, scratch):
    return n - 1


class TwoFaced(Strategy):
    """The Python tier plays the first legal move, the compiled tier the last."""

    name: ClassVar[str] = "two-faced"

    def choose(self, view, moves):
        return moves[0]

    def compiled(self, rules):
        return CompiledPolicy(last_move_policy, np.zeros(1, dtype=np.int64))


def test_tiers_that_play_differently_fail_tiers():
    report = check_strategy(TwoFaced(), deals=2)
    assert_only_fails(report, "tiers")
    detail = report.result("tiers").detail
    assert "python tier" in detail and "first difference at move" in detail
    assert "face-down" not in detail  # it differs on face-up deals too: no hint about hidden cards


@nb.njit
def hidden_parity_policy(st, prm, moves, n, pparams, rng, scratch):
    """Reads the bottom card of pile 1, which is face down in dick-1883 (blanked to -1 in the Python tier)."""
    return 0 if st[pile_base(prm, 0)] % 2 == 0 else n - 1


class ReadsHidden(PolicyStrategy):
    """Both tiers run one policy; it reads a face-down card, which only the compiled tier is shown."""

    name: ClassVar[str] = "reads-hidden"

    def compiled(self, rules):
        return CompiledPolicy(hidden_parity_policy, np.zeros(1, dtype=np.int64))


class ReadsHiddenOpenly(ReadsHidden):
    name: ClassVar[str] = "reads-hidden-openly"
    peeks: ClassVar[bool] = True


FACE_UP_AND_DOWN = [find_variant("bakers-dozen"), find_variant("dick-1883"), find_variant("castles-in-spain")]


def test_a_compiled_policy_that_reads_face_down_cards_fails_tiers_on_face_down_deals_only():
    report = check_strategy(ReadsHidden(), deals=3, variants=FACE_UP_AND_DOWN)
    assert_only_fails(report, "tiers")
    detail = report.result("tiers").detail
    assert "dick-1883" in detail or "castles-in-spain" in detail
    assert "only on face-down deals" in detail and "read face-down cards?" in detail


def test_a_clairvoyant_strategy_may_read_them_and_is_said_to():
    report = check_strategy(ReadsHiddenOpenly(), deals=3, variants=FACE_UP_AND_DOWN)
    assert_only_fails(report)
    assert "clairvoyant (peeks)" in report.result("tiers").detail


class Cheater(Strategy):
    """Returns a move that is not one of its legal moves on deal 2, and a tuple equal to a legal move on deal 3."""

    name: ClassVar[str] = "cheater"

    def choose(self, view, moves):
        if self.deal.number == 2:
            return Move(0, 0, 1)
        if self.deal.number == 3:
            return tuple(moves[0])
        return moves[0]


def test_illegal_choices_fail_returns_with_the_deal():
    report = check_strategy(Cheater(), deals=3)
    assert_only_fails(report, "returns", skipped=("tiers",))
    detail = report.result("returns").detail
    assert detail.startswith("14 of 21 games: ") and "deal 2 (python tier): illegal:" in detail


class Crasher(Strategy):
    """Raises on deal 2."""

    name: ClassVar[str] = "crasher"

    def choose(self, view, moves):
        if self.deal.number == 2:
            raise ZeroDivisionError("the author's bug")
        return moves[0]


def test_a_strategy_that_raises_fails_returns_with_the_deal_and_the_exception():
    report = check_strategy(Crasher(), deals=2, variants=[find_variant("good-measure")])
    assert_only_fails(report, "returns", skipped=("tiers",))
    assert report.result("returns").detail == ("1 of 2 games: good-measure deal 2 (python tier): raised: crasher raised "
                                               "ZeroDivisionError: the author's bug")


class Slow(Strategy):
    """Takes a tenth of a second a move."""

    name: ClassVar[str] = "slow"

    def choose(self, view, moves):
        time.sleep(0.1)
        return moves[0]


def test_a_game_past_the_deal_timeout_fails_returns():
    report = check_strategy(Slow(), deals=1, deal_timeout=0.25, variants=[find_variant("bakers-dozen")])
    assert_only_fails(report, "returns", skipped=("tiers",))
    assert "bakers-dozen deal 1 (python tier): timeout: slow ran past the deal time limit of 0.25 s" in \
        report.result("returns").detail


@nb.njit
def out_of_range_policy(st, prm, moves, n, pparams, rng, scratch):
    return n


class OutOfRange(PolicyStrategy):
    name: ClassVar[str] = "out-of-range"

    def compiled(self, rules):
        return CompiledPolicy(out_of_range_policy, np.zeros(1, dtype=np.int64))


def test_a_compiled_index_outside_the_moves_fails_returns_in_both_tiers():
    report = check_strategy(OutOfRange(), deals=1, variants=[find_variant("bakers-dozen")])
    assert_only_fails(report, "returns")
    assert "bakers-dozen deal 1 (python tier): illegal" in report.result("returns").detail
    assert report.result("returns").detail.startswith("2 of 2 games")


class CompiledRaises(Strategy):
    name: ClassVar[str] = "compiled-raises"

    def choose(self, view, moves):
        return moves[0]

    def compiled(self, rules):
        raise RuntimeError("no policy today")


def test_a_compiled_tier_that_cannot_be_made_fails_plays_not_the_check():
    report = check_strategy(CompiledRaises(), deals=1, variants=[find_variant("bakers-dozen")])
    assert report.result("plays").status == FAIL, report.text()
    assert "RuntimeError: no policy today" in report.result("plays").detail


@nb.njit
def untypable_policy(st, prm, moves, n, pparams, rng, scratch):
    return "first"


class DoesNotCompile(Strategy):
    name: ClassVar[str] = "does-not-compile"

    def choose(self, view, moves):
        return moves[0]

    def compiled(self, rules):
        return CompiledPolicy(untypable_policy, np.zeros(1, dtype=np.int64))


def test_a_compiled_policy_numba_cannot_compile_fails_plays_with_the_deal():
    report = check_strategy(DoesNotCompile(), deals=1, variants=[find_variant("bakers-dozen")])
    assert report.result("plays").status == FAIL, report.text()
    assert "bakers-dozen deal 1 (compiled tier)" in report.result("plays").detail


def test_a_move_the_referee_refuses_fails_plays(monkeypatch):
    """The arena lets only legal moves through, so an engine bug is what this catches; simulated here."""
    real = check_module.replay
    monkeypatch.setattr(check_module, "replay", lambda rules, start, moves: real(rules, start, list(moves)[::-1]))
    report = check_strategy("greedy", deals=1, variants=[find_variant("bakers-dozen")])
    assert report.result("plays").status == FAIL
    assert "the referee refuses move 1" in report.result("plays").detail


class Drifting(Strategy):
    """A label that is different in every instance."""

    name: ClassVar[str] = "drifting"
    _made = itertools.count()

    def __init__(self, **params):
        super().__init__(**params)
        self._n = next(self._made)

    @property
    def label(self):
        return f"drifting-{self._n}"

    def choose(self, view, moves):
        return moves[0]


class Mutating(Strategy):
    """Changes its own parameter while it plays."""

    name: ClassVar[str] = "mutating"
    PARAMETERS = {"games": Param(int, 0, "games played so far (a bug: a parameter is not a counter)")}

    def reset(self, deal, rng):
        super().reset(deal, rng)
        self.params["games"] += 1

    def choose(self, view, moves):
        return moves[0]


class Unreadable(Strategy):
    """Its label cannot be read."""

    name: ClassVar[str] = "unreadable"

    @property
    def label(self):
        raise KeyError("no label")

    def choose(self, view, moves):
        return moves[0]


class Once(Strategy):
    """Can be made only once."""

    name: ClassVar[str] = "once"
    _made = itertools.count()

    def __init__(self, **params):
        if next(self._made):
            raise RuntimeError("made twice")
        super().__init__(**params)

    def choose(self, view, moves):
        return moves[0]


def test_an_identity_that_differs_between_loads_or_after_play_fails_identity():
    drifting = check_strategy(Drifting(), deals=1, variants=[find_variant("bakers-dozen")])
    assert_only_fails(drifting, "identity", skipped=("tiers",))
    assert "label 'drifting-" in drifting.result("identity").detail and "a second load" in drifting.result("identity").detail
    mutating = check_strategy(Mutating(), deals=1, variants=[find_variant("bakers-dozen")])
    assert mutating.result("identity").status == FAIL
    assert "after play" in mutating.result("identity").detail
    unreadable = check_strategy(Unreadable(), deals=1, variants=[find_variant("bakers-dozen")])
    assert unreadable.result("identity").detail == "reading its identity raised KeyError: 'no label'"
    once = check_strategy(Once(), deals=1, variants=[find_variant("bakers-dozen")])
    assert_only_fails(once, "identity", skipped=("tiers",))
    assert "a second load failed: " in once.result("identity").detail and "RuntimeError: made twice" in once.result("identity").detail


# --- arguments and the verb --------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [{"deals": 0}, {"deals": 10_001}, {"deals": 2.5}, {"deals": True},
                                    {"strategy_seed": -1}, {"deal_timeout": 0}, {"variants": []}])
def test_bad_arguments_are_refused_in_one_line(kwargs):
    with pytest.raises(ValueError) as info:
        check_strategy("greedy", **kwargs)
    assert "allowed" in str(info.value) and "\n" not in str(info.value)


def test_what_is_not_a_strategy_is_refused():
    with pytest.raises(StrategyError, match="takes a strategy spec"):
        check_strategy(42)
    with pytest.raises(StrategyError, match="unknown strategy"):
        check_strategy("no-such-strategy")


def run(*args: str):
    return CliRunner().invoke(main, ["check-strategy", *args])


def test_the_verb_exits_0_when_every_check_passes_and_names_each_check():
    r = run("greedy", "--deals", "1")
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    for name in CHECKS:
        assert any(line.split()[:2] == ["PASS", name] for line in lines), r.output
    assert any(line.split()[:2] == ["INFO", "speed"] for line in lines)
    assert lines[-1] == "all 6 checks passed"


def test_the_verb_exits_1_when_a_check_fails():
    r = run("test_check_strategy:Crasher", "--deals", "2")
    assert r.exit_code == 1, r.output
    assert r.output.splitlines()[-1] == "1 of 6 checks failed: returns"
    assert "SKIP  tiers" in r.output


@pytest.mark.parametrize("args", [("no-such-strategy",), ("greedy", "--deals", "0"), ("greedy", "--deals", "x"),
                                  ("greedy:depth=3",)])
def test_the_verb_exits_2_on_bad_input(args):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("bakers-dozen: error: ")


def test_a_fault_that_escapes_the_arena_is_a_plugins_finding_but_a_builtins_traceback(monkeypatch):
    """Whatever escapes the arena while a plug-in plays is reported as its failing check; with a built-in
    strategy the same escape is a bug of the toolkit and must show its traceback, not a check line."""

    def broken(*args, **kwargs):
        raise RuntimeError("a fault of the arena")

    monkeypatch.setattr(check_module, "play_python", broken)
    monkeypatch.setattr(check_module, "play_compiled", broken)
    monkeypatch.setattr(check_module, "play_batch", broken)
    report = check_strategy(Crasher(), deals=1, variants=[find_variant("good-measure")])
    assert "a fault of the arena" in report.result("plays").detail
    with pytest.raises(RuntimeError, match="a fault of the arena"):
        check_strategy("greedy", deals=1, variants=[find_variant("good-measure")])
