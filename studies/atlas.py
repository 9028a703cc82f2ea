"""The winnability atlas's files: one row a variant in ``summary.csv``, one row a deal in ``<variant>.parquet``.

A variant's deal file holds ``deal`` (sorted), ``verdict`` (``won`` / ``lost`` / ``unknown``, dictionary-encoded),
``nodes`` (what the deciding rung spent), ``rung`` (the rung of the escalation ladder that gave the verdict) and
``timeout`` (true where the solver's seconds cap, not its node budget, stopped the deal: an ``unknown`` that depends
on the machine's speed), compressed with zstd: a million deals take a few MB. Deals in PySolFC's numbering go to
``pysol-<variant>.parquet``, with ``pysol-<variant>-not-winnable.csv`` listing the deals not proven winnable (lost,
and unknown), which a PySolFC user can load to skip them.

The summary row counts the deal file's rows and gives the win rate's interval the way Solvitaire reports it: from
the lower Wilson bound of the won deals to the upper Wilson bound of the won and unknown deals, so the unknowns
widen the interval instead of being dropped; its ``timeout`` counts the unknown deals the seconds cap stopped.
Files written before the ``timeout`` column existed read with that count as None (not recorded), never as 0.
`check_atlas` recounts every row from its deal file.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa

from sim.regular_files import open_regular
from studies.stats import win_rate_interval

SUMMARY = "summary.csv"
SUMMARY_COLUMNS = ("variant", "fingerprint", "source", "seed", "first", "last", "deals", "won", "lost", "unknown",
                   "timeout", "win_rate", "ci_low", "ci_high", "solver_version", "budgets", "clairvoyant", "command")
VERDICTS = ("won", "lost", "unknown")
INTEGER_COLUMNS = ("seed", "first", "last", "deals", "won", "lost", "unknown")
FLOAT_COLUMNS = ("win_rate", "ci_low", "ci_high")
TIMEOUT = "timeout"
"""The column (summary and deal file) of the deals the seconds cap stopped; a termination of that name in a solve
row marks one."""


def deals_file(variant: str, source: str) -> str:
    """The deal file's name for ``variant`` in the numbering ``source``."""
    return f"pysol-{variant}.parquet" if source == "pysol" else f"{variant}.parquet"


def not_winnable_file(variant: str) -> str:
    """The name of the CSV of PySolFC deals of ``variant`` not proven winnable."""
    return f"pysol-{variant}-not-winnable.csv"


def deal_table(rows: Iterable[dict[str, Any]]) -> pa.Table:
    """The deal file's table from solve rows (``deal``, ``verdict``, ``nodes``, ``rung``, ``termination``), sorted
    by deal; ``timeout`` is true where the termination is the seconds cap's.

    A verdict outside `VERDICTS` (an error, a win the referee rejected) is a ValueError: the atlas holds only
    verdicts that are true."""
    ordered = sorted(rows, key=lambda r: r["deal"])
    bad = [r["deal"] for r in ordered if r["verdict"] not in VERDICTS]
    if bad:
        raise ValueError(f"deals {bad[:10]} have no verdict won/lost/unknown")
    index = {v: i for i, v in enumerate(VERDICTS)}
    verdict = pa.DictionaryArray.from_arrays(pa.array([index[r["verdict"]] for r in ordered], pa.int8()),
                                             pa.array(VERDICTS))
    return pa.table({
        "deal": pa.array([r["deal"] for r in ordered], pa.int64()),
        "verdict": verdict,
        "nodes": pa.array([r["nodes"] for r in ordered], pa.int64()),
        "rung": pa.array([r["rung"] for r in ordered], pa.int8()),
        TIMEOUT: pa.array([r["termination"] == TIMEOUT for r in ordered], pa.bool_()),
    })


def interval(won: int, unknown: int, deals: int) -> tuple[float, float]:
    """(lower Wilson bound of ``won``, upper Wilson bound of ``won + unknown``) of ``deals``, at 95%."""
    return win_rate_interval(won, deals)[0], win_rate_interval(won + unknown, deals)[1]


def counts(table: pa.Table) -> dict[str, int | None]:
    """first, last, deals, the count of each verdict and the deals the seconds cap stopped (None when the table has
    no ``timeout`` column) of a deal table; counted in Arrow, so a million deals take milliseconds."""
    import pyarrow.compute as pc

    deals = table.column("deal")
    found = pc.value_counts(table.column("verdict").cast(pa.string())).to_pylist()
    tally = {str(x["values"]): int(x["counts"]) for x in found}
    stopped = int(pc.sum(table.column(TIMEOUT)).as_py() or 0) if TIMEOUT in table.column_names else None
    return {"first": pc.min(deals).as_py(), "last": pc.max(deals).as_py(), "deals": len(deals),
            **{v: tally.get(v, 0) for v in VERDICTS}, TIMEOUT: stopped}


def summary_row(table: pa.Table, **labels: Any) -> dict[str, Any]:
    """The summary row of a deal table; ``labels`` give variant, fingerprint, source, seed, solver_version, budgets,
    clairvoyant and command."""
    c = counts(table)
    low, high = interval(c["won"], c["unknown"], c["deals"])
    return {**labels, **c, "win_rate": c["won"] / c["deals"], "ci_low": low, "ci_high": high}


def merge_summary(rows: list[dict[str, Any]], new: dict[str, Any]) -> list[dict[str, Any]]:
    """``rows`` with ``new`` in place of the row of the same variant and source, sorted by source and variant."""
    kept = [r for r in rows if (r["variant"], r["source"]) != (new["variant"], new["source"])]
    return sorted([*kept, new], key=lambda r: (r["source"], r["variant"]))


def read_summary(path: Path) -> list[dict[str, Any]]:
    """The rows of a summary CSV (none when there is no file), numbers as numbers; ``timeout`` is None where the
    file has no such column or the row leaves it empty (not recorded)."""
    if not path.exists():
        return []
    with open_regular(path, "r", newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key in INTEGER_COLUMNS:
            r[key] = int(r[key])
        for key in FLOAT_COLUMNS:
            r[key] = float(r[key])
        r[TIMEOUT] = int(r[TIMEOUT]) if r.get(TIMEOUT) else None
    return rows


def write_summary(rows: list[dict[str, Any]], path: Path) -> None:
    """Write the summary rows to ``path`` as CSV (the caller renames it into place)."""
    with open_regular(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(SUMMARY_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: "" if r.get(k) is None else r[k] for k in SUMMARY_COLUMNS} for r in rows)


def write_deals(table: pa.Table, path: Path) -> None:
    """Write a deal table to ``path`` as Parquet, dictionary-encoded and zstd-compressed."""
    import pyarrow.parquet as pq

    with open_regular(path, "wb") as fh:
        pq.write_table(table, fh, compression="zstd", use_dictionary=True)


def write_not_winnable(table: pa.Table, path: Path) -> None:
    """Write the deals of a table that are not proven winnable (deal, verdict) to ``path`` as CSV."""
    with open_regular(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(("deal", "verdict"))
        for deal, verdict in zip(table.column("deal").to_pylist(), table.column("verdict").to_pylist(), strict=True):
            if verdict != "won":
                writer.writerow((deal, verdict))


def check_atlas(folder: Path) -> list[str]:
    """What in the atlas at ``folder`` disagrees: each summary row against its deal file (`row_problems`). Empty when
    everything agrees."""
    return [p for row in read_summary(folder / SUMMARY) for p in row_problems(folder, row)]


def read_deal_table(path: Path, columns: list[str] | None = None) -> pa.Table:
    """The deal file at ``path`` (a regular file: a FIFO there is refused, never waited on) as an Arrow table."""
    import pyarrow.parquet as pq

    with open_regular(path, "rb") as fh:
        return pq.read_table(fh, columns=columns)


def row_problems(folder: Path, row: dict[str, Any]) -> list[str]:
    """What disagrees between one summary ``row`` of the atlas at ``folder`` and its deal file (counts, range, rate,
    interval) and, for PySolFC numbering, its not-winnable list. Empty when they agree."""

    problems = []
    name = deals_file(row["variant"], row["source"])
    if not (folder / name).exists():
        return [f"{name}: missing"]
    table = read_deal_table(folder / name)
    deals = table.column("deal").to_pylist()
    if deals != sorted(set(deals)):
        problems.append(f"{name}: deals not sorted and unique")
    expected = summary_row(table)
    for key in ("first", "last", "deals", *VERDICTS, TIMEOUT):
        if row[key] != expected[key]:
            problems.append(f"{name}: summary {key} {_recorded(row[key])}, rows {_recorded(expected[key])}")
    for key in FLOAT_COLUMNS:
        if not math.isclose(row[key], expected[key], rel_tol=1e-9, abs_tol=1e-12):
            problems.append(f"{name}: summary {key} {row[key]}, rows {expected[key]}")
    if row["source"] == "pysol":
        listed = folder / not_winnable_file(row["variant"])
        if not listed.exists():
            return [*problems, f"{listed.name}: missing"]
        with open_regular(listed, "r", newline="") as f:
            lines = [(int(r["deal"]), r["verdict"]) for r in csv.DictReader(f)]
        if lines != [(d, v) for d, v in zip(deals, table.column("verdict").to_pylist(), strict=True) if v != "won"]:
            problems.append(f"{listed.name}: not the deals of {name} that are not won")
    return problems


def _recorded(value: Any) -> str:
    """A count as a problem line shows it: "not recorded" for None (a file older than the count)."""
    return "not recorded" if value is None else str(value)
