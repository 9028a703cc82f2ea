"""Where chunks play: loky processes on this machine, a Dask cluster, or a thread of this process.

loky (`stream`): the runner's own process pool (`worker_pool`), kept after a clean run so that the next run
of this process finds its workers warm (strategy loaded, numba compiled), and replaced once it has idled
long enough for loky to start timing its workers out. A run starts its workers on `studies.chunks.warm_up`
while the main process readies it; a study hands out its compiled strategies one a worker first
(`warm_study`). Whatever ends a run early (Ctrl-C, a failure) kills the workers at once; a worker that dies
raises one of `worker_lost_errors`, and the runner replays its chunk. Work outside runs (a report's charts)
shares the same workers (`map_in_workers`), which `close_pools` stops when a command ends.

Dask: `studies.dask_backend` streams the chunks to the cluster's workers.

Here (`plays_in_process`): a run that would have one worker, of a built-in strategy with no deal time
limit (``--jobs 1``, or ``solve`` of one deal), plays its chunks in a thread of the main process, which
answers sooner than starting a worker and loading the compiled code there; Ctrl-C still stops it at once.
"""

from __future__ import annotations

import atexit
import math
import os
import signal
import sys
import threading
import time
import warnings
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any

from sim.rules import Rules
from studies.chunks import ChunkResult, ChunkTask, play_chunk, warm_up
from studies.parent_watch import exit_with_parent
from studies.plan import planned, useful_jobs
from studies.reuse import stored
from studies.spec import RunSpec, check_spec, plays_compiled, run_labels
from studies.store import Store
from studies.watchdog import WATCH_INTERVAL, Watchdog


def worker_lost_errors() -> tuple[type[BaseException], ...]:
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
memory leak": the same warning as for a worker grown by 300 MB, which `studies.chunks.loaded_strategy` prevents). A run stamps
it when its first chunk finishes after the last was handed out (not when the last chunk finishes: a worker
idle since then would time out sooner than the stamp says); a hand-out stamps it too, so that a pool warmed
for a run that then played nothing ages like any other."""
TAKE_UP_SECONDS = 1.0
"""How long a run stopped early waits, before killing its workers, for loky's manager thread to take up the
chunks just handed out (`_kill_workers`); it takes one up within milliseconds unless the pool's call queue is full."""
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
    _POOL_IDLE_SINCE[jobs] = time.monotonic()  # `stream` stamps it again when its workers may start idling
    if jobs not in _POOL:
        if not _POOL:
            atexit.register(close_pools)
        _POOL[jobs] = ProcessPoolExecutor(max_workers=jobs, timeout=LOKY_IDLE_SECONDS,
                                          initializer=exit_with_parent, initargs=(os.getpid(),))
    return _POOL[jobs]


def map_in_workers(function: Any, items: Sequence[Any], jobs: int) -> list[Any]:
    """``function`` of each of ``items``, in order, on ``jobs`` of the runner's kept worker processes (in this
    process for one job or one item): work outside runs (the report's charts and loss analyses) shares the
    workers that `close_pools` stops when a command ends, so no process pool outlives the command.

    When one item fails, the items not started are dropped and those in play are waited for before the
    error is raised, so that no worker is still writing (a chart into a report's staged folder) while the
    caller cleans up after the error."""
    from concurrent.futures import FIRST_EXCEPTION, wait

    if jobs <= 1 or len(items) <= 1:
        return [function(x) for x in items]
    executor = worker_pool(min(jobs, len(items)))
    futures = [executor.submit(function, x) for x in items]
    done, _ = wait(futures, return_when=FIRST_EXCEPTION)
    if any(f.exception() is not None for f in done):
        for f in futures:
            f.cancel()
        wait(futures)
    return [f.result() for f in futures]


def warm_workers(spec: RunSpec, compiled: bool, jobs: int) -> None:
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
        strategy = check_spec(spec, jobs, None, "loky")
        if stored(store, run_labels(spec, strategy).key.hash, spec.spans):
            continue
        compiled = plays_compiled(spec, strategy)
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


def stream(tasks: Iterable[ChunkTask], jobs: int, backend: str, client: Any,
            watchdog: Watchdog | None = None) -> Iterator[ChunkResult]:
    """Run ``tasks`` (pulled lazily, as workers free up); yield results as they finish, in any order.

    loky: in worker processes, so that the main process stays free to
    take Ctrl-C and to watch for stuck chunks (``watchdog``); whatever ends this generator early
    (Ctrl-C, a failure, the caller stopping) kills the workers at once. ``here`` (`plays_in_process`):
    one at a time in a thread of this process (`_stream_here`).
    """
    if backend == "here":
        yield from _stream_here(tasks)
        return
    if backend == "dask":  # ``client``: the `studies.dask_backend.DaskCluster` of `studies.dask_backend.connect`
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
        _kill_workers(executor, pending.keys())
        raise


def _kill_workers(executor: Any, handed: Collection[Any]) -> None:
    """Kill ``executor``'s workers at once, after loky's manager thread has taken up the tasks (futures)
    ``handed`` to it, so that the thread ends cleanly rather than with a traceback.

    loky's shutdown with ``kill_workers`` (loky 3.6, in joblib 1.6) drops the work items it holds but not
    the queued ids of those its manager thread has not yet moved towards the workers; meeting such an id
    next, the thread dies with a ``KeyError`` whose traceback lands on stderr beside the one-line
    "interrupted" message (Ctrl-C just after the runner handed out a chunk, on a loaded machine where the
    thread had not run since). A task is taken up once it runs or is done; the thread takes them in the
    order they came, so the warm-ups handed out before are covered too. A task not taken up within
    `TAKE_UP_SECONDS` waits behind a full call queue (workers still starting or warming), and the thread
    stops after the kill without reading its id. A second Ctrl-C while waiting still kills the workers."""
    deadline = time.monotonic() + TAKE_UP_SECONDS
    try:
        while time.monotonic() < deadline and not all(f.running() or f.done() for f in handed):
            time.sleep(0.002)
    finally:
        executor.shutdown(wait=True, kill_workers=True)


def plays_in_process(spec: RunSpec, strategy: Any, compiled: bool, jobs: int | None, chunk: int | None,
                     backend: str, deal_timeout: float | None) -> bool:
    """Whether ``spec`` plays in this process, with no worker pool: a loky run of a built-in strategy, with
    no deal time limit, that would have one worker (one job asked for, one core, or deals that fit in one
    smallest adaptive chunk (`studies.plan.CHUNK_BOUNDS`), e.g. ``solve`` of one deal). Such a pool would play the
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

    return is_builtin(strategy) and min(jobs or cpu_count(), useful_jobs(planned(spec.spans, chunk), chunk, compiled)) == 1


def _stream_here(tasks: Iterable[ChunkTask]) -> Iterator[ChunkResult]:
    """Play ``tasks`` one by one in this process, each in a daemon thread that the main thread waits for
    in short steps, so that Ctrl-C interrupts the wait at once (the compiled loops release the GIL, and a
    Python-tier strategy never sees the interrupt, as in a worker).

    The next chunk starts playing before a finished one is handed on, so that the caller writes a chunk
    (Parquet, fsyncs; tasks here carry no store) while the next one plays: one chunk plays at a time all
    the same. An abandoned chunk cannot land in the store afterwards: its thread writes nothing, the
    main thread writes only while its run holds the key (`studies.store.Store.write_chunk`), and the
    thread dies with the process."""
    source = iter(tasks)
    playing = _start_here(next(source, None))
    while playing is not None:
        thread, box = playing
        while thread.is_alive():
            thread.join(WATCH_INTERVAL)
        if isinstance(box[0], BaseException):
            raise box[0]
        playing = _start_here(next(source, None))
        yield box[0]


def _start_here(task: ChunkTask | None) -> tuple[threading.Thread, list[ChunkResult | BaseException]] | None:
    """Start playing ``task`` in a daemon thread of this process; its result (or what it raised) lands in the box."""
    if task is None:
        return None
    box: list[ChunkResult | BaseException] = []

    def play() -> None:
        try:
            box.append(play_chunk(task))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which raises it
            box.append(exc)

    thread = threading.Thread(target=play, name=f"bakers-dozen chunk {task.first}", daemon=True)
    thread.start()
    return thread, box
