"""A run of many deals: its spec goes down to the store and the workers once, and its summary comes back.

A run is (variant, strategy, deal seed, deal ranges): `studies.spec.RunSpec`. `run` checks it
(`studies.spec.check_spec`), takes its key in the store, reuses the chunks stored already
(`studies.reuse.reuse_stored`), plans the rest (`studies.plan`), plays the chunks on a backend
(`studies.backends`: loky workers, a Dask cluster, or this process), each worker writing its chunk as one
Parquet file (`studies.chunks.play_chunk`), and records the invocation (`studies.manifests`). Results stream
back as chunks finish, in any order, and feed the progress bar and the summary; nothing per deal is kept in
the main process, so memory stays flat however many deals a run has.

Every row depends only on (rules, strategy identity, deal seed, source, strategy seed, deal number) and on
three settings that reuse checks (the tier a run names, its deal time limit, verification: `studies.reuse`),
so a run gives the same rows for any number of jobs, any chunk size and any backend.

Resume and reuse: a run plays only the deals its key's stored chunks do not cover; a killed run loses at
most the chunks that were in flight. ``force`` replays everything asked for into a staging folder and then
puts it in place of the older files in one step (`studies.store.Store.finish_swap`): a reader meanwhile sees
the old rows, never a hole. A run whose deals the store already holds (by its files' names) readies nothing
to play: it deals nothing, loads no compiled code and starts no worker, so a fresh process that only reads
its rows back answers in about a second.

Faults: a worker process that dies takes only its chunk with it; the runner replays the chunks that are
missing (up to ``retries`` times). A chunk whose strategy hangs is found by the watchdog
(`studies.watchdog`) and replayed in pieces down to the stuck deal. A full disk, an unwritable store or an
unreachable scheduler stop the run with a message saying what was saved and how to go on; Ctrl-C stops it
at once (`studies.spec.RunInterrupted`), whatever the strategy does.

One run per key: the run holds its key (`studies.store.Store.hold_key`) from before it lists the stored
chunks until it ends, and workers put a chunk in place only while their run holds it, so after a kill -9 of
the main process its orphaned workers write nothing and a resume never plays a deal twice.
"""

from __future__ import annotations

import copy
import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
from rich.markup import escape

from sim.deals import make_deal
from sim.engine import OUTCOMES, UNKNOWN, WON
from studies.backends import plays_in_process, stream, warm_workers, worker_lost_errors
from studies.chunks import ChunkTask, Tally, keep_strategy, outcome_counts
from studies.dask_backend import SchedulerError as SchedulerError
from studies.dask_backend import SchedulerLostError
from studies.dask_backend import check_address as check_scheduler
from studies.dask_backend import connect as connect_scheduler
from studies.files import CorruptChunkError, StoreError, StoreFullError
from studies.manifests import now, run_manifest, same_invocation
from studies.plan import Chunker, missing_ranges, plan_chunks, planned, split_range, useful_jobs
from studies.progress import NullProgress, Progress
from studies.reuse import Wants, reuse_stored, saved_spans, stored
from studies.rows import ChunkFile, load_chunk_file
from studies.spec import (
    DEFAULT_STORE,
    RunInterrupted,
    RunSpec,
    RunSummary,
    WorkersDiedError,
    check_deal_timeout,
    check_spec,
    check_whole,
    plays_compiled,
    run_labels,
)
from studies.store import Store
from studies.watchdog import Watchdog


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
    cluster; at most `studies.spec.max_jobs` with loky, the cluster's threads with dask; never more than
    there are chunks to play; a run that would have one worker plays in this process when
    `plays_in_process` allows). ``chunk``: deals per task (default: adaptive, see `Chunker`).
    ``deal_timeout``: seconds a deal may take before it ends as ``unknown`` / ``timeout``
    (None: no limit). ``verify``: check rows with the referee before storing them (`studies.chunks.verify_rows`;
    None: on for plug-in strategies, off for built-ins).
    Raises `studies.spec.RunnerError`/`StoreError`/`SchedulerError` (all `sim.errors.UserError`) for bad input and faults
    (`WorkersDiedError`, `StoreFullError`, `studies.files.KeyBusyError`, `SchedulerLostError`), `strategies.StrategyError` (a
    `sim.errors.UserError`) for a plug-in whose compiled policy numba cannot compile, and `RunInterrupted`
    on Ctrl-C; anything else is a bug. Damaged files of the key are repaired and listed in
    the summary's ``damaged`` and ``corrupt``.
    """
    from strategies import is_builtin

    progress = progress or NullProgress()
    started = time.time()
    deal_timeout = check_deal_timeout(deal_timeout)
    strategy = check_spec(spec, jobs, chunk, backend)
    if backend == "dask":
        check_scheduler(scheduler)  # before the store is touched
    labels = run_labels(spec, strategy)
    key = labels.key.hash
    # A run whose deals the store holds plays nothing (unless a file fails its checks): it deals nothing and
    # loads no compiled code, which is most of the time of a fresh process that only reads its rows.
    compiled: bool | None = None
    here = False
    if force or not stored(store, key, spec.spans):
        compiled, here = _ready(spec, strategy, jobs, chunk, backend, deal_timeout)
    elif spec.tier == "compiled":
        plays_compiled(spec, strategy)  # refuses a strategy without a compiled tier, stored rows or not
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
                seconds=0.0, store=str(st.path), key=key, backend=backend, damaged=damaged, code_digest=strategy.code_digest,
            )
            wants = Wants(spec.rules, deal_timeout, spec.tier, verify)
            reused, todo = Tally(), []
            for lo, hi in spec.spans:
                tally, covered = reuse_stored(st, key, lo, hi, force, summary, run_id, wants)
                reused.add(tally.outcomes, tally.home)
                todo += plan_chunks(lo, hi, covered, chunk) if chunk else missing_ranges(lo, hi, covered)
            if todo and compiled is None:  # a stored file failed its checks: its deals play after all
                compiled, here = _ready(spec, strategy, jobs, chunk, backend, deal_timeout)
            compiled = bool(compiled)
            n_jobs = summary.jobs = min(n_jobs, useful_jobs(todo, chunk, compiled))
            summary.in_process = here
            manifest = run_manifest(spec, labels, strategy, started, run_id, command, jobs=n_jobs, chunk=chunk or "adaptive",
                                 backend=backend, scheduler=scheduler, force=force, deal_timeout=deal_timeout,
                                 verify=verify, in_process=here)
            # An invocation that plays and repairs nothing, and repeats one the key's manifests record already,
            # adds no manifest: it would say nothing new, and make every later read of them longer.
            new = todo or damaged or not any(same_invocation(m, manifest) for m in earlier)
            manifest_path = st.write_manifest(key, manifest) if new else None
            chunker = Chunker(todo, n_jobs, compiled, chunk)
            # Workers write their chunks themselves, through an absolute path: a reused worker process keeps the
            # working folder it started in. Dask workers may not see this disk, and chunks played in this process
            # are written by its main thread while the next chunk plays (`studies.backends._stream_here`).
            writer = None
            if backend != "dask" and not here:
                writer = copy.copy(st)
                writer.path = st.path.absolute()
            watchdog = None
            if deal_timeout is not None and backend == "loky":
                st.tasks_dir(key, create=True)
                watchdog = Watchdog(tasks_dir, run_id, deal_timeout, "compiled" if compiled else "python")

            def make_task(a: int, b: int) -> ChunkTask:
                return ChunkTask(spec.rules, spec.strategy, spec.seed, spec.source, spec.strategy_seed, spec.tier, a, b,
                                 labels, writer, run_id, deal_timeout, verify,
                                 watchdog.dir if watchdog is not None else None, os.getpid())

            played = Tally()
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
                saved = saved_spans(st, key, spec.spans)
                full = isinstance(exc, StoreFullError)
                todo_text = "free some space" if full else "fix that"
                kept = (f"the rows {st.path} held before this forced run are kept as they were; {todo_text} and run the "
                        "same command again" if force else f"{saved:,} of {spec.deals:,} deals are saved in {st.path}; "
                        f"{todo_text} and run the same command again to resume")
                raise (StoreFullError if full else StoreError)(f"{exc}; {kept}") from None
            except SchedulerLostError as exc:
                progress.stop()
                saved = saved_spans(st, key, spec.spans)
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
        total = Tally()
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
            manifest.update(finished=now(), finished_unix=time.time(), summary=summary.to_json())
            st.write_manifest(key, manifest, manifest_path)
        return summary
    except KeyboardInterrupt:  # in the play loop, or while connecting, cleaning up or writing the manifest
        progress.stop()
        raise RunInterrupted(saved_spans(st, key, spec.spans), spec.deals, st.path) from None
    finally:
        if force:  # stopped before its swap: the stored rows stay as they were
            st.drop_swap(key, run_id)
        st.clean_temp(key)  # half-written files of workers stopped part way
        hold.release()


def _ready(spec: RunSpec, strategy: Any, jobs: int | None, chunk: int | None, backend: str,
           deal_timeout: float | None) -> tuple[bool, bool]:
    """Ready ``spec`` to play: check that its source deals its rules, find its tier, and start the loky
    workers on `studies.chunks.warm_up` (or hand this process the strategy, `plays_in_process`). Returns whether it
    plays compiled and whether it plays in this process."""
    make_deal(spec.rules, spec.first, spec.seed, spec.source)  # the source can deal these rules
    compiled = plays_compiled(spec, strategy)
    here = plays_in_process(spec, strategy, compiled, jobs, chunk, backend, deal_timeout)
    if here:  # the chunks play here: with the strategy just loaded (as a worker keeps its own between chunks)
        keep_strategy(spec.strategy, strategy)
    elif backend == "loky":  # the same count as `run`'s unless the store holds part of the run already
        from joblib import cpu_count

        warm_workers(spec, compiled, min(jobs or cpu_count(), useful_jobs(planned(spec.spans, chunk), chunk, compiled)))
    return compiled, here


def _play_all(chunker: Chunker, make_task: Any, st: Store, key: str, jobs: int, backend: str, client: Any,
              played: Tally, written: list[tuple[int, int]], progress: Progress, retries: int,
              summary: RunSummary, watchdog: Watchdog | None = None) -> None:
    """Play every chunk the chunker hands out, writing chunks as they come; after a worker dies, replay what
    is missing; a chunk the watchdog killed as stuck is replayed in pieces, down to the one deal, stored as
    a timeout."""
    lost_errors = worker_lost_errors()
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
            for res in stream(tasks(), jobs, backend, client, watchdog):
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
                counts, home = outcome_counts(load_chunk_file(ChunkFile(key, task.first, task.last, path)))
            except CorruptChunkError:
                with lock:
                    inflight.pop(task.first, None)
                if task.first not in stuck:
                    chunker.give_back([(task.first, task.last)])
                elif task.count > 1:
                    progress.note(f"[yellow]deals {task.first:,}-{task.last:,} did not finish in time; "
                                  "replaying them in pieces to find the stuck deal")
                    chunker.give_back(split_range(task.first, task.last))
                else:
                    assert watchdog is not None
                    st.write_chunk(watchdog.timeout_row(task), key, task.first, task.last, task.run_id)
                    progress.note(f"[yellow]deal {task.first:,} never returned: stored as a timeout")
                    finished(task.first, task.last, np.bincount([UNKNOWN], minlength=len(OUTCOMES)),
                             len(task.rules.start_home_cards))
                continue
            finished(task.first, task.last, counts, home)
