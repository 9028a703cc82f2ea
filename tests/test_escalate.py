"""`solve --escalate`: the ladder solves only the deals each rung leaves unknown, each rung a run of its own in the
store, and every row names the rung that gave its verdict."""

from __future__ import annotations

import csv

from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.rules import find_variant
from studies.atlas.ladder import LADDER, Rung, escalate
from studies.store import Store

BD = find_variant("bakers-dozen")
SMALL = {"nodes": 2000}
"""Leaves bakers-dozen 31 unknown (and 30 won) within milliseconds; 200,000 nodes win 31 in about 4,400."""


def test_a_deal_the_first_rung_leaves_unknown_is_decided_by_the_next_and_the_row_names_it(tmp_path):
    out = tmp_path / "rows.csv"
    args = ["solve", "--deals", "30-31", "--nodes", "2000", "--escalate", "--rung", "nodes=200000", "--jobs", "1",
            "--store", str(tmp_path / "store"), "--quiet", "--out", str(out)]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    assert "rung 0 (nodes=2000): 2 deal(s), won 1, lost 0, left unknown 1" in done.output
    assert "rung 1 (nodes=200000): 1 deal(s), won 1, lost 0, left unknown 0" in done.output
    with out.open() as f:
        rows = {int(r["deal"]): r for r in csv.DictReader(f)}
    assert rows[30]["verdict"] == "won" and rows[30]["rung"] == "0" and "nodes=2000," in rows[30]["strategy"]
    assert rows[31]["verdict"] == "won" and rows[31]["rung"] == "1" and "nodes=200000," in rows[31]["strategy"]
    assert rows[31]["verified"] == "True"
    # each rung is a run of its own; a second command reuses both and solves nothing again
    store = Store(tmp_path / "store")
    held = {k: sorted(d for c in store.chunk_files(k) for d in range(c.first, c.last + 1)) for k in store.keys()}
    assert sorted(held.values()) == [[30, 31], [31]]
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and "of rung 0; each rung has its own); solved now 0, reused 2" in again.output
    assert {k: sorted(d for c in store.chunk_files(k) for d in range(c.first, c.last + 1)) for k in store.keys()} == held


def test_the_rows_keep_the_highest_rungs_verdict_and_rungs_above_a_decided_range_do_nothing(tmp_path):
    rungs = (Rung({}), Rung({"nodes": 200_000}), Rung({"nodes": 300_000}))
    rows, reports, _ = escalate(BD, SMALL, 30, 31, rungs=rungs, store=tmp_path, jobs=1)
    assert [(r["deal"], r["verdict"], r["rung"]) for r in rows] == [(30, "won", 0), (31, "won", 1)]
    assert [(p.tried, p.won, p.left) for p in reports] == [(2, 1, 1), (1, 1, 0), (0, 0, 0)]


def test_a_stage_that_does_not_apply_to_the_rules_is_skipped(tmp_path):
    spanish = find_variant("spanish-patience")  # spaces take any card: no free-parking relaxation
    assert LADDER[2].applies(BD) and not LADDER[2].applies(spanish)
    assert LADDER[3].applies(spanish) and not LADDER[3].applies(spanish.replace(worrying_back=True))
    never = Rung({"nodes": 200_000}, lambda rules: False)
    rows, reports, _ = escalate(BD, SMALL, 31, 31, rungs=(Rung({}), never), store=tmp_path, jobs=1)
    assert rows[0]["verdict"] == "unknown" and rows[0]["rung"] == 0 and reports[1].skipped


def test_help_states_every_rungs_budget_and_bad_combinations_are_one_line():
    shown = CliRunner().invoke(main, ["solve", "--help"], terminal_width=400).output
    for text in ("nodes=30000000", "capacity_states=20000000", "prover_mb=2048", "prover_seconds=600.0"):
        assert text in shown
    for extra, message in ((["--rung", "nodes=5"], "add --escalate"),
                           (["--escalate", "--retry-unknown", "--nodes", "9"], "use one"),
                           (["--escalate", "--rung", "nodes"], "KEY=VALUE"),
                           (["--escalate", "--rung", "nodes=0"], "nodes")):
        r = CliRunner().invoke(main, ["solve", "--deals", "1", "--quiet", *extra])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, (extra, r.output)
        assert message in r.output
