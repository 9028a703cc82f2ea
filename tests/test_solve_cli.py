"""`bakers-dozen solve` through the runner and its store: resume after an interrupt or a kill, nothing played
twice and nothing lost, the rows the same as one uninterrupted run, and the referee's check of stored wins."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from sim.rules import find_variant
from studies.solving import solve_deals
from studies.spec import RunInterrupted
from studies.store import Store

BD = find_variant("bakers-dozen")
ROOT = Path(__file__).resolve().parents[1]
CHEAP = {"nodes": 20, "capacity_states": 0}
"""A budget that leaves most deals unknown after microseconds: the test is about the plumbing, not the search
(nor the free-parking stage, which would run on every deal left unknown)."""


class InterruptAfter:
    """A progress sink that presses Ctrl-C (raises KeyboardInterrupt in the main process) after ``chunks`` chunks."""

    def __init__(self, chunks: int) -> None:
        self.left = chunks

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        pass

    def advance(self, deals: int, wins: int) -> None:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        pass


def _stored_deals(store: Path) -> list[int]:
    """Every deal number in every chunk file of ``store``, as any Parquet reader sees them (skipping ``.`` names)."""
    deals: list[int] = []
    for path in sorted(p for p in store.rglob("*.parquet") if not p.name.startswith(".")):
        deals.extend(pq.read_table(path, columns=["deal"]).column("deal").to_pylist())
    return sorted(deals)


@pytest.mark.slow
def test_an_interrupted_solve_of_20000_deals_resumes_with_nothing_solved_twice_and_nothing_lost(tmp_path):
    store, n = tmp_path / "s", 20_000
    with pytest.raises(RunInterrupted) as stopped:
        solve_deals(BD, CHEAP, 1, n, store=store, jobs=2, chunk=1000, progress=InterruptAfter(3))
    saved = stopped.value.saved
    assert 3000 <= saved < n and len(_stored_deals(store)) == saved
    rows, result = solve_deals(BD, CHEAP, 1, n, store=store, jobs=2, chunk=1000)
    assert (result.reused, result.played) == (saved, n - saved)  # the saved chunks are not solved again
    assert _stored_deals(store) == list(range(1, n + 1))  # each deal in exactly one chunk file
    assert [r["deal"] for r in rows] == list(range(1, n + 1))
    whole, _ = solve_deals(BD, CHEAP, 1, n, store=tmp_path / "whole", jobs=2)
    same = ["deal", "verdict", "nodes", "moves", "verified"]
    assert [[r[c] for c in same] for r in rows] == [[r[c] for c in same] for r in whole]  # as one uninterrupted run
    assert all(r["verified"] for r in rows if r["verdict"] == "won")


def test_wins_stored_without_the_referee_are_checked_when_read_with_it(tmp_path, monkeypatch):
    rows, _ = solve_deals(BD, {}, 62, 65, source="pysol", store=tmp_path, jobs=2, verify=False)
    assert [r["verified"] for r in rows] == [None] * 4
    checked: list[int] = []
    import studies.solving as S

    real = S._replayed
    monkeypatch.setattr(S, "_replayed", lambda rules, result, deal, codes: checked.append(deal) or real(rules, result,
                                                                                                       deal, codes))
    rows, result = solve_deals(BD, {}, 62, 65, source="pysol", store=tmp_path, jobs=2)
    assert result.played == 0 and checked == [62, 63, 65]
    assert [r["verified"] for r in rows] == [True, True, None, True]


def test_the_solver_parameters_are_part_of_the_run_key(tmp_path):
    _, cheap = solve_deals(BD, CHEAP, 1, 50, store=tmp_path, jobs=2)
    _, full = solve_deals(BD, {}, 1, 50, store=tmp_path, jobs=2)
    assert cheap.key != full.key and full.reused == 0
    assert len(Store(tmp_path).keys()) == 2


@pytest.mark.slow
def test_kill_9_of_a_solve_then_the_same_command_finishes_it(tmp_path):
    store, out = tmp_path / "s", tmp_path / "rows.csv"
    cmd = [sys.executable, "-m", "bakers_dozen", "solve", "--deals", "1-20000", "--nodes", "50", "--param",
           "capacity_states=0", "--chunk", "500",
           "--jobs", "2", "--store", str(store), "--quiet", "--no-verify"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    start = time.monotonic()
    while len(_stored_deals(store)) < 1000:
        assert proc.poll() is None, "the solve ended before it could be killed"
        assert time.monotonic() - start < 300, "no chunk was written in time"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    done = subprocess.run([*cmd, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    now, reused = (int(x.replace(",", "")) for x in re.search(r"solved now ([\d,]+), reused ([\d,]+)", done.stdout).groups())
    assert now + reused == 20_000 and reused >= 1000
    assert _stored_deals(store) == list(range(1, 20_001))
    frame = pd.read_csv(out)
    assert frame["deal"].tolist() == list(range(1, 20_001))


def test_a_solve_of_a_few_deals_plays_in_this_process_with_the_rows_a_worker_gives(tmp_path, monkeypatch):
    import studies.runner as R
    from studies.reading import read_store

    def in_process(result) -> bool:
        return Store(result.store).read_manifests(result.key)[0][-1]["parameters"]["in_process"]

    here_rows, here = solve_deals(BD, {}, 10, 13, store=tmp_path / "here")
    assert in_process(here)
    with monkeypatch.context() as m:
        m.setattr(R, "plays_in_process", lambda *args: False)
        pool_rows, pool = solve_deals(BD, {}, 10, 13, store=tmp_path / "pool")
    assert not in_process(pool) and here.key == pool.key
    same = ["deal", "verdict", "nodes", "moves", "verified", "strategy"]
    assert [[r[c] for c in same] for r in here_rows] == [[r[c] for c in same] for r in pool_rows]
    columns = ["deal", "outcome", "termination", "cards_home", "moves", "nodes", "win_moves", "error"]
    a = read_store(tmp_path / "here", columns=columns).drop(columns="key")
    b = read_store(tmp_path / "pool", columns=columns).drop(columns="key")
    pd.testing.assert_frame_equal(a, b)
    rows, resumed = solve_deals(BD, {}, 10, 14, store=tmp_path / "here")  # resumes: only deal 14 is solved
    assert (resumed.reused, resumed.played) == (4, 1) and in_process(resumed)
    assert [r["deal"] for r in rows] == [10, 11, 12, 13, 14]
    assert [[r[c] for c in same] for r in rows[:4]] == [[r[c] for c in same] for r in here_rows]
