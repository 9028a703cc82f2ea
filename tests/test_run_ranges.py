"""A run of scattered deals (`RunSpec.over`): the deals an escalation rung retries are one run on every worker,
stored and reused like any run's, with the same rows as runs of each deal alone."""

from __future__ import annotations

import pytest

from sim.rules import find_variant
from studies.atlas.ladder import Rung, escalate
from studies.reading import read_table
from studies.runner import run
from studies.solving import solve_deals
from studies.spec import RunnerError, RunSpec, check_run, deal_ranges
from studies.store import Store

BD = find_variant("bakers-dozen")
SMALL = {"nodes": 2000}
"""Leaves bakers-dozen 17, 20, 31, 41, 58 and 60 unknown among deals 1-60, within milliseconds."""


def test_deal_numbers_become_sorted_ranges_of_consecutive_deals():
    assert deal_ranges([9, 3, 4, 5, 12, 4, 10]) == [(3, 5), (9, 10), (12, 12)]
    spec = RunSpec.over(BD, "greedy", [9, 3, 4, 5, 12, 10])
    assert (spec.first, spec.last, spec.deals, spec.spans) == (3, 12, 6, ((3, 5), (9, 10), (12, 12)))
    assert RunSpec(BD, "greedy", 4, 7).spans == ((7, 10),)


@pytest.mark.parametrize("ranges, deals, first", [
    (((5, 3),), 1, 5),  # first after last
    (((3, 5), (5, 7)), 5, 3),  # overlapping
    (((8, 9), (3, 5)), 5, 8),  # out of order
    (((3, 5), (8, 9)), 4, 3),  # the count disagrees
    (((3, 5), (8, 9)), 5, 2),  # the first deal disagrees
])
def test_ranges_out_of_order_overlapping_or_disagreeing_are_refused_in_one_line(ranges, deals, first):
    with pytest.raises(RunnerError) as caught:
        check_run(RunSpec(BD, "greedy", deals, first, ranges=ranges))
    assert "\n" not in str(caught.value)


def test_a_scattered_run_plays_and_stores_only_its_deals_with_the_rows_of_a_whole_run(tmp_path):
    wanted = [2, 3, 7, 15, 16, 30]
    summary = run(RunSpec.over(BD, "heuristic", wanted), tmp_path / "sparse", jobs=2)
    assert (summary.deals, summary.played, summary.reused) == (6, 6, 0)
    sparse = read_table(tmp_path / "sparse", key=summary.key).to_pandas().set_index("deal")
    assert sorted(sparse.index) == wanted
    whole = run(RunSpec(BD, "heuristic", 30, 1), tmp_path / "whole", jobs=1)
    rows = read_table(tmp_path / "whole", key=whole.key).to_pandas().set_index("deal").loc[wanted]
    columns = ["outcome", "termination", "moves", "cards_home"]
    assert sparse[columns].equals(rows[columns])
    assert summary.wins == int((rows["outcome"] == "won").sum())
    manifest = Store(tmp_path / "sparse").read_manifests(summary.key)[0][0]
    assert manifest["parameters"]["ranges"] == [[2, 3], [7, 7], [15, 16], [30, 30]]

    again = run(RunSpec.over(BD, "heuristic", wanted), tmp_path / "sparse", jobs=2)
    assert (again.played, again.reused, again.wins) == (0, 6, summary.wins)
    more = run(RunSpec.over(BD, "heuristic", [*wanted, 31]), tmp_path / "sparse", jobs=2)
    assert (more.played, more.reused) == (1, 6)


def test_a_rung_retries_every_scattered_unknown_deal_in_one_run_on_every_worker(tmp_path):
    rungs = (Rung({}), Rung({"nodes": 300_000}))
    rows, reports, _ = escalate(BD, SMALL, 1, 60, rungs=rungs, store=tmp_path, jobs=2)
    retried = [r["deal"] for r in rows if r["rung"] == 1]
    assert retried == [17, 20, 31, 41, 58, 60] and reports[1].tried == 6
    store = Store(tmp_path)
    rung_key = next(k for k in store.keys() if "nodes=300000" in store.key_info(k)["strategy_identity"])
    (manifest,) = store.read_manifests(rung_key)[0]
    assert manifest["parameters"]["ranges"] == [[17, 17], [20, 20], [31, 31], [41, 41], [58, 58], [60, 60]]
    assert manifest["parameters"]["jobs"] == 2
    # the same deals each solved alone give the same verdicts and nodes: the budget decides, not the grouping
    for deal in (17, 41):
        alone, _ = solve_deals(BD, {**SMALL, "nodes": 300_000}, deal, deal, store=tmp_path / "alone", jobs=1)
        (row,) = [r for r in rows if r["deal"] == deal]
        assert (alone[0]["verdict"], alone[0]["nodes"]) == (row["verdict"], row["nodes"])
