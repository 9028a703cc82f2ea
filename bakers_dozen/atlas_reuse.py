"""`atlas --reuse`: climb the ladder from an atlas already written instead of from rung 0, and extend its range.

A variant's deal file holds every deal's verdict and the rung that gave it, and its summary row names every rung's
budget, so the deals its ladder decided need no solving again: only its unknown deals go on to the rungs above the
ones it ran, and deals asked for outside its range start at rung 0. This is what lets the shipped atlas (data/atlas)
be escalated, or grown a range at a time, on a machine that does not hold the store it was computed in. Nothing
false is carried over: the row must be for the same rules (fingerprint), numbering, seed and solver version, must
agree with its own deal file (`studies.atlas.row_problems`), must share deals with the range asked for, and each
rung it ran must have this command's budget for that rung; otherwise the command stops before any work, saying
which of these differs. The rows written are then the ones the same command without ``--reuse`` gives from rung 0
(the budgets are node budgets, so the verdicts do not depend on the machine), and the summary's command is that
command. The reused wins are not replayed: the deal file keeps no lines (the referee checked each when it was
solved)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bakers_dozen.escalate import Rung, RungReport
from sim.errors import UserError, quoted
from sim.rules import Rules


class AtlasReuseError(UserError):
    """An atlas `atlas --reuse` cannot take verdicts from."""


def reused_rows(folder: Path, rules: Rules, source: str, seed: int, first: int, last: int, solver_version: str,
                budget_line: str) -> tuple[list[dict[str, Any]], int]:
    """The rows of deals first..last that the atlas at ``folder`` holds (``deal``, ``verdict``, ``nodes``, ``rung``,
    ``termination``) and how many rungs its row ran, after checking that they are the verdicts this command's
    ladder (``budget_line``: `bakers_dozen.escalate.budgets`) gives on those rungs."""
    import pyarrow.compute as pc

    from studies import atlas as files

    where = f"--reuse {quoted(str(folder))}"
    row = next((r for r in files.read_summary(folder / files.SUMMARY)
                if (r["variant"], r["source"]) == (rules.name, source)), None)
    if row is None:
        raise AtlasReuseError(f"{where}: its {files.SUMMARY} has no row for {rules.name} in {source} numbering")
    seed_there = row["seed"] if source == "default" else seed
    for what, there, here in (("rules fingerprint", row["fingerprint"], rules.fingerprint), ("seed", seed_there, seed),
                              ("solver version", row["solver_version"], str(solver_version))):
        if str(there) != str(here):
            raise AtlasReuseError(f"{where}: {rules.name}'s row has {what} {there}, this command {here}; only "
                                  "verdicts of the same rules, deals and solver can be reused")
    if row["last"] < first or last < row["first"]:
        raise AtlasReuseError(f"{where}: {rules.name}'s row covers deals {row['first']}-{row['last']}, none of "
                              f"{first}-{last}")
    ran, wanted = row["budgets"].split("; "), budget_line.split("; ")
    if len(ran) > len(wanted):
        raise AtlasReuseError(f"{where}: {rules.name}'s row ran rungs 0-{len(ran) - 1}, more than this command's "
                              f"0-{len(wanted) - 1}")
    for i, (there, here) in enumerate(zip(ran, wanted, strict=False)):
        if there != here:
            raise AtlasReuseError(f"{where}: {rules.name}'s rung {i} ran with {there.partition(': ')[2]}, this "
                                  f"command's with {here.partition(': ')[2]}")
    if row["deals"] != row["last"] - row["first"] + 1:
        raise AtlasReuseError(f"{where}: {rules.name}'s row holds {row['deals']:,} deals, not every deal of "
                              f"{row['first']}-{row['last']}")
    problems = files.row_problems(folder, row)
    if problems:
        raise AtlasReuseError(f"{where}: {rules.name}'s row disagrees with its deal file ({problems[0]})")
    table = files.read_deal_table(folder / files.deals_file(rules.name, source))
    table = table.filter(pc.and_(pc.greater_equal(table["deal"], first), pc.less_equal(table["deal"], last)))
    rows = [{"deal": r["deal"], "verdict": r["verdict"], "nodes": r["nodes"], "rung": r["rung"],
             "termination": files.TIMEOUT if r.get(files.TIMEOUT) else None} for r in table.to_pylist()]
    return rows, len(ran)


def uncovered(rows: list[dict[str, Any]], first: int, last: int) -> list[int]:
    """The deals of first..last that ``rows`` (a reused atlas's, a range of consecutive deals) do not hold."""
    if not rows:
        return list(range(first, last + 1))
    return [*range(first, rows[0]["deal"]), *range(rows[-1]["deal"] + 1, last + 1)]


def reused_reports(rows: list[dict[str, Any]], rungs: tuple[Rung, ...], ran: int, rules: Rules,
                   base: dict[str, Any]) -> list[RungReport]:
    """What each of the ``ran`` rungs the reused atlas ran decided on its ``rows``, marked as reused."""
    reports = []
    for i, rung in enumerate(rungs[:ran]):
        budget = Rung({**base, **rung.params}).budget
        if rung.applies is not None and not rung.applies(rules):
            reports.append(RungReport(i, budget, skipped=True))
            continue
        tried = [r for r in rows if r["rung"] >= i]
        here = [r["verdict"] for r in tried if r["rung"] == i]
        reports.append(RungReport(i, budget, len(tried), here.count("won"), here.count("lost"),
                                  len(tried) - here.count("won") - here.count("lost"), reused=True))
    return reports
