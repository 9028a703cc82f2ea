"""Atlases made in a test's folder as `bakers-dozen atlas` writes them, from made-up solve rows."""

from __future__ import annotations

from pathlib import Path

from sim.rules import find_variant
from studies.atlas import deal_table, summary_row, write_deals, write_summary

BAKERS = find_variant("bakers-dozen").fingerprint


def verdicts(won: int, lost: int, unknown: int = 0, timeout: int = 0) -> list[dict]:
    """Solve rows of deals 1.. with these verdicts; the last ``timeout`` of the unknown deals stopped by the seconds cap."""
    kinds = ["won"] * won + ["lost"] * lost + ["undecided"] * (unknown - timeout) + ["timeout"] * timeout
    return [{"deal": d, "verdict": "unknown" if k in ("undecided", "timeout") else k, "nodes": 1, "rung": 0,
             "termination": k} for d, k in enumerate(kinds, start=1)]


def make_atlas(folder: Path, rows: list[tuple[str, str, str, list[dict]]]) -> Path:
    """An atlas of (variant name, fingerprint, source, solve rows) rows, written as `bakers-dozen atlas` writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    summary = []
    for name, fingerprint, source, deals in rows:
        table = deal_table(deals)
        write_deals(table, folder / (f"pysol-{name}.parquet" if source == "pysol" else f"{name}.parquet"))
        summary.append(summary_row(table, variant=name, fingerprint=fingerprint, source=source, seed=0, solver_version="11",
                                   budgets="0: nodes=1", clairvoyant=False,
                                   command=f"bakers-dozen atlas --variant {name} --deals 1-{len(deals)}"))
    write_summary(summary, folder / "summary.csv")
    return folder
