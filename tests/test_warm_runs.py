"""A run whose deals the store already holds only reads them: no dealing, no compiled code, no pandas, no
solver table, no new manifest; and the pandas-free reading (`studies.reading.read_table`) gives `read_store`'s rows.

Why: `bakers-dozen solve --deals 12` run again answers from the store, and a fresh process that loads
numba's compiled code (its CPU target, scipy with it) and pandas spends most of its second on that.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import studies.runner as R
from bakers_dozen.cli import main
from bakers_dozen.simulate import format_summary
from sim.rules import Rules
from studies.reading import read_store, read_table
from studies.records import MANIFESTS
from studies.spec import RunnerError, RunSpec, RunSummary, run_labels
from studies.store import Store

ROOT = Path(__file__).resolve().parents[1]

WARM_SOLVE = """
import json, sys
import strategies.solver.search as search
made = []
original = search.SolverWork.__init__
def counted(self, *args, **kwargs):
    made.append(1)
    original(self, *args, **kwargs)
search.SolverWork.__init__ = counted
from click.testing import CliRunner
from numba.core.registry import CPUDispatcher
from bakers_dozen.cli import main
result = CliRunner().invoke(main, ["solve", "--deals", "12", "--store", *sys.argv[1:]])
assert result.exit_code == 0, result.output
loaded = [f"{m}.{n}" for m, module in list(sys.modules.items()) if m.startswith(("sim", "strategies"))
          for n, f in vars(module).items() if isinstance(f, CPUDispatcher) and f.overloads]
print(json.dumps({"output": result.output, "pandas": "pandas" in sys.modules, "compiled": sorted(set(loaded)),
                  "tables": len(made)}))
"""


def _warm_solve(store: Path, *more: str) -> dict:
    """`solve --deals 12` (with ``more`` options) in a fresh interpreter: its output, whether it imported pandas,
    which compiled functions of the toolkit it loaded, and how many solver tables it made."""
    done = subprocess.run([sys.executable, "-c", WARM_SOLVE, str(store), *more], capture_output=True, text=True, cwd=ROOT,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_solving_stored_deals_again_loads_no_compiled_code_no_pandas_and_no_table(tmp_path):
    """Again with --force, it solves with one table and still without pandas (chunks are built without it)."""
    store = tmp_path / "s"
    first = CliRunner().invoke(main, ["solve", "--deals", "12", "--store", str(store)])
    assert first.exit_code == 0, first.output
    warm = _warm_solve(store)
    assert "solved now 0, reused 1" in warm["output"] and "1 of 1 wins replayed and won" in warm["output"]
    assert warm["compiled"] == [] and not warm["pandas"] and warm["tables"] == 0
    assert first.output.split("deals: ")[0] == warm["output"].split("deals: ")[0]  # the same rows
    forced = _warm_solve(store, "--force")  # solved again: one table, made once, and still no pandas
    assert "solved now 1, reused 0" in forced["output"] and "1 of 1 wins replayed and won" in forced["output"]
    assert forced["compiled"] != [] and not forced["pandas"] and forced["tables"] == 1


def _manifests(store: Path, key: str) -> list[Path]:
    return sorted((store / key / MANIFESTS).glob("*.json"))


def test_a_repeated_invocation_that_plays_nothing_writes_no_new_manifest(tmp_path):
    def go(deals: int, command: str, first: int = 1, force: bool = False) -> RunSummary:
        return R.run(RunSpec(Rules(), "greedy", deals, first=first), tmp_path, jobs=1, command=[command], force=force)

    s = go(300, "a")
    assert len(_manifests(tmp_path, s.key)) == 1
    again = go(300, "a")
    assert (again.played, again.reused) == (0, 300) and len(_manifests(tmp_path, s.key)) == 1
    other = go(300, "b")  # another command over the stored deals: reports group runs by their command
    assert other.played == 0 and len(_manifests(tmp_path, s.key)) == 2
    go(100, "a", first=101)  # the same command line, other deals
    assert len(_manifests(tmp_path, s.key)) == 3
    more = go(400, "a")  # plays 301..400
    assert more.played == 100 and len(_manifests(tmp_path, s.key)) == 4
    go(300, "a", force=True)
    go(300, "a")
    assert len(_manifests(tmp_path, s.key)) == 5
    finished = [json.loads(p.read_text()) for p in _manifests(tmp_path, s.key)]
    assert all("finished" in m for m in finished)
    assert Store(tmp_path).lost_deals(s.key, Store(tmp_path).chunk_files(s.key)) == []


def test_a_run_of_stored_deals_replays_a_damaged_file_and_records_it(tmp_path):
    s = R.run(RunSpec(Rules(), "greedy", 300), tmp_path, jobs=1, chunk=100)
    before = read_store(tmp_path)
    Store(tmp_path).chunk_path(s.key, 101, 200).write_bytes(b"not parquet")
    again = R.run(RunSpec(Rules(), "greedy", 300), tmp_path, jobs=1, chunk=100)
    assert (again.played, again.reused, len(again.corrupt)) == (100, 200, 1)
    assert len(_manifests(tmp_path, s.key)) == 2
    assert read_store(tmp_path).drop(columns=["micros", "micros_averaged"]).equals(
        before.drop(columns=["micros", "micros_averaged"]))


def test_stored_rows_of_a_strategy_without_a_compiled_tier_still_refuse_tier_compiled(tmp_path):
    R.run(RunSpec(Rules(), "tests.runner_helpers:Boom", 3, tier="python"), tmp_path, jobs=1)
    with pytest.raises(RunnerError, match="has no compiled tier"):
        R.run(RunSpec(Rules(), "tests.runner_helpers:Boom", 3, tier="compiled"), tmp_path, jobs=1)


def test_simulate_says_when_the_deals_played_in_this_process():
    summary = RunSummary(variant="v", rules_fingerprint="f", strategy="greedy", strategy_identity="greedy@1:{}",
                           seed=0, source="default", strategy_seed=0, first=1, deals=10, wins=1,
                           outcomes={"lost": 9, "won": 1}, cards_home_sum=100, played=10, reused=0, seconds=1.0,
                           store="s", key="k", jobs=1, in_process=True)
    assert "1 job, in this process)" in format_summary(summary)
    summary.in_process = False
    assert "1 job, loky)" in format_summary(summary)


def test_a_one_job_run_reports_that_it_played_in_this_process(tmp_path):
    assert R.run(RunSpec(Rules(), "greedy", 10), tmp_path, jobs=1).in_process
    assert not R.run(RunSpec(Rules(), "greedy", 10), tmp_path).in_process  # nothing played


def test_read_table_gives_read_stores_rows_from_overlapping_files(tmp_path):
    R.run(RunSpec(Rules(), "greedy", 500), tmp_path, jobs=1, chunk=500)
    R.run(RunSpec(Rules(), "greedy", 500, first=301), tmp_path / "other", jobs=1, chunk=500)
    key = Store(tmp_path).keys()[0]
    (tmp_path / "other" / key / f"{key}_{301:019d}_{800:019d}.parquet").rename(
        tmp_path / key / f"{key}_{301:019d}_{800:019d}.parquet")
    for deals in (None, (250, 700), (600, 650), (801, 900)):
        table = read_table(tmp_path, deals=deals, columns=["outcome", "moves"])
        frame = read_store(tmp_path, deals=deals, columns=["outcome", "moves"])
        lo, hi = deals or (1, 800)
        assert table.column("deal").to_pylist() == list(range(lo, min(hi, 800) + 1))
        assert table.to_pandas().equals(frame)


@pytest.mark.parametrize("n", [1, 9, 1000])
def test_a_chunk_table_built_from_buffers_holds_exactly_its_inputs(n):
    """`studies.rows.chunk_table` builds its arrays over numpy memory (no `pa.array`, which imports pandas)."""
    import numpy as np

    from sim.engine import OUTCOMES, TERMINATIONS
    from strategies import load_strategy
    from studies.rows import SCHEMA, chunk_table

    rng = np.random.default_rng(n)
    labels = run_labels(RunSpec(Rules(), "solver", n, seed=5, strategy_seed=7), load_strategy("solver"))
    outcome, termination = rng.integers(0, len(OUTCOMES), n), rng.integers(0, len(TERMINATIONS), n)
    lengths = np.where(outcome == 1, rng.integers(1, 50, n), 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)]) + 3  # the moves of a chunk start anywhere in the buffer
    codes = rng.integers(0, 3000, offsets[-1] + 5)
    home, moves, nodes, micros = (rng.integers(0, top, n) for top in (52, 500, 10**12, 10**9))
    errors = {i: f"failed ü {i}" for i in range(0, n, 4)}
    table = chunk_table(labels, "compiled", np.arange(7, 7 + n), outcome, termination, home, moves, nodes, micros,
                        True, errors, offsets, codes)
    table.validate(full=True)
    assert table.schema.equals(SCHEMA)
    for i, row in enumerate(table.to_pylist()):
        assert row["deal"] == 7 + i and row["seed"] == 5 and row["strategy_seed"] == 7
        assert (row["outcome"], row["termination"]) == (OUTCOMES[outcome[i]], TERMINATIONS[termination[i]])
        assert (row["cards_home"], row["moves"], row["nodes"], row["micros"]) == (home[i], moves[i], nodes[i], micros[i])
        assert row["error"] == errors.get(i) and row["micros_averaged"] is True
        assert row["clairvoyant"] is False  # the solver peeks, but a face-up deal hides nothing
        assert row["win_moves"] == (codes[offsets[i]:offsets[i + 1]].tolist() if outcome[i] == 1 else None)
        assert (row["key"], row["strategy_identity"], row["tier"]) == (labels.key.hash, labels.key.strategy_identity,
                                                                      "compiled")
