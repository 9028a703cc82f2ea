"""The runner against hostile strategies and faults: kill -9, a second run on a key, hangs, Ctrl-C, limits, verify."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner
from runner_helpers import ctrl_c_as_in_a_terminal, rows

import studies.runner as R
import studies.watchdog as W
from bakers_dozen.cli import main
from sim.engine import ERROR, T_ILLEGAL, T_WON, WON
from sim.errors import UserError
from sim.rules import Rules
from strategies import load_strategy
from strategies.batch import BatchResult
from studies.chunks import ChunkTask, play_chunk, verify_rows
from studies.files import KeyBusyError, RunGone, StoreError, StoreFullError
from studies.reading import read_store
from studies.rows import load_chunk_file
from studies.runner import run
from studies.spec import RunInterrupted, RunnerError, RunSpec, WorkersDiedError, max_jobs, run_labels
from studies.store import Store

RULES = Rules()
ROOT = Path(__file__).resolve().parents[1]


def _simulate(store: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "bakers_dozen", "simulate", "--store", str(store), "--quiet", *args]


def _wait_for_chunks(store: Path, n: int, proc: subprocess.Popen, limit: float = 120.0) -> None:
    start = time.monotonic()
    while time.monotonic() - start < limit:
        if sum(len(Store(store).chunk_files(k)) for k in Store(store).keys()) >= n:
            return
        assert proc.poll() is None, "the run ended before it could be stopped"
        time.sleep(0.02)
    raise AssertionError("no chunk was written in time")


def _parquet_deals(store: Path) -> list[int]:
    """Every deal number in every ``*.parquet`` file under ``store``, read by pyarrow as any other tool would."""
    deals: list[int] = []
    for path in sorted(store.rglob("*.parquet")):
        deals.extend(pq.read_table(path, columns=["deal"]).column("deal").to_pylist())
    return sorted(deals)


# --- kill -9 and one run per key ------------------------------------------------------------------

@pytest.mark.slow
def test_kill_9_of_the_main_process_then_the_same_command_leaves_one_row_per_deal_in_the_files(tmp_path):
    store, deals = tmp_path / "s", 4000
    cmd = _simulate(store, "-s", "greedy", "--tier", "python", "-n", str(deals), "--chunk", "200", "--jobs", "2")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    orphans: list[psutil.Process] = []
    try:
        _wait_for_chunks(store, 2, proc)
        orphans = psutil.Process(proc.pid).children(recursive=True)
        assert orphans, "no worker to orphan"
        proc.send_signal(signal.SIGKILL)  # the main process only, mid-chunk
        proc.wait(timeout=30)
        done = subprocess.run([*cmd, "--json"], cwd=ROOT, capture_output=True, text=True, timeout=600)  # at once
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["reused"] >= 400
        if sys.platform.startswith("linux"):  # the kernel stops the workers of a dead run (elsewhere: their writes)
            _, alive = psutil.wait_procs(orphans, timeout=10)
            assert not alive
    finally:
        for p in orphans:
            if p.is_running():
                p.kill()
    assert _parquet_deals(store) == list(range(1, deals + 1))
    assert not list(store.glob("*/.tmp-*"))


def _key(spec: RunSpec) -> str:
    return run_labels(spec, load_strategy(spec.strategy)).key.hash


def test_a_second_live_run_is_refused_naming_the_holder_and_a_dead_holder_is_not(tmp_path):
    store = tmp_path / "s"
    key = _key(RunSpec(RULES, "greedy", 50))
    Store.open(store).key_dir(key).mkdir()
    code = (f"from studies.store import Store; Store({str(store)!r}).hold_key({key!r}, 'other'); "
            "print('held', flush=True); import time; time.sleep(600)")
    holder = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        refused = CliRunner().invoke(main, ["simulate", "-n", "50", "--jobs", "1", "--store", str(store)])
        assert refused.exit_code == 2, refused.output
        assert f"another run is playing key {key}" in refused.output and f"pid {holder.pid} on host" in refused.output
        assert "started 20" in refused.output and len(refused.output.strip().splitlines()) == 1
        with pytest.raises(KeyBusyError):
            run(RunSpec(RULES, "greedy", 50), store, jobs=1)
    finally:
        holder.kill()  # kill -9: the kernel drops its lock
        holder.wait(timeout=30)
    s = run(RunSpec(RULES, "greedy", 50), store, jobs=1)
    assert s.played == 50


def test_a_writer_whose_run_is_gone_writes_nothing(tmp_path):
    run(RunSpec(RULES, "greedy", 20), tmp_path / "a", jobs=1)
    key = Store(tmp_path / "a").keys()[0]
    table = load_chunk_file(Store(tmp_path / "a").chunk_files(key)[0])
    st = Store.open(tmp_path / "b")
    st.key_dir(key).mkdir()
    with pytest.raises(RunGone):  # nobody holds the key: the run died
        st.write_chunk(table, key, 1, 20, "dead")
    hold = st.hold_key(key, "alive")
    try:
        with pytest.raises(RunGone):  # a newer run holds it
            st.write_chunk(table, key, 1, 20, "dead")
        assert not list(st.key_dir(key).glob("*.parquet")) and not list(st.key_dir(key).glob(".tmp-*"))
        st.write_chunk(table, key, 1, 20, "alive")
    finally:
        hold.release()
    assert _parquet_deals(tmp_path / "b") == list(range(1, 21))


def test_force_never_leaves_two_files_covering_a_deal(tmp_path):
    run(RunSpec(RULES, "greedy", 500), tmp_path, jobs=1, chunk=500)
    s = run(RunSpec(RULES, "greedy", 200, first=101), tmp_path, jobs=1, chunk=70, force=True)
    assert s.played == 200
    spans = [(c.first, c.last) for c in Store(tmp_path).chunk_files(s.key)]
    assert all(b < c for (_, b), (c, _) in zip(spans, spans[1:], strict=False)) and spans[0][0] == 1
    assert _parquet_deals(tmp_path) == list(range(1, 501))
    run(RunSpec(RULES, "greedy", 500), tmp_path / "clean", jobs=1)
    assert rows(read_store(tmp_path)).equals(rows(read_store(tmp_path / "clean")))


# --- hangs and Ctrl-C ---------------------------------------------------------------------------------

def test_a_deal_past_the_time_limit_is_stored_as_a_timeout(tmp_path):
    run(RunSpec(RULES, "tests.runner_helpers:Sleepy:deal=0", 2), tmp_path / "warm", jobs=1)  # compiled and loaded
    tmp_path = tmp_path / "s"
    spec = RunSpec(RULES, "tests.runner_helpers:Sleepy:deal=3,seconds=0.2", 6)
    s = run(spec, tmp_path, jobs=1, deal_timeout=0.5)
    df = read_store(tmp_path)
    slow = df[df["deal"] == 3].iloc[0]
    assert (slow["outcome"], slow["termination"]) == ("unknown", "timeout") and s.outcomes["unknown"] == 1
    assert (df.loc[df["deal"] != 3, "termination"] != "timeout").all()
    manifest = json.loads(next((tmp_path / s.key / "_manifests").glob("*.json")).read_text())
    assert manifest["parameters"]["deal_timeout"] == 0.5


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["tests.runner_helpers:LoopOn:deal=6",  # compiled: a loop with no way out
                                      "tests.runner_helpers:Sleepy:deal=6,seconds=3600"])  # Python: one call that blocks
def test_a_strategy_that_never_returns_is_stopped_and_only_its_deal_is_a_timeout(tmp_path, monkeypatch, strategy):
    monkeypatch.setattr(W, "STALL_SLACK", 2.0)  # the watchdog runs in this process
    honest = strategy.split(":deal=")[0] + ":deal=0"
    run(RunSpec(RULES, honest, 12), tmp_path / "warm", jobs=2, chunk=4)  # numba's cache is warm for the workers to come
    s = run(RunSpec(RULES, strategy, 12), tmp_path / "s", jobs=2, chunk=4, deal_timeout=1.5)
    tmp_path = tmp_path / "s"
    df = read_store(tmp_path)
    assert df["deal"].tolist() == list(range(1, 13))
    stuck = df[df["deal"] == 6].iloc[0]
    assert (stuck["outcome"], stuck["termination"]) == ("unknown", "timeout")
    assert "deal time limit" in stuck["error"]  # stopped inside its worker, or by the watchdog killing the worker
    assert (df.loc[df["deal"] != 6, "outcome"] != "unknown").all() and s.outcomes["unknown"] == 1
    assert _parquet_deals(tmp_path) == list(range(1, 13))
    assert not list((tmp_path / s.key / ".tasks").glob("*.json"))


@pytest.mark.slow
def test_ctrl_c_stops_a_compiled_infinite_loop_even_with_one_job(tmp_path):
    store = tmp_path / "s"
    cmd = _simulate(store, "-s", "tests.runner_helpers:LoopOn:deal=150", "-n", "1000", "--chunk", "100", "--jobs", "1")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=ctrl_c_as_in_a_terminal)
    _wait_for_chunks(store, 1, proc)
    time.sleep(1.0)  # deals 101-200 are in play: deal 150 never returns
    workers = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert "interrupted: 100 of 1,000 deals are saved" in err and "run the same command again to resume" in err
    assert "Traceback" not in err
    gone, alive = psutil.wait_procs(workers, timeout=30)
    assert not alive


# --- limits ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--first", "99999999999999999990", "--source", "pysol"], "is out of range; allowed: 1..9223372036854775807"),
        (["--first", "9223372036854775800", "--source", "pysol"], "run past the last deal number a run can play"),
        (["--first", "1.5"], "--first '1.5' is not a whole number; allowed: 1.."),
        (["--deals", "1e30"], "--deals 1e30 is out of range; allowed: 1..4611686018427387903"),
        (["--deals", "99999999999999999999999"], "--deals 99999999999999999999999 is out of range; allowed: 1..4611686018427387903"),
        (["--seed", "-1"], "--seed -1 is out of range; allowed: 0..4611686018427387903"),
        (["--seed", "1e23"], "--seed 1e23 is out of range; allowed: 0.."),
        (["--strategy-seed", "1e23"], "--strategy-seed 1e23 is out of range; allowed: 0..9223372036854775807"),
        (["--strategy-seed", str(2**63)], "is out of range; allowed: 0..9223372036854775807"),
        (["--chunk", "0"], "--chunk 0 is out of range; allowed: 1..1000000"),
        (["--chunk", "10000001"], "--chunk 10000001 is out of range; allowed: 1..1000000"),
        (["--jobs", "0"], "--jobs 0 is out of range; allowed: 1.."),
        (["--jobs", "100000"], f"jobs (4 per core here) must be from 1 to {4 * __import__('joblib').cpu_count()}"),
        (["--deal-timeout", "nan"], "--deal-timeout 'nan' is not a finite number; allowed: above 0, at most 86400"),
        (["--deal-timeout", "-1"], "--deal-timeout -1 is out of range; allowed: above 0, at most 86400"),
        (["--deal-timeout", "0"], "--deal-timeout 0 is out of range; allowed: above 0, at most 86400"),
        (["--deal-timeout", "inf"], "--deal-timeout 'inf' is not a finite number"),
        (["--deal-timeout", "1e9"], "at most 86400"),
        (["--deal-timeout", "soon"], "--deal-timeout 'soon' is not a finite number"),
    ],
)
def test_every_numeric_option_is_bounded_and_says_its_range_in_one_line(tmp_path, args, message):
    n = [] if "--deals" in args else ["-n", "10"]
    result = CliRunner().invoke(main, ["simulate", "--store", str(tmp_path / "s"), *n, *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1 and "Traceback" not in result.output


@pytest.mark.parametrize(("strategy", "message"), [
    ("tests.runner_helpers:ExitOnLoad", r"ExitOnLoad.*(SystemExit|sys\.exit)"),
    ("tests.runner_helpers:BrokenCompiled", r"compiled\(\) failed: RuntimeError: no compiler here"),
    ("tests.runner_helpers:Uncompilable", r"'uncompilable': its compiled policy does not compile: .*undefined_name_xyz"),
])
def test_a_plug_in_that_fails_to_load_is_one_line_and_exit_2(tmp_path, strategy, message):
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "-s", strategy, "--store", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert re.search(message, result.output) and len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize(("error", "code"), [
    (lambda: StoreFullError("nothing in this text says disk"), 1),
    (lambda: WorkersDiedError("no worker"), 1),
    (lambda: RunnerError("disk full: worker processes died"), 2),
    (lambda: StoreError("No space left on device"), 2),
    (lambda: RunInterrupted(3, 10, Path("s")), 130),
    (lambda: AssertionError("internal error: the run covers 9 deals, not 10"), 1),
    (lambda: ValueError("a bug that looks like input"), 1),
])
def test_exit_codes_follow_the_exception_class_never_its_text(tmp_path, monkeypatch, error, code):
    def fails(*args, **kwargs):
        raise error()

    monkeypatch.setattr("bakers_dozen.simulate.run", fails)
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--store", str(tmp_path)])
    assert result.exit_code == code, result.output
    bug = code == 1 and not isinstance(error(), RunnerError | StoreError)
    assert ("this is a bug in bakers-dozen" in result.output) == bug


def test_the_runners_internal_error_is_a_bug_with_its_traceback(tmp_path, monkeypatch):
    """A run whose chunks do not add up to its deals is the toolkit's fault: exit 1 and a traceback."""
    monkeypatch.setattr(R, "_play_all", lambda *args, **kwargs: None)
    with pytest.raises(AssertionError, match="internal error") as info:
        run(RunSpec(RULES, "greedy", 10), tmp_path, jobs=1)
    assert not isinstance(info.value, UserError)
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--store", str(tmp_path)])
    assert result.exit_code == 1 and "Traceback" in result.output and "this is a bug" in result.output


def test_the_api_checks_the_same_limits(tmp_path):
    for kwargs, message in [({"deal_timeout": float("nan")}, "deal_timeout must be"), ({"jobs": 10**9}, "jobs"),
                            ({"chunk": 2.5}, "chunk must be a whole number")]:
        with pytest.raises(RunnerError, match=message):
            run(RunSpec(RULES, "greedy", 10), tmp_path, **kwargs)
    with pytest.raises(RunnerError, match="strategy_seed must be from 0 to"):
        run(RunSpec(RULES, "greedy", 10, strategy_seed=-1), tmp_path)


@pytest.mark.parametrize(("tier", "deals", "chunk", "workers"),
                         [("auto", 10, None, 1), ("python", 10, None, 2), ("auto", 10, 3, 4), ("auto", 350, None, 4)])
def test_no_more_workers_than_chunks_to_play(tmp_path, tier, deals, chunk, workers):
    s = run(RunSpec(RULES, "greedy", deals, tier=tier), tmp_path, jobs=max_jobs(), chunk=chunk)
    assert s.jobs == min(workers, max_jobs()) and s.played == deals


def test_workers_that_keep_dying_are_exit_code_1_by_their_class(tmp_path, monkeypatch):
    from joblib.externals.loky.process_executor import TerminatedWorkerError

    def always_dies(*args, **kwargs):
        raise TerminatedWorkerError("a worker process was killed")
        yield  # pragma: no cover

    monkeypatch.setattr(R, "stream", always_dies)
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--store", str(tmp_path)])
    assert result.exit_code == 1, result.output
    assert "worker processes died 4 times" in result.output and "Traceback" not in result.output


# --- verifying wins -------------------------------------------------------------------------------------

def _manifest(store: Path, key: str) -> dict:
    return json.loads(next((store / key / "_manifests").glob("*.json")).read_text())


def test_wins_are_verified_by_default_for_plug_ins_only(tmp_path):
    builtin = run(RunSpec(RULES, "greedy", 1500), tmp_path / "b", jobs=1)
    plugin = run(RunSpec(RULES, "tests.runner_helpers:GreedyV2", 1500), tmp_path / "p", jobs=1)
    forced = run(RunSpec(RULES, "greedy", 1500), tmp_path / "f", jobs=1, verify=True)
    assert not _manifest(tmp_path / "b", builtin.key)["parameters"]["verify"]
    assert _manifest(tmp_path / "p", plugin.key)["parameters"]["verify"]
    assert _manifest(tmp_path / "f", forced.key)["parameters"]["verify"]
    assert builtin.wins == plugin.wins == forced.wins > 0  # honest wins all pass


def test_a_claimed_win_the_referee_rejects_is_stored_as_an_error(tmp_path):
    run(RunSpec(RULES, "greedy", 1500), tmp_path, jobs=1)
    df = read_store(tmp_path)
    real = df[df["outcome"] == "won"].iloc[0]
    labels = run_labels(RunSpec(RULES, "greedy", 1), load_strategy("greedy"))
    task = ChunkTask(RULES, "greedy", 0, "default", 0, "auto", 1, 4, labels, None, "r", verify=True)
    good = [int(c) for c in real["win_moves"]]
    claims = [good, good[:-1], [good[0]] * len(good), [65535]]  # true; one move short; illegal repeats; nonsense
    numbers = np.array([real["deal"], real["deal"], real["deal"], 7])
    offsets = np.cumsum([0] + [len(c) for c in claims])
    outcome = np.array([WON, WON, WON, WON], dtype=np.int8)
    termination = np.array([T_WON] * 4, dtype=np.int8)
    errors: dict[int, str] = {}
    zeros = np.zeros(4, dtype=np.int64)
    batch = BatchResult(numbers, outcome, termination, np.full(4, 52), zeros, zeros, zeros,
                        np.concatenate(claims).astype(np.int64), offsets)
    passed = verify_rows(task, batch, outcome, termination, errors)
    assert passed.tolist() == [True, False, False, False]
    assert outcome.tolist() == [WON, ERROR, ERROR, ERROR]
    assert termination.tolist() == [T_WON, T_ILLEGAL, T_ILLEGAL, T_ILLEGAL]
    assert sorted(errors) == [1, 2, 3] and all(e.startswith("the referee rejected the claimed win: ") for e in errors.values())


def test_a_chunk_played_in_the_calling_process_leaves_its_signals_alone():
    labels = run_labels(RunSpec(RULES, "greedy", 1), load_strategy("greedy"))
    task = ChunkTask(RULES, "greedy", 0, "default", 0, "python", 1, 5, labels, None, "r")
    before = signal.getsignal(signal.SIGINT)
    res = play_chunk(task)
    assert signal.getsignal(signal.SIGINT) is before
    assert res.table is not None and res.table.column("termination").null_count == 0 and res.table.num_rows == 5
