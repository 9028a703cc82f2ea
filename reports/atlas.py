"""The winnability atlas as a report reads it: the perfect-play figure of the rules a report shows, where the atlas
(shipped with the toolkit as package data, `studies.atlas`) holds them.

A report's variants are matched to the atlas's rows by rules fingerprint, never by name, in the toolkit's own deal
numbering (source ``default``); the row with the most deals wins a tie. A row is shown only when it adds up (won, lost
and unknown make its deals; its rate and interval are those of its counts) and its deal file counts the same, each
deal once: an atlas
half rewritten or damaged shows nothing rather than a figure that is not true. Anything that cannot be used is said in
one `AtlasWarning` line; no atlas file ever stops a report.

Where the atlas is: `atlas_folder` (``--atlas PATH``; without it, the atlas shipped with the toolkit,
`studies.atlas.shipped`, wherever the user stands).
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reports.formats import count, pct, runs_text
from reports.render import Cell
from sim.regular_files import open_regular
from studies.atlas import FLOAT_COLUMNS, INTEGER_COLUMNS, SUMMARY, TIMEOUT, VERDICTS, AtlasFileError, counts, deals_file, interval, shipped
from studies.atlas.honest import HONEST_SUMMARY, Beside, beside_atlas, read_honest
from studies.stats import win_rate_interval

COLUMN = "perfect play (atlas)"
"""The report grid's column of atlas figures."""
NEEDED = ("variant", "fingerprint", "source", *INTEGER_COLUMNS, *FLOAT_COLUMNS, "clairvoyant", "command")


class AtlasWarning(UserWarning):
    """An atlas file, or a row of its summary, that a report cannot use; the message says which and why."""


@dataclass(frozen=True)
class Figure:
    """One summary row of the atlas that adds up and agrees with its deal file."""

    variant: str
    fingerprint: str
    seed: int
    first: int
    last: int
    deals: int
    won: int
    lost: int
    unknown: int
    timeout: int | None
    """Unknown deals the seconds cap stopped; None where the atlas's files predate the count."""
    win_rate: float
    ci_low: float
    ci_high: float
    clairvoyant: bool
    command: str


def atlas_folder(given: Path | None) -> Path | None:
    """The atlas a report reads: ``given`` (``--atlas``), else the shipped atlas when it holds the summary, else
    none. A folder given but missing is still returned, so that reading it says so."""
    if given is not None:
        return given
    folder = shipped()
    return folder if (folder / SUMMARY).is_file() else None


def _warn(text: str, row: bool = False) -> None:
    """One `AtlasWarning`: what cannot be used, and what the report does instead."""
    done = "the report shows no atlas figure for its rules" if row else "the report shows no atlas figures"
    warnings.warn(AtlasWarning(f"atlas: {text}; {done}"), stacklevel=3)


def perfect_play(folder: Path | None, fingerprints: Iterable[str]) -> dict[str, Figure]:
    """The atlas figure of each of ``fingerprints`` the atlas at ``folder`` holds (source ``default``), by
    fingerprint; an `AtlasWarning` for each file or row that cannot be used."""
    wanted = set(fingerprints)
    if folder is None or not wanted:
        return {}
    rows = _summary_rows(folder / SUMMARY)
    best: dict[str, dict[str, Any]] = {}
    for row in rows:
        if row.get("source") != "default" or row.get("fingerprint") not in wanted:
            continue
        fingerprint = str(row["fingerprint"])
        if fingerprint not in best or _deals(row) > _deals(best[fingerprint]):
            best[fingerprint] = row
    figures = {}
    for fingerprint, row in best.items():
        figure = _figure(folder, row)
        if figure is not None:
            figures[fingerprint] = figure
    return figures


def _deals(row: dict[str, Any]) -> int:
    try:
        return int(row["deals"])
    except (TypeError, ValueError):
        return -1


def _summary_rows(path: Path) -> list[dict[str, Any]]:
    """The summary's rows as text, or none (with a warning) when the file cannot be read as a summary."""
    try:
        with open_regular(path, "r", newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            header = reader.fieldnames or []
    except FileNotFoundError:
        _warn(f"{path} does not exist")
        return []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        _warn(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})")
        return []
    missing = [c for c in NEEDED if c not in header]
    if missing:
        _warn(f"{path} is not an atlas summary (no column {', '.join(missing)})")
        return []
    return rows


def _figure(folder: Path, row: dict[str, Any]) -> Figure | None:
    """The row as a `Figure` when it adds up and its deal file counts the same; else None, with a warning."""
    name = f"{folder / SUMMARY}, row {row['variant']}"
    try:
        numbers = {k: int(row[k]) for k in INTEGER_COLUMNS} | {k: float(row[k]) for k in FLOAT_COLUMNS}
        stopped = int(row[TIMEOUT]) if row.get(TIMEOUT) else None
    except (TypeError, ValueError):
        _warn(f"{name}: a count or rate is not a number", row=True)
        return None
    problem = _adds_up(numbers, stopped)
    variant = str(row["variant"])
    if not problem and Path(variant).name != variant:
        problem = "its variant is not a name its deal file can have"
    if problem:
        _warn(f"{name}: {problem}", row=True)
        return None
    problem = _agrees(folder / deals_file(variant, "default"), numbers, stopped)
    if problem:
        _warn(f"{name}: {problem}", row=True)
        return None
    return Figure(variant=variant, fingerprint=str(row["fingerprint"]), seed=numbers["seed"],
                  first=numbers["first"], last=numbers["last"], deals=numbers["deals"], won=numbers["won"],
                  lost=numbers["lost"], unknown=numbers["unknown"], timeout=stopped, win_rate=numbers["win_rate"],
                  ci_low=numbers["ci_low"], ci_high=numbers["ci_high"], clairvoyant=row["clairvoyant"] == "True",
                  command=str(row["command"]))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _adds_up(n: dict[str, Any], stopped: int | None) -> str:
    """Why a row's own numbers do not add up ('' when they do)."""
    if n["deals"] <= 0 or min(n[v] for v in VERDICTS) < 0 or n["first"] > n["last"]:
        return f"deals {n['deals']}, won {n['won']}, lost {n['lost']}, unknown {n['unknown']}, range {n['first']}-{n['last']}"
    if sum(n[v] for v in VERDICTS) != n["deals"]:
        return f"won {n['won']} + lost {n['lost']} + unknown {n['unknown']} is not its {n['deals']} deals"
    if n["deals"] > n["last"] - n["first"] + 1:
        return f"{n['deals']} deals do not fit in deals {n['first']}-{n['last']}"
    if stopped is not None and not 0 <= stopped <= n["unknown"]:
        return f"timeout {stopped} is not among its {n['unknown']} unknown deals"
    low, high = interval(n["won"], n["unknown"], n["deals"])
    if not (_close(n["win_rate"], n["won"] / n["deals"]) and _close(n["ci_low"], low) and _close(n["ci_high"], high)):
        return "its win rate or interval is not that of its counts"
    return ""


def _agrees(path: Path, n: dict[str, Any], stopped: int | None) -> str:
    """Why the deal file at ``path`` does not count what the row says ('' when it does)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with open_regular(path, "rb") as fh:
            columns = pq.read_schema(fh).names
            fh.seek(0)
            table = pq.read_table(fh, columns=[c for c in ("deal", "verdict", TIMEOUT) if c in columns])
        found = counts(table)
    except FileNotFoundError:
        return f"its deal file {path.name} does not exist"
    except (OSError, pa.ArrowException, KeyError, ValueError, TypeError) as exc:
        return f"its deal file {path.name} cannot be read ({exc})"
    import pyarrow.compute as pc

    repeated = len(table) - pc.count_distinct(table.column("deal")).as_py()
    if repeated:
        return f"its deal file {path.name} holds {repeated:,} deal(s) more than once"
    wrong = [k for k in ("first", "last", "deals", *VERDICTS) if found[k] != n[k]]
    if stopped is not None and found[TIMEOUT] is not None and found[TIMEOUT] != stopped:
        wrong.append(TIMEOUT)
    if wrong:
        return "its deal file counts " + ", ".join(f"{k} {found[k]}, not {n[k] if k != TIMEOUT else stopped}" for k in wrong)
    return ""


def cell(f: Figure) -> Cell:
    """The grid's atlas cell: the win rate (a range when deals are unknown) over its interval, deal count (and, in
    the one-line text, their range), unknown and clock-stopped deals, and "clairvoyant" where the solver saw
    face-down cards."""
    upper = (f.won + f.unknown) / f.deals
    main = f"{f.win_rate * 100:.2f}–{pct(upper)}" if f.unknown else pct(f.win_rate)
    details = [f"{f.ci_low:.2%}–{f.ci_high:.2%}", f"{count(f.deals)} deals ({runs_text([(f.first, f.last)])})"]
    if f.unknown:
        details.append(f"{count(f.unknown)} unknown" + (f", {count(f.timeout)} stopped by the clock" if f.timeout else ""))
    if f.clairvoyant:
        details.append("clairvoyant")
    text = f"{main} ({details[0]}) of {', '.join(details[1:])}"
    # on the page the deal range is left to the cell's tooltip (``text``) and the paragraph under the grid, so
    # that the grid's rows stay short enough for the whole grid to fit a first screen
    shown = [f"{f.ci_low * 100:.2f}–{f.ci_high:.2%}", f"{count(f.deals)} deals", *details[2:]]
    return Cell(main, " · ".join(shown), text)


def grid_column(text: pd.DataFrame, colours: pd.DataFrame, fingerprints: dict[str, str],
                figures: dict[str, Figure]) -> tuple[pd.DataFrame, pd.DataFrame, list[Figure]]:
    """The grid (``text``, ``colours``: `reports.grid.table`) with `COLUMN` after its perfect-play columns (last when
    it has none), a cell for each variant whose rules (``fingerprints``: variant -> fingerprint) ``figures`` holds;
    and the figures shown. Unchanged when no variant has one."""
    from reports.grid import rate_colour

    shown = [figures.get(fingerprints.get(str(v), "")) for v in text["variant"]]
    used = list(dict.fromkeys(f for f in shown if f is not None))
    if not used:
        return text, colours, []
    after = [i for i, c in enumerate(text.columns) if str(c).startswith("perfect play")]
    at = after[-1] + 1 if after else len(text.columns)
    text, colours = text.copy(), colours.copy()
    text.insert(at, COLUMN, [cell(f) if f is not None else "–" for f in shown])
    colours.insert(at, COLUMN, [rate_colour(f.win_rate) if f is not None else "" for f in shown])
    return text, colours, used


def paragraph(folder: Path, figures: list[Figure], live: bool) -> str:
    """What the grid's atlas column is, where it comes from and how each of its figures is computed again; ``live``:
    the grid also has the solver's column on the report's own deals."""
    commands = "; ".join(f"`{f.command}`" for f in figures)
    beside = " The perfect-play column before it is the solver on this report's own deals." if live else ""
    return (f"{COLUMN}: the winnability atlas ({folder / SUMMARY}) for the same rules (matched by rules fingerprint): "
            "every deal of its range decided by the solver's escalation ladder; its interval runs from the lower 95% "
            f"Wilson bound of the deals won to the upper bound of those won or unknown.{beside} "
            f"Computed again by {commands}.")


HONEST_CAPTION = "What hiding cards costs an honest player (the atlas's honest games)"
"""The answer section's table of the atlas's honest rows, shown after the grid."""


def honest_beside(folder: Path | None, fingerprints: Iterable[str]) -> list[Beside]:
    """The atlas's honest rows (`studies.atlas.honest`) for the rules of ``fingerprints``, each beside the atlas's
    clairvoyant verdicts on its deals; an `AtlasWarning` when the honest files cannot be used, and none shown."""
    wanted = set(fingerprints)
    if folder is None or not wanted:
        return []
    try:
        rows = read_honest(folder)
    except AtlasFileError as exc:
        warnings.warn(AtlasWarning(f"atlas: {exc}; the report shows no honest games from it"), stacklevel=2)
        return []
    shown = [beside_atlas(folder, r) for r in rows.values() if r.fingerprint in wanted]
    return [b for b in shown if b is not None]


def honest_table(shown: list[Beside]) -> pd.DataFrame:
    """The honest rows as the report's table: variant, player, deals, the honest win rate and the clairvoyant one on
    the same deals, each with its 95% interval, and the share of the clairvoyant wins the honest player keeps."""
    def rate(won: int, deals: int) -> str:
        low, high = win_rate_interval(won, deals)
        return f"{pct(won / deals)} ({low:.2%}–{high:.2%})"

    return pd.DataFrame([{
        "variant": b.honest.variant,
        "honest player": f"{b.honest.player.split(':')[0]} (bakers-dozen {b.honest.toolkit})",
        "deals": f"{count(b.honest.deals)} ({runs_text([(b.honest.first, b.honest.last)])})",
        "honest win rate": rate(b.honest.won, b.honest.deals),
        "clairvoyant on the same deals": rate(b.clairvoyant_won, b.honest.deals)
        + (f", {count(b.clairvoyant_unknown)} unknown" if b.clairvoyant_unknown else ""),
        "honest / clairvoyant": f"{b.kept:.2f}" if b.kept is not None else "–"} for b in shown])


def honest_paragraph(folder: Path, shown: list[Beside]) -> str:
    """What the honest table is and the commands that play its games again."""
    commands = "; ".join(f"`{b.honest.command}`" for b in shown)
    return (f"{HONEST_CAPTION}: games of a player that never reads a face-down card, kept with the atlas "
            f"({folder / HONEST_SUMMARY}) for the same rules, beside the atlas's clairvoyant verdicts on exactly "
            f"those deals; the last column is the share of the clairvoyant wins the honest player keeps. Played "
            f"again, with the toolkit version its table names, by {commands}.")
