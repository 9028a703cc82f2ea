"""The same run on a real Dask cluster (scheduler and two worker processes on loopback)."""

from __future__ import annotations

import json
import logging
import time

import pytest
from click.testing import CliRunner
from runner_helpers import rows

from bakers_dozen.cli import main
from sim.rules import Rules
from studies.reading import read_store
from studies.runner import SchedulerError, connect_scheduler, run
from studies.spec import RunSpec

distributed = pytest.importorskip("distributed")

RULES = Rules()


@pytest.fixture(scope="module")
def cluster():
    from dask.distributed import LocalCluster

    for name in ("distributed", "distributed.nanny", "distributed.scheduler", "distributed.worker"):
        logging.getLogger(name).setLevel(logging.ERROR)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None, silence_logs=logging.ERROR) as c:
        yield c


def test_a_dask_run_gives_the_rows_of_a_local_run(tmp_path, cluster):
    args = ["simulate", "-s", "greedy", "--tier", "python", "-n", "1200", "--first", "500", "--seed", "4",
            "--chunk", "100", "--json", "--quiet"]
    result = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "dask"), "--backend", "dask",
                                       "--scheduler", cluster.scheduler_address])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["backend"] == "dask" and summary["jobs"] == 2 and summary["played"] == 1200
    local = run(RunSpec(RULES, "greedy", 1200, first=500, seed=4, tier="python"), tmp_path / "local", jobs=1, chunk=450)
    assert summary["wins"] == local.wins and summary["cards_home_sum"] == local.cards_home_sum
    assert rows(read_store(tmp_path / "dask")).equals(rows(read_store(tmp_path / "local")))


@pytest.mark.slow
def test_compiled_chunks_on_dask_resume_a_local_run(tmp_path, cluster):
    spec = RunSpec(RULES, "greedy", 4000)
    run(RunSpec(RULES, "greedy", 1000), tmp_path / "s", jobs=1)
    s = run(spec, tmp_path / "s", backend="dask", scheduler=cluster.scheduler_address, chunk=1000)
    assert (s.reused, s.played) == (1000, 3000)
    run(spec, tmp_path / "local", jobs=1)
    assert rows(read_store(tmp_path / "s")).equals(rows(read_store(tmp_path / "local")))


def test_a_dask_worker_that_dies_has_its_chunk_rerun(tmp_path, cluster):
    marker = tmp_path / "died"
    s = run(RunSpec(RULES, f"tests.runner_helpers:DieOnce:marker={marker},deal=250", 600), tmp_path / "s",
            backend="dask", scheduler=cluster.scheduler_address, chunk=100)
    assert marker.exists() and s.played == 600
    g = run(RunSpec(RULES, "greedy", 600, tier="python"), tmp_path / "g", jobs=1)
    cols = ["deal", "outcome", "cards_home", "moves", "win_moves"]
    assert rows(read_store(tmp_path / "s"))[cols].equals(rows(read_store(tmp_path / "g"))[cols])
    assert s.wins == g.wins
    cluster.wait_for_workers(2, timeout=30)


def test_a_scheduler_that_does_not_answer_is_a_clear_error_within_seconds(tmp_path):
    start = time.monotonic()
    result = CliRunner().invoke(main, ["simulate", "-n", "10", "--store", str(tmp_path), "--backend", "dask",
                                       "--scheduler", "tcp://127.0.0.1:1"])
    assert time.monotonic() - start < 15
    assert result.exit_code == 2, result.output
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in result.output
    assert "Traceback" not in result.output


def test_a_malformed_scheduler_address_is_a_clear_error():
    with pytest.raises(SchedulerError, match=r"nonsense://x has an unusable scheme; .* at tcp://HOST:PORT"):
        connect_scheduler("nonsense://x", timeout=2)
