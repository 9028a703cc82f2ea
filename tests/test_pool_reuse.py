"""The runner's kept worker pool is reused while warm and replaced once it has idled long enough for loky to
start timing its workers out (reusing it then races their exit and prints loky's "memory leak" warning)."""

from __future__ import annotations

import time

import pytest

from studies import backends, chunks


class FakePool:
    """Stands for a kept loky pool: records being shut down."""

    def __init__(self) -> None:
        self.shut = False

    def shutdown(self, wait: bool = True, kill_workers: bool = False) -> None:
        self.shut = True


@pytest.fixture
def kept(monkeypatch):
    pool = FakePool()
    monkeypatch.setattr(backends, "_POOL", {1: pool})
    monkeypatch.setattr(backends, "_POOL_IDLE_SINCE", {})
    yield pool
    for p in backends._POOL.values():
        p.shutdown(wait=True)


def test_a_recently_idle_pool_is_reused_and_its_idle_clock_restarts(kept):
    backends._POOL_IDLE_SINCE[1] = time.monotonic() - 1
    before = time.monotonic()
    assert backends.worker_pool(1) is kept and not kept.shut
    assert before <= backends._POOL_IDLE_SINCE[1] <= time.monotonic()


def test_a_pool_handed_out_but_never_streamed_still_ages(kept):
    """A run that warms the pool and then plays nothing (or fails) must not leave it looking busy for ever."""
    backends.worker_pool(1)
    backends._POOL_IDLE_SINCE[1] -= backends.LOKY_IDLE_SECONDS  # as if that hand-out were a worker timeout ago
    fresh = backends.worker_pool(1)
    assert kept.shut and fresh is not kept


def test_a_pool_idle_past_half_the_worker_timeout_is_replaced(kept):
    backends._POOL_IDLE_SINCE[1] = time.monotonic() - backends.LOKY_IDLE_SECONDS / 2 - 1
    fresh = backends.worker_pool(1)
    assert kept.shut and fresh is not kept and backends._POOL == {1: fresh}


def test_a_run_that_streams_to_the_end_stamps_its_pool_idle(monkeypatch):
    monkeypatch.setattr(backends, "_POOL_IDLE_SINCE", {})
    before = time.monotonic()
    assert list(backends.stream(iter(()), 1, "loky", None)) == []
    assert before <= backends._POOL_IDLE_SINCE[1] <= time.monotonic()


def test_a_pool_is_stamped_idle_when_its_first_worker_runs_out_of_chunks(monkeypatch):
    """With chunks of uneven length, one worker idles (and its loky timeout runs) while another still plays:
    the stamp must be that first idle moment, not the end of the run."""
    from concurrent.futures import ThreadPoolExecutor

    threads = ThreadPoolExecutor(max_workers=2)
    monkeypatch.setattr(backends, "worker_pool", lambda jobs: threads)
    monkeypatch.setattr(backends, "_POOL_IDLE_SINCE", {})
    monkeypatch.setattr(backends, "play_chunk", lambda seconds: time.sleep(seconds) or seconds)
    start = time.monotonic()
    assert sorted(backends.stream(iter([0.05, 1.0]), 2, "loky", None)) == [0.05, 1.0]
    end = time.monotonic()
    threads.shutdown()
    assert start + 0.05 <= backends._POOL_IDLE_SINCE[2] < end - 0.5


def test_a_worker_keeps_only_the_strategy_it_plays(monkeypatch):
    """Each strategy object holds its tables: a kept worker that held every strategy of a study grew past the
    300 MB that loky reads as a leak, and loky retired it mid-run with its 'memory leak' warning."""
    monkeypatch.setattr(chunks, "_STRATEGIES", {})
    greedy = chunks.loaded_strategy("greedy")
    assert chunks.loaded_strategy("greedy") is greedy
    chunks.loaded_strategy("heuristic")
    assert list(chunks._STRATEGIES) == ["heuristic"]


def test_the_solver_keeps_the_table_of_the_rules_it_plays_only():
    import gc
    import weakref

    from sim.rules import find_variant
    from strategies import load_strategy

    solver = load_strategy("solver:tt_mb=1")
    face_up, face_down = find_variant("bakers-dozen"), find_variant("dick-1883")
    first = solver.work(face_up)
    assert solver.work(face_up) is first
    gone = weakref.ref(first)
    del first
    assert solver.work(face_down) is not None
    gc.collect()
    assert gone() is None  # the face-up table was let go when the rules changed
