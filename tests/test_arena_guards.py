"""The arena's guards: a strategy cannot fake a result, crash or end a run, or hold a deal forever;
every game ends with a termination saying why."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numba as nb
import numpy as np
import pytest

from sim import engine as E
from sim.game import Game
from sim.notation import Move
from sim.rules import Rules, find_variant
from strategies import UNDECIDED, CompiledPolicy, DealInfo, Strategy, load_strategy
from strategies.base import PolicyStrategy
from strategies.batch import play_batch
from strategies.play import ArenaError, play_compiled, play_python

RULES = Rules()
DEALS = np.arange(1, 9)


def info(number: int, rules: Rules = RULES) -> DealInfo:
    return DealInfo(rules, number, 0, "default")


def run_python(strategy: Strategy, number: int = 1, rules: Rules = RULES, **kw: object):
    return play_python(strategy, Game.from_deal(rules, number), info(number, rules), **kw)


def run_compiled(strategy: Strategy, number: int = 1, rules: Rules = RULES, **kw: object):
    return play_compiled(strategy, Game.from_deal(rules, number), info(number, rules), **kw)


# --- a compiled policy cannot change the game it is shown ---------------------------------------


@nb.njit
def _first(st, prm, moves, n, pparams, rng, scratch):
    return 0


@nb.njit
def _fake_home(st, prm, moves, n, pparams, rng, scratch):
    st[E.home_at(prm[E.P_PILES])] = 52
    return 0


@nb.njit
def _fake_foundations(st, prm, moves, n, pparams, rng, scratch):
    for f in range(4):
        st[E.fheight_at(prm[E.P_PILES], f)] = 13
    st[E.home_at(prm[E.P_PILES])] = 52
    for p in range(prm[E.P_PILES]):
        st[p] = 0
    return 0


@nb.njit
def _swap_moves(st, prm, moves, n, pparams, rng, scratch):
    """Writes a different (legal-looking) code into slot 0, then picks it: the engine must play its own move 0."""
    moves[0] = moves[n - 1]
    for i in range(n, moves.shape[0]):
        moves[i] = 0
    return 0


@nb.njit
def _bend_rules(st, prm, moves, n, pparams, rng, scratch):
    prm[E.P_PILES] = 1
    prm[E.P_FOUND] = 1
    prm[E.P_CAP] = 2
    prm[E.P_MOVES] = 0
    return 0


class First(PolicyStrategy):
    name = "first"
    function = _first

    def compiled(self, rules):
        return CompiledPolicy(type(self).function, np.zeros(1, dtype=np.int64))


CHEATS = [type(f"Cheat{f.__name__}", (First,), {"name": f.__name__, "function": f})
          for f in (_fake_home, _fake_foundations, _swap_moves, _bend_rules)]


@pytest.mark.parametrize("cheat", CHEATS, ids=lambda c: c.name)
def test_a_policy_writing_its_arrays_changes_nothing_in_any_tier(cheat):
    honest = [run_compiled(First(), int(n)) for n in DEALS]
    assert all(r.outcome != "won" for r in honest)
    ref = play_batch(RULES, First(), DEALS)
    for tier in (run_python, run_compiled):
        for n, h in zip(DEALS, honest, strict=True):
            rec = tier(cheat(), int(n))
            assert (rec.outcome, rec.termination, rec.cards_home, rec.moves) == (h.outcome, h.termination, h.cards_home, h.moves)
    batch = play_batch(RULES, cheat(), DEALS)
    for name in ("outcome", "termination", "cards_home", "moves", "win_moves"):
        assert np.array_equal(getattr(batch, name), getattr(ref, name)), name
    assert E.rule_params(RULES)[E.P_PILES] == 13 and E.rule_params(RULES)[E.P_MOVES] == E.max_moves(13)


class ViewWriter(Strategy):
    """A Python strategy that scribbles over everything the view hands out, then plays the first move."""

    name = "view-writer"

    def choose(self, view, moves):
        st, prm = view.state(), view.rule_params
        st[:] = 13
        prm[:] = 1
        return moves[0]


def test_a_python_strategy_writing_the_view_changes_nothing():
    for n in DEALS[:4]:
        a, b = run_python(ViewWriter(), int(n)), run_compiled(First(), int(n))
        assert (a.outcome, a.cards_home, a.moves) == (b.outcome, b.cards_home, b.moves)
    assert E.rule_params(RULES)[E.P_PILES] == 13


# --- whatever choose() returns or raises, the deal ends with a reason --------------------------


class Returns(Strategy):
    name = "returns"

    def __init__(self, make, **kw):
        super().__init__(**kw)
        self.make = make

    def choose(self, view, moves):
        return self.make(moves)


class Sub(Move):
    pass


class HostileEq:
    def __eq__(self, other):
        raise SystemExit(3)

    __hash__ = object.__hash__


@pytest.mark.parametrize("make", [
    lambda ms: tuple(ms[0]), lambda ms: 0, lambda ms: str(ms[0]), lambda ms: ms[0].code, lambda ms: [ms[0]],
    lambda ms: Move(ms[0].card, ms[0].src, 63), lambda ms: Sub(*ms[0]), lambda ms: np.int64(0),
    lambda ms: Move(HostileEq(), ms[0].src, ms[0].dst), lambda ms: object(),
], ids=["tuple", "int", "str", "code", "list", "illegal-move", "move-subclass", "numpy-int", "hostile-eq", "object"])
def test_anything_but_a_legal_move_is_illegal_never_a_crash(make):
    rec = run_python(Returns(make))
    assert rec.outcome == "error" and rec.termination in ("illegal", "raised") and rec.error
    assert rec.moves == []


class Raises(Strategy):
    name = "raises"

    def __init__(self, exc, where="choose", **kw):
        super().__init__(**kw)
        self.exc, self.where = exc, where

    def reset(self, deal, rng):
        super().reset(deal, rng)
        if self.where == "reset":
            raise self.exc

    def choose(self, view, moves):
        raise self.exc


@pytest.mark.parametrize("where", ["choose", "reset"])
@pytest.mark.parametrize("exc", [SystemExit(0), SystemExit(2), KeyboardInterrupt(), GeneratorExit(), RuntimeError("boom"),
                                 MemoryError(), RecursionError()], ids=repr)
def test_a_raising_strategy_is_its_own_error_never_the_end_of_the_run(exc, where):
    rec = run_python(Raises(exc, where))
    assert (rec.outcome, rec.termination) == ("error", "raised")
    assert type(exc).__name__ in rec.error


def test_a_strategy_raising_in_a_thread_is_recorded_too():
    out = []
    t = threading.Thread(target=lambda: out.append(run_python(Raises(KeyboardInterrupt()))))
    t.start()
    t.join()
    assert out[0].termination == "raised"


SLOW_PLAYER = textwrap.dedent("""
    import sys, time
    from sim.game import Game
    from strategies.play import play_python
    from sim.rules import Rules
    from strategies import DealInfo, Strategy

    class Slow(Strategy):
        name = "slow"
        def choose(self, view, moves):
            print("ready", flush=True)
            try:
                time.sleep(0.05)
            except KeyboardInterrupt:
                if SWALLOW:
                    return moves[0]
                raise
            return moves[0]

    try:
        rules = Rules()
        for n in range(1, 1000):
            play_python(Slow(), Game.from_deal(rules, n), DealInfo(rules, n, 0, "default"))
    except KeyboardInterrupt:
        print("interrupted", flush=True)
        sys.exit(130)
    print("finished", flush=True)
""")


@pytest.mark.parametrize("swallow", [False, True], ids=["plain", "strategy-swallows-it"])
def test_a_real_ctrl_c_stops_the_run_as_keyboard_interrupt(swallow):
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    code = f"SWALLOW = {swallow}\n" + SLOW_PLAYER
    # SIGINT at its default, as from a shell: pytest-xdist workers ignore it, and a child would inherit that
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in out, (out, err)


# --- terminations ------------------------------------------------------------------------------


class NeverHome(Strategy):
    name = "never-home"

    def choose(self, view, moves):
        away = [m for m in moves if m.dst < E.FOUNDATION]
        return away[0] if away else None


class GivesUp(Strategy):
    name = "gives-up"

    def choose(self, view, moves):
        return UNDECIDED


@nb.njit
def _minus(st, prm, moves, n, pparams, rng, scratch):
    return pparams[0]


class Index(PolicyStrategy):
    name = "index"

    def __init__(self, i, **kw):
        super().__init__(**kw)
        self.i = i

    def compiled(self, rules):
        return CompiledPolicy(_minus, np.array([self.i], dtype=np.int64))


def test_every_way_a_game_ends_has_its_termination_in_every_tier():
    spanish = find_variant("spanish-patience")
    solver = load_strategy("solver:nodes=200000")
    won = next(n for n in range(1, 40) if run_compiled(solver, n).outcome == "won")
    cases = [
        (load_strategy("solver:nodes=200000"), RULES, won, "won"),
        (load_strategy("greedy"), RULES, 1, "resigned"),
        (Index(-2), RULES, 1, "undecided"),
        (Index(-1), RULES, 1, "resigned"),
        (Index(-3), RULES, 1, "timeout"),
        (Index(-4), RULES, 1, "illegal"),
        (Index(10**6), RULES, 1, "illegal"),
    ]
    for strategy, rules, number, term in cases:
        for tier in (run_python, run_compiled):
            rec = tier(strategy, number, rules)
            assert rec.termination == term and rec.outcome == E.OUTCOMES[E.TERMINATION_OUTCOME[E.TERMINATIONS.index(term)]]
        batch = play_batch(rules, strategy, np.array([number]))
        assert E.TERMINATIONS[batch.termination[0]] == term
    assert run_python(NeverHome(), 4, spanish).termination == "no_progress"
    assert run_python(GivesUp()).termination == "undecided"
    stuck = [run_compiled(load_strategy("random"), n).termination for n in range(1, 30)]
    assert "no_moves" in stuck
    assert set(stuck) <= {"no_moves", "no_progress", "won"}


# --- per-deal time limit -----------------------------------------------------------------------


class Sleeper(Strategy):
    name = "sleeper"

    def __init__(self, seconds, **kw):
        super().__init__(**kw)
        self.seconds = seconds

    def choose(self, view, moves):
        time.sleep(self.seconds)
        return moves[0]


class Swallower(Sleeper):
    """Catches everything, the arena's own alarm included."""

    name = "swallower"

    def choose(self, view, moves):
        try:
            time.sleep(self.seconds)
        except BaseException:  # noqa: BLE001
            pass
        return moves[0]


@pytest.mark.parametrize("cls", [Sleeper, Swallower])
def test_a_python_strategy_sleeping_in_choose_is_stopped_by_the_deal_timeout(cls):
    t = time.perf_counter()
    rec = run_python(cls(30), deal_timeout=0.3)
    assert time.perf_counter() - t < 5
    assert (rec.outcome, rec.termination) == ("unknown", "timeout") and "time limit" in rec.error
    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, signal.SIG_IGN, None)  # restored
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_off_the_main_thread_the_timeout_is_checked_between_moves():
    out = []
    t = threading.Thread(target=lambda: out.append(run_python(Sleeper(0.05), 1, find_variant("spanish-patience"),
                                                             deal_timeout=0.3)))
    t.start()
    t.join(30)
    assert out[0].termination == "timeout"


@nb.njit
def _dawdle(st, prm, moves, n, pparams, rng, scratch):
    t = E.clock()
    while E.clock() - t < 0.01:
        pass
    for i in range(n):
        if moves[i] % 64 < E.FOUNDATION:
            return i
    return -1


class Dawdler(First):
    name = "dawdler"
    function = _dawdle


def test_a_slow_compiled_policy_is_stopped_between_moves():
    rules = find_variant("spanish-patience")
    t = time.perf_counter()
    rec = run_compiled(Dawdler(), 1, rules, deal_timeout=0.2)
    assert (rec.outcome, rec.termination) == ("unknown", "timeout")
    batch = play_batch(rules, Dawdler(), np.arange(1, 4), deal_timeout=0.2)
    assert [E.TERMINATIONS[t] for t in batch.termination] == ["timeout"] * 3
    assert time.perf_counter() - t < 20
    assert run_compiled(load_strategy("greedy"), 1, deal_timeout=60).termination == "resigned"


@pytest.mark.parametrize("bad", [0, -1, float("nan"), float("inf"), "1", True, 1e308, 86_400.5])
def test_a_bad_deal_timeout_is_refused_in_one_line(bad):
    for call in (lambda: run_python(load_strategy("greedy"), deal_timeout=bad),
                 lambda: run_compiled(load_strategy("greedy"), deal_timeout=bad),
                 lambda: play_batch(RULES, load_strategy("greedy"), DEALS, deal_timeout=bad)):
        with pytest.raises(ArenaError, match="allowed: a number of seconds above 0 and at most 86400"):
            call()
