"""What a worker does with one chunk: deal it, play it, check it, write it.

A chunk (`ChunkTask`) is deals first..last of a run. `play_chunk` is the task a worker runs: it plays the
deals (one compiled `strategies.batch.play_batch` call, or `strategies.play.play_python` deal by deal for
strategies without a compiled tier, `chunk_table`), writes the rows to the store as one Parquet file when
the task carries a store (else it hands the table back), and returns the chunk's counts (`ChunkResult`).
A worker keeps its strategy loaded between chunks (`loaded_strategy`, the last one only), ignores Ctrl-C
(the main process stops the workers) and dies with the main process.

Rows are checked by the independent referee before they are stored when the run verifies (by default for
plug-in strategies, not for built-ins, `verify_rows`): in the Python tier every game is replayed (its
moves, cards home and end), in the compiled tier every win; a row it rejects is stored as outcome
``error`` with the referee's reason, and the wins it accepts are stored marked ``verified``.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sim.deals import dealt_positions
from sim.engine import ERROR, OUTCOMES, T_ILLEGAL, WON
from sim.rules import Rules
from studies import nofollow
from studies.files import RunGone
from studies.rows import RunLabels
from studies.store import Store

REJECTED = "the referee rejected the claimed win"
"""How the ``error`` text of a win the referee rejected (stored as outcome ``error``) begins."""
REJECTED_GAME = "the referee rejected the recorded game"
"""How the ``error`` text of any other row the referee rejected (`verify_rows`) begins."""


@dataclass(frozen=True)
class ChunkTask:
    """One unit of work: deals first..last of a run. With ``store`` set the worker writes the chunk itself."""

    rules: Rules
    strategy: str
    seed: int
    source: str
    strategy_seed: int
    tier: str
    first: int
    last: int
    labels: RunLabels
    store: Store | None
    run_id: str
    deal_timeout: float | None = None
    verify: bool = False
    tasks_dir: Path | None = None
    main_pid: int | None = None
    """The run's main process; a process other than it that plays the task is a worker (None: no workers)."""

    @property
    def count(self) -> int:
        return self.last - self.first + 1


@dataclass
class ChunkResult:
    """What comes back from a worker: the chunk's counts (and its table when the main process writes it)."""

    first: int
    last: int
    outcomes: np.ndarray
    cards_home: int
    seconds: float
    table: pa.Table | None = None


_STRATEGIES: dict[str, Any] = {}
"""The strategy this process plays, by spec: the last one only. A kept worker plays many runs in turn, and
each strategy object holds its tables (the solver's is 128 MiB); holding every one made a worker grow past
the 300 MB that loky reads as a memory leak, so it retired the worker mid-run, with a warning."""


def loaded_strategy(spec: str, identity: str | None = None) -> Any:
    """The strategy object for ``spec``, made once per worker process (while its runs last).

    ``identity``: the run's `Strategy.identity`. A kept strategy of another identity (a plug-in whose file was
    edited since this worker loaded it) is loaded again, from the files as they are now; when even that is
    not the run's code (the file changed while the run played), the chunk is refused rather than stored under
    a digest that is not its code's.
    """
    s = _STRATEGIES.get(spec)
    if s is None or (identity is not None and s.identity != identity):
        from strategies import StrategyError, load_strategy

        _STRATEGIES.clear()
        s = keep_strategy(spec, load_strategy(spec))
        if identity is not None and s.identity != identity:
            raise StrategyError(f"strategy {spec!r} changed while the run played: its code is now {s.identity!r}, "
                                f"the run's is {identity!r}; run the command again")
    return s


def keep_strategy(spec: str, strategy: Any) -> Any:
    """``strategy`` becomes the one `loaded_strategy` returns for ``spec``, in place of any other."""
    if spec not in _STRATEGIES:
        _STRATEGIES.clear()
        _STRATEGIES[spec] = strategy
    return _STRATEGIES[spec]


def chunk_table(task: ChunkTask) -> pa.Table:
    """Deal and play deals first..last of ``task``; return the chunk's rows (`studies.rows.SCHEMA`)."""
    from numba.core.errors import NumbaError

    from strategies import is_builtin, uncompilable
    from strategies.batch import play_batch, play_batch_python
    from studies import rows

    strategy = loaded_strategy(task.strategy, task.labels.key.strategy_identity)
    numbers = np.arange(task.first, task.last + 1, dtype=np.int64)
    tier = "python" if task.tier == "python" or strategy.compiled(task.rules) is None else "compiled"
    start = time.perf_counter()
    try:
        play = play_batch if tier == "compiled" else play_batch_python
        r = play(task.rules, strategy, numbers, task.seed, task.strategy_seed, task.source, deal_timeout=task.deal_timeout)
    except NumbaError as exc:  # a plug-in's policy numba cannot compile is its error; a built-in's is a bug
        if is_builtin(strategy):
            raise
        raise uncompilable(strategy, exc) from None
    wall_us = int((time.perf_counter() - start) * 1e6)
    averaged = not bool(r.micros.any())  # the compiled tier times deals only when the strategy asks for it
    micros = np.full(len(numbers), wall_us // max(len(numbers), 1), dtype=np.int64) if averaged else r.micros
    outcome, termination, errors = r.outcome.copy(), r.termination.copy(), dict(r.errors)
    if task.verify:
        verify_rows(task, r, outcome, termination, errors)
    return rows.chunk_table(task.labels, tier, numbers, outcome, termination, r.cards_home, r.moves, r.nodes,
                         micros, averaged, errors, r.win_offsets, r.win_moves, verified=task.verify,
                         deal_timeout=task.deal_timeout)


def verify_rows(task: ChunkTask, r: Any, outcome: np.ndarray, termination: np.ndarray,
                errors: dict[int, str]) -> np.ndarray:
    """Check what the rows of a played chunk (``r``, a `strategies.batch.BatchResult`) claim with the independent
    referee (`sim.referee`) before they are stored; return which rows passed (one bool a row).

    Where the batch kept every game's moves (``r.game_moves``: the Python tier, whose games a strategy played in
    this process) every row is replayed: each move legal, the referee's cards home the row's, a win exactly when
    the referee has all 52 home, and a game that ended for want of moves with none left. A compiled batch keeps
    only its wins' moves (its engine made every move and counted every card itself): each win is replayed. A row
    that fails is stored as outcome ``error``, termination ``illegal``, with the referee's reason; ``outcome``,
    ``termination`` and ``errors`` are changed in place.
    """
    every = r.game_moves is not None
    codes, offsets = (r.game_moves, r.game_offsets) if every else (r.win_moves, r.win_offsets)
    passed = np.ones(len(r.numbers), dtype=bool)
    rows = range(len(r.numbers)) if every else np.flatnonzero(outcome == WON).tolist()
    starts = dealt_positions(task.rules, [int(r.numbers[i]) for i in rows], task.seed, task.source)
    for i, start in zip(rows, starts, strict=True):
        reason = _disagreement(task.rules, start, codes[offsets[i]:offsets[i + 1]].tolist(), int(outcome[i]),
                               int(termination[i]), int(r.cards_home[i]))
        if reason is not None:  # every fault of the moves is in the reason; a raise is a bug
            errors[i] = f"{REJECTED if outcome[i] == WON else REJECTED_GAME}: {reason}"
            outcome[i], termination[i], passed[i] = ERROR, T_ILLEGAL, False
    return passed


def _disagreement(rules: Rules, start: Any, codes: list[int], outcome: int, termination: int, home: int) -> str | None:
    """Why the referee does not accept a row's game (engine move ``codes`` from ``start``, its outcome, termination
    and cards home), or None when it does."""
    from sim.engine import T_NO_MOVES
    from sim.referee import legal_moves, replay_codes

    verdict = replay_codes(rules, start, codes, keep_moves=False)
    if not verdict.legal:
        return verdict.reason
    if verdict.won != (outcome == WON):
        return (f"the row says {OUTCOMES[outcome]}; its {len(codes)} moves end with {verdict.cards_home} cards home, "
                f"{'a win' if verdict.won else 'not a win'}")
    if verdict.cards_home != home:
        return f"the row says {home} cards home; its {len(codes)} moves bring {verdict.cards_home} home"
    if termination == T_NO_MOVES and legal_moves(rules, verdict.final):
        return f"the row says no legal move was left; after its {len(codes)} moves there are some"
    return None


def outcome_counts(table: pa.Table) -> tuple[np.ndarray, int]:
    """Outcome counts (lost, won, unknown, error) and the sum of cards home of a chunk's rows.

    Counted by Arrow's kernels, not through numpy: pyarrow imports pandas on its first conversion to
    numpy, a quarter of a second that a run reusing stored chunks need not pay."""
    import pyarrow.compute as pc

    counts = np.zeros(len(OUTCOMES), dtype=np.int64)
    for item in pc.value_counts(table.column("outcome")).to_pylist():
        counts[OUTCOMES.index(item["values"])] += item["counts"]
    return counts, int(pc.sum(table.column("cards_home")).as_py() or 0)


class Tally:
    """Running totals over chunks."""

    def __init__(self) -> None:
        self.outcomes = np.zeros(len(OUTCOMES), dtype=np.int64)
        self.home = 0
        self.deals = 0

    def add(self, outcomes: np.ndarray, home: int) -> None:
        self.outcomes += outcomes
        self.home += home
        self.deals += int(outcomes.sum())


def play_chunk(task: ChunkTask) -> ChunkResult:
    """A worker's task: play one chunk, write it when the task carries a store, return its counts.

    In a worker process Ctrl-C is ignored (the main process stops the workers), so that an
    interrupt is never recorded as a strategy's error, and the worker dies with the main process
    (`_die_with_parent`); with ``tasks_dir`` the worker says which chunk it plays, from when, and
    when numba is compiling, for the main process's watchdog.
    """
    worker = task.main_pid is not None and os.getpid() != task.main_pid
    if worker and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _die_with_parent(task)
    start = time.perf_counter()
    _preload(task)
    with TaskStatus(task):
        table = chunk_table(task)
        counts, home = outcome_counts(table)
        if task.store is not None:
            task.store.write_chunk(table, task.labels.key.hash, task.first, task.last, task.run_id)
            table = None
    return ChunkResult(task.first, task.last, counts, home, time.perf_counter() - start, table)


_WARMED: set[tuple[Rules, str, bool]] = set()
"""(rules, strategy spec, compiled) that `warm_up` has readied in this process: a worker needs it once."""


def _preload(task: ChunkTask) -> None:
    """Load the chunk's strategy and compiled loop before its note starts the watchdog's clock: loading
    numba's cache is not playing (compiling is reported as such by numba's events; loading has none).
    Once per process and run settings (later chunks find them loaded). A failure here is left for the
    chunk itself to meet and report."""
    try:
        warm_up(task.rules, task.strategy, task.tier != "python")
    except Exception:  # noqa: BLE001, S110 - reported by chunk_table, which meets it again
        pass


def warm_up(rules: Rules, strategy: str, compiled: bool) -> None:
    """A worker's first task: load the strategy and its compiled loop (`strategies.batch.prepare`, and
    `Strategy.ready`'s stages) while the main process readies the run, so that the first chunk plays at
    once. Its result is never read: a failure here shows again, and is reported, in the chunk that meets it."""
    from strategies.batch import prepare

    if (rules, strategy, compiled) in _WARMED:
        return
    loaded = loaded_strategy(strategy)
    if compiled:
        prepare(rules, loaded)
    loaded.ready(rules)  # in the Python tier too: its deals' clocks must not run over a compile either
    _WARMED.add((rules, strategy, compiled))


def _die_with_parent(task: ChunkTask) -> None:
    """On Linux, have the kernel kill this worker when the main process dies (however it dies), so that
    an orphan never plays on (a stuck policy would spin for ever); elsewhere only the store's commit
    check stops an orphan, when it tries to write."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_pdeathsig = 1
    ctypes.CDLL(None, use_errno=True).prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != task.main_pid:  # the main process died before that took effect
        raise RunGone(f"the run {task.run_id} is gone (its process {task.main_pid} died)")


class TaskStatus:
    """The worker's note ``<key>/.tasks/<run>_<first>_<last>.json``: its pid, and since when it plays
    (not counting numba compiling, which it reports as such), for `studies.watchdog.Watchdog`."""

    current: TaskStatus | None = None
    _listening = False

    def __init__(self, task: ChunkTask) -> None:
        self.path = None if task.tasks_dir is None else task.tasks_dir / f"{task.run_id}_{task.first}_{task.last}.json"
        self.depth = 0

    def __enter__(self) -> TaskStatus:
        if self.path is not None:
            TaskStatus._listen()
            TaskStatus.current = self
            self.write(compiling=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.path is not None:
            TaskStatus.current = None
            self.path.unlink(missing_ok=True)

    def write(self, compiling: bool) -> None:
        """Replace the note (atomically); a note that cannot be written (a full disk) only leaves the chunk unwatched."""
        assert self.path is not None
        tmp = self.path.with_name(f".tmp-{self.path.name}")
        folder = self.path.parent
        try:
            with os.fdopen(nofollow.open_fd(folder, tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w") as fh:
                fh.write(json.dumps({"pid": os.getpid(), "since": time.time(), "compiling": compiling}))
            nofollow.replace(folder, tmp, self.path)
        except OSError:
            with contextlib.suppress(OSError):
                nofollow.unlink(folder, tmp)

    @classmethod
    def _listen(cls) -> None:
        """Follow numba's compile events (once per process), so that compiling is not taken for a hang."""
        if cls._listening:
            return
        from numba.core import event

        class Compiling(event.Listener):
            def on_start(self, ev: event.Event) -> None:
                status = TaskStatus.current
                if status is not None:
                    status.depth += 1
                    if status.depth == 1:
                        status.write(compiling=True)

            def on_end(self, ev: event.Event) -> None:
                status = TaskStatus.current
                if status is not None and status.depth > 0:
                    status.depth -= 1
                    if status.depth == 0:
                        status.write(compiling=False)

        event.register("numba:compile", Compiling())
        cls._listening = True
