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
Files written before the ``timeout`` column existed read with that count as None (not recorded), never as 0. A
row whose verdicts were taken from another atlas (``atlas --reuse``) names it in ``reused``: that folder and a digest
of the summary row and deal file taken.

A row may be written partway up its ladder (`studies.atlas.climbing`): a deal's ``rung`` is the rung that decided it
or, for an unknown deal, the highest rung it has been through, and the row's ``budgets`` name the rungs its climb
has begun. Its ``climbed`` is the rung every unknown deal has been through (the lowest ``rung`` of its unknown
deals; the top rung of its budgets when none is unknown): how far the climb has gone. Files written before that
column read with it as None (not recorded); their deals' rungs say the same.
`check_atlas` recounts every row from its deal file.

An atlas's files are read strictly (`read_summary`, `read_deals`): a file that is damaged, not what its name says, a
link or not a file is one `AtlasFileError` line naming it, never a traceback. The atlas shipped with the toolkit is
package data of this package, found with importlib.resources wherever the user stands (`shipped`); the escalation
ladder that computes an atlas (`studies.atlas.ladder`), the reuse of one already written (`studies.atlas.reuse`),
a row's climb written as it goes (`studies.atlas.climbing`), its writing (`studies.atlas.writing`), its checking by
sample (`studies.atlas.verify`), its look-up (`studies.atlas.lookup`) and the honest player's games kept beside
its clairvoyant verdicts (`studies.atlas.honest`) are the package's modules.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sim.deals import MAX_SEED
from sim.errors import UserError, quoted
from sim.regular_files import open_regular, refusal
from studies.stats import win_rate_interval

SUMMARY = "summary.csv"
SUMMARY_COLUMNS = ("variant", "fingerprint", "source", "seed", "first", "last", "deals", "won", "lost", "unknown",
                   "timeout", "win_rate", "ci_low", "ci_high", "solver_version", "budgets", "clairvoyant", "command", "reused",
                   "climbed")
VERDICTS = ("won", "lost", "unknown")
INTEGER_COLUMNS = ("seed", "first", "last", "deals", "won", "lost", "unknown")
FLOAT_COLUMNS = ("win_rate", "ci_low", "ci_high")
TIMEOUT = "timeout"
"""The column (summary and deal file) of the deals the seconds cap stopped; a termination of that name in a solve
row marks one."""
REUSED = "reused"
"""The summary column naming the atlas a row's verdicts were taken from (empty: computed by its command)."""
CLIMBED = "climbed"
"""The summary column of the rung every unknown deal of the row has been through (see `climbed`)."""
OPTIONAL_COLUMNS = (TIMEOUT, REUSED, CLIMBED)
"""Summary columns that older atlases lack: read as None."""
DEAL_COLUMNS = ("deal", "verdict", "nodes", "rung")
"""The columns every deal file has (``timeout`` came later)."""
MAX_COUNT = (1 << 63) - 1
"""The largest deal number or count a summary may hold: what a deal file's int64 column holds."""


class AtlasFileError(UserError):
    """An atlas file that cannot be read as one (damaged, not what its name says, a link, not a file): one line."""


def shipped() -> Path:
    """The atlas shipped with the toolkit: package data of `studies.atlas` (``data/``), read where the package is
    installed, wherever the user stands."""
    from importlib.resources import files

    folder = files(__name__).joinpath("data")
    if not isinstance(folder, Path):  # a zipped install: no folder to read Parquet from
        raise AtlasFileError(f"the shipped atlas is inside {folder} and cannot be read as files; name an atlas "
                             "folder with --atlas")
    return folder


def check_plain_file(path: Path) -> None:
    """Refuse ``path`` in one line unless it is a regular file (not a link, a folder, a device)."""
    import stat

    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:
        raise AtlasFileError(f"{path}: missing") from None
    except OSError as exc:
        raise AtlasFileError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    if stat.S_ISLNK(mode):
        raise AtlasFileError(f"{path} is a symbolic link; an atlas holds its own files (copy the file there)")
    if not stat.S_ISREG(mode):
        raise AtlasFileError(str(refusal(path, mode)))


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


def top_rung(budgets: str) -> int:
    """The highest rung a summary row's ``budgets`` (``0: ...; 1: ...``) name: the last its climb has begun."""
    return len(str(budgets).split("; ")) - 1


def climbed(table: pa.Table, budgets: str) -> int:
    """The rung every unknown deal of a deal table has been through: the lowest ``rung`` of its unknown deals, or the
    top rung of ``budgets`` (its row's) when none is unknown. A climb resumed from the table starts above it."""
    import pyarrow.compute as pc

    unknown = table.column("rung").filter(pc.equal(table.column("verdict").cast(pa.string()), "unknown"))
    lowest = pc.min(unknown).as_py()
    return top_rung(budgets) if lowest is None else min(int(lowest), top_rung(budgets))


def summary_row(table: pa.Table, **labels: Any) -> dict[str, Any]:
    """The summary row of a deal table; ``labels`` give variant, fingerprint, source, seed, solver_version, budgets,
    clairvoyant and command (and ``climbed`` follows from the budgets: none without them)."""
    c = counts(table)
    low, high = interval(c["won"], c["unknown"], c["deals"])
    reached = climbed(table, labels["budgets"]) if "budgets" in labels else None
    return {**labels, **c, "win_rate": c["won"] / c["deals"], "ci_low": low, "ci_high": high, CLIMBED: reached}


def merge_summary(rows: list[dict[str, Any]], new: dict[str, Any]) -> list[dict[str, Any]]:
    """``rows`` with ``new`` in place of the row of the same variant and source, sorted by source and variant."""
    kept = [r for r in rows if (r["variant"], r["source"]) != (new["variant"], new["source"])]
    return sorted([*kept, new], key=lambda r: (r["source"], r["variant"]))


def read_summary(path: Path) -> list[dict[str, Any]]:
    """The rows of a summary CSV (none when there is no file), numbers as numbers; ``timeout``, ``reused`` and
    ``climbed`` are None where the file has no such column or the row leaves it empty. A file that is not a summary, or a row that is
    not one (a field missing or extra, a count that is not a whole number 0..2**63-1, a rate that is not a number
    0..1), is an `AtlasFileError` naming the file and line."""
    if not path.exists() and not path.is_symlink():
        return []
    check_plain_file(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in SUMMARY_COLUMNS if c not in header and c not in OPTIONAL_COLUMNS]
            if missing:
                raise AtlasFileError(f"{path} is not an atlas summary (no column {', '.join(missing)})")
            rows = [_summary_values(path, reader.line_num, r) for r in reader]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise AtlasFileError(f"{path} cannot be read as an atlas summary "
                             f"({getattr(exc, 'strerror', None) or exc})") from None
    return rows


def _summary_values(path: Path, line: int, r: dict[str | None, Any]) -> dict[str, Any]:
    """One summary row (``r``, as csv.DictReader gives it) with its numbers as numbers, or an `AtlasFileError`."""
    where = f"{path}, line {line}"
    if None in r or any(v is None for v in r.values()):
        raise AtlasFileError(f"{where}: a row with {'more' if None in r else 'fewer'} fields than the header")
    row: dict[str, Any] = dict(r)
    for key in (*INTEGER_COLUMNS, *(k for k in (TIMEOUT, CLIMBED) if row.get(k))):
        text = str(row[key]).strip()
        if not (text.isdigit() and text.isascii() and len(text) <= 19 and int(text) <= MAX_COUNT):
            raise AtlasFileError(f"{where}: {key} {quoted(text)} is not a whole number 0..{MAX_COUNT}")
        row[key] = int(text)
    if row["seed"] > MAX_SEED:
        raise AtlasFileError(f"{where}: seed {row['seed']} is above the largest seed {MAX_SEED}")
    for key in FLOAT_COLUMNS:
        try:
            row[key] = float(row[key])
        except ValueError:
            row[key] = math.nan
        if not 0.0 <= row[key] <= 1.0:
            raise AtlasFileError(f"{where}: {key} {quoted(r[key])} is not a rate 0..1")
    if Path(row["variant"]).name != row["variant"] or not row["variant"]:
        raise AtlasFileError(f"{where}: variant {quoted(row['variant'])} is not a name a deal file can have")
    for key in (TIMEOUT, CLIMBED):
        row[key] = row[key] if row.get(key, "") != "" else None
    row[REUSED] = row.get(REUSED) or None
    return row


def read_deals(folder: Path, variant: str, source: str, columns: tuple[str, ...] | None = None) -> pa.Table:
    """The deal file of ``variant`` in numbering ``source`` of the atlas at ``folder`` (only ``columns`` where given),
    checked: a regular Parquet file with every column of `DEAL_COLUMNS`, a number for every deal and a verdict of
    `VERDICTS` for each; anything else is an `AtlasFileError` naming the file."""
    import pyarrow.parquet as pq

    path = folder / deals_file(variant, source)
    check_plain_file(path)
    try:
        with pq.ParquetFile(path) as parquet:  # not read_table: its datasets import pandas, a second of a look-up
            names = parquet.schema_arrow.names
            missing = [c for c in DEAL_COLUMNS if c not in names]
            if missing:
                raise AtlasFileError(f"{path} is not an atlas deal file (no column {', '.join(missing)})")
            wanted = [c for c in names if c in (columns or names)]
            table = parquet.read(columns=wanted)
        if table.column("deal").null_count:
            raise AtlasFileError(f"{path}: {table.column('deal').null_count:,} deal(s) without a number")
        if not pa.types.is_integer(table.schema.field("deal").type):
            raise AtlasFileError(f"{path}: its deal numbers are {table.schema.field('deal').type}, not whole numbers")
        if "verdict" in wanted:
            codes, labels = verdict_codes(table)
            used = {labels[i] for i in np.unique(codes).tolist()}
            if table.column("verdict").null_count or not used <= set(VERDICTS):
                raise AtlasFileError(f"{path}: deal(s) without a verdict won/lost/unknown")
    except (OSError, pa.ArrowException) as exc:
        raise AtlasFileError(f"{path} cannot be read as an atlas deal file ({exc})") from None
    return table


def deal_numbers(table: pa.Table) -> np.ndarray:
    """A deal table's deal numbers as a numpy int64 array (no nulls: `read_deals` checked). Read from the Arrow
    buffer, not with ``to_numpy``, which imports pandas: a second of a look-up that needs none of it."""
    deals = table.column("deal").combine_chunks().cast(pa.int64())
    return np.frombuffer(deals.buffers()[1], dtype=np.int64)[deals.offset:deals.offset + len(deals)]


def verdict_codes(table: pa.Table) -> tuple[np.ndarray, list[str]]:
    """A deal table's verdicts as (numpy codes, the label of each code), read as `deal_numbers` reads deals."""
    verdicts = table.column("verdict").combine_chunks()
    if not pa.types.is_dictionary(verdicts.type):
        verdicts = verdicts.dictionary_encode()
    codes = verdicts.indices
    view = np.frombuffer(codes.buffers()[1], dtype=np.dtype(str(codes.type)))[codes.offset:codes.offset + len(codes)]
    return view, [str(v) for v in verdicts.dictionary.to_pylist()]


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


def row_problems(folder: Path, row: dict[str, Any]) -> list[str]:
    """What disagrees between one summary ``row`` of the atlas at ``folder`` and its deal file (counts, range, rate,
    interval, deals repeated or out of order, a rung above those its budgets name, how far it has climbed where
    recorded) and, for PySolFC numbering, its not-winnable list. Empty when they agree; a deal file that cannot be
    read is one problem."""
    import pyarrow.compute as pc

    problems = []
    name = deals_file(row["variant"], row["source"])
    try:
        table = read_deals(folder, row["variant"], row["source"])
    except AtlasFileError as exc:
        return [str(exc)]
    deals = table.column("deal").to_pylist()
    if deals != sorted(set(deals)):
        problems.append(f"{name}: deals not sorted and unique")
    expected = summary_row(table, budgets=row["budgets"])
    for key in ("first", "last", "deals", *VERDICTS, TIMEOUT, *((CLIMBED,) if row.get(CLIMBED) is not None else ())):
        if row[key] != expected[key]:
            problems.append(f"{name}: summary {key} {_recorded(row[key])}, rows {_recorded(expected[key])}")
    highest = pc.max(table.column("rung")).as_py()
    if highest is not None and highest > top_rung(row["budgets"]):
        problems.append(f"{name}: a deal at rung {highest}, above the rungs 0-{top_rung(row['budgets'])} its budgets name")
    for key in FLOAT_COLUMNS:
        if not math.isclose(row[key], expected[key], rel_tol=1e-9, abs_tol=1e-12):
            problems.append(f"{name}: summary {key} {row[key]}, rows {expected[key]}")
    if row["source"] == "pysol":
        listed = folder / not_winnable_file(row["variant"])
        try:
            check_plain_file(listed)
            with listed.open(newline="", encoding="utf-8") as f:
                lines = [(int(r["deal"]), r["verdict"]) for r in csv.DictReader(f)]
        except AtlasFileError as exc:
            return [*problems, str(exc)]
        except (OSError, UnicodeDecodeError, csv.Error, KeyError, TypeError, ValueError) as exc:
            return [*problems, f"{listed.name}: cannot be read as a list of deals ({exc})"]
        if lines != [(d, v) for d, v in zip(deals, table.column("verdict").to_pylist(), strict=True) if v != "won"]:
            problems.append(f"{listed.name}: not the deals of {name} that are not won")
    return problems


def _recorded(value: Any) -> str:
    """A count as a problem line shows it: "not recorded" for None (a file older than the count)."""
    return "not recorded" if value is None else str(value)
