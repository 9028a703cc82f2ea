"""Playing one deal with one strategy, in either tier, with the arena's guards.

A strategy that raises (any exception, `SystemExit` and `KeyboardInterrupt`
included), returns something that is not one of the legal `Move` objects, or
runs past the per-deal time limit ends the deal with outcome ``error`` or
``unknown`` (the reason is kept, and the termination says which); one that
makes no progress for `sim.engine.NO_PROGRESS_LIMIT` moves (the moves of a proven
winning line, `Strategy.on_proven_line`, not counted: `sim.engine.SCRATCH_PROVEN`), or
resigns, loses it. Nothing a strategy does can crash a run, end it, or count as a win: it is
handed copies (the legal moves, a `sim.game.View` snapshot), its choice is
looked up in the arena's own list, and only the arena's move is played. A
process the strategy forks is stopped where it comes back into the arena. Only
a real Ctrl-C by the user (SIGINT while a deal is played in the main thread)
stops the run, as `KeyboardInterrupt`.
"""

from __future__ import annotations

import copy
import gc
import math
import os
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np
from numba.core import event as numba_event

from sim import engine as E
from sim.errors import UserError
from sim.game import Game, View
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


MAX_DEAL_TIMEOUT = 86_400.0
"""The longest per-deal time limit, in seconds (a day): the timer the arena sets (``setitimer``) cannot hold
every float, and a deal that may take longer than a day has no limit worth the name."""


DEAL_TIMEOUT_ALLOWED = f"a number of seconds above 0 and at most {MAX_DEAL_TIMEOUT:g}"
"""What a per-deal time limit may be, as every refusal of one words it."""


def is_deal_timeout(value: Any) -> bool:
    """Whether ``value`` is a per-deal time limit: a number (not a bool) of seconds above 0 and at most
    `MAX_DEAL_TIMEOUT`. The one check of that limit: the play functions here, ``check-strategy`` and the
    runner all refuse what it refuses, each with its own error."""
    return (not isinstance(value, bool) and isinstance(value, int | float | np.integer | np.floating)
            and math.isfinite(value) and 0 < value <= MAX_DEAL_TIMEOUT)


def timeout_seconds(deal_timeout: float | None) -> float:
    """``deal_timeout`` as the engine's ``timeout`` argument (0.0: no limit); refuse, with `ArenaError`, what
    `is_deal_timeout` refuses."""
    if deal_timeout is None:
        return 0.0
    if not is_deal_timeout(deal_timeout):
        raise ArenaError(f"deal timeout {deal_timeout!r}: allowed: {DEAL_TIMEOUT_ALLOWED}, or none")
    return float(deal_timeout)


def timeout_reason(who: str, timeout: float) -> str:
    """The error text of a deal that ran past its time limit."""
    return f"{who} ran past the deal time limit of {timeout:g} s"


def illegal_index_reason(strategy_name: str) -> str:
    """The error text of a compiled policy that returned an index outside its legal moves."""
    return f"{strategy_name} (compiled) chose a move index outside the legal moves"


FORKED_CHILD_EXIT = 70
"""The exit status of a process forked by a strategy that came back into the arena (`_Guard.call`)."""


TIMER_RETRY = 0.005
"""Seconds after which the deal's timer strikes again once it has struck in the strategy's code: it may have found
numba busy (`_NumbaBusy`), landed where its exception is swallowed (`_swallowed_there`), or met a strategy that
caught it."""


class _DealTimeout(BaseException):
    """Raised by the SIGALRM handler into a strategy's code when the deal's time is up."""


class _NumbaBusy(numba_event.Listener):
    """How deep this process is in numba's compiler lock (compiling, or loading compiled code from numba's cache),
    followed through numba's event API (kind ``numba:compiler_lock``). The deal's timer never raises in there:
    an exception in the middle of it leaves numba's typing registries broken for the rest of the process, so that
    every later call of a function still to be compiled fails ("generator raised StopIteration")."""

    def __init__(self) -> None:
        self.depth = 0

    def on_start(self, ev: numba_event.Event) -> None:
        self.depth += 1

    def on_end(self, ev: numba_event.Event) -> None:
        self.depth = max(self.depth - 1, 0)


_NUMBA_BUSY = _NumbaBusy()
numba_event.register("numba:compiler_lock", _NUMBA_BUSY)


_FINALISE_CODE = weakref.finalize.__call__.__code__


def _swallowed_there(frame: Any) -> bool:
    """Whether an exception raised by a signal handler at ``frame`` would be swallowed by Python, reported as
    unraisable instead of reaching the strategy's code: in a garbage-collector callback (`gc.callbacks`; hypothesis
    registers one), a ``__del__`` or a `weakref.finalize` callback. A plain weak reference's callback cannot be told
    from its frame, nor can a collection be seen from outside without a callback of this module's own in
    `gc.callbacks`, which would itself fail (and print) when a collection starts at the recursion limit: there
    `_Guard.on_alarm`'s timer strikes again."""
    callbacks = {getattr(getattr(cb, "__func__", cb), "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        code = frame.f_code
        if code in callbacks or code is _FINALISE_CODE or code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


class _Guard:
    """The signal handlers of one Python-tier deal, and the boundary around the strategy's code.

    Ctrl-C is told apart from a strategy's own `KeyboardInterrupt` (``user_interrupt``). The deal's
    timer only ever sets ``expired``; it raises `_DealTimeout` only while the strategy's code runs
    (`call`), never into the arena's own bookkeeping, and the arena judges by ``expired``, not by the
    exception, whatever became of it (a strategy may catch it, or Python turn it into another: a
    generator's `RuntimeError`). A process forked inside the strategy's code that comes back out of
    it is stopped there: it never plays on, writes a result or ends the run.
    """

    def __init__(self, who: str) -> None:
        self.who = who
        self.user_interrupt = False
        self.expired = False
        self.inside = False
        self.pid = os.getpid()

    def on_sigint(self, previous: Callable[..., Any]) -> Callable[[int, Any], None]:
        def handler(signum: int, frame: Any) -> None:
            self.user_interrupt = True
            previous(signum, frame)
            raise KeyboardInterrupt

        return handler

    def on_alarm(self, signum: int, frame: Any) -> None:
        self.expired = True
        if not self.inside:
            return
        signal.setitimer(signal.ITIMER_REAL, TIMER_RETRY)
        if _NUMBA_BUSY.depth or _swallowed_there(frame):
            return
        raise _DealTimeout

    def call(self, what: str, fn: Callable[..., Any], *args: Any) -> tuple[Any, BaseException | None]:
        """``fn(*args)``, the strategy's code: (its value, None), or (None, what it raised)."""
        try:
            self.inside = True
            value = fn(*args)
            self.inside = False
        except BaseException as exc:  # noqa: BLE001 - the arena survives any strategy failure
            self.inside = False
            self.boundary(what)
            return None, exc
        self.boundary(what)
        return value, None

    def boundary(self, what: str) -> None:
        """Stop a process that the strategy forked, where it comes back into the arena (see `stop_forked_child`)."""
        if os.getpid() != self.pid:
            stop_forked_child(f"{self.who} forked the process in {what}")


def stop_forked_child(what: str) -> NoReturn:
    """End a process forked by a strategy at once: one line on standard error, exit status `FORKED_CHILD_EXIT`,
    no clean-up (the clean-up, the output and the results belong to the process it was copied from)."""
    try:
        os.write(2, f"bakers-dozen: warning: {what}; the copy was stopped where it came back into the arena, "
                    "the original plays on\n".encode(errors="replace"))
    finally:
        os._exit(FORKED_CHILD_EXIT)


@contextmanager
def _guarded(timeout: float, who: str) -> Iterator[_Guard]:
    """Install the deal's signal handlers when running in the main thread (elsewhere there are none)."""
    guard = _Guard(who)
    if threading.current_thread() is not threading.main_thread():
        yield guard
        return
    old_int = signal.getsignal(signal.SIGINT)
    if callable(old_int):  # SIG_IGN / SIG_DFL / a C handler are left alone
        signal.signal(signal.SIGINT, guard.on_sigint(old_int))
    old_alarm = signal.getsignal(signal.SIGALRM) if timeout > 0 else None
    if timeout > 0:
        signal.signal(signal.SIGALRM, guard.on_alarm)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        yield guard
    finally:
        guard.inside = False
        if timeout > 0:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, signal.SIG_DFL if old_alarm is None else old_alarm)
        if callable(old_int):
            signal.signal(signal.SIGINT, old_int)


def play_python(strategy: Strategy, game: Game, info: DealInfo, strategy_seed: int = 0,
                deal_timeout: float | None = None) -> GameRecord:
    """Play ``game`` to the end through `Strategy.choose`.

    The strategy is handed a copy of the legal moves, a `sim.game.View` (a
    snapshot) and a copy of the rules (in the view and the `DealInfo`); the
    arena looks its choice up in its own list (a `Move` of plain whole numbers)
    and plays the arena's move, which the engine checks again
    (`sim.game.Game.play_legal`): nothing the strategy is given or makes can put
    a move that is not legal on the table.

    ``deal_timeout`` (seconds) ends a deal still running after it with termination
    ``timeout`` (outcome ``unknown``). In the main thread of a process a SIGALRM
    timer interrupts the strategy even inside ``choose`` (though never inside
    numba's compiler, which it waits for); whatever the strategy does with that
    interruption (catches it, or lets Python turn it into another exception) the
    deal is recorded as a timeout, and a move it still returns is not played. In
    other threads the clock is only checked between moves, so a ``choose`` that
    never returns holds the thread (the runner plays deals in worker processes,
    whose main thread has the timer).
    """
    timeout = timeout_seconds(deal_timeout)
    start = time.perf_counter()
    st, prm = game._st, game._prm
    who = _name(strategy)
    shown = copy.copy(game.rules)  # the strategy's own: bending it (a frozen dataclass can be) bends no game or run
    info = replace(info, rules=shown if info.rules == game.rules else copy.copy(info.rules))

    def done(term: int, error: str | None = None) -> GameRecord:
        return GameRecord(E.OUTCOMES[E.TERMINATION_OUTCOME[term]], game.cards_home, game.history, error,
                          nodes=_nodes(strategy), seconds=time.perf_counter() - start, termination=E.TERMINATIONS[term])

    def out_of_time() -> bool:
        return guard.expired or (timeout > 0 and time.perf_counter() - start > timeout)

    clock = timeout > 0

    def raised(exc: BaseException) -> GameRecord:
        """The strategy's failure ends the deal; a real Ctrl-C goes on up; anything after the deal's time is up
        (the timer's own exception, or what a strategy or Python made of it) is the timeout."""
        if guard.user_interrupt:
            raise exc
        if out_of_time():
            return done(E.T_TIMEOUT, timeout_reason(who, timeout))
        return done(E.T_RAISED, f"{who} raised {_one_line(exc)}")

    with _guarded(timeout, who) as guard:
        try:
            peeks, exc = guard.call("reset", _reset, strategy, info, strategy_rng(strategy_seed, info.number))
            if exc is not None:
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
                if clock and out_of_time():
                    return done(E.T_TIMEOUT, timeout_reason(who, timeout))
                chosen, exc = guard.call("choose", _choose, strategy, View(shown, st, prm, peeks), list(moves))
                if guard.user_interrupt:  # a real Ctrl-C, which the strategy swallowed or turned into another
                    raise KeyboardInterrupt
                if exc is not None:
                    return raised(exc)
                choice, on_line = chosen
                if clock and out_of_time():
                    return done(E.T_TIMEOUT, timeout_reason(who, timeout))
                if choice is None:
                    return done(E.T_RESIGNED)
                if choice is UNDECIDED:
                    return done(E.T_UNDECIDED)
                if choice is TIMED_OUT:
                    return done(E.T_TIMEOUT)  # the strategy's own cap: no error, as in the compiled tier
                k = _index_of(choice, moves)
                if k < 0:  # its text is the strategy's code too (a __repr__ of its own)
                    shown_choice = guard.call("repr", _show, choice)[0] or "something else"
                    return done(E.T_ILLEGAL, f"{who} chose {shown_choice}, which is not one of the "
                                             f"{len(moves)} legal moves (a Move from the list it was given)")
                game.play_legal(moves[k])
                mark = E.progress_mark(st, prm)
                if mark > best:
                    best, since = mark, 0
                elif on_line and proven < E.MAX_PROVEN_LINE:
                    proven += 1
                else:
                    since += 1
        except _DealTimeout:  # the timer struck as the strategy's code was being left: still its time
            guard.boundary("its code")
            return done(E.T_TIMEOUT, timeout_reason(who, timeout))


def _reset(strategy: Strategy, info: DealInfo, rng: CounterRNG) -> bool:
    """`Strategy.reset`, then whether the strategy peeks (read once a deal, as the strategy's code: the arena
    shows hidden cards only when ``peeks`` is exactly True)."""
    strategy.reset(info, rng)
    return strategy.peeks is True


def _choose(strategy: Strategy, view: View, moves: list[Move]) -> tuple[object, bool]:
    """`Strategy.choose` on a copy of the arena's legal moves (the method looked up as the strategy's code), and
    whether the strategy says that move is on a winning line it has proven (`Strategy.on_proven_line`)."""
    choice = strategy.choose(view, moves)
    return choice, strategy.on_proven_line is True


def _name(strategy: Strategy) -> str:
    """The strategy's name for messages (a text, however the plug-in defines it)."""
    try:
        name = strategy.name
    except BaseException:  # noqa: BLE001 - a hostile property, whatever it raises
        name = None
    return _show(name) if not isinstance(name, str) else _show(name).strip("'\"")


def _nodes(strategy: Strategy) -> int:
    """The search nodes the strategy counted: a whole number of 0 or more, or 0 when it keeps something else."""
    try:
        nodes = strategy.nodes
    except BaseException:  # noqa: BLE001 - a hostile property, whatever it raises
        return 0
    return nodes if type(nodes) is int and nodes >= 0 else 0


def _one_line(exc: BaseException) -> str:
    """``Type: message`` of a strategy's exception (its ``str`` may itself fail, or be long)."""
    try:
        text = " ".join(str(exc).split())
    except BaseException:  # noqa: BLE001 - a hostile __str__, whatever it raises
        text = "?"
    return f"{type(exc).__name__}: {text if len(text) <= 200 else text[:197] + '...'}"


_WHOLE = frozenset({int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64})
"""The types a chosen move's fields may have: Python's int and numpy's own (not subclasses, whose int() is theirs)."""


def _index_of(choice: object, moves: list[Move]) -> int:
    """Where ``choice`` is in the arena's ``moves``; -1 if it is not a `Move` (not a tuple, a subclass or anything
    equal to one) of three whole numbers naming one of them. One of the arena's own moves (handed out in the
    copy) is found by identity; any other is read by value, as plain ints, so that what the strategy made cannot
    decide the comparison."""
    for k, m in enumerate(moves):
        if m is choice:
            return k
    if type(choice) is not Move or len(choice) != 3 or not all(type(x) in _WHOLE for x in tuple.__iter__(choice)):
        return -1
    wanted = tuple(map(int, tuple.__iter__(choice)))
    for k, m in enumerate(moves):
        if m == wanted:
            return k
    return -1


def _show(value: object) -> str:
    """A short text of whatever a strategy returned (its repr may itself fail or be huge)."""
    try:
        text = repr(value)
    except BaseException:  # noqa: BLE001 - a hostile __repr__, whatever it raises
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
    pid = os.getpid()
    strategy.reset(info, strategy_rng(strategy_seed, info.number))
    if os.getpid() != pid:
        stop_forked_child(f"{_name(strategy)} forked the process in reset")
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
