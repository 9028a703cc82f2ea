"""`atlas --reuse`: climb the ladder from an atlas already written instead of from rung 0, and extend its range.

A variant's deal file holds every deal's verdict and the rung that gave it, and its summary row names every rung's
budget, so the deals its ladder decided need no solving again: only its unknown deals go on to the rungs above the
ones it ran, and deals asked for outside its range start at rung 0. This is what lets the shipped atlas be escalated,
or grown a range at a time, on a machine that does not hold the store it was computed in.

Nothing unchecked is carried over. The row must be for the same rules (fingerprint), numbering, seed and solver
version, must agree with its own deal file (`studies.atlas.row_problems`), must share deals with the range asked
for, and each rung it ran must have this command's budget for that rung; then a random sample of its decided deals
is solved again at rung 0 (`studies.atlas.verify.check_sample`), and any disagreement refuses the whole source.
Otherwise the command stops before any work, saying which of these differs. A file edited to agree with itself
passes the first checks but not the sample once enough of its deals are forged; the row written says where its
verdicts came from (`provenance`: the source folder and a digest of the row and deal file taken, and ``--reuse`` in
its command), so it never passes for a row computed from scratch. The reused wins are not replayed: the deal file
keeps no lines (the referee checked each when it was solved).

Several atlases can be reused at once (`take`, then `vouch`), each checked so: the machines of a climb split by deal range each
write their own folder, and one command reusing them all writes the whole row. A deal two of them hold is taken from
the one that climbed it further (a verdict before an unknown, a higher rung before a lower); two verdicts that differ
refuse both."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.errors import UserError, quoted
from sim.rules import Rules
from studies.atlas.ladder import Checkpoint, Rung, RungReport


class AtlasReuseError(UserError):
    """An atlas `atlas --reuse` cannot take verdicts from."""


def reused_rows(folder: Path, rules: Rules, source: str, seed: int, first: int, last: int, solver_version: str,
                budget_line: str) -> tuple[list[dict[str, Any]], int]:
    """The rows of deals first..last that the atlas at ``folder`` holds (``deal``, ``verdict``, ``nodes``, ``rung``,
    ``termination``) and how many rungs its row ran, after checking that they are the verdicts this command's
    ladder (``budget_line``: `studies.atlas.ladder.budgets`) gives on those rungs."""
    import pyarrow.compute as pc

    from studies import atlas as files

    where = f"--reuse {quoted(str(folder))}"
    if not folder.is_dir():
        raise AtlasReuseError(f"{where}: {'not a folder' if folder.exists() else 'no such folder'}")
    if not (folder / files.SUMMARY).exists():
        raise AtlasReuseError(f"{where}: holds no {files.SUMMARY}, so it is not an atlas")
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
    table = files.read_deals(folder, rules.name, source)
    table = table.filter(pc.and_(pc.greater_equal(table["deal"], first), pc.less_equal(table["deal"], last)))
    rows = [{"deal": r["deal"], "verdict": r["verdict"], "nodes": r["nodes"], "rung": r["rung"],
             "termination": files.TIMEOUT if r.get(files.TIMEOUT) else None} for r in table.to_pylist()]
    return rows, len(ran)


def provenance(folder: Path, rules: Rules, source: str) -> str:
    """Where a reused row's verdicts came from: the folder ``folder`` and the sha256 (first 16 digits) of the summary
    row and deal file taken from it, so that a changed source is told from the one reused."""
    import hashlib

    from studies import atlas as files

    row = next(r for r in files.read_summary(folder / files.SUMMARY) if (r["variant"], r["source"]) == (rules.name, source))
    digest = hashlib.sha256(",".join(str(row.get(k)) for k in files.SUMMARY_COLUMNS if k != files.REUSED).encode())
    digest.update((folder / files.deals_file(rules.name, source)).read_bytes())
    return f"{folder} sha256:{digest.hexdigest()[:16]}"


@dataclass
class Taken:
    """What `take` took from the atlases reused: their rows merged (one a deal, sorted: `merged`), how many rungs the
    furthest of them began, where they came from (`provenance` of each, "; " between) and each one's own rows."""

    rows: list[dict[str, Any]]
    ran: int
    provenance: str
    sources: list[tuple[Path, list[dict[str, Any]]]]


def take(folders: Sequence[Path], rules: Rules, source: str, seed: int, first: int, last: int, solver_version: str,
         budget_line: str) -> Taken:
    """The verdicts of deals first..last that the atlases at ``folders`` hold, once each has passed `reused_rows`'s
    checks; nothing is solved (`vouch` solves their samples). An `AtlasReuseError` names the first that fails."""
    found = [reused_rows(f, rules, source, seed, first, last, solver_version, budget_line) for f in folders]
    sources = [(f, rows) for f, (rows, _) in zip(folders, found, strict=True)]
    where = "; ".join(provenance(f, rules, source) for f in folders)  # before anything is written: --out may be one
    return Taken(merged(sources), max(ran for _, ran in found), where, sources)


def vouch(taken: Taken, rules: Rules, source: str, seed: int, rung0: dict[str, Any], **options: Any) -> list[str]:
    """Solve again a random sample of each reused atlas's decided deals with ``rung0`` (the command's rung 0
    parameters; ``options`` go to `studies.solving.solve_scattered`): each one's check as a line, or an
    `AtlasReuseError` naming the first that a deal contradicts."""
    import pyarrow as pa

    from studies.atlas.verify import check_sample

    lines = []
    for folder, rows in taken.sources:
        table = pa.Table.from_pylist([{k: r[k] for k in ("deal", "verdict", "rung")} for r in rows])
        check = check_sample(rules, {"variant": rules.name, "source": source, "seed": seed}, table, params=rung0,
                             **options)
        if check.disagreements:
            raise AtlasReuseError(f"--reuse {quoted(str(folder))}: not reused: {check.line()}")
        lines.append(f"--reuse {folder}: {check.line()}")
    return lines


def merged(sources: list[tuple[Path, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """The rows of several reused atlases as one, a row a deal: where two hold a deal, the one that climbed it further
    (a verdict before an unknown, then the higher rung). Two verdicts that differ are an `AtlasReuseError`."""
    best: dict[int, tuple[Path, dict[str, Any]]] = {}
    for folder, rows in sources:
        for r in rows:
            held = best.get(r["deal"])
            if held is None:
                best[r["deal"]] = (folder, r)
                continue
            there, old = held
            if "unknown" not in (old["verdict"], r["verdict"]) and old["verdict"] != r["verdict"]:
                raise AtlasReuseError(f"--reuse {quoted(str(there))} and {quoted(str(folder))}: deal {r['deal']} is "
                                      f"{old['verdict']} in one, {r['verdict']} in the other; neither is reused")
            if (r["verdict"] != "unknown", r["rung"]) > (old["verdict"] != "unknown", old["rung"]):
                best[r["deal"]] = (folder, r)
    return [best[d][1] for d in sorted(best)]


def uncovered(rows: list[dict[str, Any]], first: int, last: int) -> list[int]:
    """The deals of first..last that ``rows`` (those of the atlases reused) do not hold."""
    held = {r["deal"] for r in rows}
    return [d for d in range(first, last + 1) if d not in held]


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


def climb_reused(rules: Rules, base: dict[str, Any], rows: list[dict[str, Any]], ran: int, first: int, last: int,
                 rungs: tuple[Rung, ...], seed: int = 0, source: str = "default", checkpoint: Checkpoint | None = None,
                 deadline: float | None = None, **options: Any) -> tuple[list[dict[str, Any]], list[RungReport]]:
    """Deals first..last decided from the reused ``rows`` (whose row began ``ran`` rungs): the deals outside them
    through rung 0, then every deal still open through the rungs above, each from the rung after the one it has been
    through (`studies.atlas.ladder.climb`, with ``checkpoint`` and ``deadline``); the rows and what each rung did (the
    reused rungs marked so). ``options`` go to `studies.solving.solve_deals`."""
    from studies.atlas.ladder import climb, rung_report
    from studies.solving import solve_scattered

    reports = reused_reports(rows, rungs, ran, rules, base)
    missing = uncovered(rows, first, last)
    if missing:  # deals outside the reused range: rung 0 first
        new, _ = solve_scattered(rules, {**base, **rungs[0].params}, missing, seed, source, **options)
        for r in new:
            r["rung"] = 0
        reports.append(rung_report(0, rungs[0], base, new))
        rows = sorted([*rows, *new], key=lambda r: r["deal"])
        if checkpoint is not None:
            checkpoint(rows, 0)
    rows, climbed = climb(rules, base, rows, rungs, 1, seed, source, checkpoint, deadline, **options)
    return rows, reports + [r for r in climbed if r.rung >= ran or r.tried or r.untried]  # not reused rungs again, idle
