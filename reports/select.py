"""Which of a store's runs a report shows (``report --runs/--variant/--strategy``), and what it left out.

A selection keeps or drops whole runs, never some deals of a run, so every figure of the report stays
on all the deals of the runs it shows. A value that names no run is refused, with the values there are,
since a typing slip would otherwise report nothing of what was asked.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from reports.formats import count
from reports.tables import ReportError

CLAIRVOYANT = " (clairvoyant)"


@dataclass(frozen=True)
class Selection:
    """Runs to keep: each given criterion must hold (an empty one keeps all). ``runs``: run keys or their
    first characters; ``variants``: variant names; ``strategies``: strategy labels
    (``heuristic:preset=builder``) or bare names (``heuristic``: every heuristic run)."""

    runs: Sequence[str] = ()
    variants: Sequence[str] = ()
    strategies: Sequence[str] = ()

    def __bool__(self) -> bool:
        return bool(self.runs or self.variants or self.strategies)

    def options(self) -> str:
        """The selection as the command line gave it: "--variant bakers-dozen --strategy greedy"."""
        return " ".join(f"--{o} {v}" for o, vs in (("runs", self.runs), ("variant", self.variants),
                                                   ("strategy", self.strategies)) for v in vs)

    def apply(self, runs: pd.DataFrame) -> tuple[list[str], list[str]]:
        """The keys of the runs selected, and a line for each run left out (its strategy, variant, key, deals);
        ``runs``: one line per run (``key``, ``variant``, ``strategy`` label, ``deals``: `reports.tables.summary`)."""
        runs = runs.set_index("key")
        keys = pd.Series(runs.index.astype(str))
        names = runs["variant"].astype(str).reset_index(drop=True)
        labels = runs["strategy"].astype(str).str.removesuffix(CLAIRVOYANT).reset_index(drop=True)
        keep = np.ones(len(runs), dtype=bool)
        if self.runs:
            keep &= _matching("--runs", self.runs, keys, lambda v: keys.str.startswith(v))
        if self.variants:
            keep &= _matching("--variant", self.variants, names, lambda v: names == v)
        if self.strategies:
            keep &= _matching("--strategy", self.strategies, labels,
                              lambda v: (labels == v) | (labels.str.split(":").str[0] == v))
        if not keep.any():
            raise ReportError(f"no run of the store is selected by {self.options()}: each value names some run, "
                              "but no run meets them all")
        lines = [f"{labels[i]} on {names[i]} (run {keys[i]}, {count(runs['deals'].iloc[i])} deals)"
                 for i in np.flatnonzero(~keep)]
        return list(keys[keep]), lines


def _matching(option: str, values: Sequence[str], there: pd.Series,
              test: Callable[[str], pd.Series]) -> np.ndarray:
    """Per run, whether it meets any of ``values`` (``test(value)``: a boolean per run); a value that no run
    meets is refused, naming the values ``there`` are."""
    hit = np.zeros(len(there), dtype=bool)
    for v in values:
        found = test(v).to_numpy(dtype=bool)
        if not found.any():
            known = ", ".join(sorted(set(there))[:20])
            raise ReportError(f"{option} {v}: no run of the store has it; the store has {known}")
        hit |= found
    return hit
