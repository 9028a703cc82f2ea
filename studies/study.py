"""Studies: sets of runs that are reported together, and the embedded default study.

A study is a list of runs (`studies.spec.RunSpec`) played into one store. The
default study is what `bakers-dozen demo` (the README's run command) plays:
every preset variant under the fast built-in strategies (`FAST_DEALS` deals, intervals
of at most +-0.7 percentage points), the slow rollout player on fewer
deals of the main variants, a sweep of face-down cards per pile, the honest
sampling player on the variants dealt partly face down (`HONEST`: the best
player there that never reads a hidden card), and perfect play: the solver on
every preset (`SOLVER`), the top of the ladder each player is measured
against. On face-up variants its win rate is the winnability of the
deals (deals it leaves ``unknown`` are counted: the winnable fraction lies
between won and won + unknown); on face-down variants it sees the hidden cards
and its figure is a clairvoyant upper bound, labelled so (``solver
(clairvoyant)``, the store's ``clairvoyant`` column).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from sim.rules import VARIANTS, Rules, find_variant
from studies.backends import warm_study
from studies.progress import Progress
from studies.runner import run
from studies.spec import RunSpec, RunSummary, check_run

FAST_STRATEGIES = ("random:home_first=true", "greedy", "heuristic")
FAST_DEALS = 20_000
"""Deals per run of the fast strategies (and of the face-down sweep): a 95% Wilson interval of at most +-0.69
percentage points (at a 50% win rate; +-0.42 at 10%, +-0.14 at 1%). Twice as many would narrow them by
a third and cost 30 s more of the deals' CPU, most of it random play (about 1,000 moves a lost deal): on a
slow day of the development machine, enough to take a first run on a fresh machine past the six minutes asked
of it (docs/performance.md, "The two commands")."""
SLOW_STRATEGIES = ("lookahead",)
SLOW_VARIANTS = ("bakers-dozen", "kings-into-empty", "dick-1883", "spanish-patience")
SLOW_DEALS = 1_000
"""Deals per run of the slow rollout player."""
SOLVER = "solver:nodes=200000,seconds=1000000"
"""The solver in the default study: a node budget of a twentieth of the default and no time limit to speak of
(the default 10 s would make verdicts depend on the machine and its load: on a busy machine it cut deals the
node budget decides). A deal that uses the whole budget takes about 0.5 s at 400,000 nodes/s; deals 1-1,000 of
the seven presets take at most about 75 million nodes in all (measured: 47 million, with 143 deals cut early by
the old time limit), three minutes of one core, most of it good-measure's hard deals."""
SOLVER_DEALS = 1_000
HONEST = "sampling:preset=fast"
"""The honest player in the default study: the sampling player's named fast setting, which samples the hidden cards
and solves each sample, so it costs a few hundred times a heuristic's deal; played only where cards are dealt face
down, the variants it exists for (on face-up deals its samples are all the same deal)."""
HONEST_DEALS = 200
PLAYER_NAMES = {"random:home_first=true": "random (home first)", "greedy": "greedy", "heuristic": "heuristic",
                "lookahead": "lookahead (rollouts)", HONEST: "honest sampling (fast)", SOLVER: "perfect play (solver)"}
"""What the report, the README and the docs call the default study's players, by strategy specification."""


@functools.cache
def player_names() -> dict[str, str]:
    """`PLAYER_NAMES` by the label a run of each player is stored and reported under (without "(clairvoyant)",
    which a report shows per figure)."""
    from strategies import load_strategy
    from strategies.base import CLAIRVOYANT

    return {load_strategy(spec).label.removesuffix(CLAIRVOYANT): name for spec, name in PLAYER_NAMES.items()}


def default_study(fast_deals: int = FAST_DEALS, slow_deals: int = SLOW_DEALS, solver_deals: int = SOLVER_DEALS,
                  honest_deals: int = HONEST_DEALS) -> list[RunSpec]:
    """The embedded default study (see the module docstring), on deals 1.. with seed 0."""
    runs = [RunSpec(v.rules, s, fast_deals) for s in FAST_STRATEGIES for v in VARIANTS]
    runs += [RunSpec(find_variant(v), s, slow_deals) for s in SLOW_STRATEGIES for v in SLOW_VARIANTS]
    base = find_variant("bakers-dozen")
    runs += [RunSpec(base.replace(name=f"bakers-dozen[face_down={k}]", face_down=k), "heuristic", fast_deals)
             for k in (1, 2, 3)]
    runs += [RunSpec(v.rules, HONEST, honest_deals) for v in VARIANTS if v.rules.face_down > 0]
    runs += [RunSpec(v.rules, SOLVER, solver_deals) for v in VARIANTS]
    return runs


def face_up_twins(rules: dict[str, Rules]) -> dict[str, str]:
    """Each name of ``rules`` whose rules deal cards face down, with the name of the same rules dealt face up where
    ``rules`` has them: what dealing face down costs is the difference between the two (`reports.finding`)."""
    by_fingerprint = {r.fingerprint: name for name, r in rules.items()}
    twins = {}
    for name, r in rules.items():
        twin = by_fingerprint.get(r.replace(face_down=0).fingerprint) if r.face_down > 0 else None
        if twin is not None:
            twins[name] = twin
    return twins


def twins() -> dict[str, str]:
    """`face_up_twins` of the default study's variants."""
    first = {}  # a name for each set of rules: the first the study plays it under (a preset before the sweep's)
    for spec in default_study():
        first.setdefault(spec.rules.fingerprint, spec.rules)
    return face_up_twins({r.name: r for r in first.values()})


def run_study(runs: Sequence[RunSpec], store: str | Path, *, jobs: int | None = None, progress: Progress | None = None,
              command: Sequence[str] | None = None) -> list[RunSummary]:
    """Play every run of a study into ``store`` (reusing what it already holds), the workers readied for
    all of its strategies at the start (`warm_study`). Every run is checked first (`check_run`: its options, its
    strategy, the memory its settings ask for), so that a bad one refuses the study before any other plays."""
    for spec in runs:
        check_run(spec, jobs)
    warm_study(runs, store, jobs)
    return [run(spec, store, jobs=jobs, progress=progress, command=command) for spec in runs]
