"""The parallel runner: same rows for any jobs/chunking, resume, reuse, faults, the simulate command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_helpers import ctrl_c_as_in_a_terminal, rows

import studies.backends as B
import studies.plan as P
import studies.runner as R
from bakers_dozen.cli import main
from sim.rules import Rules, find_variant
from studies.plan import Chunker, missing_ranges, plan_chunks
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunInterrupted, RunnerError, RunSpec
from studies.store import Store

RULES = Rules()
ROOT = Path(__file__).resolve().parents[1]


# --- planning -----------------------------------------------------------------------------

def test_plan_covers_exactly_the_missing_deals_on_a_fixed_grid():
    assert plan_chunks(1, 10, [], 4) == [(1, 4), (5, 8), (9, 10)]
    assert plan_chunks(1, 10, [(1, 10)], 4) == []
    assert plan_chunks(1, 10, [(3, 6)], 4) == [(1, 2), (7, 8), (9, 10)]
    assert plan_chunks(5, 20, [(1, 7), (12, 13)], 5) == [(8, 9), (10, 11), (14, 14), (15, 19), (20, 20)]
    assert plan_chunks(100, 100, [], 1000) == [(100, 100)]


def test_missing_ranges():
    assert missing_ranges(1, 10, []) == [(1, 10)]
    assert missing_ranges(1, 10, [(4, 5), (1, 2), (9, 20)]) == [(3, 3), (6, 8)]
    assert missing_ranges(1, 10, [(0, 11)]) == []


def _drain(chunker):
    out = []
    while (c := chunker.next()) is not None:
        out.append(c)
    return out


def test_adaptive_chunks_follow_the_measured_speed():
    ch = Chunker([(1, 1_000_000)], jobs=2, compiled=True)
    first = ch.next()
    assert first == (1, P.FIRST_CHUNK[True])
    ch.observe(2000, 2000 / 10_000)  # 10,000 deals/s: about 3 s of work per chunk
    assert ch.next() == (first[1] + 1, first[1] + int(10_000 * P.TARGET_CHUNK_SECONDS))
    ch.observe(2000, 0.001)  # very fast: capped
    a, b = ch.next()
    assert b - a + 1 == P.CHUNK_BOUNDS[True][1]
    ch.observe(10, 100.0)  # very slow: floored
    a, b = ch.next()
    assert b - a + 1 == P.CHUNK_BOUNDS[True][0]
    rest = _drain(ch)
    assert rest[0][0] == b + 1 and rest[-1][1] == 1_000_000
    assert all(y + 1 == x for (_, y), (x, _) in zip(rest, rest[1:], strict=False))


def test_adaptive_chunks_shrink_at_the_end_so_every_job_gets_work():
    ch = Chunker([(1, 40_000)], jobs=4, compiled=True)
    ch.observe(1000, 0.001)
    sizes = [b - a + 1 for a, b in _drain(ch)]
    assert sum(sizes) == 40_000 and max(sizes) <= 5000 and sizes == sorted(sizes, reverse=True)


def test_adaptive_chunks_of_one_job_do_not_shrink_at_the_end():
    ch = Chunker([(1, 1_000_000)], jobs=1, compiled=True)
    a, b = ch.next()
    ch.observe(b - a + 1, 0.001)  # fast: the largest chunks from here on
    sizes = [y - x + 1 for x, y in _drain(ch)]
    high = P.CHUNK_BOUNDS[True][1]
    assert sum(sizes) == 1_000_000 - b and sizes[:-1] == [high] * (len(sizes) - 1) and len(sizes) == -(-sum(sizes) // high)


def test_fixed_chunks_are_handed_out_whole_and_can_be_given_back():
    ch = Chunker(plan_chunks(1, 10, [], 4), jobs=2, compiled=True, chunk=4)
    assert ch.next() == (1, 4)
    ch.give_back([(1, 4)])
    assert _drain(ch) == [(1, 4), (5, 8), (9, 10)]
    assert ch.remaining == 0


# --- identical rows ---------------------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["greedy", "random:home_first=true"])
def test_rows_do_not_depend_on_jobs_or_chunking(tmp_path, strategy):
    deals = 1500 if strategy == "greedy" else 300
    spec = RunSpec(find_variant("dick-1883"), strategy, deals, first=1001, seed=3, strategy_seed=9)
    a = run(spec, tmp_path / "a", jobs=1, chunk=deals)
    b = run(spec, tmp_path / "b", jobs=2, chunk=97)
    c = run(spec, tmp_path / "c", jobs=2)
    ra, rb, rc = (rows(read_store(tmp_path / x)) for x in "abc")
    assert len(ra) == deals and ra["deal"].tolist() == list(range(1001, 1001 + deals))
    assert ra.equals(rb) and ra.equals(rc)
    assert a.wins == b.wins == c.wins and a.cards_home_sum == b.cards_home_sum == c.cards_home_sum


def test_python_tier_gives_the_compiled_rows(tmp_path):
    spec = RunSpec(RULES, "greedy", 400, first=50)
    run(spec, tmp_path / "c", jobs=1, chunk=150)
    run(RunSpec(RULES, "greedy", 400, first=50, tier="python"), tmp_path / "p", jobs=1, chunk=64)
    c, p = rows(read_store(tmp_path / "c")), rows(read_store(tmp_path / "p"))
    assert (c["tier"] == "compiled").all() and (p["tier"] == "python").all()
    assert c.drop(columns="tier").equals(p.drop(columns="tier"))
    assert not read_store(tmp_path / "p")["micros_averaged"].any()


def test_strategy_errors_become_rows_not_crashes(tmp_path):
    s = run(RunSpec(RULES, "tests.runner_helpers:Boom", 30), tmp_path, jobs=1)
    df = read_store(tmp_path)
    errors = df[df["outcome"] == "error"]
    assert errors["deal"].tolist() == [7, 14, 21, 28] and s.outcomes["error"] == 4
    assert errors["error"].iloc[0] == "boom raised RuntimeError: boom on deal 7"


# --- reuse and resume ------------------------------------------------------------------------

def test_deals_in_the_store_are_reused_not_replayed(tmp_path):
    first = run(RunSpec(RULES, "greedy", 1000), tmp_path, jobs=1, chunk=300)
    inodes = {c.path: c.path.stat().st_ino for c in Store(tmp_path).chunk_files(first.key)}
    more = run(RunSpec(RULES, "greedy", 1500), tmp_path, jobs=1, chunk=250)
    assert (more.reused, more.played, more.chunks_reused) == (1000, 500, 4)
    assert {p: p.stat().st_ino for p in inodes} == inodes  # untouched
    inside = run(RunSpec(RULES, "greedy", 700, first=400), tmp_path, jobs=1)
    assert (inside.reused, inside.played) == (700, 0) and inside.deals_per_second is None
    clean = run(RunSpec(RULES, "greedy", 700, first=400), tmp_path / "clean", jobs=1)
    assert (inside.wins, inside.cards_home_sum) == (clean.wins, clean.cards_home_sum)
    df = read_store(tmp_path)
    assert df["deal"].tolist() == list(range(1, 1501))


def test_force_replays_and_leaves_one_row_per_deal(tmp_path):
    run(RunSpec(RULES, "greedy", 600), tmp_path, jobs=1, chunk=200)
    before = rows(read_store(tmp_path))
    s = run(RunSpec(RULES, "greedy", 600), tmp_path, jobs=1, chunk=250, force=True)
    assert (s.played, s.reused) == (600, 0)
    files = Store(tmp_path).chunk_files(s.key)
    assert [(c.first, c.last) for c in files] == [(1, 250), (251, 500), (501, 600)]
    assert rows(read_store(tmp_path)).equals(before)


def test_overlapping_chunk_files_count_once(tmp_path):
    run(RunSpec(RULES, "greedy", 500), tmp_path, jobs=1, chunk=500)
    run(RunSpec(RULES, "greedy", 500, first=301), tmp_path / "other", jobs=1, chunk=500)
    key = Store(tmp_path).keys()[0]
    (tmp_path / "other" / key / f"{key}_{301:019d}_{800:019d}.parquet").rename(
        tmp_path / key / f"{key}_{301:019d}_{800:019d}.parquet")
    run(RunSpec(RULES, "greedy", 100, first=101), tmp_path / "third", jobs=1)
    (tmp_path / "third" / key / f"{key}_{101:019d}_{200:019d}.parquet").rename(
        tmp_path / key / f"{key}_{101:019d}_{200:019d}.parquet")
    s = run(RunSpec(RULES, "greedy", 1000), tmp_path, jobs=1, chunk=100)
    assert (s.reused, s.played) == (800, 200)
    clean = run(RunSpec(RULES, "greedy", 1000), tmp_path / "clean", jobs=1)
    assert s.wins == clean.wins and s.cards_home_sum == clean.cards_home_sum
    assert rows(read_store(tmp_path)).equals(rows(read_store(tmp_path / "clean")))
    spans = [(c.first, c.last) for c in Store(tmp_path).chunk_files(key)]  # the overlaps are repaired
    assert spans[:2] == [(1, 500), (501, 800)] and all(b < c for (_, b), (c, _) in zip(spans, spans[1:], strict=False))


# --- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--deals", "0"], "--deals 0 is out of range; allowed: 1..4611686018427387903"),
        (["--deals", "-5"], "--deals -5 is out of range; allowed: 1.."),
        (["--deals", "10", "--jobs", "0"], "--jobs 0 is out of range; allowed: 1.."),
        (["--deals", "10", "--chunk", "0"], "--chunk 0 is out of range; allowed: 1..1000000"),
        (["--deals", "10", "--first", "0"], "--first 0 is out of range; allowed: 1.."),
        (["--deals", "10", "--first", str((1 << 62) - 5)], "run past the last deal number"),
        (["--deals", "10", "--strategy", "nope"], "unknown strategy 'nope'"),
        (["--deals", "10", "--variant", "nope"], "unknown variant 'nope'"),
        (["--deals", "10", "--scheduler", "tcp://127.0.0.1:1"], "--scheduler is for --backend dask"),
        (["--deals", "10", "--backend", "dask"], "needs --scheduler"),
        (["--deals", "10", "--strategy", "tests.runner_helpers:Boom", "--tier", "compiled"], "has no compiled tier"),
    ],
)
def test_bad_input_is_one_line_and_exit_code_2(tmp_path, args, message):
    result = CliRunner().invoke(main, ["simulate", "--store", str(tmp_path / "s"), *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output


def test_store_problems_are_one_line_and_exit_code_2(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--store", str(tmp_path)])
    assert result.exit_code == 2 and "not a bakers-dozen results store (notes.txt)" in result.output


# --- the command ---------------------------------------------------------------------------------

def test_simulate_prints_a_summary_and_json(tmp_path):
    store = str(tmp_path / "s")
    result = CliRunner().invoke(main, ["simulate", "-n", "800", "--jobs", "1", "--store", store, "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    for field in ("variant", "strategy", "deals", "wins", "win_rate", "ci_low", "ci_high", "store", "mean_cards_home",
                  "deals_per_second", "key", "rules_fingerprint", "strategy_identity", "played", "reused"):
        assert field in data
    assert data["deals"] == 800 and data["played"] == 800 and data["store"] == store
    assert data["ci_low"] <= data["win_rate"] <= data["ci_high"]
    text = CliRunner().invoke(main, ["simulate", "-n", "1000", "--jobs", "1", "--store", store])
    assert text.exit_code == 0, text.output
    assert "played 200, reused 800" in text.output and "95% Wilson interval" in text.output
    assert "mean cards home" in text.output and "deals/s" in text.output


# --- faults ----------------------------------------------------------------------------------------

def test_a_worker_that_dies_has_its_chunk_replayed(tmp_path):
    marker = tmp_path / "died"
    spec = RunSpec(RULES, f"tests.runner_helpers:DieOnce:marker={marker},deal=130", 400)
    s = run(spec, tmp_path / "s", jobs=2, chunk=50)
    assert marker.exists() and s.retries == 1
    assert (s.played, s.deals) == (400, 400)
    greedy = run(RunSpec(RULES, "greedy", 400, tier="python"), tmp_path / "g", jobs=1, chunk=400)
    cols = ["deal", "outcome", "cards_home", "moves", "win_moves"]
    assert rows(read_store(tmp_path / "s"))[cols].equals(rows(read_store(tmp_path / "g"))[cols])
    assert s.wins == greedy.wins


def test_workers_that_keep_dying_stop_the_run_with_a_message(tmp_path, monkeypatch):
    from joblib.externals.loky.process_executor import TerminatedWorkerError


    def always_dies(*args, **kwargs):
        raise TerminatedWorkerError("a worker process was killed")
        yield  # pragma: no cover

    monkeypatch.setattr(R, "stream", always_dies)
    with pytest.raises(RunnerError, match="died 3 times.*run the same command again to resume"):
        run(RunSpec(RULES, "greedy", 100), tmp_path, jobs=2, retries=2)


def test_ctrl_c_in_process_says_what_was_saved(tmp_path, monkeypatch):

    real = R.stream

    def interrupted(tasks, *args, **kwargs):
        for k, res in enumerate(real(tasks, *args, **kwargs)):
            yield res
            if k == 1:
                raise KeyboardInterrupt

    monkeypatch.setattr(R, "stream", interrupted)
    with pytest.raises(RunInterrupted) as info:
        run(RunSpec(RULES, "greedy", 1000), tmp_path, jobs=1, chunk=100)
    # The worker writes its chunks itself, so a chunk it finished while Ctrl-C reached the main
    # process is saved too: the message counts what the store holds, at least the two chunks seen.
    stored = len(read_store(tmp_path))
    assert info.value.saved == stored and 200 <= stored < 1000 and stored % 100 == 0
    assert info.value.total == 1000


def test_ctrl_c_after_the_last_chunk_still_says_what_was_saved(tmp_path, monkeypatch):
    """Ctrl-C while the finished run writes its manifest: every deal is saved and the message says so."""
    real = Store.write_manifest
    calls = []

    def interrupted_at_the_end(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the first write opens the run, the second closes it
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Store, "write_manifest", interrupted_at_the_end)
    with pytest.raises(RunInterrupted) as info:
        run(RunSpec(RULES, "greedy", 300), tmp_path, jobs=1, chunk=100)
    assert info.value.saved == info.value.total == 300


KILL_DEALS, KILL_CHUNK = 12_000, 100
"""Enough Python-tier deals that a run outlasts the signal sent once its first chunks are written: with 3,000,
a run on an idle machine could finish in the ~0.4 s between the test seeing two chunks and Ctrl-C arriving."""


def _cli(store: Path, *extra: str) -> list[str]:
    """A run in a subprocess that is slow enough to be killed in the middle (Python tier: no compiling)."""
    return [sys.executable, "-m", "bakers_dozen", "simulate", "-s", "greedy", "--tier", "python", "-n", str(KILL_DEALS),
            "--chunk", str(KILL_CHUNK), "--jobs", "2", "--store", str(store), "--quiet", *extra]


def _wait_for_chunks(store: Path, n: int, proc: subprocess.Popen, limit: float = 60.0) -> int:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        found = sum(len(Store(store).chunk_files(k)) for k in Store(store).keys())
        if found >= n:
            return found
        assert proc.poll() is None, "the run ended before it could be killed"
        time.sleep(0.02)
    raise AssertionError("no chunk was written in time")


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The rows of a clean run of the deals `_cli` plays (in this process, in one chunk)."""
    store = tmp_path_factory.mktemp("clean")
    run(RunSpec(RULES, "greedy", KILL_DEALS, tier="python"), store, jobs=1)
    return rows(read_store(store))


def test_a_killed_run_resumes_and_ends_with_a_clean_runs_rows(tmp_path, reference):
    store = tmp_path / "s"
    proc = subprocess.Popen(_cli(store), cwd=ROOT, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_chunks(store, 3, proc)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the whole process group: power loss
        proc.wait(timeout=30)
    survivors = {c.path: c.path.stat().st_ino for k in Store(store).keys() for c in Store(store).chunk_files(k)}
    assert 3 <= len(survivors) < KILL_DEALS // KILL_CHUNK
    done = subprocess.run(_cli(store, "--json"), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert summary["reused"] >= 3 * KILL_CHUNK and summary["reused"] + summary["played"] == KILL_DEALS
    assert {p: p.stat().st_ino for p in survivors} == survivors  # what was saved was not replayed
    assert not list(store.glob("*/.tmp-*"))  # half-written files of the killed writers are gone
    assert rows(read_store(store)).equals(reference)


def test_ctrl_c_stops_cleanly_and_the_same_command_resumes(tmp_path, reference):
    store = tmp_path / "s"
    proc = subprocess.Popen(_cli(store), cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    _wait_for_chunks(store, 2, proc)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted:" in err and "deals are saved in" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    done = subprocess.run(_cli(store, "--json"), cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["reused"] > 0
    assert rows(read_store(store)).equals(reference)


def test_ctrl_c_just_after_a_chunk_is_handed_out_leaves_no_thread_traceback(monkeypatch):
    """Ctrl-C between handing a chunk to the warm pool and loky's manager thread taking it up: killing the workers
    then made that thread die with a KeyError traceback on stderr (seen under load, after the chunk written
    just before the interrupt was replaced by the next). The task source raises the interrupt at that moment."""
    died: list[threading.ExceptHookArgs] = []
    monkeypatch.setattr(threading, "excepthook", died.append)
    monkeypatch.setattr(B, "play_chunk", time.sleep)  # a chunk that plays long enough to be killed

    def tasks():
        yield 30.0
        raise KeyboardInterrupt

    B.worker_pool(1).submit(int).result()  # warm: the manager thread waits for work, the worker is up
    with pytest.raises(KeyboardInterrupt):
        list(B.stream(tasks(), 1, "loky", None))
    assert [f"{d.thread.name}: {d.exc_type.__name__}: {d.exc_value}" for d in died] == []


@pytest.mark.slow
def test_main_process_memory_stays_flat(tmp_path):
    """2,000,000 greedy deals: the main process stays far under 500 MB (benchmarks/scaling.py does 10,000,000)."""
    code = (  # VmHWM: peak resident memory of this process since exec (ru_maxrss carries over the parent's)
        "from studies.runner import run, RunSpec; from sim.rules import Rules; "
        f"s = run(RunSpec(Rules(), 'greedy', 2_000_000), {str(tmp_path)!r}, jobs=2); "
        "print(s.deals, next(int(x.split()[1]) for x in open('/proc/self/status') if x.startswith('VmHWM')))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600, check=True)
    deals, rss_kib = map(int, out.stdout.split())
    assert deals == 2_000_000 and rss_kib < 500 * 1024


def test_a_relative_store_is_the_callers_folder_even_for_workers_started_elsewhere(tmp_path, monkeypatch):
    """Worker processes are kept between runs and keep the folder they started in; a relative store path
    must still mean the caller's folder at the time of the run (a notebook or test that changes folder)."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    monkeypatch.chdir(first)
    B.close_pools()
    assert B.worker_pool(1).submit(os.getcwd).result() == str(first)  # the kept pool's worker starts here
    monkeypatch.chdir(second)
    summary = run(RunSpec(find_variant("bakers-dozen"), "greedy", 40), "s", jobs=1)
    assert summary.played == 40
    assert len(read_store(second / "s", strategy="greedy")) == 40
    assert not (first / "s").exists()
