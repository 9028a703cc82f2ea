"""Playing one deal with one strategy, in either tier, with the arena's guards.

A strategy that raises (any exception, `SystemExit` and `KeyboardInterrupt`
included), returns something that is not one of the legal `Move` objects, or
runs past the per-deal time limit ends the deal with outcome ``error`` or
``unknown`` (the reason is kept, and the termination says which); one that
makes no progress for `sim.engine.NO_PROGRESS_LIMIT` moves (the moves of a proven
winning line, `Strategy.on_proven_line`, not counted: `sim.engine.SCRATCH_PROVEN`), or
resigns, loses it. Nothing a strategy does can crash a run, end it, or count as a win. Only
a real Ctrl-C by the user (SIGINT while a deal is played in the main thread)
stops the run, as `KeyboardInterrupt`.
"""

from __future__ import annotations

import math
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sim import engine as E
from sim.errors import UserError
from sim.game import Game
from sim.notation import Move
from sim.rng import CounterRNG, strategy_key
from strategies.base import TIMED_OUT, UNDECIDED, StrategyError
from strategies.loops import loops_for

if TYPE_CHECKING:
    from strategies.base import DealInfo, Strategy


class ArenaError(UserError):
    """A bad setting of the arena itself (e.g. a per-deal time limit that is not a positive number)."""


@dataclass
class GameRecord:
    """What happened in one deal; ``termination`` (one of `sim.engine.TERMINATIONS`) says why it ended
    (the play functions here always set it; None only in records made elsewhere without it)."""

    outcome: str
    cards_home: int
    moves: list[Move] = field(default_factory=list)
    error: str | None = None
    nodes: int = 0
    seconds: float = 0.0
    termination: str | None = None


def strategy_rng(strategy_seed: int, deal_number: int) -> CounterRNG:
    """The generator a strategy gets for one deal (the compiled tier draws the same)."""
    return CounterRNG(strategy_key(strategy_seed, deal_number))


def timeout_seconds(deal_timeout: float | None) -> float:
    """``deal_timeout`` as the engine's ``timeout`` argument (0.0: no limit); refuse what is not a positive number."""
    if deal_timeout is None:
        return 0.0
    if isinstance(deal_timeout, bool) or not isinstance(deal_timeout, int | float) or not 0 < deal_timeout < math.inf:
        raise ArenaError(f"deal timeout {deal_timeout!r}: allowed: a positive number of seconds, or none")
    return float(deal_timeout)


def timeout_reason(who: str, timeout: float) -> str:
    """The error text of a deal that ran past its time limit."""
    return f"{who} ran past the deal time limit of {timeout:g} s"


def illegal_index_reason(strategy_name: str) -> str:
    """The error text of a compiled policy that returned an index outside its legal moves."""
    return f"{strategy_name} (compiled) chose a move index outside the legal moves"


class _DealTimeout(BaseException):
    """Raised by the SIGALRM handler into the playing thread when the deal's time is up."""


class _Guard:
    """The signal handlers of one Python-tier deal: Ctrl-C is told apart from a strategy's own
    `KeyboardInterrupt` (``user_interrupt``), and SIGALRM interrupts a deal past its time."""

    def __init__(self) -> None:
        self.user_interrupt = False
        self.armed = False

    def on_sigint(self, previous: Callable[..., Any]) -> Callable[[int, Any], None]:
        def handler(signum: int, frame: Any) -> None:
            self.user_interrupt = True
            previous(signum, frame)
            raise KeyboardInterrupt

        return handler

    def on_alarm(self, signum: int, frame: Any) -> None:
        if self.armed:
            raise _DealTimeout


@contextmanager
def _guarded(timeout: float) -> Iterator[_Guard]:
    """Install the deal's signal handlers when running in the main thread (elsewhere there are none)."""
    guard = _Guard()
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    old_int = signal.getsignal(signal.SIGINT)
    if callable(old_int):  # SIG_IGN / SIG_DFL / a C handler are left alone
        signal.signal(signal.SIGINT, guard.on_sigint(old_int))
    old_alarm = signal.getsignal(signal.SIGALRM) if timeout > 0 else None
    if timeout > 0:
        signal.signal(signal.SIGALRM, guard.on_alarm)
        guard.armed = True
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield guard
    finally:
        guard.armed = False
        if timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if old_alarm is None else old_alarm)
        if callable(old_int):
            signal.signal(signal.SIGINT, old_int)


def play_python(strategy: Strategy, game: Game, info: DealInfo, strategy_seed: int = 0,
                deal_timeout: float | None = None) -> GameRecord:
    """Play ``game`` to the end through `Strategy.choose`.

    ``deal_timeout`` (seconds) ends a deal still running after it with termination
    ``timeout`` (outcome ``unknown``). In the main thread of a process a SIGALRM
    timer interrupts the strategy even inside ``choose`` (a strategy that
    catches `BaseException` itself is still stopped at the next move); in other
    threads the clock is only checked between moves, so a ``choose`` that never
    returns holds the thread (the runner plays deals in worker processes, whose
    main thread has the timer).
    """
    timeout = timeout_seconds(deal_timeout)
    start = time.perf_counter()
    st, prm = game._st, game._prm

    def done(term: int, error: str | None = None) -> GameRecord:
        return GameRecord(E.OUTCOMES[E.TERMINATION_OUTCOME[term]], game.cards_home, game.history, error,
                          nodes=strategy.nodes, seconds=time.perf_counter() - start, termination=E.TERMINATIONS[term])

    def raised(exc: BaseException) -> GameRecord:
        """The strategy's failure ends the deal; a real Ctrl-C or the deal's timer goes on up."""
        if guard.user_interrupt or isinstance(exc, _DealTimeout):
            raise exc
        return done(E.T_RAISED, f"{strategy.name} raised {type(exc).__name__}: {exc}")

    with _guarded(timeout) as guard:
        try:
            try:
                strategy.reset(info, strategy_rng(strategy_seed, info.number))
            except BaseException as exc:  # noqa: BLE001 - the arena survives any strategy failure
                return raised(exc)
            best, since, proven = E.progress_mark(st, prm), 0, 0
            while True:
                if E.cards_home(st, prm) == E.DECK_SIZE:
                    return done(E.T_WON)
                moves = game.legal_moves()
                if not moves:
                    return done(E.T_NO_MOVES)
                if since >= E.NO_PROGRESS_LIMIT:
                    return done(E.T_NO_PROGRESS)
                if timeout > 0 and time.perf_counter() - start > timeout:
                    return done(E.T_TIMEOUT, timeout_reason(strategy.name, timeout))
                try:
                    choice = strategy.choose(game.view(peeks=strategy.peeks), moves)
                    k = _index_of(choice, moves)  # compares with what the strategy made: may raise too
                    on_line = strategy.on_proven_line is True
                except BaseException as exc:  # noqa: BLE001 - the arena survives any strategy failure
                    return raised(exc)
                if guard.user_interrupt:  # the strategy swallowed a real Ctrl-C
                    raise KeyboardInterrupt
                if choice is None:
                    return done(E.T_RESIGNED)
                if choice is UNDECIDED:
                    return done(E.T_UNDECIDED)
                if choice is TIMED_OUT:
                    return done(E.T_TIMEOUT)  # the strategy's own cap: no error, as in the compiled tier
                if k < 0:
                    return done(E.T_ILLEGAL, f"{strategy.name} chose {_show(choice)}, which is not one of the "
                                             f"{len(moves)} legal moves (a Move from the list it was given)")
                game.play_legal(moves[k])
                mark = E.progress_mark(st, prm)
                if mark > best:
                    best, since = mark, 0
                elif on_line and proven < E.MAX_PROVEN_LINE:
                    proven += 1
                else:
                    since += 1
        except _DealTimeout:
            return done(E.T_TIMEOUT, timeout_reason(strategy.name, timeout))


def _index_of(choice: object, moves: list[Move]) -> int:
    """Where ``choice`` (which must be a `Move`, not a tuple or anything equal to one) is in ``moves``; -1 if not there."""
    if type(choice) is not Move:
        return -1
    for k, m in enumerate(moves):
        if m == choice:
            return k
    return -1


def _show(value: object) -> str:
    """A short text of whatever a strategy returned (its repr may itself fail or be huge)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def play_compiled(strategy: Strategy, game: Game, info: DealInfo, strategy_seed: int = 0,
                  deal_timeout: float | None = None) -> GameRecord:
    """Play ``game`` to the end in machine code through the strategy's `CompiledPolicy`.

    The loop is `sim.engine.play_game` compiled for the policy once per machine
    (`strategies.loops`). ``deal_timeout`` (seconds) is checked by a compiled clock between moves (see
    `sim.engine.play_game`): a policy that never returns from one call cannot be
    stopped from inside the process; the runner kills such a worker.
    """
    timeout = timeout_seconds(deal_timeout)
    policy = strategy.compiled(game.rules)
    if policy is None:
        raise StrategyError(f"strategy {strategy.name!r} has no compiled tier; play it in the Python tier")
    start = time.perf_counter()
    strategy.reset(info, strategy_rng(strategy_seed, info.number))
    rng = np.array([strategy_key(strategy_seed, info.number), 0], dtype=np.uint64)
    moves = E.new_moves(game._prm)
    record = np.empty(E.MAX_GAME_LENGTH, dtype=np.int64)
    scratch = np.zeros(max(policy.scratch_size, E.SCRATCH_OWN), dtype=np.int64)
    term, n = loops_for(policy.function).play_game(game._st, game._prm, policy.pparams, rng, scratch, moves,
                                                   E.policy_buffers(game._prm), record, timeout)
    played = _decode(game, record[: min(n, record.shape[0])])
    error = None
    if term == E.T_ILLEGAL:
        error = illegal_index_reason(strategy.name)
    elif term == E.T_TIMEOUT and timeout > 0:  # else the policy's own cap (`sim.engine.POLICY_TIMEOUT`)
        error = timeout_reason(f"{strategy.name} (compiled)", timeout)
    return GameRecord(E.OUTCOMES[E.TERMINATION_OUTCOME[term]], game.cards_home, played, error,
                      nodes=int(scratch[E.SCRATCH_NODES]), seconds=time.perf_counter() - start,
                      termination=E.TERMINATIONS[term])


def _decode(game: Game, codes: np.ndarray) -> list[Move]:
    """Turn engine codes played from ``game.start`` into Moves (by replaying them on a copy)."""
    replay = Game(game.rules, game.start, game.deal)
    for code in codes:
        replay.play_code(int(code))
    game._history = replay._history
    return replay.history
