"""Looking a deal up in an atlas: is deal N of a variant winnable, and what fraction of the variant's deals is.

One summary row and one deal file are read (strictly: `studies.atlas.read_summary`, `read_deals`), nothing is solved,
so an answer takes well under a second once Python has started. The answer is a plain dict, the same one that
``atlas show --json`` prints and the API returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sim.errors import UserError, quoted
from sim.rules import find_variant, is_variant_file
from studies import atlas as files

LISTINGS = ("lost", "unknown")
"""The verdicts whose deals a look-up can list (the won ones are the rest)."""


class AtlasLookupError(UserError):
    """A look-up the atlas cannot answer: a variant or numbering it has no row for, a deal outside its range."""


def look_up(folder: Path, variant: str, source: str = "default", deal: int | None = None,
            listing: str | None = None) -> dict[str, Any]:
    """What the atlas at ``folder`` says of ``variant`` (a preset name or alias) in numbering ``source``: its row's
    counts, win rate and interval, the winnable fraction's bounds (won, and won or unknown, of its deals), its top
    rung (``rungs``) and the rung every unknown deal has been through (``climbed``; None in older files), and with
    ``deal`` that deal's verdict, the rung that gave it and its nodes; with ``listing`` ("lost" or "unknown") the
    deals of that verdict (as ``lost_deals`` or ``unknown_deals``). Where the atlas keeps an honest player's games
    of the variant (`studies.atlas.honest`), ``honest`` gives them: the player, its counts and interval, the
    clairvoyant wins on the same deals, and with ``deal`` whether it won that deal (None where it did not play it).
    Where the row has unknown deals, ``related`` gives what rows of related rules decide of them
    (`studies.atlas.related`): the relatives, the deals decided won and lost, and with ``deal`` that deal's
    verdict through them and the row that proves it (None where they do not decide it). Nothing here imports
    pandas."""
    import numpy as np

    if is_variant_file(variant):
        raise AtlasLookupError(f"--variant {quoted(variant)}: the atlas holds presets only (see `bakers-dozen variants`)")
    if listing is not None and listing not in LISTINGS:
        raise AtlasLookupError(f"listing {quoted(listing)}: one of {', '.join(LISTINGS)}")
    rules = find_variant(variant)
    if not (folder / files.SUMMARY).exists():
        raise AtlasLookupError(f"{folder}: {'holds no ' + files.SUMMARY if folder.is_dir() else 'no such folder'}, "
                               "so it is not an atlas")
    rows = files.read_summary(folder / files.SUMMARY)
    row = next((r for r in rows if (r["variant"], r["source"]) == (rules.name, source)), None)
    if row is None:
        held = sorted({r["variant"] for r in rows if r["source"] == source})
        raise AtlasLookupError(f"{folder / files.SUMMARY} has no row for {rules.name} in {source} numbering (it has: "
                               f"{', '.join(held) or 'none'})")
    if row["fingerprint"] != rules.fingerprint:
        raise AtlasLookupError(f"{folder / files.SUMMARY}: {rules.name}'s row has rules fingerprint "
                               f"{row['fingerprint']}, this toolkit's preset {rules.fingerprint}; its verdicts are of "
                               "other rules")
    n = row["deals"]
    answer: dict[str, Any] = {
        "atlas": str(folder), "variant": rules.name, "source": source, "first": row["first"], "last": row["last"],
        "deals": n, "won": row["won"], "lost": row["lost"], "unknown": row["unknown"], "win_rate": row["win_rate"],
        "ci_low": row["ci_low"], "ci_high": row["ci_high"], "winnable_low": row["won"] / n if n else None,
        "winnable_high": (row["won"] + row["unknown"]) / n if n else None, "clairvoyant": row["clairvoyant"] == "True",
        "budgets": row["budgets"], "command": row["command"], "reused": row.get(files.REUSED),
        "rungs": files.top_rung(row["budgets"]), "climbed": row.get(files.CLIMBED)}
    answer["honest"] = _honest(folder, rules.name, rules.fingerprint, deal) if source == "default" else None
    answer["related"] = _related(folder, rules.name, source, deal) if row["unknown"] else None
    if deal is None and listing is None:
        return answer
    table = files.read_deals(folder, rules.name, source, ("deal", "verdict", "nodes", "rung", files.TIMEOUT))
    deals = files.deal_numbers(table)
    if deal is not None:
        at = np.flatnonzero(deals == deal)
        if not len(at):
            raise AtlasLookupError(f"deal {deal}: not in the atlas's {rules.name} row ({source} numbering, deals "
                                   f"{row['first']:,}-{row['last']:,})")
        r = table.slice(int(at[0]), 1).to_pylist()[0]
        answer["deal"] = {"deal": deal, "verdict": r["verdict"], "rung": r["rung"], "nodes": r["nodes"],
                          "timeout": bool(r.get(files.TIMEOUT))}
    if listing is not None:
        codes, labels = files.verdict_codes(table)
        wanted = labels.index(listing) if listing in labels else -1
        answer[f"{listing}_deals"] = deals[codes == wanted].tolist()
    return answer


def _honest(folder: Path, variant: str, fingerprint: str, deal: int | None) -> dict[str, Any] | None:
    """The atlas's honest games of ``variant`` as a look-up gives them (None where it has none for these rules)."""
    import numpy as np

    from studies.atlas import honest

    row = honest.read_honest(folder).get(variant)
    if row is None or row.fingerprint != fingerprint:
        return None
    beside = honest.beside_atlas(folder, row)
    answer: dict[str, Any] = {
        "player": row.player, "toolkit": row.toolkit, "first": row.first, "last": row.last, "deals": row.deals,
        "won": row.won, "win_rate": row.win_rate, "ci_low": row.ci_low, "ci_high": row.ci_high,
        "clairvoyant_won": beside.clairvoyant_won if beside else None, "command": row.command}
    if deal is not None:
        deals, won = honest.honest_deals(folder, variant)
        at = np.flatnonzero(deals == deal)
        answer["deal"] = ("won" if won[at[0]] else "lost") if len(at) else None
    return answer


def _related(folder: Path, variant: str, source: str, deal: int | None) -> dict[str, Any]:
    """What the atlas's rows of related rules decide of ``variant``'s unknown deals, as a look-up gives it."""
    from studies.atlas import related

    decided = related.decided_by_relatives(folder, variant, source)
    answer: dict[str, Any] = {
        "relatives": [{"variant": r.variant, "looser": r.looser, "stricter": r.stricter}
                      for r in related.relatives(folder, variant, source)],
        "won": sorted(d for d, (v, _) in decided.items() if v == "won"),
        "lost": sorted(d for d, (v, _) in decided.items() if v == "lost"),
        "via": {str(d): via for d, (_, via) in decided.items()}}
    if deal is not None:
        answer["deal"] = decided.get(deal, (None,))[0]
    return answer
