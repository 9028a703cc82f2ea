"""The atlas marks a deal the solver's seconds cap stopped apart from one unknown at its node budget: a ``timeout``
column in the deal file and a count in the summary that agree, and files written before that column still read and
check (the count is then not recorded, never 0)."""

from __future__ import annotations

import csv
from pathlib import Path

import pyarrow.parquet as pq

from studies.atlas import (
    SUMMARY_COLUMNS,
    check_atlas,
    counts,
    deal_table,
    read_summary,
    summary_row,
    write_deals,
    write_summary,
)


def _rows() -> list[dict]:
    """Deals 1-6: four decided, one unknown at the node budget, one the seconds cap stopped."""
    verdicts = [("won", "won"), ("won", "won"), ("lost", "no_moves"), ("unknown", "undecided"), ("unknown", "timeout"),
                ("won", "won")]
    return [{"deal": d, "verdict": v, "termination": t, "nodes": 10 * d, "rung": 0}
            for d, (v, t) in enumerate(verdicts, start=1)]


LABELS = {"variant": "bakers-dozen", "fingerprint": "bf62c6d47d1a", "source": "default", "seed": 0, "solver_version": "11",
          "budgets": "0: nodes=10", "clairvoyant": False, "command": "bakers-dozen atlas --variant bakers-dozen"}


def _write(folder: Path, table, row: dict) -> None:
    folder.mkdir(exist_ok=True)
    write_deals(table, folder / "bakers-dozen.parquet")
    write_summary([row], folder / "summary.csv")


def test_a_deal_the_clock_stopped_is_marked_in_the_deal_file_and_counted_in_the_summary(tmp_path):
    table = deal_table(_rows())
    assert table.column("timeout").to_pylist() == [False, False, False, False, True, False]
    row = summary_row(table, **LABELS)
    assert (row["won"], row["lost"], row["unknown"], row["timeout"]) == (3, 1, 2, 1)
    _write(tmp_path, table, row)
    assert check_atlas(tmp_path) == []
    assert read_summary(tmp_path / "summary.csv")[0]["timeout"] == 1
    assert pq.read_table(tmp_path / "bakers-dozen.parquet").column("timeout").to_pylist()[4] is True


def test_the_check_finds_a_summary_whose_clock_count_disagrees_with_its_deal_file(tmp_path):
    table = deal_table(_rows())
    _write(tmp_path, table, {**summary_row(table, **LABELS), "timeout": 0})
    assert check_atlas(tmp_path) == ["bakers-dozen.parquet: summary timeout 0, rows 1"]


def test_files_written_before_the_timeout_column_read_and_check_with_the_count_not_recorded(tmp_path):
    table = deal_table(_rows()).drop_columns(["timeout"])
    assert counts(table)["timeout"] is None
    row = summary_row(table, **LABELS)
    write_deals(table, tmp_path / "bakers-dozen.parquet")
    old = [c for c in SUMMARY_COLUMNS if c not in ("timeout", "reused")]  # as written before either column
    with (tmp_path / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=old, lineterminator="\n")
        writer.writeheader()
        writer.writerow({k: row[k] for k in old})
    (read,) = read_summary(tmp_path / "summary.csv")
    assert read["timeout"] is None and read["unknown"] == 2
    assert check_atlas(tmp_path) == []
    # an older row kept in a newer summary is written with the count left empty, and read back as not recorded
    write_summary([read], tmp_path / "summary.csv")
    assert next(csv.DictReader((tmp_path / "summary.csv").open()))["timeout"] == ""
    assert read_summary(tmp_path / "summary.csv")[0]["timeout"] is None
    assert check_atlas(tmp_path) == []


def test_a_summary_that_records_the_count_disagrees_with_a_deal_file_that_does_not(tmp_path):
    table = deal_table(_rows())
    row = summary_row(table, **LABELS)
    _write(tmp_path, table.drop_columns(["timeout"]), row)
    assert check_atlas(tmp_path) == ["bakers-dozen.parquet: summary timeout 1, rows not recorded"]
