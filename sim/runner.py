"""Jobs: a run of many deals, split into chunks, played in parallel with joblib, stored as it goes.

A run is (variant, strategy, deal seed, deal range). It is split into chunks
of thousands of deals; each chunk is one task: a worker deals and plays it
(one compiled `sim.batch.play_batch` call, or `sim.play.play_python` deal by
deal for strategies without a compiled tier) and writes it to the store as one
Parquet file (`sim.store`). Results stream back as chunks finish, in any order,
and feed the progress bar and the summary; nothing per deal is kept in the
main process, so memory stays flat however many deals a run has.

Every row depends only on (rules, strategy identity, deal seed, source,
strategy seed, deal number), so a run gives the same rows for any number of
jobs, any chunk size and any backend (joblib's ``loky`` processes on this
machine, or a Dask cluster through joblib's ``dask`` backend).

Resume and reuse: before playing, the runner lists the chunk files already
stored under the run's key, checks them, and plays only the deals they do not
cover; a killed run loses at most the chunks that were in flight. Chunk files
that fail their checks are moved aside and replayed. ``force`` replays
everything asked for and then drops the older files it replaced.

Faults: a worker process that dies takes only its chunk with it; the runner
replays the chunks that are missing (up to ``retries`` times). A full disk,
an unwritable store or an unreachable scheduler stop the run with a message
saying what was saved and how to go on.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sim import __version__
from sim.deals import DealError, check_deal_number, make_deal
from sim.engine import ERROR, OUTCOMES, WON
from sim.errors import UserError
from sim.progress import NullProgress, Progress
from sim.rules import Rules
from sim.store import ChunkFile, CorruptChunkError, RunKey, RunLabels, Store, StoreError, StoreFullError, load_chunk_file

BACKENDS = ("loky", "dask")
TIERS = ("auto", "compiled", "python")
DEFAULT_STORE = "results"
SCHEDULER_TIMEOUT = 5.0


class RunnerError(UserError):
    """A run that cannot be started or completed as asked; the message says why and what to do."""


class SchedulerError(RunnerError):
    """The Dask scheduler cannot be reached, or has no workers."""


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``saved`` of ``total`` deals are in the store and the same command resumes."""

    def __init__(self, saved: int, total: int, store: Path) -> None:
        super().__init__(f"interrupted: {saved:,} of {total:,} deals are saved in {store}")
        self.saved, self.total, self.store = saved, total, store


# --- what to run ------------------------------------------------------------------------

@dataclass(frozen=True)
class RunSpec:
    """One run: which rules, which strategy, which deals."""

    rules: Rules
    strategy: str
    deals: int
    first: int = 1
    seed: int = 0
    source: str = "default"
    strategy_seed: int = 0
    tier: str = "auto"

    @property
    def last(self) -> int:
        return self.first + self.deals - 1


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
    retries: int = 0
    jobs: int = 1
    backend: str = "loky"

    @property
    def win_rate(self) -> float:
        return self.wins / self.deals

    @property
    def interval(self) -> tuple[float, float]:
        from reports.stats import win_rate_interval

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


def _strategy(spec: str) -> Any:
    """The strategy object for ``spec``, made once per worker process."""
    s = _STRATEGIES.get(spec)
    if s is None:
        from strategies import load_strategy

        s = _STRATEGIES[spec] = load_strategy(spec)
    return s


def chunk_table(task: ChunkTask) -> pa.Table:
    """Deal and play deals first..last of ``task``; return the chunk's rows (`sim.store.SCHEMA`)."""
    from sim import store as S

    strategy = _strategy(task.strategy)
    numbers = np.arange(task.first, task.last + 1, dtype=np.int64)
    policy = None if task.tier == "python" else strategy.compiled(task.rules)
    if policy is not None:
        from sim.batch import play_batch

        start = time.perf_counter()
        r = play_batch(task.rules, strategy, numbers, task.seed, task.strategy_seed, task.source)
        wall_us = int((time.perf_counter() - start) * 1e6)
        averaged = not bool(r.micros.any())
        micros = np.full(len(numbers), wall_us // max(len(numbers), 1), dtype=np.int64) if averaged else r.micros
        bad = np.flatnonzero(r.outcome == ERROR)
        errors = {int(i): f"{strategy.name} (compiled) chose a move index outside the legal moves" for i in bad}
        return S.chunk_table(task.labels, "compiled", numbers, r.outcome, r.cards_home, r.moves, r.nodes, micros,
                             averaged, errors, r.win_offsets, r.win_moves)
    return _python_chunk(task, strategy, numbers)


def _python_chunk(task: ChunkTask, strategy: Any, numbers: np.ndarray) -> pa.Table:
    from sim import store as S
    from sim.game import Game
    from sim.play import play_python
    from strategies.base import DealInfo

    n = len(numbers)
    outcome = np.zeros(n, dtype=np.int8)
    home = np.zeros(n, dtype=np.int16)
    moves = np.zeros(n, dtype=np.int32)
    nodes = np.zeros(n, dtype=np.int64)
    micros = np.zeros(n, dtype=np.int64)
    errors: dict[int, str] = {}
    offsets = np.zeros(n + 1, dtype=np.int64)
    codes: list[int] = []
    for i, number in enumerate(numbers.tolist()):
        game = Game.from_deal(task.rules, number, task.seed, task.source)
        rec = play_python(strategy, game, DealInfo(task.rules, number, task.seed, task.source), task.strategy_seed)
        code = OUTCOMES.index(rec.outcome)
        outcome[i], home[i], moves[i], nodes[i] = code, rec.cards_home, len(rec.moves), rec.nodes
        micros[i] = int(rec.seconds * 1e6)
        if rec.error:
            errors[i] = rec.error
        if code == WON:
            codes.extend(m.code for m in rec.moves)
        offsets[i + 1] = len(codes)
    return S.chunk_table(task.labels, "python", numbers, outcome, home, moves, nodes, micros, False, errors, offsets,
                         np.asarray(codes, dtype=np.int16))


def _counts(table: pa.Table) -> tuple[np.ndarray, int]:
    """Outcome counts (lost, won, unknown, error) and the sum of cards home of a chunk's rows."""
    outcome = table.column("outcome").combine_chunks()
    codes = outcome.indices.to_numpy(zero_copy_only=False) if pa.types.is_dictionary(outcome.type) else None
    if codes is None or list(outcome.dictionary.to_pylist()) != list(OUTCOMES):
        codes = np.array([OUTCOMES.index(x) for x in outcome.to_pylist()], dtype=np.int64)
    counts = np.bincount(codes.astype(np.int64), minlength=len(OUTCOMES))
    return counts, int(table.column("cards_home").to_numpy().astype(np.int64).sum())


def play_chunk(task: ChunkTask) -> ChunkResult:
    """A worker's task: play one chunk, write it when the task carries a store, return its counts."""
    start = time.perf_counter()
    table = chunk_table(task)
    counts, home = _counts(table)
    if task.store is not None:
        task.store.write_chunk(table, task.labels.key.hash, task.first, task.last, task.run_id)
        table = None
    return ChunkResult(task.first, task.last, counts, home, time.perf_counter() - start, table)


# --- the main side -------------------------------------------------------------------

def run_labels(spec: RunSpec, strategy: Any) -> RunLabels:
    """The key and label columns of ``spec`` played by the (loaded) ``strategy``."""
    key = RunKey(spec.rules.fingerprint, strategy.identity, spec.seed, spec.source, spec.strategy_seed)
    return RunLabels(
        key=key,
        variant=spec.rules.name,
        strategy=strategy.name,
        strategy_version=str(strategy.version),
        strategy_params=json.dumps(strategy.params, sort_keys=True, default=str),
        strategy_label=strategy.label,
        clairvoyant=bool(strategy.peeks),
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


def connect_scheduler(address: str | None, timeout: float = SCHEDULER_TIMEOUT) -> Any:
    """A `dask.distributed.Client` for the scheduler at ``address``, or a `SchedulerError` within ``timeout`` s."""
    if not address:
        raise SchedulerError("--backend dask needs --scheduler tcp://HOST:PORT (the address `dask scheduler` prints)")
    try:
        from dask.distributed import Client
    except ImportError:  # pragma: no cover - dask is a dependency
        raise SchedulerError("--backend dask needs dask.distributed: pip install 'dask[distributed]'") from None
    try:
        return Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise SchedulerError(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({exc}); "
            "check the address (tcp://HOST:PORT, as `dask scheduler` prints it) and that the scheduler is running"
        ) from None


def _cluster_threads(client: Any, address: str | None) -> int:
    """Worker threads of the cluster (waiting a little for a first worker to join)."""
    threads = sum(client.nthreads().values())
    if threads == 0:
        try:
            client.wait_for_workers(1, timeout=SCHEDULER_TIMEOUT)
        except (TimeoutError, OSError):
            raise SchedulerError(
                f"the Dask scheduler at {address} has no workers; start some with `dask worker {address}`"
            ) from None
        threads = sum(client.nthreads().values())
    return max(threads, 1)


def _stream(tasks: Iterable[ChunkTask], jobs: int, backend: str, client: Any) -> Iterator[ChunkResult]:
    """Run ``tasks`` (pulled lazily, as workers free up) with joblib; yield results as they finish, in any order."""
    from joblib import Parallel, delayed, parallel_config

    if backend == "dask":
        with parallel_config(backend="dask", client=client, wait_for_workers_timeout=SCHEDULER_TIMEOUT * 2):
            yield from Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")(
                delayed(play_chunk)(t) for t in tasks
            )
        return
    with parallel_config(backend="loky", inner_max_num_threads=1):
        yield from Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1, pre_dispatch="2*n_jobs")(
            delayed(play_chunk)(t) for t in tasks
        )


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
) -> RunSummary:
    """Play ``spec``, reusing what the store already holds; return the summary.

    ``jobs``: worker processes (default: every core; with ``dask``, every
    thread of the cluster). ``chunk``: deals per task (default: adaptive, see `Chunker`).
    Raises `RunnerError`/`StoreError` (both ``ValueError``) for bad input and
    faults, and `RunInterrupted` on Ctrl-C.
    """
    progress = progress or NullProgress()
    started = time.time()
    strategy, compiled = _check(spec, jobs, chunk, backend)
    st = store if isinstance(store, Store) else Store.open(store, create=True)
    labels = run_labels(spec, strategy)
    key = labels.key.hash
    st.register(labels)
    st.clean_temp(key)
    try:
        client = connect_scheduler(scheduler) if backend == "dask" else None
        try:
            if backend == "dask":
                n_jobs = jobs or _cluster_threads(client, scheduler)
            else:
                from joblib import cpu_count

                n_jobs = jobs or cpu_count()
            run_id = uuid.uuid4().hex[:12]
            manifest = _manifest(spec, labels, strategy, started, run_id, command,
                                 jobs=n_jobs, chunk=chunk or "adaptive", backend=backend, scheduler=scheduler, force=force)
            manifest_path = st.write_manifest(key, manifest)
            summary = RunSummary(
                variant=spec.rules.name, rules_fingerprint=spec.rules.fingerprint, strategy=strategy.label,
                strategy_identity=strategy.identity, seed=spec.seed, source=spec.source, strategy_seed=spec.strategy_seed,
                first=spec.first, deals=spec.deals, wins=0, outcomes={}, cards_home_sum=0, played=0, reused=0,
                seconds=0.0, store=str(st.path), key=key, jobs=n_jobs, backend=backend,
            )
            reused, covered, old = _reuse(st, key, spec.first, spec.last, force, summary)
            todo = plan_chunks(spec.first, spec.last, covered, chunk) if chunk else missing_ranges(spec.first, spec.last, covered)
            chunker = Chunker(todo, n_jobs, compiled, chunk)
            writer = st if backend != "dask" else None  # dask workers may not see this disk: the main process writes

            def make_task(a: int, b: int) -> ChunkTask:
                return ChunkTask(spec.rules, spec.strategy, spec.seed, spec.source, spec.strategy_seed, spec.tier, a, b,
                                 labels, writer, run_id)

            played = _Tally()
            written: list[tuple[int, int]] = []
            progress.start(spec.deals, reused.deals, int(reused.outcomes[WON]), f"{spec.rules.name} / {strategy.label}")
            for path in summary.corrupt:
                progress.note(f"[yellow]damaged chunk file moved aside and replayed: {path}")
            t0 = time.perf_counter()
            try:
                _play_all(chunker, make_task, st, key, n_jobs, backend, client, played, written, progress, retries, summary)
            except StoreError as exc:
                progress.stop()
                saved = _saved(st, key, spec.first, spec.last)
                full = isinstance(exc, StoreFullError)
                todo = "free some space" if full else "fix that"
                raise (StoreFullError if full else StoreError)(
                    f"{exc}; {saved:,} of {spec.deals:,} deals are saved in {st.path}; "
                    f"{todo} and run the same command again to resume") from None
            finally:
                progress.stop()
            summary.seconds = time.perf_counter() - t0
        finally:
            if client is not None:
                client.close()
        # Writers of an earlier, killed run may have still been alive (and writing) when this one started.
        st.clean_temp(key)
        if force:
            new = {st.chunk_path(key, a, b) for a, b in written}
            for c in old:
                if spec.first <= c.first and c.last <= spec.last and c.path not in new:
                    c.path.unlink(missing_ok=True)
        total = _Tally()
        total.add(reused.outcomes, reused.home)
        total.add(played.outcomes, played.home)
        if total.deals != spec.deals:  # pragma: no cover - a bug guard: never report a figure over the wrong deals
            raise RunnerError(f"internal error: the run covers {total.deals} deals, not {spec.deals}")
        summary.outcomes = {name: int(c) for name, c in zip(OUTCOMES, total.outcomes, strict=True)}
        summary.wins = summary.outcomes["won"]
        summary.cards_home_sum = total.home
        summary.played, summary.reused = played.deals, reused.deals
        summary.chunks_played = len(written)
        manifest.update(finished=_now(), finished_unix=time.time(), summary=summary.to_json())
        st.write_manifest(key, manifest, manifest_path)
        return summary
    except KeyboardInterrupt:  # in the play loop, or while connecting, cleaning up or writing the manifest
        progress.stop()
        raise RunInterrupted(_saved(st, key, spec.first, spec.last), spec.deals, st.path) from None


def _check(spec: RunSpec, jobs: int | None, chunk: int | None, backend: str) -> tuple[Any, bool]:
    """Validate a run before anything starts; return the strategy and whether it plays compiled."""
    from strategies import StrategyError, load_strategy

    if not isinstance(spec.deals, int | np.integer) or isinstance(spec.deals, bool) or spec.deals <= 0:
        raise RunnerError(f"deals must be 1 or more; got {spec.deals!r}")
    if jobs is not None and jobs < 1:
        raise RunnerError(f"jobs must be 1 or more; got {jobs!r}")
    if chunk is not None and chunk < 1:
        raise RunnerError(f"chunk must be 1 or more deals; got {chunk!r}")
    if backend not in BACKENDS:
        raise RunnerError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if spec.tier not in TIERS:
        raise RunnerError(f"unknown tier {spec.tier!r}; allowed: {', '.join(TIERS)}")
    check_deal_number(spec.first, spec.seed, spec.source)
    try:
        check_deal_number(spec.last, spec.seed, spec.source)
    except DealError as exc:
        raise RunnerError(f"deals {spec.first}..{spec.last} run past the last deal number: {exc}") from None
    make_deal(spec.rules, spec.first, spec.seed, spec.source)  # the source can deal these rules
    try:
        strategy = load_strategy(spec.strategy)
    except StrategyError as exc:
        raise RunnerError(str(exc)) from None
    compiled = spec.tier != "python" and strategy.compiled(spec.rules) is not None
    if spec.tier == "compiled" and not compiled:
        raise RunnerError(f"strategy {strategy.name!r} has no compiled tier; use tier auto or python")
    return strategy, compiled


def _reuse(st: Store, key: str, lo: int, hi: int, force: bool, summary: RunSummary
           ) -> tuple[_Tally, list[tuple[int, int]], list[ChunkFile]]:
    """Check the stored chunks of ``key`` meeting lo..hi; return their totals, the deals they cover, and the files."""
    tally = _Tally()
    files = st.chunk_files(key, lo, hi)
    if force:
        return tally, [], files
    covered: list[tuple[int, int]] = []
    cursor = lo
    for c in files:
        b = min(c.last, hi)
        if b < cursor:
            continue
        try:
            table = load_chunk_file(c)
        except CorruptChunkError:
            summary.corrupt.append(str(st.quarantine(c)))
            continue
        a = max(c.first, cursor)  # where it overlaps what earlier files cover, count only the new deals
        if a > c.first or b < c.last:
            d = table.column("deal").to_numpy()
            table = table.filter(pa.array((d >= a) & (d <= b)))
        counts, home = _counts(table)
        tally.add(counts, home)
        covered.append((a, b))
        cursor = b + 1
        summary.chunks_reused += 1
    return tally, covered, files


def _play_all(chunker: Chunker, make_task: Any, st: Store, key: str, jobs: int, backend: str, client: Any,
              played: _Tally, written: list[tuple[int, int]], progress: Progress, retries: int,
              summary: RunSummary) -> None:
    """Play every chunk the chunker hands out, writing chunks as they come; after a worker dies, replay what is missing."""
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
        try:
            for res in _stream(tasks(), jobs, backend, client):
                if res.table is not None:
                    st.write_chunk(res.table, key, res.first, res.last, inflight[res.first].run_id)
                    res.table = None
                chunker.observe(res.last - res.first + 1, res.seconds)
                finished(res.first, res.last, res.outcomes, res.cards_home)
        except lost_errors as exc:
            summary.retries += 1
            if summary.retries > retries:
                raise RunnerError(
                    f"worker processes died {summary.retries} times (last: {type(exc).__name__}: {exc}); "
                    "the finished chunks are saved: run the same command again to resume"
                ) from None
            progress.note(f"[yellow]a worker died ({type(exc).__name__}); replaying its chunk")
        with lock:
            left = list(inflight.values())
        for task in left:  # handed out but not reported: saved by a worker before the failure, or to replay
            path = st.chunk_path(key, task.first, task.last)
            try:
                counts, home = _counts(load_chunk_file(ChunkFile(key, task.first, task.last, path)))
            except CorruptChunkError:
                with lock:
                    inflight.pop(task.first, None)
                chunker.give_back([(task.first, task.last)])
                continue
            finished(task.first, task.last, counts, home)


def _saved(st: Store, key: str, lo: int, hi: int) -> int:
    """Deals of lo..hi that chunk files of ``key`` hold (by their names)."""
    cursor, saved = lo, 0
    for c in st.chunk_files(key, lo, hi):
        a, b = max(c.first, cursor), min(c.last, hi)
        if b >= a:
            saved += b - a + 1
            cursor = b + 1
    return saved


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
            "strategy_label": strategy.label,
            "seed": spec.seed,
            "source": spec.source,
            "strategy_seed": spec.strategy_seed,
            "tier": spec.tier,
            "first": spec.first,
            "deals": spec.deals,
            "last": spec.last,
            **params,
        },
    }
