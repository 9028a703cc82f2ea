"""`solve --retry-unknown`: only the deals a smaller budget left unknown are solved again, under a run key of
their own, and their rows replace the unknown ones."""

from __future__ import annotations

from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.rules import find_variant
from studies.solving import retry_unknown, solve_deals
from studies.store import Store

BD = find_variant("bakers-dozen")
SMALL = {"nodes": 1000}
"""Leaves about a quarter of deals 1-40 unknown (11 with solver version 5, some of them consecutive), each within
milliseconds."""
BIG = {"nodes": 300_000}


def test_only_the_unknown_deals_are_solved_again_and_their_rows_replace_the_unknown_ones(tmp_path):
    rows, small = solve_deals(BD, SMALL, 1, 40, store=tmp_path, jobs=1)
    unknown = [r["deal"] for r in rows if r["verdict"] == "unknown"]
    assert 3 <= len(unknown) < 40 and any(b == a + 1 for a, b in zip(unknown, unknown[1:], strict=False))
    again, retried = retry_unknown(BD, rows, BIG, store=tmp_path, jobs=1)
    assert retried == len(unknown)
    assert [r["deal"] for r in again] == list(range(1, 41))
    for before, after in zip(rows, again, strict=True):
        if before["verdict"] == "unknown":
            assert after["verdict"] in ("won", "lost") and after["strategy"] != before["strategy"]
            assert after["verified"] is (True if after["verdict"] == "won" else None)
        else:
            assert after == before
    store = Store(tmp_path)
    (big,) = [k for k in store.keys() if k != small.key]
    held = sorted(d for c in store.chunk_files(big) for d in range(c.first, c.last + 1))
    assert held == unknown  # nothing decided by the small budget was solved twice
    # a second retry reuses the store: nothing is solved again
    assert retry_unknown(BD, rows, BIG, store=tmp_path, jobs=1)[0] == again


def test_the_command_needs_a_bigger_budget_and_says_what_it_retried(tmp_path):
    base = ["solve", "--deals", "62-65", "--source", "pysol", "--jobs", "1", "--store", str(tmp_path), "--quiet"]
    refused = CliRunner().invoke(main, [*base, "--retry-unknown"])
    assert refused.exit_code == 2 and "--nodes or --seconds" in refused.output
    done = CliRunner().invoke(main, [*base, "--retry-unknown", "--nodes", "5000000"])
    assert done.exit_code == 0, done.output
    assert "retried: the 0 deal(s)" in done.output and "unknown: 0" in done.output
