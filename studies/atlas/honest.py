"""The honest player's games, shipped with the atlas: what hiding cards costs a player who never reads a face-down
card, set beside the clairvoyant verdicts on the same deals.

Where a variant is dealt partly face down, the atlas's verdicts are clairvoyant (the solver sees every card): an
upper bound for a player at the table. Beside them the atlas keeps an honest player's games on a range of the same
deals: ``honest.csv`` (one row a variant: the player's identity, its counts, the win rate's 95% Wilson interval and
the command that plays them again) and ``honest-<variant>.parquet`` (one row a deal: ``deal``, ``won``,
``cards_home``). They are copied from a store of that player's games (`ship`, run by ``make docs-figures``) so
that an installed toolkit answers the face-down question without the repository's data.

Read strictly (`read_honest`): a row whose counts or interval are not those of its deal file, or whose deal file is
damaged, is one `AtlasFileError` line, never a figure. `beside_atlas` sets a row against the atlas's verdicts on
exactly its deals.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sim.errors import quoted
from studies import atlas as files
from studies.stats import win_rate_interval

HONEST_SUMMARY = "honest.csv"
COLUMNS = ("variant", "fingerprint", "player", "toolkit", "seed", "first", "last", "deals", "won", "win_rate", "ci_low",
           "ci_high", "command")
COUNTS = ("seed", "first", "last", "deals", "won")
RATES = ("win_rate", "ci_low", "ci_high")


def honest_file(variant: str) -> str:
    """The name of a variant's file of honest games."""
    return f"honest-{variant}.parquet"


@dataclass(frozen=True)
class HonestRow:
    """One variant's honest games as the atlas holds them, its counts checked against its deal file."""

    variant: str
    fingerprint: str
    player: str
    """The player's stored identity (``name@version:parameters``)."""
    toolkit: str
    """The toolkit version that played the games (its ``command`` plays the same player again)."""
    seed: int
    first: int
    last: int
    deals: int
    won: int
    win_rate: float
    ci_low: float
    ci_high: float
    command: str


@dataclass(frozen=True)
class Beside:
    """An honest row and the atlas's clairvoyant verdicts on exactly its deals."""

    honest: HonestRow
    clairvoyant_won: int
    clairvoyant_unknown: int

    @property
    def kept(self) -> float | None:
        """The share of the clairvoyant player's wins the honest player keeps (None when it won none)."""
        return self.honest.won / self.clairvoyant_won if self.clairvoyant_won else None


def from_store(store: Path) -> dict[str, tuple[dict[str, Any], pa.Table]]:
    """The honest (not clairvoyant) games of the store at ``store``, by variant: the summary row and the deal table
    `ship` writes. A variant with games of more than one player, or with a deal that ended in an error, is refused
    (`AtlasFileError`): a row holds one player's finished games."""
    from studies.reading import read_store

    rows = read_store(store, columns=["variant", "rules_fingerprint", "strategy", "strategy_identity", "seed",
                                      "clairvoyant", "outcome", "cards_home", "toolkit_version"])
    rows = rows[~rows["clairvoyant"].astype(bool)]
    found = {}
    for variant, games in rows.groupby("variant", sort=True):
        players = sorted(set(games["strategy_identity"]))
        if len(players) > 1:
            raise files.AtlasFileError(f"{store}: {variant} has the games of {len(players)} players "
                                       f"({', '.join(players)}); the atlas keeps one honest player a variant")
        errors = int((~games["outcome"].isin(["won", "lost"])).sum())
        if errors:
            raise files.AtlasFileError(f"{store}: {errors} {variant} deal(s) did not end won or lost; play them "
                                       "again first")
        games = games.sort_values("deal")
        deals = games["deal"].to_numpy()
        won = games["outcome"].to_numpy() == "won"
        low, high = win_rate_interval(int(won.sum()), len(deals))
        first, last, seed = int(deals[0]), int(deals[-1]), int(games["seed"].iloc[0])
        command = (f"bakers-dozen simulate -v {variant} -s {games['strategy'].iloc[0]} -n {last - first + 1}"
                   + (f" -k {first}" if first != 1 else "") + (f" --seed {seed}" if seed else "")
                   + " --store data/honest-store")
        row = {"variant": str(variant), "fingerprint": str(games["rules_fingerprint"].iloc[0]), "player": players[0],
               "toolkit": str(games["toolkit_version"].iloc[0]), "seed": seed, "first": first, "last": last,
               "deals": len(deals), "won": int(won.sum()), "win_rate": int(won.sum()) / len(deals), "ci_low": low,
               "ci_high": high, "command": command}
        table = pa.table({"deal": pa.array(deals, pa.int64()), "won": pa.array(won, pa.bool_()),
                          "cards_home": pa.array(games["cards_home"].to_numpy(), pa.int8())})
        found[str(variant)] = (row, table)
    return found


def ship(store: Path, folder: Path) -> list[dict[str, Any]]:
    """Copy the honest games of the store at ``store`` (`from_store`) into the atlas at ``folder``: a deal file and
    a summary row for each variant, replacing that variant's earlier ones, under the folder's lock; the rows
    written."""
    from studies.atlas.writing import folder_lock, write_atomically

    found = from_store(store)
    with folder_lock(folder):
        kept = [r for r in _summary_rows(folder / HONEST_SUMMARY) if r["variant"] not in found]
        for variant, (_, table) in found.items():
            write_atomically(folder / honest_file(variant), lambda tmp, table=table: _write_table(table, tmp))
        merged = sorted(kept + [row for row, _ in found.values()], key=lambda r: r["variant"])
        write_atomically(folder / HONEST_SUMMARY, lambda tmp: _write_summary(merged, tmp))
    return [row for row, _ in found.values()]


def _write_table(table: pa.Table, path: Path) -> None:
    import pyarrow.parquet as pq

    pq.write_table(table, path, compression="zstd")


def _write_summary(rows: list[dict[str, Any]], path: Path) -> None:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: r[k] for k in COLUMNS} for r in rows)


def _summary_rows(path: Path) -> list[dict[str, Any]]:
    """The summary's rows as text (none when there is no file); a file that is not an honest summary is an
    `AtlasFileError`."""
    if not path.exists() and not path.is_symlink():
        return []
    files.check_plain_file(path)
    try:
        with path.open(newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise files.AtlasFileError(f"{path} is not the atlas's honest summary (no column {', '.join(missing)})")
            rows = list(reader)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise files.AtlasFileError(f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})") from None
    if any(None in r or None in r.values() for r in rows):
        raise files.AtlasFileError(f"{path}: a row with more or fewer fields than the header")
    return rows


def read_honest(folder: Path) -> dict[str, HonestRow]:
    """The honest rows of the atlas at ``folder`` by variant (none when it has no honest summary), each checked
    against its deal file: its deals sorted and unique, its counts, range, rate and interval those of the file. Any
    disagreement or damage is an `AtlasFileError` naming the file."""
    found = {}
    for text in _summary_rows(folder / HONEST_SUMMARY):
        row = _row(folder / HONEST_SUMMARY, text)
        problem = _disagreement(folder, row)
        if problem:
            raise files.AtlasFileError(f"{folder / honest_file(row.variant)}: {problem}")
        found[row.variant] = row
    return found


def _row(path: Path, text: dict[str, str]) -> HonestRow:
    """A summary line as a `HonestRow`, its numbers checked as numbers."""
    where = f"{path}, {text['variant'] or 'a row without a variant'}"
    try:
        counts = {k: int(text[k]) for k in COUNTS}
        rates = {k: float(text[k]) for k in RATES}
    except ValueError:
        raise files.AtlasFileError(f"{where}: a count or rate is not a number") from None
    if Path(text["variant"]).name != text["variant"] or not text["variant"]:
        raise files.AtlasFileError(f"{where}: variant {quoted(text['variant'])} is not a name a deal file can have")
    if not (0 <= counts["won"] <= counts["deals"] and 0 < counts["deals"] <= counts["last"] - counts["first"] + 1):
        raise files.AtlasFileError(f"{where}: won {counts['won']} of {counts['deals']} deals in "
                                   f"{counts['first']}-{counts['last']} do not add up")
    low, high = win_rate_interval(counts["won"], counts["deals"])
    if not all(math.isclose(a, b, rel_tol=1e-9) for a, b in
               zip((rates["win_rate"], rates["ci_low"], rates["ci_high"]), (counts["won"] / counts["deals"], low, high),
                   strict=True)):
        raise files.AtlasFileError(f"{where}: its win rate or interval is not that of its counts")
    return HonestRow(variant=text["variant"], fingerprint=text["fingerprint"], player=text["player"],
                     toolkit=text["toolkit"], command=text["command"], **counts, **rates)


def _disagreement(folder: Path, row: HonestRow) -> str:
    """Why the deal file of ``row`` does not hold what the row says ('' when it does)."""
    import pyarrow.parquet as pq

    path = folder / honest_file(row.variant)
    files.check_plain_file(path)
    try:
        with pq.ParquetFile(path) as parquet:
            table = parquet.read(columns=["deal", "won"])
    except (OSError, pa.ArrowException, KeyError) as exc:
        return f"cannot be read as the honest games' file ({exc})"
    if table.column("deal").null_count or table.column("won").null_count:
        return "a deal without a number or an outcome"
    deals = files.deal_numbers(table)
    if len(deals) and not bool(np.all(np.diff(deals) > 0)):
        return "its deals are not sorted and unique"
    import pyarrow.compute as pc  # not to_numpy: a chunked array's imports pandas, a second of a look-up

    found = (int(deals[0]) if len(deals) else None, int(deals[-1]) if len(deals) else None, len(deals),
             int(pc.sum(table.column("won")).as_py() or 0))
    said = (row.first, row.last, row.deals, row.won)
    if found != said:
        return (f"holds deals {found[0]}-{found[1]}, {found[2]:,} deals, {found[3]:,} won; {HONEST_SUMMARY} says "
                f"{said[0]}-{said[1]}, {said[2]:,}, {said[3]:,}")
    return ""


def honest_deals(folder: Path, variant: str) -> tuple[np.ndarray, np.ndarray]:
    """The deal numbers of a variant's honest games and whether each was won (`read_honest` checks them)."""
    import pyarrow.parquet as pq

    with pq.ParquetFile(folder / honest_file(variant)) as parquet:
        table = parquet.read(columns=["deal", "won"])
    return files.deal_numbers(table), np.array(table.column("won").to_pylist(), dtype=bool)


def beside_atlas(folder: Path, row: HonestRow) -> Beside | None:
    """The atlas's clairvoyant verdicts on exactly the deals of ``row`` (None when the atlas's row for the variant
    lacks any of them)."""
    try:
        table = files.read_deals(folder, row.variant, "default", ("deal", "verdict"))
    except files.AtlasFileError:
        return None
    deals, _ = honest_deals(folder, row.variant)
    atlas_deals = files.deal_numbers(table)
    at = np.searchsorted(atlas_deals, deals)
    if np.any(at >= len(atlas_deals)) or np.any(atlas_deals[np.minimum(at, len(atlas_deals) - 1)] != deals):
        return None
    codes, labels = files.verdict_codes(table)
    on = codes[at]
    count = {v: int(np.count_nonzero(on == labels.index(v))) if v in labels else 0 for v in ("won", "unknown")}
    return Beside(row, count["won"], count["unknown"])
