"""Studies: sets of runs that are reported together, and the embedded default study.

A study is a list of (rules, strategy, deals) runs played into one store. The
default study is what `bakers-dozen demo` (the README's run command) plays:
every preset variant under the fast built-in strategies with enough deals for
intervals of about +-0.5 percentage points, the slow rollout player on fewer
deals of the main variants, and a sweep of face-down cards per pile.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sim.progress import Progress
from sim.rules import VARIANTS, Rules, find_variant
from sim.runner import RunSpec, RunSummary, run

FAST_STRATEGIES = ("random:home_first=true", "greedy", "heuristic")
SLOW_STRATEGIES = ("lookahead",)
SLOW_VARIANTS = ("bakers-dozen", "kings-into-empty", "dick-1883", "spanish-patience")


@dataclass(frozen=True)
class StudyRun:
    """One run of a study."""

    rules: Rules
    strategy: str
    deals: int
    first: int = 1


def default_study(fast_deals: int = 40_000, slow_deals: int = 1_000) -> list[StudyRun]:
    """The embedded default study (see the module docstring)."""
    runs = [StudyRun(v.rules, s, fast_deals) for s in FAST_STRATEGIES for v in VARIANTS]
    runs += [StudyRun(find_variant(v), s, slow_deals) for s in SLOW_STRATEGIES for v in SLOW_VARIANTS]
    base = find_variant("bakers-dozen")
    runs += [StudyRun(base.replace(name=f"bakers-dozen[face_down={k}]", face_down=k), "heuristic", fast_deals)
             for k in (1, 2, 3)]
    return runs


def run_study(runs: Sequence[StudyRun], store: str | Path, *, seed: int = 0, source: str = "default",
              jobs: int | None = None, progress: Progress | None = None, command: Sequence[str] | None = None,
              ) -> list[RunSummary]:
    """Play every run of a study into ``store`` (reusing what it already holds)."""
    return [run(RunSpec(r.rules, r.strategy, r.deals, r.first, seed, source), store, jobs=jobs, progress=progress,
                command=command) for r in runs]
