"""Hostile Python plug-ins against the arena: a strategy that mutates what it is given (the legal-move list, the
moves, the view, the Move class), returns moves that are not legal, forks, leaves threads behind or is cut off by
the deal's timer never crashes a run, never gets a move played that is not legal and never has anything
impossible stored; the referee checks every stored game of the Python tier (``--verify``)."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numba as nb
import numpy as np
import pytest
from click.testing import CliRunner

import studies.chunks as C
from bakers_dozen.cli import main
from sim import engine as E
from sim.game import Game, IllegalMoveError
from sim.notation import Move
from sim.referee import legal_moves, replay_codes
from sim.rules import Rules
from strategies import DealInfo, Param, Strategy
from strategies.play import play_python
from studies.reading import read_store

RULES = Rules()
REPO = Path(__file__).resolve().parent.parent
HERE = "tests.test_fuzz_arena"


class First(Strategy):
    """The honest yardstick: always the first legal move."""

    name = "fuzz-first"

    def choose(self, view, moves):
        return moves[0]


def _made_up(view, moves) -> Move:
    """A move that is never legal: pile 1's exposed card onto pile 13, whatever lies there."""
    return Move(max(view.top(0), 0), 0, 12) if all(m[1:] != (0, 12) for m in moves) else Move(0, 0, 0)


MAKERS = {
    "made-up": _made_up,
    "no-foundation": lambda view, moves: Move(moves[0].card, moves[0].src, 63),
    "from-no-foundation": lambda view, moves: Move(0, 63, 1),
    "four-fields": lambda view, moves: tuple.__new__(Move, (*moves[0], 0)),
    "bool-fields": lambda view, moves: Move(True, False, False),
    "float-fields": lambda view, moves: Move(float(moves[0].card), moves[0].src, moves[0].dst),
}
"""Moves that are not legal, however they compare; each ends the game as ``illegal`` at its first move, whether
it is returned as it is, appended to the list the strategy was handed, or put in place of its first move."""
HOW = (*MAKERS, *(f"{name}+{way}" for name in MAKERS for way in ("append", "replace")))


def _returns(how: str, view, moves) -> Move:
    name, _, way = how.partition("+")
    bad = MAKERS[name](view, moves)
    if way == "append":
        moves.append(bad)
    elif way == "replace":
        moves[0] = bad
    return bad


def _scribble(deal, view, moves):
    """Write over everything reachable from the view, the deal's rules and the list, and try to redefine Move;
    then play honestly."""
    first = moves[0]
    for rules in (view.rules, deal.rules):
        for name, value in (("columns", 1), ("worrying_back", not rules.worrying_back), ("build", "any")):
            object.__setattr__(rules, name, value)  # a frozen dataclass is frozen only to the polite
    for write in (lambda: view._prm.__setitem__(slice(None), 1), lambda: view._st.__setitem__(slice(None), 13),
                  lambda: setattr(Move, "code", property(lambda m: 63)), lambda: setattr(Move, "__eq__", lambda a, b: True),
                  lambda: delattr(Move, "code"), lambda: setattr(first, "src", 12),
                  lambda: object.__setattr__(first, "dst", 12), moves.clear):
        try:
            write()
        except (AttributeError, TypeError):
            pass
    view.rules = None
    return first


class Hostile(Strategy):
    """A Python-only plug-in that misbehaves as its ``how`` parameter says."""

    name = "fuzz-hostile"
    PARAMETERS = {"how": Param(str, "made-up+append", "the misbehaviour", choices=(*HOW, "scribble"))}

    def choose(self, view, moves):
        how = self.params["how"]
        return _scribble(self.deal, view, moves) if how == "scribble" else _returns(how, view, moves)


def _referee_agrees(game: Game, rec) -> None:
    """The independent referee replays the record's moves from the deal: all legal, the same cards home and end."""
    verdict = replay_codes(RULES, game.start, [m.code for m in rec.moves])
    assert verdict.legal, verdict.reason
    assert verdict.cards_home == rec.cards_home == game.cards_home
    assert verdict.won == (rec.outcome == "won")
    if rec.termination == "no_moves":
        assert legal_moves(RULES, verdict.final) == []


def _play(strategy: Strategy, number: int, **kw) -> tuple[Game, object]:
    game = Game.from_deal(RULES, number)
    return game, play_python(strategy, game, DealInfo(RULES, number, 0, "default"), **kw)


@pytest.mark.parametrize("how", HOW)
def test_a_move_that_is_not_legal_is_never_played(how):
    for number in range(1, 6):
        game, rec = _play(Hostile(how=how), number)
        assert (rec.outcome, rec.termination, rec.moves) == ("error", "illegal", []), rec
        assert "not one of the" in rec.error
        _referee_agrees(game, rec)
    assert E.rule_params(RULES)[E.P_PILES] == 13


def test_scribbling_over_the_view_the_list_and_move_changes_nothing():
    for number in range(1, 9):
        game, rec = _play(Hostile(how="scribble"), number)
        _, honest = _play(First(), number)
        assert (rec.outcome, rec.termination, rec.cards_home, rec.moves) == \
               (honest.outcome, honest.termination, honest.cards_home, honest.moves)
        _referee_agrees(game, rec)
    assert E.rule_params(RULES)[E.P_PILES] == 13 and E.rule_params(RULES)[E.P_CAP] == E.pile_capacity(4)
    assert Move(1, 2, 3).code == 2 * 64 + 3 and Move(1, 2, 3) != Move(1, 2, 4)


def test_move_and_its_class_cannot_be_changed():
    m = Move(5, 1, 2)
    for change in (lambda: setattr(Move, "code", 0), lambda: setattr(Move, "__eq__", lambda a, b: True),
                   lambda: delattr(Move, "text"), lambda: setattr(m, "card", 6), lambda: object.__setattr__(m, "src", 3)):
        with pytest.raises((AttributeError, TypeError)):
            change()
    assert (m, m.code, m.card, m.src, m.dst) == ((5, 1, 2), 66, 5, 1, 2)


def test_the_engine_refuses_a_move_that_is_not_legal_and_leaves_the_game_as_it_was():
    game = Game.from_deal(RULES, 1)
    before = game.state_array()
    for bad in (Move(0, 63, 1), Move(game.view().top(0), 0, 63), Move(0, 0, 12), Move(51, 40, 41)):
        with pytest.raises(IllegalMoveError, match="not legal"):
            game.play_legal(bad)
        with pytest.raises(IllegalMoveError, match="not legal"):
            game.play_code(bad.code)
    assert np.array_equal(game.state_array(), before) and game.history == []
    game.play_legal(game.legal_moves()[0])
    assert len(game.history) == 1


def test_a_choice_of_numpy_whole_numbers_is_still_the_move_it_names():
    class Numpy(Strategy):
        name = "fuzz-numpy"

        def choose(self, view, moves):
            return Move(*np.array(moves[0], dtype=np.int64))

    _, rec = _play(Numpy(), 1)
    _, honest = _play(First(), 1)
    assert rec.moves == honest.moves and rec.termination == honest.termination


# --- the runner: the same plug-ins, stored -------------------------------------------------------------


def _simulate(store: Path, spec: str, *extra: str, deals: int = 12) -> object:
    return CliRunner().invoke(main, ["simulate", "-s", spec, "-n", str(deals), "--tier", "python", "--jobs", "1",
                                     "--store", str(store), "--quiet", *extra])


@pytest.mark.parametrize("how", ["made-up+append", "no-foundation+replace", "from-no-foundation+append", "scribble"])
def test_a_run_of_a_hostile_plugin_stores_nothing_impossible(tmp_path, how):
    result = _simulate(tmp_path / "st", f"{HERE}:Hostile:how={how}")
    assert result.exit_code == 0, result.output
    rows = read_store(tmp_path / "st")
    assert len(rows) == 12
    if how == "scribble":
        _simulate(tmp_path / "honest", f"{HERE}:First")
        honest = read_store(tmp_path / "honest")
        for column in ("outcome", "termination", "cards_home", "moves"):
            assert rows[column].tolist() == honest[column].tolist(), column
    else:
        assert set(rows["outcome"]) == {"error"} and set(rows["termination"]) == {"illegal"}
        assert set(rows["moves"]) == {0} and set(rows["cards_home"]) == {0}
        assert rows["error"].str.contains("not one of the").all()


class Liar:
    """What `play_python` returned on a build that played a plug-in's made-up moves: games whose cards home (odd
    deals) or end (even deals: "no legal move left" while there were some) the moves do not give."""

    def __init__(self, honest):
        self.honest = honest
        self.altered: set[int] = set()

    def __call__(self, strategy, game, info, *args, **kw):
        rec = self.honest(strategy, game, info, *args, **kw)
        if info.number % 2:
            rec.cards_home += 20
            self.altered.add(info.number)
        elif rec.termination not in ("no_moves", "won"):
            rec.termination, rec.outcome = "no_moves", "lost"
            self.altered.add(info.number)
        return rec


def test_verify_replays_every_python_tier_game_and_rejects_what_its_moves_do_not_give(monkeypatch):
    import strategies.batch as B
    from strategies import load_strategy
    from studies.chunks import ChunkTask
    from studies.spec import RunSpec, run_labels

    spec = f"{HERE}:First"
    labels = run_labels(RunSpec(RULES, spec, 1), load_strategy(spec))
    task = ChunkTask(RULES, spec, 0, "default", 0, "python", 1, 12, labels, None, "r", verify=True)
    honest = C.chunk_table(task).to_pandas()
    assert set(honest["outcome"]) <= {"lost", "won"}
    liar = Liar(B.play_python)
    monkeypatch.setattr(B, "play_python", liar)
    rows = C.chunk_table(task).to_pandas()
    rejected = rows["outcome"] == "error"
    assert len(liar.altered) >= 6 and set(rows.loc[rejected, "deal"]) == liar.altered
    assert rows.loc[rejected, "error"].str.startswith("the referee rejected the recorded game: ").all()
    assert (rows.loc[rejected, "termination"] == "illegal").all()
    kept = ["outcome", "termination", "cards_home", "moves"]
    assert rows.loc[~rejected, kept].equals(honest.loc[~rejected, kept])


class Lingers(First):
    """Leaves a non-daemon thread running (for an hour) behind each deal it is reset for."""

    name = "fuzz-lingers"

    def reset(self, deal, rng):
        super().reset(deal, rng)
        threading.Thread(target=time.sleep, args=(3600,), name="fuzz-lingering").start()


class Forks(First):
    """Forks in its first ``choose`` of each deal; both copies return a move."""

    name = "fuzz-forks"

    def reset(self, deal, rng):
        super().reset(deal, rng)
        self.forked = False

    def choose(self, view, moves):
        if not self.forked:
            self.forked = True
            os.fork()
        return moves[0]


# --- the deal's timer is never the strategy's fault -----------------------------------------------------


class Converts(First):
    """Turns whatever interrupts its (long) choice into an exception of its own, as Python turns an exception
    leaving a generator into another."""

    name = "fuzz-converts"

    def choose(self, view, moves):
        try:
            end = time.perf_counter() + 0.05
            while time.perf_counter() < end:
                pass
        except BaseException as exc:
            raise RuntimeError("generator raised StopIteration") from exc
        return moves[0]


class Swallows(First):
    """Catches whatever interrupts its choice and returns a move as if nothing happened."""

    name = "fuzz-swallows"

    def choose(self, view, moves):
        try:
            end = time.perf_counter() + 0.05
            while time.perf_counter() < end:
                pass
        except BaseException:
            pass
        return moves[0]


@pytest.mark.parametrize("strategy", [Converts, Swallows])
def test_a_strategy_cut_off_by_the_timer_is_a_timeout_whatever_it_makes_of_it(strategy):
    _play(First(), 1)  # the engine's compiled code loaded: the timer strikes in the strategy's choice
    for number in range(1, 4):
        game, rec = _play(strategy(), number, deal_timeout=0.01)
        assert (rec.outcome, rec.termination) == ("unknown", "timeout"), rec.error
        assert rec.moves == [] and "time limit" in rec.error
        _referee_agrees(game, rec)


def test_the_timer_waits_for_numba_and_leaves_it_working():
    @nb.njit
    def fresh(x):
        return x + 1

    class Compiles(First):
        name = "fuzz-compiles"

        def choose(self, view, moves):
            fresh(1)  # compiled here, at its first call: far longer than the deal may take
            return moves[0]

    _play(First(), 1)  # the engine's compiled code loaded: the timer strikes while the strategy compiles
    _, rec = _play(Compiles(), 1, deal_timeout=0.001)
    assert (rec.termination, rec.moves) == ("timeout", [])
    assert len(fresh.signatures) == 1  # its compilation was let finish, then the deal ended

    @nb.njit
    def later(x):
        return x * 2

    assert later(21) == 42 and fresh(1) == 2


@pytest.mark.parametrize("timeout", [1e-7, 1e-6, 1e-4])
def test_a_timer_that_fires_at_once_is_a_timeout_never_a_traceback(timeout):
    from strategies import load_strategy

    for number in range(1, 200):
        game, rec = _play(load_strategy("greedy"), number, deal_timeout=timeout)
        assert rec.termination in ("timeout", "no_moves", "no_progress", "won", "resigned"), rec.error
        _referee_agrees(game, rec)


class _SlowToCollect:
    """What a strategy's collection of garbage runs, slowly: a garbage-collector callback or a finaliser, where an
    exception from the deal's timer would be swallowed by Python as unraisable."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.armed = False  # slow only in the strategy's own collection, not in one the arena happens to start

    def spin(self, *_: object) -> None:
        end = time.perf_counter() + 0.002
        while self.armed and time.perf_counter() < end:
            pass

    def collect(self) -> None:
        if self.where == "__del__":
            Finalised(self.spin)
        self.armed = True
        gc.collect()
        self.armed = False


class Finalised:
    """An object in a reference cycle whose finaliser runs inside a collection."""

    def __init__(self, spin) -> None:
        self.spin, self.me = spin, self  # a cycle: only the collector frees it

    def __del__(self) -> None:
        self.spin()


@pytest.mark.parametrize("where", ["gc", "__del__"])
def test_a_timer_that_lands_in_a_collector_callback_or_finaliser_is_still_a_timeout(where, monkeypatch):
    slow = _SlowToCollect(where)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)

    class Collecting(First):
        def choose(self, view, moves):
            end = time.perf_counter() + 0.1  # nearly all of it in the slow callback or finaliser
            while time.perf_counter() < end:
                slow.collect()
            return moves[0]

    if where == "gc":
        gc.callbacks.append(slow.spin)  # the collector's own list: replacing the attribute would not reach it
    try:
        for number in range(1, 4):
            game, rec = _play(Collecting(), number, deal_timeout=0.02)
            assert rec.termination == "timeout", rec
            _referee_agrees(game, rec)
    finally:
        if where == "gc":
            gc.callbacks.remove(slow.spin)
    # a strike that lands in some library's plain weak-reference callback (numba has them) is swallowed still, and
    # struck again: `strategies.play._swallowed_there` cannot see one; this test's own slow places are all caught
    ours = [u for u in unraisable if getattr(u.object, "__qualname__", "") in ("_SlowToCollect.spin", "Finalised.__del__")]
    assert ours == [], unraisable


def test_a_run_with_a_tiny_deal_timeout_records_timeouts_not_errors(tmp_path):
    result = _simulate(tmp_path / "st", "greedy", "--deal-timeout", "0.001", deals=300)
    assert result.exit_code == 0, result.output
    rows = read_store(tmp_path / "st")
    assert len(rows) == 300 and "raised" not in set(rows["termination"]) and "error" not in set(rows["outcome"])


@pytest.mark.parametrize("verb", [["check-strategy", "greedy"], ["simulate", "-n", "5"]])
@pytest.mark.parametrize("value", ["1e308", "86401", "0", "-1", "nan", "inf"])
def test_a_deal_timeout_out_of_range_is_one_line_everywhere(tmp_path, monkeypatch, verb, value):
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [*verb, "--deal-timeout", value])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "86400" in lines[0], result.output
    assert list(tmp_path.iterdir()) == []


# --- forks and threads a plug-in leaves behind --------------------------------------------------------


def _command(tmp_path: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "bakers_dozen", *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=timeout, check=False)


@pytest.mark.parametrize("verb", [["play", "--deal", "3", "--tier", "python", "-s"], ["check-strategy", "-n", "1"],
                                  ["simulate", "-n", "6", "--tier", "python", "--quiet", "-s"]], ids=lambda v: v[0])
def test_a_thread_a_plugin_leaves_running_does_not_keep_the_command_alive(tmp_path, verb):
    done = _command(tmp_path, *verb, f"{HERE}:Lingers")  # the thread sleeps an hour; the command must not
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def test_a_process_a_plugin_forks_never_plays_on_or_ends_the_run(tmp_path):
    played = _command(tmp_path, "play", "--deal", "3", "--tier", "python", "-s", f"{HERE}:Forks", "--json")
    assert played.returncode == 0, played.stderr
    assert len(played.stdout.strip().splitlines()) == 1 and json.loads(played.stdout)["moves"]
    assert "forked the process in choose" in played.stderr and "Traceback" not in played.stderr
    run = _command(tmp_path, "simulate", "-n", "8", "--tier", "python", "--quiet", "--store", "st", "-s", f"{HERE}:Forks")
    assert run.returncode == 0, run.stderr
    assert "Traceback" not in run.stderr and "RunGone" not in run.stderr
    rows = read_store(tmp_path / "st")
    assert sorted(rows["deal"]) == list(range(1, 9)) and "error" not in set(rows["outcome"])


class _Loud:
    """A value whose text ends the program, if anyone asks for it."""

    def __repr__(self):
        raise SystemExit(9)


class Unspeakable(Strategy):
    """Whose name, node count and choice all raise when read."""

    name = property(lambda self: sys.exit(7))
    nodes = property(lambda self: sys.exit(8), lambda self, value: None)

    def choose(self, view, moves):
        return _Loud()


def test_a_strategy_whose_name_count_and_choice_raise_when_read_still_ends_its_deal():
    game, rec = _play(Unspeakable(), 1)
    assert (rec.outcome, rec.termination, rec.nodes, rec.moves) == ("error", "illegal", 0, [])
    _referee_agrees(game, rec)
