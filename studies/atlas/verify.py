"""Checking an atlas by solving again: a random sample of a row's decided deals, at the row's rung 0.

An atlas's files can be made to agree with themselves by hand (a lost deal set to won and its summary adjusted), and
`studies.atlas.check_atlas` cannot tell. Solving is the check: rung 0 is a node budget, so the same deal gives the
same verdict on any machine, and a deal the ladder decided at rung 0 must be decided the same way again; a deal it
decided higher up must not get the other verdict from rung 0 (rung 0 may leave it open: that is why it climbed).
Wins are replayed by the referee as they are found. The sample is drawn afresh each time (its seed is reported), so a
forger cannot know which deals will be checked: with a sample of 200, a row with 2% of its decided deals forged is
caught 98 times in 100, and one forged deal among fewer than 200 always.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from sim.errors import UserError
from sim.rules import Rules, preset_named
from studies import atlas as files

DEFAULT_SAMPLE = 200
"""Decided deals of a row solved again (all of them where it has fewer)."""


class AtlasVerifyError(UserError):
    """An atlas row that its sample of deals solved again contradicts, or that cannot be checked."""


@dataclass
class SampleCheck:
    """What solving a sample of a row's decided deals again found: the deals checked, and each disagreement."""

    variant: str
    source: str
    decided: int
    checked: list[int]
    sample_seed: int
    disagreements: list[str] = field(default_factory=list)

    def line(self) -> str:
        """One line: how many deals were solved again and whether they agree."""
        found = ("all agree" if not self.disagreements
                 else f"{len(self.disagreements):,} disagree, e.g. {self.disagreements[0]}")
        return (f"{self.variant} ({self.source} numbering): solved {len(self.checked):,} of its {self.decided:,} "
                f"decided deals again at rung 0 (sample seed {self.sample_seed}): {found}")


def row_rules(row: dict[str, Any]) -> Rules:
    """The preset a summary row is about, checked against its recorded rules fingerprint."""
    rules = preset_named(str(row["variant"]))
    if rules is None or rules.name != row["variant"]:
        raise AtlasVerifyError(f"row {row['variant']}: not a preset of this toolkit (see `bakers-dozen variants`)")
    if rules.fingerprint != row["fingerprint"]:
        raise AtlasVerifyError(f"row {row['variant']}: rules fingerprint {row['fingerprint']}, this toolkit's preset "
                               f"{rules.fingerprint}; its verdicts are of other rules")
    return rules


def rung0_params(row: dict[str, Any]) -> dict[str, str]:
    """The solver parameters of the row's rung 0, from its budgets (``0: nodes=..., seconds=...; 1: ...``)."""
    first = str(row["budgets"]).split("; ")[0]
    number, sep, params = first.partition(": ")
    pairs = [p.partition("=") for p in params.split(", ")] if sep else []
    if number != "0" or not pairs or any(not eq or not k for k, eq, _ in pairs):
        raise AtlasVerifyError(f"row {row['variant']}: its budgets {row['budgets']!r} do not name rung 0's")
    return {k: v for k, _, v in pairs}


def check_sample(rules: Rules, row: dict[str, Any], table: pa.Table, sample: int = DEFAULT_SAMPLE,
                 params: dict[str, Any] | None = None, sample_seed: int | None = None, **options: Any) -> SampleCheck:
    """Solve again at rung 0 (``params``; default the row's own) a random sample of ``sample`` decided deals of the
    deal ``table`` (``deal``, ``verdict``, ``rung``) of summary ``row``, all where it has fewer; what was found.
    ``options`` go to `studies.solving.solve_scattered` (store, jobs, ...)."""
    import numpy as np
    import pyarrow.compute as pc

    from studies.solving import solve_scattered

    decided = table.filter(pc.is_in(table["verdict"].cast(pa.string()), value_set=pa.array(["won", "lost"])))
    seed = secrets.randbits(63) if sample_seed is None else sample_seed
    pick = np.sort(np.random.default_rng(seed).choice(len(decided), size=min(sample, len(decided)), replace=False))
    chosen = decided.take(pa.array(pick, pa.int64())).to_pylist()
    check = SampleCheck(str(row["variant"]), str(row["source"]), len(decided), [r["deal"] for r in chosen], seed)
    if not chosen:
        return check
    again, _ = solve_scattered(rules, params if params is not None else rung0_params(row), check.checked,
                               row["seed"] if row["source"] == "default" else 0, row["source"], **options)
    now = {r["deal"]: r for r in again}
    for r in chosen:
        found = now[r["deal"]]
        verdict = found["verdict"]
        if verdict not in files.VERDICTS:
            check.disagreements.append(f"deal {r['deal']}: recorded {r['verdict']}, rung 0 now gives {verdict} "
                                       "(a win the referee rejected, or an error)")
        elif verdict != "unknown" and verdict != r["verdict"]:
            check.disagreements.append(f"deal {r['deal']}: recorded {r['verdict']} (rung {r['rung']}), rung 0 "
                                       f"now finds it {verdict}")
        elif verdict == "unknown" and r["rung"] == 0 and found.get("termination") != files.TIMEOUT:
            check.disagreements.append(f"deal {r['deal']}: recorded {r['verdict']} at rung 0, rung 0 now leaves "
                                       "it unknown")
    return check


def verify_atlas(folder: Path, sample: int = DEFAULT_SAMPLE, variants: tuple[str, ...] = (),
                 **options: Any) -> list[SampleCheck]:
    """Check every row of the atlas at ``folder`` (only ``variants`` where given): its deal file agrees with it
    (`studies.atlas.row_problems`), then a sample of its decided deals solved again (`check_sample`); the checks
    made. A row that disagrees with its deal file is an `AtlasVerifyError` before any solving."""
    if not folder.is_dir():
        raise AtlasVerifyError(f"{folder}: {'not a folder' if folder.exists() else 'no such folder'}")
    if not (folder / files.SUMMARY).exists():
        raise AtlasVerifyError(f"{folder}: holds no {files.SUMMARY}, so it is not an atlas")
    rows = [r for r in files.read_summary(folder / files.SUMMARY) if not variants or r["variant"] in variants]
    if variants and not rows:
        raise AtlasVerifyError(f"{folder / files.SUMMARY} has no row for {', '.join(variants)}")
    checked = []
    for row in rows:
        problems = files.row_problems(folder, row)
        if problems:
            raise AtlasVerifyError(f"{folder}: {row['variant']}'s row disagrees with its deal file ({problems[0]})")
        checked.append((row_rules(row), row, files.read_deals(folder, row["variant"], row["source"],
                                                              ("deal", "verdict", "rung"))))
    return [check_sample(rules, row, table, sample, **options) for rules, row, table in checked]
