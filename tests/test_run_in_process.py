"""Which runs play in the main process (`studies.backends.plays_in_process`), and a worker readies its strategy once."""

from __future__ import annotations

import pytest

import studies.backends as B
import studies.chunks as C
import studies.runner as R
from sim.rules import Rules
from strategies import load_strategy
from studies.spec import RunSpec


@pytest.mark.parametrize(("deals", "jobs", "chunk", "backend", "timeout", "here"), [
    (1, None, None, "loky", None, True),
    (100, None, None, "loky", None, True),  # one smallest compiled chunk
    (101, None, None, "loky", None, False),
    (3, None, 1, "loky", None, False),  # three chunks could play at once
    (3, 1, 1, "loky", None, True),  # ... but one job plays them one by one anyway
    (10**6, 1, None, "loky", None, True),
    (10**6, 2, None, "loky", None, False),
    (1, None, None, "dask", None, False),
    (1, None, None, "loky", 5.0, False),  # a deal time limit needs the watchdog
])
def test_runs_of_built_ins_with_one_worker_play_in_process(deals, jobs, chunk, backend, timeout, here, monkeypatch):
    import joblib

    monkeypatch.setattr(joblib, "cpu_count", lambda: 2)
    spec = RunSpec(Rules(), "greedy", deals)
    assert B.plays_in_process(spec, load_strategy("greedy"), True, jobs, chunk, backend, timeout) is here


def test_a_python_tier_run_plays_in_process_up_to_its_smallest_chunk(monkeypatch):
    import joblib

    monkeypatch.setattr(joblib, "cpu_count", lambda: 2)
    greedy = load_strategy("greedy")
    assert B.plays_in_process(RunSpec(Rules(), "greedy", 5, tier="python"), greedy, False, None, None, "loky", None)
    assert not B.plays_in_process(RunSpec(Rules(), "greedy", 6, tier="python"), greedy, False, None, None, "loky", None)


def test_a_plug_in_never_plays_in_process():
    class Plugin(type(load_strategy("greedy"))):
        pass

    assert not B.plays_in_process(RunSpec(Rules(), "x", 1), Plugin(), True, None, None, "loky", None)


def test_a_worker_readies_a_strategy_once_not_per_chunk(monkeypatch):
    import strategies.batch as B

    calls: list[str] = []
    monkeypatch.setattr(B, "prepare", lambda rules, strategy: calls.append(strategy.name))
    monkeypatch.setattr(C, "_WARMED", set())
    for _ in range(3):
        C.warm_up(Rules(), "greedy", True)
    C.warm_up(Rules(), "heuristic", True)
    assert calls == ["greedy", "heuristic"]


def test_a_run_with_one_worker_starts_no_pool_and_stores_its_rows(tmp_path, monkeypatch):
    from studies.reading import read_store

    def no_pool(jobs):
        raise AssertionError("a worker pool was started")

    monkeypatch.setattr(B, "worker_pool", no_pool)
    s = R.run(RunSpec(Rules(), "greedy", 1000), tmp_path, jobs=1, chunk=300)
    assert s.played == 1000 and s.chunks_played == 4
    assert read_store(tmp_path)["deal"].tolist() == list(range(1, 1001))


def test_a_failure_in_the_playing_thread_reaches_the_caller(tmp_path, monkeypatch):
    def broken(task):
        raise RuntimeError("a bug in a built-in")

    monkeypatch.setattr(C, "chunk_table", broken)
    with pytest.raises(RuntimeError, match="a bug in a built-in"):
        R.run(RunSpec(Rules(), "greedy", 10), tmp_path, jobs=1)


def test_the_next_chunk_plays_while_the_main_thread_writes_the_last_one(monkeypatch):
    import threading
    from types import SimpleNamespace

    started = {first: threading.Event() for first in (1, 11, 21)}
    played: list[int] = []

    def play(task):  # noqa: ANN001, ANN202 - stands in for studies.chunks.play_chunk
        started[task.first].set()
        played.append(task.first)
        return SimpleNamespace(first=task.first, thread=threading.current_thread())

    monkeypatch.setattr(B, "play_chunk", play)
    tasks = [SimpleNamespace(first=first) for first in (1, 11, 21)]
    seen = []
    for result in B._stream_here(iter(tasks)):
        following = next((t.first for t in tasks if t.first > result.first), None)
        if following is not None:  # handed on only once the next chunk is on its way
            assert started[following].wait(10)
        assert result.thread is not threading.current_thread()
        seen.append(result.first)
    assert seen == played == [1, 11, 21]
