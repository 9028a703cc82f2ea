"""Runs played for paired comparisons: each run's summary with its deals' wins, deal by deal.

Paired tests (McNemar's, the sequential test of `studies.sequential`) need to know which deals each
strategy won, not only how many; the runner keeps nothing per deal in memory, so a `Player` plays a run
through the runner (stored and reused like any other) and reads its wins back from the store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from studies.progress import NullProgress
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec, RunSummary

Player = Callable[[RunSpec], tuple[RunSummary, np.ndarray]]
"""Plays a run and returns its summary and its deals' wins (a boolean array, deal by deal from the first)."""


def store_player(store: str | Path, jobs: int | None, command: Sequence[str] | None = None) -> Player:
    """A `Player` that plays through the runner into ``store`` and reads each run's wins back from it."""

    def play(spec: RunSpec) -> tuple[RunSummary, np.ndarray]:
        summary = run(spec, store, jobs=jobs, progress=NullProgress(), command=command)
        rows = read_store(store, key=summary.key, deals=(spec.first, spec.last), columns=["outcome"])
        won = (rows["outcome"] == "won").to_numpy()
        if len(won) != spec.deals or won.sum() != summary.wins:  # a bug guard: a figure over the wrong deals
            raise AssertionError(f"internal error: read {len(won)} deals and {won.sum()} wins back for a run of "
                                 f"{spec.deals} deals and {summary.wins} wins")
        return summary, won

    return play
