"""Climbs that survive a change of machine (issue 65, 1): an atlas row written partway, each deal with the highest
rung it has been through; `atlas run --reuse` going on from there without repeating a rung; an interrupted climb
keeping what it climbed; ranges climbed apart and merged; old files still read; forged verdicts still refused."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from studies.atlas import SUMMARY_COLUMNS, check_atlas, deal_table, read_summary, summary_row, write_deals, write_summary
from studies.spec import RunInterrupted

LADDER = ["--param", "nodes=2000", "--rung", "nodes=20000", "--rung", "nodes=50000", "--jobs", "1", "--quiet"]
"""A tiny ladder on good-measure deals 28-40: rung 0 leaves 29, 31, 32, 33, 34, 36, 38 and 40 unknown, rung 1 decides
all of them but 31, which rung 2 leaves unknown too (seconds in all)."""
OPEN_AT_0 = [29, 31, 32, 33, 34, 36, 38, 40]


def _run(tmp_path: Path, *args: str, store: str = "store", out: str = "out", code: int = 0) -> Path:
    done = CliRunner().invoke(main, ["atlas", "-v", "good-measure", *LADDER, *args, "--store", str(tmp_path / store),
                                     "--out", str(tmp_path / out)])
    assert done.exit_code == code, done.output
    return tmp_path / out


def _deals(folder: Path) -> dict[int, tuple[str, int]]:
    table = pq.read_table(folder / "good-measure.parquet").to_pylist()
    return {r["deal"]: (r["verdict"], r["rung"]) for r in table}


def _spy(monkeypatch: pytest.MonkeyPatch, interrupt_at: int | None = None, after: int = 0) -> list[tuple[int, list[int]]]:
    """Record each rung's solve (its node budget, its deals); with ``interrupt_at``, the first solve at that budget
    finishes its first ``after`` deals and is then interrupted, as Ctrl-C leaves it."""
    from studies.atlas import ladder

    real, calls, armed = ladder.solve_again, [], [interrupt_at]

    def solve_again(rules, rows, deals, params, *args, **options):
        calls.append((int(params["nodes"]), list(deals)))
        if int(params["nodes"]) in armed:
            armed.clear()
            real(rules, rows, deals[:after], params, *args, **options)
            raise RunInterrupted(after, len(deals), Path(options["store"]))
        return real(rules, rows, deals, params, *args, **options)

    monkeypatch.setattr(ladder, "solve_again", solve_again)
    return calls


def test_an_interrupted_climb_is_written_as_far_as_it_went_and_resumes_from_there(tmp_path, monkeypatch):
    calls = _spy(monkeypatch, interrupt_at=20000, after=4)
    out = _run(tmp_path, "--deals", "28-40", code=130)
    (row,) = read_summary(out / "summary.csv")
    assert row["budgets"].count("; ") == 1 and row["climbed"] == 0 and check_atlas(out) == []
    deals = _deals(out)
    assert [d for d, (_, rung) in deals.items() if rung == 1] == OPEN_AT_0[:4]  # the deals rung 1 finished
    assert [d for d, (v, rung) in deals.items() if v == "unknown" and rung == 0] == OPEN_AT_0[4:]
    assert calls == [(20000, OPEN_AT_0), (20000, OPEN_AT_0[:4])]  # the rung, then its finished deals read back
    # another machine (no store) goes on: rung 1 only on the deals it had not reached, rung 2 on the one left open
    calls.clear()
    _run(tmp_path, "--deals", "28-40", "--reuse", str(out), store="elsewhere")
    assert calls == [(20000, OPEN_AT_0[4:]), (50000, [31])]
    (row,) = read_summary(out / "summary.csv")
    assert (row["unknown"], row["climbed"], row["budgets"].count("; ")) == (1, 2, 2) and check_atlas(out) == []
    whole = _run(tmp_path, "--deals", "28-40", store="fresh", out="fresh")
    assert {d: v for d, (v, _) in _deals(out).items()} == {d: v for d, (v, _) in _deals(whole).items()}


def test_hours_stop_the_climb_above_rung_0_and_write_it(tmp_path, monkeypatch):
    calls = _spy(monkeypatch)
    out = _run(tmp_path, "--deals", "28-40", "--hours", "0")
    (row,) = read_summary(out / "summary.csv")
    assert (row["unknown"], row["climbed"], row["budgets"].count("; ")) == (len(OPEN_AT_0), 0, 0)
    assert calls == [] and check_atlas(out) == []
    assert "not tried yet" in " ".join(CliRunner().invoke(main, [
        "atlas", "-v", "good-measure", *LADDER, "--deals", "28-40", "--hours", "0", "--reuse", str(out),
        "--store", str(tmp_path / "s2"), "--out", str(tmp_path / "o2")]).output.split())


def test_ranges_climbed_apart_merge_into_one_row_without_solving_again(tmp_path, monkeypatch):
    low = _run(tmp_path, "--deals", "28-33", out="low", store="s-low")
    high = _run(tmp_path, "--deals", "34-40", "--last-rung", "0", out="high", store="s-high")
    calls = _spy(monkeypatch)
    merged = _run(tmp_path, "--deals", "28-40", "--reuse", str(low), "--reuse", str(high), "--hours", "0",
                  out="merged", store="s-merged")
    assert calls == []
    (row,) = read_summary(merged / "summary.csv")
    assert (row["first"], row["last"], row["deals"], row["climbed"]) == (28, 40, 13, 0)  # 34-40 through rung 0 only
    assert row["command"].endswith(f"--reuse {low} --reuse {high}") and row["reused"].count("sha256:") == 2
    assert _deals(merged) == {**_deals(low), **_deals(high)} and check_atlas(merged) == []


def test_a_forged_verdict_in_a_partial_row_is_refused_by_the_sample(tmp_path):
    out = _run(tmp_path, "--deals", "28-40", "--hours", "0")
    rows = [{**r, "termination": None} for r in pq.read_table(out / "good-measure.parquet").to_pylist()]
    table = deal_table([{**r, "verdict": "won"} if r["deal"] == 29 else r for r in rows])  # rung 0 leaves 29 open
    write_deals(table, out / "good-measure.parquet")
    old = read_summary(out / "summary.csv")[0]
    write_summary([summary_row(table, **{k: old[k] for k in ("variant", "fingerprint", "source", "seed", "budgets",
                                                            "solver_version", "clairvoyant", "command")})],
                  out / "summary.csv")
    assert check_atlas(out) == []  # the files agree with themselves: only solving again can tell
    r = CliRunner().invoke(main, ["atlas", "-v", "good-measure", *LADDER, "--deals", "28-40", "--reuse", str(out),
                                  "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "not reused" in r.output, r.output
    assert "deal 29: recorded won at rung 0, rung 0 now leaves it unknown" in " ".join(r.output.split())


def test_the_sample_refuses_a_forged_verdict_once_the_budgets_agree(tmp_path):
    out = _run(tmp_path, "--deals", "28-40", "--last-rung", "1")
    rows = [{**r, "termination": None} for r in pq.read_table(out / "good-measure.parquet").to_pylist()]
    table = deal_table([{**r, "verdict": "won", "rung": 1} if r["deal"] == 39 else r for r in rows])  # 39 is lost
    write_deals(table, out / "good-measure.parquet")
    old = read_summary(out / "summary.csv")[0]
    write_summary([summary_row(table, **{k: old[k] for k in ("variant", "fingerprint", "source", "seed", "budgets",
                                                            "solver_version", "clairvoyant", "command")})],
                  out / "summary.csv")
    assert check_atlas(out) == []
    r = CliRunner().invoke(main, ["atlas", "-v", "good-measure", *LADDER, "--deals", "28-40", "--reuse", str(out),
                                  "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "deal 39: recorded won (rung 1), rung 0 now finds it lost" in " ".join(r.output.split())
    assert not (tmp_path / "o" / "summary.csv").exists()


def test_two_sources_that_disagree_on_a_verdict_are_both_refused(tmp_path):
    a = _run(tmp_path, "--deals", "36-40", "--last-rung", "0", out="a", store="sa")
    b = _run(tmp_path, "--deals", "38-40", "--last-rung", "0", out="b", store="sb")
    rows = [{**r, "termination": None} for r in pq.read_table(b / "good-measure.parquet").to_pylist()]
    table = deal_table([{**r, "verdict": "won"} if r["deal"] == 39 else r for r in rows])
    write_deals(table, b / "good-measure.parquet")
    old = read_summary(b / "summary.csv")[0]
    write_summary([summary_row(table, **{k: old[k] for k in ("variant", "fingerprint", "source", "seed", "budgets",
                                                            "solver_version", "clairvoyant", "command")})],
                  b / "summary.csv")
    r = CliRunner().invoke(main, ["atlas", "-v", "good-measure", *LADDER, "--deals", "36-40", "--reuse", str(a),
                                  "--reuse", str(b), "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and "deal 39 is lost in one, won in the other" in " ".join(r.output.split()), r.output


def test_files_older_than_the_climbed_column_still_read_check_and_resume(tmp_path, monkeypatch):
    out = _run(tmp_path, "--deals", "28-40", "--last-rung", "0")
    (row,) = read_summary(out / "summary.csv")
    table = pq.read_table(out / "good-measure.parquet").drop_columns(["timeout"])  # as the first deal files were
    write_deals(table, out / "good-measure.parquet")
    old = [c for c in SUMMARY_COLUMNS if c not in ("timeout", "reused", "climbed")]
    with (out / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=old, lineterminator="\n")
        writer.writeheader()
        writer.writerow({k: row[k] for k in old})
    (read,) = read_summary(out / "summary.csv")
    assert read["climbed"] is None and read["timeout"] is None and check_atlas(out) == []
    calls = _spy(monkeypatch)
    _run(tmp_path, "--deals", "28-40", "--reuse", str(out), store="s2", out="o2")
    assert calls == [(20000, OPEN_AT_0), (50000, [31])]  # each deal from the rung after the one its file records


def test_the_check_finds_a_climb_that_disagrees_with_its_deals(tmp_path):
    out = _run(tmp_path, "--deals", "28-40", "--last-rung", "0")
    text = (out / "summary.csv").read_text()
    assert text.endswith(",0\n")  # climbed, the last column
    (out / "summary.csv").write_text(text[:-3] + ",1\n")
    assert check_atlas(out) == ["good-measure.parquet: summary climbed 1, rows 0"]
    rows = [{**r, "termination": None} for r in pq.read_table(out / "good-measure.parquet").to_pylist()]
    write_deals(deal_table([{**r, "rung": 3} if r["deal"] == 28 else r for r in rows]), out / "good-measure.parquet")
    assert "good-measure.parquet: a deal at rung 3, above the rungs 0-0 its budgets name" in check_atlas(out)


def test_a_killed_climb_writes_what_it_climbed(tmp_path):
    """SIGTERM (a plain kill, `timeout`) in rung 1: the row holds the deals rung 1 finished, at rung 1."""
    args = [sys.executable, "-m", "bakers_dozen", "atlas", "-v", "good-measure", "--deals", "28-40", "--chunk", "1",
            *LADDER, "--store", "store", "--out", "out"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300

    def keys() -> list[int]:
        return sorted(len(list(k.glob("*_*_*.parquet"))) for k in (tmp_path / "store").glob("*") if k.is_dir())

    while (len(keys()) < 2 or keys()[0] < 1) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    if proc.wait() == 0:
        pytest.skip("the climb finished before the signal")
    assert proc.returncode == 130
    (row,) = read_summary(tmp_path / "out" / "summary.csv")
    assert check_atlas(tmp_path / "out") == [] and row["budgets"].count("; ") == 1
    assert any(rung == 1 for _, rung in _deals(tmp_path / "out").values())
