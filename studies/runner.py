"""Jobs: a run of many deals, split into chunks, played in parallel with joblib, stored as it goes.

A run is (variant, strategy, deal seed, deal range). It is split into chunks
of thousands of deals; each chunk is one task: a worker deals and plays it
(one compiled `strategies.batch.play_batch` call, or `strategies.play.play_python` deal by
deal for strategies without a compiled tier) and writes it to the store as one
Parquet file (`studies.store`). Results stream back as chunks finish, in any order,
and feed the progress bar and the summary; nothing per deal is kept in the
main process, so memory stays flat however many deals a run has.

Every row depends only on (rules, strategy identity, deal seed, source,
strategy seed, deal number) and on three settings that reuse checks (the tier a
run names, its deal time limit, verification: `studies.reuse`), so a run gives
the same rows for any number of jobs, any chunk size and any backend (joblib's ``loky`` processes on this
machine, or a Dask cluster through `studies.dask_backend`).

Resume and reuse: before playing, the runner lists the chunk files already
stored under the run's key, checks them, and plays only the deals they do not
cover; a killed run loses at most the chunks that were in flight. Chunk files
that fail their checks are moved aside and replayed. A chunk is reused only when
this run would have made its rows (`studies.reuse`): rows a deal time limit may
have ended only under the same limit, rows of the tier the run names, and, for a
verifying run, only wins the referee accepted (it checks those not yet verified;
a chunk holding a win it rejects is moved aside); other chunks are played again. ``force`` replays
everything asked for into a staging folder and then puts it in place of the older files in one
step (`studies.store.Store.finish_swap`): a reader meanwhile sees the old rows, never a hole. A run whose
deals the store already holds (by its files' names) readies nothing to play: it
deals nothing, loads no compiled code and starts no worker, so a fresh process
that only reads its rows back answers in about a second; repeating an invocation
that the key's manifests record, when it plays nothing, writes no new manifest.

Faults: a worker process that dies takes only its chunk with it; the runner
replays the chunks that are missing (up to ``retries`` times). A full disk,
an unwritable store or an unreachable scheduler stop the run with a message
saying what was saved and how to go on.

One run per key: the run holds its key (`studies.store.Store.hold_key`) from before
it lists the stored chunks until it ends, and workers put a chunk in place only
while their run holds it, so after a kill -9 of the main process its orphaned
workers write nothing and a resume never plays a deal twice.

Hangs: with a per-deal time limit (``deal_timeout``) each deal that runs past it
ends as outcome ``unknown``, termination ``timeout``. A strategy that never
returns from one call (a compiled loop, a Python call that blocks) cannot be
stopped inside its process: on loky, the main process watches each chunk (worker pid
and start, in ``<key>/.tasks/``; numba compiling does not count), kills a worker
whose chunk runs far past its deals' limit (`stall_limit`), and replays that
chunk in smaller pieces until the stuck deal is alone, which it then records as
a timeout without playing it again (on dask only the limit inside the worker
applies). Play happens in worker processes, so Ctrl-C stops a run at once
whatever the strategy does; workers ignore SIGINT and die with the main
process. The exception is a run that would have one worker, of a
built-in strategy with no deal time limit (`plays_in_process`: ``--jobs 1``, or
``solve`` of one deal): it plays its chunks in a thread of the main process,
which answers sooner than starting a worker and loading the compiled code there.

Rows are checked by the independent referee before they are stored when
``verify`` is on (by default for plug-in strategies, not for built-ins,
`verify_rows`): in the Python tier every game is replayed (its moves, cards
home and end), in the compiled tier every win; a row it rejects is stored as
outcome ``error`` with the referee's reason, and the wins it accepts are stored
marked ``verified``.
"""

from __future__ import annotations

import atexit
import contextlib
import copy
import json
import math
import os
import signal
import socket
import sys
import threading
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
from rich.markup import escape

from sim import __version__
from sim.deals import MAX_DEAL, PYSOL_MAX_DEAL, check_deal_number, make_deal
from sim.engine import ERROR, OUTCOMES, T_ILLEGAL, T_TIMEOUT, UNKNOWN, WON
from sim.errors import UserError
from sim.rules import Rules, check_variant_name
from studies import nofollow
from studies.dask_backend import SchedulerError as SchedulerError
from studies.dask_backend import SchedulerLostError
from studies.dask_backend import check_address as check_scheduler
from studies.dask_backend import connect as connect_scheduler
from studies.progress import NullProgress, Progress
from studies.reuse import ACCEPT_COLUMNS, Wants, distrust, mark_verified, unverified_wins
from studies.store import (
    ChunkFile,
    CorruptChunkError,
    RunGone,
    RunKey,
    RunLabels,
    Store,
    StoreError,
    StoreFullError,
    load_chunk_file,
)

BACKENDS = ("loky", "dask")
TIERS = ("auto", "compiled", "python")
DEFAULT_STORE = "bakers-dozen-store"
"""The results store every verb uses unless told otherwise (simulate, compare, tournament, demo), so they share deals."""

INT64_MAX = 2**63 - 1
MAX_CHUNK = 1_000_000
"""Largest --chunk: a chunk's per-deal arrays and Parquet rows are held in memory at once."""
JOBS_PER_CORE = 4
"""loky runs at most this many worker processes per core (more only adds memory and start-up)."""
STALL_FACTOR, STALL_SLACK = 2.0, 10.0
"""A chunk of n deals counts as stuck after n x deal_timeout x STALL_FACTOR + STALL_SLACK seconds of
play (numba compiling excluded): far past what deals that honour the limit can take."""
WATCH_INTERVAL = 0.25
REJECTED = "the referee rejected the claimed win"
"""How the ``error`` text of a win the referee rejected (stored as outcome ``error``) begins."""
REJECTED_GAME = "the referee rejected the recorded game"
"""How the ``error`` text of any other row the referee rejected (`verify_rows`) begins."""


class RunnerError(UserError):
    """A run that cannot be started or completed as asked; the message says why and what to do."""


class WorkersDiedError(RunnerError):
    """Worker processes kept dying (more than ``retries`` times); what was finished is saved."""


def check_whole(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int when it is a whole number in low..high; else `RunnerError` naming the range."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise RunnerError(f"{name} must be a whole number from {low:,} to {high:,}; got {value!r}")
    if not low <= value <= high:
        raise RunnerError(f"{name} must be from {low:,} to {high:,}; got {value:,}")
    return int(value)


def check_deal_timeout(value: Any, name: str = "deal_timeout") -> float | None:
    """A per-deal time limit in seconds: None, or what `strategies.play.is_deal_timeout` allows."""
    from strategies.play import DEAL_TIMEOUT_ALLOWED, is_deal_timeout

    if value is None:
        return None
    if not is_deal_timeout(value):
        raise RunnerError(f"{name} must be {DEAL_TIMEOUT_ALLOWED}; got {value!r}")
    return float(value)


def max_jobs() -> int:
    """The most worker processes a loky run starts: `JOBS_PER_CORE` per core."""
    from joblib import cpu_count

    return JOBS_PER_CORE * cpu_count()


def stall_limit(deals: int, deal_timeout: float) -> float:
    """Seconds of play after which a chunk of ``deals`` deals counts as stuck (see `STALL_FACTOR`)."""
    return deals * deal_timeout * STALL_FACTOR + STALL_SLACK


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``saved`` of ``total`` deals are in the store and the same command resumes."""

    def __init__(self, saved: int, total: int, store: Path) -> None:
        super().__init__(f"interrupted: {saved:,} of {total:,} deals are saved in {store}")
        self.saved, self.total, self.store = saved, total, store


# --- what to run ------------------------------------------------------------------------

@dataclass(frozen=True)
class RunSpec:
    """One run: which rules, which strategy, which deals.

    The deals are ``first`` and the ``deals - 1`` after it, or, with ``ranges``, only the deals of those ranges
    (sorted, apart, ``first`` the first deal of the first and ``deals`` their count): a run over the deals an
    earlier run left undecided, scattered over a long range, plays them all on every worker at once
    (`RunSpec.over`)."""

    rules: Rules
    strategy: str
    deals: int
    first: int = 1
    seed: int = 0
    source: str = "default"
    strategy_seed: int = 0
    tier: str = "auto"
    ranges: tuple[tuple[int, int], ...] = ()

    @classmethod
    def over(cls, rules: Rules, strategy: str, deals: Iterable[int], **fields: Any) -> RunSpec:
        """The run of the given deal numbers (any order; repeats count once), as ranges of consecutive deals."""
        ranges = deal_ranges(deals)
        if not ranges:
            raise RunnerError("a run needs at least one deal")
        return cls(rules, strategy, sum(b - a + 1 for a, b in ranges), ranges[0][0], ranges=tuple(ranges), **fields)

    @property
    def last(self) -> int:
        return self.ranges[-1][1] if self.ranges else self.first + self.deals - 1

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The run's deals as (first, last) ranges, in order."""
        return self.ranges or ((self.first, self.last),)


def deal_ranges(deals: Iterable[int]) -> list[tuple[int, int]]:
    """Deal numbers as sorted (first, last) ranges of consecutive deals."""
    ranges: list[tuple[int, int]] = []
    for deal in sorted(set(deals)):
        if ranges and deal == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], deal)
        else:
            ranges.append((deal, deal))
    return ranges


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


@dataclass
class RunSummary:
    """The figures of a finished run (over every deal asked for, reused or played)."""

    variant: str
    rules_fingerprint: str
    strategy: str
    strategy_identity: str
    seed: int
    source: str
    strategy_seed: int
    first: int
    deals: int
    wins: int
    outcomes: dict[str, int]
    cards_home_sum: int
    played: int
    reused: int
    seconds: float
    store: str
    key: str
    chunks_played: int = 0
    chunks_reused: int = 0
    corrupt: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    """One line for each damaged key.json (written again) or manifest of the run's key, moved aside, and for each
    chunk file holding a win the referee rejects (moved aside and played again, by a verifying run)."""
    refused: list[str] = field(default_factory=list)
    """One line for each stored chunk played again because this run would not have made its rows (`studies.reuse`:
    another deal time limit, another tier)."""
    retries: int = 0
    jobs: int = 1
    backend: str = "loky"
    in_process: bool = False
    """The chunks played in the main process, no worker pool (`plays_in_process`), whatever ``backend`` says."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.deals

    @property
    def interval(self) -> tuple[float, float]:
        from studies.stats import win_rate_interval

        return win_rate_interval(self.wins, self.deals)

    @property
    def mean_cards_home(self) -> float:
        return self.cards_home_sum / self.deals

    @property
    def deals_per_second(self) -> float | None:
        return self.played / self.seconds if self.played and self.seconds > 0 else None

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        out = asdict(self)
        out.update(
            last=self.first + self.deals - 1,
            win_rate=self.win_rate,
            ci_low=low,
            ci_high=high,
            confidence=0.95,
            interval="wilson",
            mean_cards_home=self.mean_cards_home,
            deals_per_second=self.deals_per_second,
        )
        return out


# --- the worker side -----------------------------------------------------------------

_STRATEGIES: dict[str, Any] = {}
"""The strategy this process plays, by spec: the last one only. A kept worker plays many runs in turn, and
each strategy object holds its tables (the solver's is 128 MiB); holding every one made a worker grow past
the 300 MB that loky reads as a memory leak, so it retired the worker mid-run, with a warning."""


def _strategy(spec: str) -> Any:
    """The strategy object for ``spec``, made once per worker process (while its runs last)."""
    s = _STRATEGIES.get(spec)
    if s is None:
        from strategies import load_strategy

        s = _keep_strategy(spec, load_strategy(spec))
    return s


def _keep_strategy(spec: str, strategy: Any) -> Any:
    """``strategy`` becomes the one `_strategy` returns for ``spec``, in place of any other."""
    if spec not in _STRATEGIES:
        _STRATEGIES.clear()
        _STRATEGIES[spec] = strategy
    return _STRATEGIES[spec]


def chunk_table(task: ChunkTask) -> pa.Table:
    """Deal and play deals first..last of ``task``; return the chunk's rows (`studies.store.SCHEMA`)."""
    from numba.core.errors import NumbaError

    from strategies import is_builtin, uncompilable
    from strategies.batch import play_batch, play_batch_python
    from studies import store as S

    strategy = _strategy(task.strategy)
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
    return S.chunk_table(task.labels, tier, numbers, outcome, termination, r.cards_home, r.moves, r.nodes,
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
    for i in range(len(r.numbers)) if every else np.flatnonzero(outcome == WON).tolist():
        start = make_deal(task.rules, int(r.numbers[i]), task.seed, task.source).position
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

    verdict = replay_codes(rules, start, codes)
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


def _counts(table: pa.Table) -> tuple[np.ndarray, int]:
    """Outcome counts (lost, won, unknown, error) and the sum of cards home of a chunk's rows.

    Counted by Arrow's kernels, not through numpy: pyarrow imports pandas on its first conversion to
    numpy, a quarter of a second that a run reusing stored chunks need not pay."""
    import pyarrow.compute as pc

    counts = np.zeros(len(OUTCOMES), dtype=np.int64)
    for item in pc.value_counts(table.column("outcome")).to_pylist():
        counts[OUTCOMES.index(item["values"])] += item["counts"]
    return counts, int(pc.sum(table.column("cards_home")).as_py() or 0)


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
    with _TaskStatus(task):
        table = chunk_table(task)
        counts, home = _counts(table)
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


class _TaskStatus:
    """The worker's note ``<key>/.tasks/<run>_<first>_<last>.json``: its pid, and since when it plays
    (not counting numba compiling, which it reports as such), for `_Watchdog`."""

    current: _TaskStatus | None = None
    _listening = False

    def __init__(self, task: ChunkTask) -> None:
        self.path = None if task.tasks_dir is None else task.tasks_dir / f"{task.run_id}_{task.first}_{task.last}.json"
        self.depth = 0

    def __enter__(self) -> _TaskStatus:
        if self.path is not None:
            _TaskStatus._listen()
            _TaskStatus.current = self
            self.write(compiling=False)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.path is not None:
            _TaskStatus.current = None
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
                status = _TaskStatus.current
                if status is not None:
                    status.depth += 1
                    if status.depth == 1:
                        status.write(compiling=True)

            def on_end(self, ev: event.Event) -> None:
                status = _TaskStatus.current
                if status is not None and status.depth > 0:
                    status.depth -= 1
                    if status.depth == 0:
                        status.write(compiling=False)

        event.register("numba:compile", Compiling())
        cls._listening = True


# --- the main side -------------------------------------------------------------------

def run_labels(spec: RunSpec, strategy: Any) -> RunLabels:
    """The key and label columns of ``spec`` played by the (loaded) ``strategy``."""
    key = RunKey(check_variant_name(spec.rules).fingerprint, strategy.identity, spec.seed, spec.source,
                 spec.strategy_seed)
    return RunLabels(
        key=key,
        variant=spec.rules.name,
        strategy=strategy.name,
        strategy_version=str(strategy.version),
        strategy_params=json.dumps(strategy.params, sort_keys=True, default=str),
        strategy_label=strategy.label_for(spec.rules),
        clairvoyant=strategy.sees_hidden(spec.rules),
        toolkit_version=__version__,
    )


TARGET_CHUNK_SECONDS = 3.0
"""Adaptive chunks aim at about this much work each: long enough that per-task
overhead (a few milliseconds) vanishes, short enough that a kill loses little."""
CHUNK_BOUNDS = {True: (100, 100_000), False: (5, 10_000)}
"""(smallest, largest) adaptive chunk for compiled (True) and Python-tier (False) play; fast
strategies get thousands of deals a chunk from the time target, slow ones (searches) fewer."""
FIRST_CHUNK = {True: 500, False: 20}


def missing_ranges(lo: int, hi: int, covered: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The deals of lo..hi outside ``covered`` (sorted by first deal), as (first, last) ranges."""
    missing: list[tuple[int, int]] = []
    cursor = lo
    for a, b in sorted(covered):
        if a > cursor:
            missing.append((cursor, min(a - 1, hi)))
        cursor = max(cursor, b + 1)
        if cursor > hi:
            break
    if cursor <= hi:
        missing.append((cursor, hi))
    return missing


def plan_chunks(lo: int, hi: int, covered: Sequence[tuple[int, int]], chunk: int) -> list[tuple[int, int]]:
    """Fixed-size chunks (first, last) that play the deals of lo..hi not in ``covered``.

    Chunk boundaries lie on the grid lo, lo+chunk, lo+2*chunk, ..., so a repeated
    command plans the same chunk files.
    """
    out = []
    for a, b in missing_ranges(lo, hi, covered):
        k = (a - lo) // chunk
        while True:
            start = max(a, lo + k * chunk)
            if start > b:
                break
            out.append((start, min(b, lo + (k + 1) * chunk - 1)))
            k += 1
    return out


class Chunker:
    """Cuts the deals still to play into chunks, one at a time, as workers ask for work.

    With a fixed ``chunk`` size, ``ranges`` are the chunks (`plan_chunks`) and
    it hands them out whole. Otherwise the size
    adapts: it starts small (`FIRST_CHUNK`), then follows the speed measured on
    finished chunks so that each takes about `TARGET_CHUNK_SECONDS`, within
    `CHUNK_BOUNDS`, and near the end shrinks so that every job gets a share of
    what is left. Rows never depend on the chunking, only the file layout does.
    Thread-safe: joblib pulls tasks from a callback thread.
    """

    def __init__(self, ranges: Sequence[tuple[int, int]], jobs: int, compiled: bool, chunk: int | None = None) -> None:
        self.fixed = chunk
        self.jobs = max(jobs, 1)
        self.low, self.high = CHUNK_BOUNDS[compiled]
        self.size = chunk or FIRST_CHUNK[compiled]
        self._ranges: list[tuple[int, int]] = []
        self._lock = threading.Lock()
        self.give_back(ranges)

    def give_back(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Put deal ranges (back) among those still to play."""
        with self._lock:
            self._ranges = sorted(self._ranges + list(ranges))

    @property
    def remaining(self) -> int:
        with self._lock:
            return sum(b - a + 1 for a, b in self._ranges)

    def observe(self, deals: int, seconds: float) -> None:
        """A chunk of ``deals`` took ``seconds`` in its worker: adjust the size of the next chunks."""
        if self.fixed or deals <= 0 or seconds <= 0:
            return
        with self._lock:
            self.size = int(min(self.high, max(self.low, deals / seconds * TARGET_CHUNK_SECONDS)))

    def next(self) -> tuple[int, int] | None:
        """The next chunk to play, or None when nothing is left."""
        with self._lock:
            if not self._ranges:
                return None
            a, b = self._ranges.pop(0)
            if self.fixed:
                return a, b
            left = sum(y - x + 1 for x, y in self._ranges) + (b - a + 1)
            size = max(self.low, min(self.size, -(-left // (2 * self.jobs))))
            if size > 1000:
                size = size // 1000 * 1000
            if a + size - 1 < b:
                self._ranges.insert(0, (a + size, b))
                b = a + size - 1
            return a, b


def _worker_lost_errors() -> tuple[type[BaseException], ...]:
    """Exceptions that mean a worker process died (its chunk is replayed), for the backends installed."""
    from concurrent.futures.process import BrokenProcessPool

    from joblib.externals.loky.process_executor import TerminatedWorkerError

    found: list[type[BaseException]] = [TerminatedWorkerError, BrokenProcessPool]
    if "distributed" in sys.modules:  # only a dask run has it loaded (importing it costs memory)
        from distributed import KilledWorker

        found.append(KilledWorker)
    return tuple(found)


LOKY_IDLE_SECONDS = 300
"""Idle worker processes stay this long, warm (strategy loaded, numba compiled), for the next run."""
_POOL: dict[int, Any] = {}
"""The runner's own loky executor by worker count (not loky's global one, which joblib.Parallel shares and
decorates), kept after a clean run so that the next run of this process finds its workers warm."""
_POOL_IDLE_SINCE: dict[int, float] = {}
"""When each kept pool was last handed out or its workers may first have had nothing to do
(`time.monotonic`): a pool idle for over half `LOKY_IDLE_SECONDS` is replaced rather than reused, since its
workers may be timing out just as new work arrives (loky then restarts them itself, with a warning about "a
memory leak": the same warning as for a worker grown by 300 MB, which `_STRATEGIES` prevents). A run stamps
it when its first chunk finishes after the last was handed out (not when the last chunk finishes: a worker
idle since then would time out sooner than the stamp says); a hand-out stamps it too, so that a pool warmed
for a run that then played nothing ages like any other."""


LOKY_RETIRED = "A worker stopped while some jobs were given to the executor"
"""How loky's warning begins when it replaces a worker it retired: one that grew over 300 MB past its size
after its first task (loky reads that as a leak) or timed out idle as work came. A worker of a study grows
that much by design: it compiles, or loads from numba's cache, each strategy it plays after its first
(the solver's tables alone are 128 MiB). loky then starts a fresh worker and loses nothing (a worker retires
between tasks), so the warning tells a user nothing to act on; the runner silences exactly it."""


def worker_pool(jobs: int) -> Any:
    """A loky process pool of ``jobs`` workers: the one kept from the last clean run, or a new one; loky's
    warning about a worker it retired (`LOKY_RETIRED`) is silenced."""
    from joblib.externals.loky import ProcessPoolExecutor

    # loky's manager thread warns in this process; the filter matches that one message of loky's module only
    warnings.filterwarnings("ignore", message=LOKY_RETIRED, category=UserWarning, module=r"joblib\.externals\.loky\.")

    stale = time.monotonic() - _POOL_IDLE_SINCE.get(jobs, math.inf) > LOKY_IDLE_SECONDS / 2
    for n in [n for n in _POOL if n != jobs or stale]:
        _POOL.pop(n).shutdown(wait=False)
    _POOL_IDLE_SINCE[jobs] = time.monotonic()  # `_stream` stamps it again when its workers may start idling
    if jobs not in _POOL:
        if not _POOL:
            atexit.register(close_pools)
        _POOL[jobs] = ProcessPoolExecutor(max_workers=jobs, timeout=LOKY_IDLE_SECONDS)
    return _POOL[jobs]


def map_in_workers(function: Any, items: Sequence[Any], jobs: int) -> list[Any]:
    """``function`` of each of ``items``, in order, on ``jobs`` of the runner's kept worker processes (in this
    process for one job or one item): work outside runs (the report's charts and loss analyses) shares the
    workers that `close_pools` stops when a command ends, so no process pool outlives the command."""
    if jobs <= 1 or len(items) <= 1:
        return [function(x) for x in items]
    return list(worker_pool(min(jobs, len(items))).map(function, items))


def warm_up(rules: Rules, strategy: str, compiled: bool) -> None:
    """A worker's first task: load the strategy and its compiled loop (`strategies.batch.prepare`, and
    `Strategy.ready`'s stages) while the main process readies the run, so that the first chunk plays at
    once. Its result is never read: a failure here shows again, and is reported, in the chunk that meets it."""
    from strategies.batch import prepare

    if (rules, strategy, compiled) in _WARMED:
        return
    loaded = _strategy(strategy)
    if compiled:
        prepare(rules, loaded)
    loaded.ready(rules)  # in the Python tier too: its deals' clocks must not run over a compile either
    _WARMED.add((rules, strategy, compiled))


def _warm(spec: RunSpec, compiled: bool, jobs: int) -> None:
    """Start the loky workers of a run now, each on `warm_up` (a kept, warm pool takes no time over it)."""
    executor = worker_pool(jobs)
    for _ in range(jobs):
        executor.submit(_warm_worker, spec.rules, spec.strategy, compiled)


def warm_study(specs: Sequence[RunSpec], store: str | os.PathLike[str] | Store, jobs: int | None = None) -> list[str]:
    """Start the loky workers of a study's runs on every compiled strategy they will play, one task a
    strategy (in the order of `warm_order`), all at once, and return the strategies handed out.

    Each run's own warm-up readies its strategy in every worker, so on a fresh machine (numba's cache
    empty) both workers would compile the same code side by side, run after run, while neither
    plays. Handed out one a worker, the strategies compile side by side instead, and a worker done
    with its share plays the first runs while the other compiles; every later run loads the code
    from numba's cache. The strategies others use (``uses``: the sampling player's completions
    are solved by the solver's search) go first and the ones that use them last, so that these find
    the shared code compiled (numba loads a called function from its cache when it compiles the
    caller). Runs the store already holds, and runs that play in this process, are left out; with
    fewer than two strategies left, or one job, nothing starts (and none is returned)."""
    from joblib import cpu_count

    n_jobs = jobs or cpu_count()
    if n_jobs < 2:
        return []
    todo: dict[str, tuple[RunSpec, Any]] = {}
    for spec in specs:
        if spec.strategy in todo:
            continue
        strategy = _check(spec, jobs, None, "loky")
        if _stored(store, run_labels(spec, strategy).key.hash, spec.spans):
            continue
        compiled = _plays_compiled(spec, strategy)
        if compiled and not plays_in_process(spec, strategy, compiled, jobs, None, "loky", None):
            todo[spec.strategy] = (spec, strategy)
    if len(todo) < 2:
        return []
    order = warm_order({name: strategy for name, (_, strategy) in todo.items()})
    first = next(iter(todo.values()))[0].rules
    executor = worker_pool(n_jobs)
    for name in order:
        executor.submit(_warm_worker, todo[name][0].rules if name in todo else first, name, True)
    return order


def warm_order(strategies: dict[str, Any]) -> list[str]:
    """The order in which `warm_study` hands out ``strategies`` (spec: loaded strategy, in the study's order):
    first a strategy others use (``uses``) that no run plays, by its name; then the ones others use, the
    rest, and last the ones that use others, each group in the study's order."""
    needed = {name for strategy in strategies.values() for name in strategy.uses}

    def group(spec: str) -> int:
        strategy = strategies[spec]
        return 0 if strategy.name in needed else 2 if strategy.uses else 1

    unplayed = sorted(needed - {strategy.name for strategy in strategies.values()})
    return unplayed + sorted(strategies, key=group)


def _warm_worker(rules: Rules, strategy: str, compiled: bool) -> None:
    """`warm_up` in a loky worker, which ignores Ctrl-C from its first task on, as `play_chunk` does."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warm_up(rules, strategy, compiled)


def close_pools() -> None:
    """Stop the kept workers: at exit, while the interpreter is whole (loky complains if it is torn down first),
    or when a caller that plays many different strategies wants fresh workers (the test suite, after each
    module: a worker keeps the compiled code of every strategy it has played, and loky retires one that grew
    300 MB with a warning about a memory leak). The workers are idle then (a run holds its pool while it plays),
    so they are killed rather than asked to exit: a worker whose plug-in left a thread running never would."""
    while _POOL:
        _POOL.popitem()[1].shutdown(wait=True, kill_workers=True)


def _stream(tasks: Iterable[ChunkTask], jobs: int, backend: str, client: Any,
            watchdog: _Watchdog | None = None) -> Iterator[ChunkResult]:
    """Run ``tasks`` (pulled lazily, as workers free up); yield results as they finish, in any order.

    loky: in worker processes, so that the main process stays free to
    take Ctrl-C and to watch for stuck chunks (``watchdog``); whatever ends this generator early
    (Ctrl-C, a failure, the caller stopping) kills the workers at once. ``here`` (`plays_in_process`):
    one at a time in a thread of this process (`_stream_here`).
    """
    if backend == "here":
        yield from _stream_here(tasks)
        return
    if backend == "dask":  # ``client``: the `studies.dask_backend.DaskCluster` of `connect_scheduler`
        yield from client.stream(tasks, jobs, play_chunk)
        return
    from concurrent.futures import FIRST_COMPLETED, Future, wait

    executor = worker_pool(jobs)
    source = iter(tasks)
    pending: dict[Future[ChunkResult], ChunkTask] = {}
    exhausted = idle_stamped = False
    try:
        while True:
            while not exhausted and len(pending) < 2 * jobs:
                if (task := next(source, None)) is None:
                    exhausted = True
                else:
                    pending[executor.submit(play_chunk, task)] = task
            if not pending:
                return
            done, _ = wait(pending, timeout=WATCH_INTERVAL, return_when=FIRST_COMPLETED)
            if done and exhausted and not idle_stamped:
                # A worker's idle clock (loky's timeout) starts when it finds no next chunk: the first
                # chunk to finish after the last was handed out may leave one idle while others still play.
                _POOL_IDLE_SINCE[jobs] = time.monotonic()
                idle_stamped = True
            for future in done:
                del pending[future]
                yield future.result()
            if watchdog is not None:
                watchdog.check()
    except BaseException:
        _POOL.pop(jobs, None)
        executor.shutdown(wait=True, kill_workers=True)
        raise


def plays_in_process(spec: RunSpec, strategy: Any, compiled: bool, jobs: int | None, chunk: int | None,
                     backend: str, deal_timeout: float | None) -> bool:
    """Whether ``spec`` plays in this process, with no worker pool: a loky run of a built-in strategy, with
    no deal time limit, that would have one worker (one job asked for, one core, or deals that fit in one
    smallest adaptive chunk (`CHUNK_BOUNDS`), e.g. ``solve`` of one deal). Such a pool would play the
    chunks one after another all the same; starting its worker and loading the strategy's compiled code
    there again only delays the answer (about a second on a 2-core machine).

    Why no watchdog is needed: there is one only with a deal time limit, and every built-in ends each
    deal on its own (the game loops stop after `sim.engine.NO_PROGRESS_LIMIT` moves without progress,
    the searches within their node and seconds budgets). Plug-ins, which may hang or crash their
    process, and runs with a limit go to workers. Ctrl-C still stops such a run at once (`_stream_here`).
    """
    if backend != "loky" or deal_timeout is not None:
        return False
    from joblib import cpu_count

    from strategies import is_builtin

    return is_builtin(strategy) and min(jobs or cpu_count(), _useful_jobs(_whole(spec, chunk), chunk, compiled)) == 1


def _whole(spec: RunSpec, chunk: int | None) -> list[tuple[int, int]]:
    """The deal ranges of ``spec`` as `run` plans them on an empty store (fixed chunks, or its ranges whole)."""
    return [c for a, b in spec.spans for c in plan_chunks(a, b, [], chunk)] if chunk else list(spec.spans)


def _stream_here(tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
    """Play ``tasks`` one by one in this process, each in a daemon thread that the main thread waits for
    in short steps, so that Ctrl-C interrupts the wait at once (the compiled loops release the GIL, and a
    Python-tier strategy never sees the interrupt, as in a worker). An abandoned chunk cannot land in the
    store afterwards: the run lets go of its key as it stops, and a chunk is written only while its run
    holds the key (`studies.store.Store.write_chunk`); the thread dies with the process."""
    for task in tasks:
        box: list[ChunkResult | BaseException] = []

        def play(task: ChunkTask = task, box: list[ChunkResult | BaseException] = box) -> None:
            try:
                box.append(play_chunk(task))
            except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
                box.append(exc)

        thread = threading.Thread(target=play, name=f"bakers-dozen chunk {task.first}", daemon=True)
        thread.start()
        while thread.is_alive():
            thread.join(WATCH_INTERVAL)
        if isinstance(box[0], BaseException):
            raise box[0]
        yield box[0]


class _Watchdog:
    """The main process's eye on chunks in play (loky runs with a deal time limit).

    Workers note their pid and the time they started playing (`_TaskStatus`); a chunk that plays
    past `stall_limit` has its worker killed and is remembered as stuck, for `_play_all` to split.
    """

    def __init__(self, tasks_dir: Path, run_id: str, deal_timeout: float, tier: str) -> None:
        self.dir, self.run_id, self.deal_timeout, self.tier = tasks_dir, run_id, deal_timeout, tier
        self.stuck: set[int] = set()

    def _notes(self) -> Iterator[tuple[Path, int, int, dict[str, Any]]]:
        for path in self.dir.glob(f"{self.run_id}_*.json"):
            try:
                first, last = (int(x) for x in path.stem.split("_")[1:3])
                with nofollow.open_read(self.dir, path) as fh:
                    note = json.loads(fh.read(4096))
                yield path, first, last, note
            except (OSError, ValueError):  # finished and removed meanwhile, or being replaced
                continue

    def check(self) -> None:
        """Kill the worker of every chunk that has played past its limit."""
        now = time.time()
        for _, first, last, note in self._notes():
            if note.get("compiling") or first in self.stuck:
                continue
            if now - float(note["since"]) > stall_limit(last - first + 1, self.deal_timeout):
                self.stuck.add(first)
                _kill(int(note["pid"]))

    def take_stuck(self) -> set[int]:
        """The first deals of the chunks killed as stuck since the last call; forget the rest.

        Every worker of the run is gone by now (loky stops them all when one dies); any that a
        note still names is killed, so that no late chunk of theirs lands while the chunks they
        played are replayed.
        """
        for path, _, _, note in self._notes():
            _kill(int(note["pid"]))
            path.unlink(missing_ok=True)
        stuck, self.stuck = self.stuck, set()
        return stuck

    def timeout_row(self, task: ChunkTask) -> pa.Table:
        """The row of a single deal whose strategy never returned: outcome unknown, termination timeout."""
        from studies import store as S

        limit = stall_limit(1, self.deal_timeout)
        text = (f"stopped after {limit:g} s: the strategy did not return within the {self.deal_timeout:g} s "
                "deal time limit, so its worker process was killed")
        one = np.ones(1, dtype=np.int64)
        return S.chunk_table(task.labels, self.tier, one * task.first, one * UNKNOWN, one * T_TIMEOUT,
                             one * len(task.rules.start_home_cards), one * 0, one * 0, one * int(limit * 1e6), False,
                             {0: text}, np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int16),
                             deal_timeout=self.deal_timeout)


def _kill(pid: int) -> None:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _split(first: int, last: int, pieces: int = 8) -> list[tuple[int, int]]:
    """first..last cut into at most ``pieces`` consecutive ranges of near-equal size."""
    n = last - first + 1
    size = -(-n // pieces)
    return [(a, min(a + size - 1, last)) for a in range(first, last + 1, size)]


class _Tally:
    """Running totals over chunks."""

    def __init__(self) -> None:
        self.outcomes = np.zeros(len(OUTCOMES), dtype=np.int64)
        self.home = 0
        self.deals = 0

    def add(self, outcomes: np.ndarray, home: int) -> None:
        self.outcomes += outcomes
        self.home += home
        self.deals += int(outcomes.sum())


def run(
    spec: RunSpec,
    store: str | os.PathLike[str] | Store = DEFAULT_STORE,
    *,
    jobs: int | None = None,
    chunk: int | None = None,
    backend: str = "loky",
    scheduler: str | None = None,
    force: bool = False,
    retries: int = 3,
    progress: Progress | None = None,
    command: Sequence[str] | None = None,
    deal_timeout: float | None = None,
    verify: bool | None = None,
) -> RunSummary:
    """Play ``spec``, reusing what the store already holds; return the summary.

    ``jobs``: worker processes (default: every core; with ``dask``, every thread of the
    cluster; at most `max_jobs` with loky, the cluster's threads with dask; never more than
    there are chunks to play; a run that would have one worker plays in this process when
    `plays_in_process` allows). ``chunk``: deals per task (default: adaptive, see `Chunker`).
    ``deal_timeout``: seconds a deal may take before it ends as ``unknown`` / ``timeout``
    (None: no limit). ``verify``: check rows with the referee before storing them (`verify_rows`;
    None: on for plug-in strategies, off for built-ins).
    Raises `RunnerError`/`StoreError`/`SchedulerError` (all `UserError`) for bad input and faults
    (`WorkersDiedError`, `StoreFullError`, `KeyBusyError`, `SchedulerLostError`), `strategies.StrategyError` (a
    `UserError`) for a plug-in whose compiled policy numba cannot compile, and `RunInterrupted`
    on Ctrl-C; anything else is a bug. Damaged files of the key are repaired and listed in
    the summary's ``damaged`` and ``corrupt``.
    """
    from strategies import is_builtin

    progress = progress or NullProgress()
    started = time.time()
    deal_timeout = check_deal_timeout(deal_timeout)
    strategy = _check(spec, jobs, chunk, backend)
    if backend == "dask":
        check_scheduler(scheduler)  # before the store is touched
    labels = run_labels(spec, strategy)
    key = labels.key.hash
    # A run whose deals the store holds plays nothing (unless a file fails its checks): it deals nothing and
    # loads no compiled code, which is most of the time of a fresh process that only reads its rows.
    compiled: bool | None = None
    here = False
    if force or not _stored(store, key, spec.spans):
        compiled, here = _ready(spec, strategy, jobs, chunk, backend, deal_timeout)
    elif spec.tier == "compiled":
        _plays_compiled(spec, strategy)  # refuses a strategy without a compiled tier, stored rows or not
    verify = not is_builtin(strategy) if verify is None else bool(verify)
    st = store if isinstance(store, Store) else Store.open(store, create=True)
    run_id = uuid.uuid4().hex[:12]
    hold = st.hold_key(key, run_id)  # refused while another run plays the key; waits out late commits of dead ones
    try:
        repaired = st.register(labels)
        damaged = [repaired] if repaired else []
        earlier, bad = st.read_manifests(key)
        for path, line in bad:  # the record of an earlier invocation: no rows are lost
            damaged.append(f"{line}; moved aside to {st.move_aside(path)}")
        st.clean_temp(key)
        if force:  # its chunks replace the stored ones all at once, when all are written
            st.begin_swap(key, run_id)
        tasks_dir = st.tasks_dir(key)
        for stale in tasks_dir.glob("*.json"):  # notes of workers of dead runs
            stale.unlink(missing_ok=True)
        client = connect_scheduler(scheduler) if backend == "dask" else None
        try:
            if backend == "dask":
                threads = client.threads()
                if jobs is not None:
                    check_whole("jobs", jobs, 1, threads)
                n_jobs = jobs or threads
            else:
                from joblib import cpu_count

                n_jobs = jobs or cpu_count()
            summary = RunSummary(
                variant=spec.rules.name, rules_fingerprint=spec.rules.fingerprint, strategy=labels.strategy_label,
                strategy_identity=strategy.identity, seed=spec.seed, source=spec.source, strategy_seed=spec.strategy_seed,
                first=spec.first, deals=spec.deals, wins=0, outcomes={}, cards_home_sum=0, played=0, reused=0,
                seconds=0.0, store=str(st.path), key=key, backend=backend, damaged=damaged,
            )
            wants = Wants(spec.rules, deal_timeout, spec.tier, verify)
            reused, todo = _Tally(), []
            for lo, hi in spec.spans:
                tally, covered = _reuse(st, key, lo, hi, force, summary, run_id, wants)
                reused.add(tally.outcomes, tally.home)
                todo += plan_chunks(lo, hi, covered, chunk) if chunk else missing_ranges(lo, hi, covered)
            if todo and compiled is None:  # a stored file failed its checks: its deals play after all
                compiled, here = _ready(spec, strategy, jobs, chunk, backend, deal_timeout)
            compiled = bool(compiled)
            n_jobs = summary.jobs = min(n_jobs, _useful_jobs(todo, chunk, compiled))
            summary.in_process = here
            manifest = _manifest(spec, labels, strategy, started, run_id, command, jobs=n_jobs, chunk=chunk or "adaptive",
                                 backend=backend, scheduler=scheduler, force=force, deal_timeout=deal_timeout,
                                 verify=verify, in_process=here)
            # An invocation that plays and repairs nothing, and repeats one the key's manifests record already,
            # adds no manifest: it would say nothing new, and make every later read of them longer.
            new = todo or damaged or not any(_same_invocation(m, manifest) for m in earlier)
            manifest_path = st.write_manifest(key, manifest) if new else None
            chunker = Chunker(todo, n_jobs, compiled, chunk)
            # Workers write their chunks themselves, through an absolute path: a reused worker process keeps the
            # working folder it started in. Dask workers may not see this disk: there the main process writes.
            writer = None
            if backend != "dask":
                writer = copy.copy(st)
                writer.path = st.path.absolute()
            watchdog = None
            if deal_timeout is not None and backend == "loky":
                st.tasks_dir(key, create=True)
                watchdog = _Watchdog(tasks_dir, run_id, deal_timeout, "compiled" if compiled else "python")

            def make_task(a: int, b: int) -> ChunkTask:
                return ChunkTask(spec.rules, spec.strategy, spec.seed, spec.source, spec.strategy_seed, spec.tier, a, b,
                                 labels, writer, run_id, deal_timeout, verify,
                                 watchdog.dir if watchdog is not None else None, os.getpid())

            played = _Tally()
            written: list[tuple[int, int]] = []
            progress.start(spec.deals, reused.deals, int(reused.outcomes[WON]), f"{spec.rules.name} / {labels.strategy_label}")
            for path in summary.corrupt:
                progress.note(f"[yellow]damaged chunk file moved aside and replayed: {path}")
            for line in summary.damaged:
                progress.note(f"[yellow]{escape(line)}")
            if summary.refused:
                more = f" (and {len(summary.refused) - 1:,} more chunk(s))" if len(summary.refused) > 1 else ""
                progress.note(f"[yellow]played again: {escape(summary.refused[0])}{more}")
            t0 = time.perf_counter()
            try:
                _play_all(chunker, make_task, st, key, n_jobs, "here" if here else backend, client, played, written,
                          progress, retries, summary, watchdog)
            except StoreError as exc:
                progress.stop()
                saved = _saved_spans(st, key, spec.spans)
                full = isinstance(exc, StoreFullError)
                todo_text = "free some space" if full else "fix that"
                kept = (f"the rows {st.path} held before this forced run are kept as they were; {todo_text} and run the "
                        "same command again" if force else f"{saved:,} of {spec.deals:,} deals are saved in {st.path}; "
                        f"{todo_text} and run the same command again to resume")
                raise (StoreFullError if full else StoreError)(f"{exc}; {kept}") from None
            except SchedulerLostError as exc:
                progress.stop()
                saved = _saved_spans(st, key, spec.spans)
                kept = (f"the rows {st.path} held before this forced run are kept as they were; run the same command "
                        "again" if force else f"{saved:,} of {spec.deals:,} deals are saved in {st.path}; run the same "
                        "command again to resume")
                raise SchedulerLostError(f"{exc}; {kept}") from None
            finally:
                progress.stop()
            summary.seconds = time.perf_counter() - t0
        finally:
            if client is not None:
                client.close()
        total = _Tally()
        total.add(reused.outcomes, reused.home)
        total.add(played.outcomes, played.home)
        if total.deals != spec.deals:  # a bug guard: never report a figure over the wrong deals
            raise AssertionError(f"internal error: the run covers {total.deals} deals, not {spec.deals}")
        if force:
            st.finish_swap(key, run_id)
        summary.outcomes = {name: int(c) for name, c in zip(OUTCOMES, total.outcomes, strict=True)}
        summary.wins = summary.outcomes["won"]
        summary.cards_home_sum = total.home
        summary.played, summary.reused = played.deals, reused.deals
        summary.chunks_played = len(written)
        if manifest_path is not None:
            manifest.update(finished=_now(), finished_unix=time.time(), summary=summary.to_json())
            st.write_manifest(key, manifest, manifest_path)
        return summary
    except KeyboardInterrupt:  # in the play loop, or while connecting, cleaning up or writing the manifest
        progress.stop()
        raise RunInterrupted(_saved_spans(st, key, spec.spans), spec.deals, st.path) from None
    finally:
        if force:  # stopped before its swap: the stored rows stay as they were
            st.drop_swap(key, run_id)
        st.clean_temp(key)  # half-written files of workers stopped part way
        hold.release()


def _useful_jobs(todo: Sequence[tuple[int, int]], chunk: int | None, compiled: bool) -> int:
    """The most chunks that can be in play at once for ``todo`` (at least 1): more workers would idle."""
    if chunk:
        return max(1, len(todo))
    low = CHUNK_BOUNDS[compiled][0]
    return max(1, sum(-(-(b - a + 1) // low) for a, b in todo))


def check_run(spec: RunSpec, jobs: int | None = None, chunk: int | None = None, backend: str = "loky") -> None:
    """Refuse ``spec`` as `run` would before it starts (a `UserError`): its options, its strategy, and the memory
    its strategy's settings ask for, for all the workers together. Nothing is played, stored or compiled."""
    _check(spec, jobs, chunk, backend)


def _check(spec: RunSpec, jobs: int | None, chunk: int | None, backend: str) -> Any:
    """Validate a run before anything starts; return its strategy (loaded, nothing compiled or dealt yet)."""
    from strategies import StrategyError, load_strategy
    from strategies.memory import check_memory

    check_whole("deals", spec.deals, 1, MAX_DEAL)
    if spec.ranges:
        _check_ranges(spec)
    if jobs is not None:
        check_whole(f"jobs ({JOBS_PER_CORE} per core here)" if backend == "loky" else "jobs", jobs, 1,
                    max_jobs() if backend == "loky" else INT64_MAX)
    if chunk is not None:
        check_whole("chunk", chunk, 1, MAX_CHUNK)
    check_whole("strategy_seed", spec.strategy_seed, 0, INT64_MAX)
    if backend not in BACKENDS:
        raise RunnerError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if spec.tier not in TIERS:
        raise RunnerError(f"unknown tier {spec.tier!r}; allowed: {', '.join(TIERS)}")
    check_deal_number(spec.first, spec.seed, spec.source)
    top = min(PYSOL_MAX_DEAL if spec.source == "pysol" else MAX_DEAL, INT64_MAX)
    if spec.last > top:
        raise RunnerError(f"deals {spec.first:,}..{spec.last:,} run past the last deal number a run can play: "
                          f"allowed 1..{top:,} for source {spec.source!r} (deal numbers are stored as 64-bit integers)")
    try:  # a plug-in's failures (an exception, sys.exit) are StrategyErrors; a built-in's are bugs and go on up
        strategy = load_strategy(spec.strategy)
    except StrategyError as exc:
        raise RunnerError(str(exc)) from None
    check_memory(strategy, spec.rules, _most_workers(spec, jobs, chunk, backend))
    return strategy


def _check_ranges(spec: RunSpec) -> None:
    """Refuse ranges that are not sorted and apart, or that disagree with the spec's ``first`` and ``deals``."""
    previous = spec.first - 1
    for a, b in spec.ranges:
        if not (isinstance(a, int) and isinstance(b, int) and previous < a <= b):
            raise RunnerError(f"deal ranges must be sorted and apart, each first <= last; got {list(spec.ranges)[:5]}")
        previous = b
    if spec.ranges[0][0] != spec.first or sum(b - a + 1 for a, b in spec.ranges) != spec.deals:
        raise RunnerError(f"deal ranges {list(spec.ranges)[:5]} do not start at deal {spec.first:,} and hold "
                          f"{spec.deals:,} deals; build the run with RunSpec.over")


def _most_workers(spec: RunSpec, jobs: int | None, chunk: int | None, backend: str) -> int:
    """The most processes of this machine that may hold ``spec``'s strategy at once: the loky workers the run can
    use (`_useful_jobs` of the whole range, at the Python tier's smaller chunks); with dask, this process alone
    (it readies the strategy; the cluster's workers are other machines)."""
    if backend == "dask":
        return 1
    from joblib import cpu_count

    return min(jobs or cpu_count(), _useful_jobs(_whole(spec, chunk), chunk, False))


def _plays_compiled(spec: RunSpec, strategy: Any) -> bool:
    """Whether ``strategy`` plays ``spec`` compiled (`RunnerError` for tier ``compiled`` without a compiled tier).

    It asks the strategy for its compiled policy, which may allocate its work memory (the solver's table)."""
    from strategies import StrategyError, compiled_policy

    try:
        compiled = spec.tier != "python" and compiled_policy(strategy, spec.rules) is not None
    except StrategyError as exc:
        raise RunnerError(str(exc)) from None
    if spec.tier == "compiled" and not compiled:
        raise RunnerError(f"strategy {strategy.name!r} has no compiled tier; use tier auto or python")
    return compiled


def _ready(spec: RunSpec, strategy: Any, jobs: int | None, chunk: int | None, backend: str,
           deal_timeout: float | None) -> tuple[bool, bool]:
    """Ready ``spec`` to play: check that its source deals its rules, find its tier, and start the loky
    workers on `warm_up` (or hand this process the strategy, `plays_in_process`). Returns whether it
    plays compiled and whether it plays in this process."""
    make_deal(spec.rules, spec.first, spec.seed, spec.source)  # the source can deal these rules
    compiled = _plays_compiled(spec, strategy)
    here = plays_in_process(spec, strategy, compiled, jobs, chunk, backend, deal_timeout)
    if here:  # the chunks play here: with the strategy just loaded (as a worker keeps its own between chunks)
        _keep_strategy(spec.strategy, strategy)
    elif backend == "loky":  # the same count as `run`'s unless the store holds part of the run already
        from joblib import cpu_count

        _warm(spec, compiled, min(jobs or cpu_count(), _useful_jobs(_whole(spec, chunk), chunk, compiled)))
    return compiled, here


def _stored(store: str | os.PathLike[str] | Store, key: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether chunk files of ``key`` cover every deal of ``spans``, by their names (a look, no side effect)."""
    st = store if isinstance(store, Store) else Store(store)
    try:
        return all(_saved(st, key, lo, hi) == hi - lo + 1 for lo, hi in spans)
    except StoreError:  # a folder that cannot be listed: `run` opens the store and says what is wrong
        return False


COUNT_COLUMNS = ACCEPT_COLUMNS
"""What reusing a stored chunk reads of it (`_counts`, and what `studies.reuse.Wants.refusal` checks): a quarter of
the time of reading every column, the moves of the wins above all (a verifying run reads them only of chunks that
hold wins); the file's metadata, name, row count and deal numbers are checked all the same."""


def _load_or_quarantine(st: Store, c: ChunkFile, summary: RunSummary, columns: Sequence[str] | None = None
                        ) -> pa.Table | None:
    """The rows of a stored chunk file (only ``columns``, when given), or None when it fails its checks (then it
    is moved aside and noted)."""
    try:
        return load_chunk_file(c, columns)
    except CorruptChunkError:
        summary.corrupt.append(str(st.quarantine(c)))
        return None


def _keep_outside(st: Store, table: pa.Table, c: ChunkFile, lo: int, hi: int, run_id: str) -> None:
    """Write the rows of chunk ``c`` (``table``, all of them) outside lo..hi as files of their own, so that the
    files a run replaces lie inside lo..hi and each of its commits can drop the ones it overlaps."""
    table = distrust(table)
    for a, b in ((c.first, lo - 1), (hi + 1, c.last)):
        if a <= b:  # a checked file holds deals c.first..c.last in order: row i is deal c.first + i
            st.write_chunk(table.slice(a - c.first, b - a + 1), c.key, a, b, run_id)


def _accepts(st: Store, c: ChunkFile, used: pa.Table, a: int, b: int, lo: int, hi: int, wants: Wants,
             summary: RunSummary, run_id: str) -> bool:
    """Whether the run reuses deals a..b of chunk ``c`` (``used``: their `COUNT_COLUMNS`), as `studies.reuse`
    says. A verifying run replays their wins not yet verified with the referee and marks them (rewriting the file); a
    chunk holding a win the referee rejects is moved aside, with a line in the summary's ``damaged``. A chunk
    not reused is played again (its rows outside lo..hi are kept, in files of their own)."""
    why = wants.refusal(used)
    if why is None and wants.verify and _counts(used)[0][WON]:
        loaded = _load_or_quarantine(st, c, summary)
        if loaded is None:
            return False
        whole = distrust(loaded)
        rejected = wants.rejected_win(whole.slice(a - c.first, b - a + 1))
        if rejected is None:
            if whole is not loaded or unverified_wins(whole.slice(a - c.first, b - a + 1)):
                st.write_chunk(mark_verified(whole, a - c.first, b - a + 1), c.key, c.first, c.last, run_id)
            return True
        moved = st.quarantine(c)
        _keep_outside(st, whole, c, lo, hi, run_id)
        summary.damaged.append(f"chunk file {c.path} holds a win the referee rejects ({rejected}); "
                               f"moved aside to {moved} and played again")
        return False
    if why is None:
        return True
    if c.first < lo or c.last > hi:
        whole = _load_or_quarantine(st, c, summary)
        if whole is None:
            return False
        _keep_outside(st, whole, c, lo, hi, run_id)
    summary.refused.append(f"deals {a:,}-{b:,}: the store holds {why}")
    return False


def _reuse(st: Store, key: str, lo: int, hi: int, force: bool, summary: RunSummary, run_id: str, wants: Wants
           ) -> tuple[_Tally, list[tuple[int, int]]]:
    """Check the stored chunks of ``key`` meeting lo..hi; return their totals and the deals they cover.

    With ``force`` nothing is reused, and a stored file that reaches outside lo..hi is cut to the
    deals outside (rewritten from its rows, staged with the run's chunks), so that the run's swap
    (`studies.store.Store.finish_swap`) can drop every file it overlaps and lose no deal. Otherwise a
    chunk is reused only when ``wants`` accepts its rows (`_accepts`), and files that overlap (left by
    older toolkits after a kill) are repaired where that is safe: one whose deals are all in earlier
    files is removed, one that overlaps only earlier files is cut to its new deals.
    """
    tally = _Tally()
    files = st.chunk_files(key, lo, hi)
    if force:
        for c in files:
            if lo <= c.first and c.last <= hi:
                continue
            table = _load_or_quarantine(st, c, summary)
            if table is not None:
                _keep_outside(st, table, c, lo, hi, run_id)
        return tally, []
    covered: list[tuple[int, int]] = []
    cursor, before = lo, 0  # before: the last deal of the files listed before this one
    for i, c in enumerate(files):
        if c.last <= before:  # every deal of it is in earlier files (an older toolkit's duplicate)
            c.path.unlink(missing_ok=True)
            continue
        b = min(c.last, hi)
        if b < cursor:
            continue
        table = _load_or_quarantine(st, c, summary, COUNT_COLUMNS)
        if table is None:
            continue
        # a checked file holds deals c.first..c.last in order (row i is deal c.first + i): cut it by slicing
        a = max(c.first, cursor)  # where it overlaps what earlier files cover, count only the new deals
        if a > c.first or b < c.last:
            table = table.slice(a - c.first, b - a + 1)
        if not _accepts(st, c, table, a, b, lo, hi, wants, summary, run_id):
            before, cursor = c.last, b + 1  # its deals a..b are played again
            continue
        if c.first <= before and all(n.first > c.last for n in files[i + 1:]):  # keep only its new deals
            whole = _load_or_quarantine(st, c, summary)
            if whole is None:
                continue
            st.write_chunk(distrust(whole).slice(before + 1 - c.first), key, before + 1, c.last, run_id)
        before = c.last
        counts, home = _counts(table)
        tally.add(counts, home)
        covered.append((a, b))
        cursor = b + 1
        summary.chunks_reused += 1
    return tally, covered


def _play_all(chunker: Chunker, make_task: Any, st: Store, key: str, jobs: int, backend: str, client: Any,
              played: _Tally, written: list[tuple[int, int]], progress: Progress, retries: int,
              summary: RunSummary, watchdog: _Watchdog | None = None) -> None:
    """Play every chunk the chunker hands out, writing chunks as they come; after a worker dies, replay what
    is missing; a chunk the watchdog killed as stuck is replayed in pieces, down to the one deal, stored as
    a timeout."""
    lost_errors = _worker_lost_errors()
    inflight: dict[int, ChunkTask] = {}
    lock = threading.Lock()

    def tasks() -> Iterator[ChunkTask]:
        while (r := chunker.next()) is not None:
            task = make_task(*r)
            with lock:
                inflight[task.first] = task
            yield task

    def finished(first: int, last: int, outcomes: np.ndarray, home: int) -> None:
        with lock:
            inflight.pop(first, None)
        written.append((first, last))
        played.add(outcomes, home)
        progress.advance(int(outcomes.sum()), int(outcomes[WON]))

    while chunker.remaining or inflight:
        stuck: set[int] = set()
        try:
            for res in _stream(tasks(), jobs, backend, client, watchdog):
                if res.table is not None:
                    st.write_chunk(res.table, key, res.first, res.last, inflight[res.first].run_id)
                    res.table = None
                chunker.observe(res.last - res.first + 1, res.seconds)
                finished(res.first, res.last, res.outcomes, res.cards_home)
        except lost_errors as exc:
            stuck = watchdog.take_stuck() if watchdog is not None else set()
            if not stuck:
                summary.retries += 1
                if summary.retries > retries:
                    raise WorkersDiedError(
                        f"worker processes died {summary.retries} times (last: {type(exc).__name__}: {exc}); "
                        "the finished chunks are saved: run the same command again to resume"
                    ) from None
                progress.note(f"[yellow]a worker died ({type(exc).__name__}); replaying its chunk")
        with lock:
            left = list(inflight.values())
        for task in left:  # handed out but not reported: saved by a worker before the failure, or to replay
            path = st.chunk_path(key, task.first, task.last, task.run_id)
            try:
                counts, home = _counts(load_chunk_file(ChunkFile(key, task.first, task.last, path)))
            except CorruptChunkError:
                with lock:
                    inflight.pop(task.first, None)
                if task.first not in stuck:
                    chunker.give_back([(task.first, task.last)])
                elif task.count > 1:
                    progress.note(f"[yellow]deals {task.first:,}-{task.last:,} did not finish in time; "
                                  "replaying them in pieces to find the stuck deal")
                    chunker.give_back(_split(task.first, task.last))
                else:
                    assert watchdog is not None
                    st.write_chunk(watchdog.timeout_row(task), key, task.first, task.last, task.run_id)
                    progress.note(f"[yellow]deal {task.first:,} never returned: stored as a timeout")
                    finished(task.first, task.last, np.bincount([UNKNOWN], minlength=len(OUTCOMES)),
                             len(task.rules.start_home_cards))
                continue
            finished(task.first, task.last, counts, home)


def _saved_spans(st: Store, key: str, spans: Sequence[tuple[int, int]]) -> int:
    """Deals of ``spans`` that chunk files of ``key`` hold (by their names)."""
    return sum(_saved(st, key, lo, hi) for lo, hi in spans)


def _saved(st: Store, key: str, lo: int, hi: int) -> int:
    """Deals of lo..hi that chunk files of ``key`` hold (by their names)."""
    cursor, saved = lo, 0
    for c in st.chunk_files(key, lo, hi):
        a, b = max(c.first, cursor), min(c.last, hi)
        if b >= a:
            saved += b - a + 1
            cursor = b + 1
    return saved


HOW_PLAYED = ("jobs", "chunk", "backend", "scheduler", "in_process")
"""Manifest parameters that say how a run was played, not what was asked: they differ between an invocation
that played its deals and the same one repeated, which only reads them back."""


def _same_invocation(earlier: dict[str, Any], manifest: dict[str, Any]) -> bool:
    """Whether ``earlier`` is a finished manifest of the invocation ``manifest`` records: the same command line,
    toolkit version and run parameters (but `HOW_PLAYED`). Reports find a tournament's or comparison's runs by
    the command line and deals their manifests share (`reports.groups.sessions`), so a repeat of a command
    is recorded once and another command over the same stored deals is recorded anew."""
    def what(m: dict[str, Any]) -> Any:
        params = m.get("parameters")
        params = {k: v for k, v in params.items() if k not in HOW_PLAYED} if isinstance(params, dict) else None
        return json.loads(json.dumps([m.get("command"), m.get("toolkit_version"), params], default=str))  # as stored

    return "finished" in earlier and what(earlier) == what(manifest)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _manifest(spec: RunSpec, labels: RunLabels, strategy: Any, started: float, run_id: str,
              command: Sequence[str] | None, **params: Any) -> dict[str, Any]:
    return {
        "toolkit": "bakers-dozen",
        "toolkit_version": __version__,
        "run_id": run_id,
        "key": labels.key.hash,
        "command": list(command) if command is not None else list(sys.argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(started)),
        "started_unix": started,
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "python": sys.version.split()[0],
        "parameters": {
            "variant": spec.rules.name,
            "rules": spec.rules.parameters(),
            "rules_fingerprint": spec.rules.fingerprint,
            "strategy_spec": spec.strategy,
            "strategy_identity": strategy.identity,
            "strategy_label": labels.strategy_label,
            "seed": spec.seed,
            "source": spec.source,
            "strategy_seed": spec.strategy_seed,
            "tier": spec.tier,
            "first": spec.first,
            "deals": spec.deals,
            "last": spec.last,
            **({"ranges": [list(r) for r in spec.ranges]} if spec.ranges else {}),
            **params,
        },
    }
