"""What to run: a run's spec (`RunSpec`: rules, strategy, deals, seeds, tier), the limits of its options, and the
checks `studies.runner.run` makes before anything starts (`check_spec`, also `check_run` for a study that
checks all its runs first), the labels every row of the run carries (`run_labels`), the summary a run returns
(`RunSummary`) and the errors it raises.

Every check here is of the spec and the options alone: nothing is played, stored or compiled, so a bad
option is one line before any work (the strategy is loaded, and the memory its settings ask for weighed
for all the workers together, `strategies.memory.check_memory`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sim import __version__
from sim.deals import MAX_DEAL, PYSOL_MAX_DEAL, check_deal_number
from sim.errors import UserError
from sim.rules import Rules, check_variant_name
from studies.plan import planned, useful_jobs
from studies.rows import RunKey, RunLabels

BACKENDS = ("loky", "dask")
TIERS = ("auto", "compiled", "python")
DEFAULT_STORE = "bakers-dozen-store"
"""The results store every verb uses unless told otherwise (simulate, compare, tournament, demo), so they share deals."""
INT64_MAX = 2**63 - 1
MAX_CHUNK = 1_000_000
"""Largest --chunk: a chunk's per-deal arrays and Parquet rows are held in memory at once."""
JOBS_PER_CORE = 4
"""loky runs at most this many worker processes per core (more only adds memory and start-up)."""


class RunnerError(UserError):
    """A run that cannot be started or completed as asked; the message says why and what to do."""


class WorkersDiedError(RunnerError):
    """Worker processes kept dying (more than ``retries`` times); what was finished is saved."""


def check_whole(name: str, value: Any, low: int, high: int) -> int:
    """``value`` as an int when it is a whole number in low..high; else `RunnerError` naming the range."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise RunnerError(f"{name} must be a whole number from {low:,} to {high:,}; got {value!r}")
    if not low <= value <= high:
        raise RunnerError(f"{name} must be from {low:,} to {high:,}; got {value:,}")
    return int(value)


def check_deal_timeout(value: Any, name: str = "deal_timeout") -> float | None:
    """A per-deal time limit in seconds: None, or what `strategies.play.is_deal_timeout` allows."""
    from strategies.play import DEAL_TIMEOUT_ALLOWED, is_deal_timeout

    if value is None:
        return None
    if not is_deal_timeout(value):
        raise RunnerError(f"{name} must be {DEAL_TIMEOUT_ALLOWED}; got {value!r}")
    return float(value)


def max_jobs() -> int:
    """The most worker processes a loky run starts: `JOBS_PER_CORE` per core."""
    from joblib import cpu_count

    return JOBS_PER_CORE * cpu_count()


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during a run: ``saved`` of ``total`` deals are in the store and the same command resumes."""

    def __init__(self, saved: int, total: int, store: Path) -> None:
        super().__init__(f"interrupted: {saved:,} of {total:,} deals are saved in {store}")
        self.saved, self.total, self.store = saved, total, store


@dataclass(frozen=True)
class RunSpec:
    """One run: which rules, which strategy, which deals.

    The deals are ``first`` and the ``deals - 1`` after it, or, with ``ranges``, only the deals of those ranges
    (sorted, apart, ``first`` the first deal of the first and ``deals`` their count): a run over the deals an
    earlier run left undecided, scattered over a long range, plays them all on every worker at once
    (`RunSpec.over`)."""

    rules: Rules
    strategy: str
    deals: int
    first: int = 1
    seed: int = 0
    source: str = "default"
    strategy_seed: int = 0
    tier: str = "auto"
    ranges: tuple[tuple[int, int], ...] = ()

    @classmethod
    def over(cls, rules: Rules, strategy: str, deals: Iterable[int], **fields: Any) -> RunSpec:
        """The run of the given deal numbers (any order; repeats count once), as ranges of consecutive deals."""
        ranges = deal_ranges(deals)
        if not ranges:
            raise RunnerError("a run needs at least one deal")
        return cls(rules, strategy, sum(b - a + 1 for a, b in ranges), ranges[0][0], ranges=tuple(ranges), **fields)

    @property
    def last(self) -> int:
        return self.ranges[-1][1] if self.ranges else self.first + self.deals - 1

    @property
    def spans(self) -> tuple[tuple[int, int], ...]:
        """The run's deals as (first, last) ranges, in order."""
        return self.ranges or ((self.first, self.last),)


def deal_ranges(deals: Iterable[int]) -> list[tuple[int, int]]:
    """Deal numbers as sorted (first, last) ranges of consecutive deals."""
    ranges: list[tuple[int, int]] = []
    for deal in sorted(set(deals)):
        if ranges and deal == ranges[-1][1] + 1:
            ranges[-1] = (ranges[-1][0], deal)
        else:
            ranges.append((deal, deal))
    return ranges


@dataclass
class RunSummary:
    """The figures of a finished run (over every deal asked for, reused or played)."""

    variant: str
    rules_fingerprint: str
    strategy: str
    strategy_identity: str
    seed: int
    source: str
    strategy_seed: int
    first: int
    deals: int
    wins: int
    outcomes: dict[str, int]
    cards_home_sum: int
    played: int
    reused: int
    seconds: float
    store: str
    key: str
    chunks_played: int = 0
    chunks_reused: int = 0
    corrupt: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)
    """One line for each damaged key.json (written again) or manifest of the run's key, moved aside, and for each
    chunk file holding a win the referee rejects (moved aside and played again, by a verifying run)."""
    refused: list[str] = field(default_factory=list)
    """One line for each stored chunk played again because this run would not have made its rows (`studies.reuse`:
    another deal time limit, another tier)."""
    retries: int = 0
    jobs: int = 1
    backend: str = "loky"
    in_process: bool = False
    """The chunks played in the main process, no worker pool (`studies.backends.plays_in_process`), whatever ``backend`` says."""
    code_digest: str | None = None
    """A plug-in's code digest (`strategies.code`): every row of the run, reused or played, is of this code."""

    @property
    def win_rate(self) -> float:
        return self.wins / self.deals

    @property
    def interval(self) -> tuple[float, float]:
        from studies.stats import win_rate_interval

        return win_rate_interval(self.wins, self.deals)

    @property
    def mean_cards_home(self) -> float:
        return self.cards_home_sum / self.deals

    @property
    def deals_per_second(self) -> float | None:
        return self.played / self.seconds if self.played and self.seconds > 0 else None

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        out = asdict(self)
        out.update(
            last=self.first + self.deals - 1,
            win_rate=self.win_rate,
            ci_low=low,
            ci_high=high,
            confidence=0.95,
            interval="wilson",
            mean_cards_home=self.mean_cards_home,
            deals_per_second=self.deals_per_second,
        )
        return out


def run_labels(spec: RunSpec, strategy: Any) -> RunLabels:
    """The key and label columns of ``spec`` played by the (loaded) ``strategy``."""
    key = RunKey(check_variant_name(spec.rules).fingerprint, strategy.identity, spec.seed, spec.source,
                 spec.strategy_seed)
    return RunLabels(
        key=key,
        variant=spec.rules.name,
        strategy=strategy.name,
        strategy_version=str(strategy.version),
        strategy_params=json.dumps(strategy.params, sort_keys=True, default=str),
        strategy_label=strategy.label_for(spec.rules),
        clairvoyant=strategy.sees_hidden(spec.rules),
        toolkit_version=__version__,
    )


def check_run(spec: RunSpec, jobs: int | None = None, chunk: int | None = None, backend: str = "loky") -> None:
    """Refuse ``spec`` as `studies.runner.run` would before it starts (a `UserError`): its options, its strategy, and the memory
    its strategy's settings ask for, for all the workers together. Nothing is played, stored or compiled."""
    check_spec(spec, jobs, chunk, backend)


def check_spec(spec: RunSpec, jobs: int | None, chunk: int | None, backend: str) -> Any:
    """Validate a run before anything starts; return its strategy (loaded, nothing compiled or dealt yet)."""
    from strategies import StrategyError, load_strategy
    from strategies.memory import check_memory

    check_whole("deals", spec.deals, 1, MAX_DEAL)
    if spec.ranges:
        _check_ranges(spec)
    if jobs is not None:
        check_whole(f"jobs ({JOBS_PER_CORE} per core here)" if backend == "loky" else "jobs", jobs, 1,
                    max_jobs() if backend == "loky" else INT64_MAX)
    if chunk is not None:
        check_whole("chunk", chunk, 1, MAX_CHUNK)
    check_whole("strategy_seed", spec.strategy_seed, 0, INT64_MAX)
    if backend not in BACKENDS:
        raise RunnerError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if spec.tier not in TIERS:
        raise RunnerError(f"unknown tier {spec.tier!r}; allowed: {', '.join(TIERS)}")
    check_deal_number(spec.first, spec.seed, spec.source)
    top = min(PYSOL_MAX_DEAL if spec.source == "pysol" else MAX_DEAL, INT64_MAX)
    if spec.last > top:
        raise RunnerError(f"deals {spec.first:,}..{spec.last:,} run past the last deal number a run can play: "
                          f"allowed 1..{top:,} for source {spec.source!r} (deal numbers are stored as 64-bit integers)")
    try:  # a plug-in's failures (an exception, sys.exit) are StrategyErrors; a built-in's are bugs and go on up
        strategy = load_strategy(spec.strategy)
    except StrategyError as exc:
        raise RunnerError(str(exc)) from None
    check_memory(strategy, spec.rules, _most_workers(spec, jobs, chunk, backend))
    return strategy


def _check_ranges(spec: RunSpec) -> None:
    """Refuse ranges that are not sorted and apart, or that disagree with the spec's ``first`` and ``deals``."""
    previous = spec.first - 1
    for a, b in spec.ranges:
        if not (isinstance(a, int) and isinstance(b, int) and previous < a <= b):
            raise RunnerError(f"deal ranges must be sorted and apart, each first <= last; got {list(spec.ranges)[:5]}")
        previous = b
    if spec.ranges[0][0] != spec.first or sum(b - a + 1 for a, b in spec.ranges) != spec.deals:
        raise RunnerError(f"deal ranges {list(spec.ranges)[:5]} do not start at deal {spec.first:,} and hold "
                          f"{spec.deals:,} deals; build the run with RunSpec.over")


def _most_workers(spec: RunSpec, jobs: int | None, chunk: int | None, backend: str) -> int:
    """The most processes of this machine that may hold ``spec``'s strategy at once: the loky workers the run can
    use (`useful_jobs` of the whole range, at the Python tier's smaller chunks); with dask, this process alone
    (it readies the strategy; the cluster's workers are other machines)."""
    if backend == "dask":
        return 1
    from joblib import cpu_count

    return min(jobs or cpu_count(), useful_jobs(planned(spec.spans, chunk), chunk, False))


def plays_compiled(spec: RunSpec, strategy: Any) -> bool:
    """Whether ``strategy`` plays ``spec`` compiled (`RunnerError` for tier ``compiled`` without a compiled tier).

    It asks the strategy for its compiled policy, which may allocate its work memory (the solver's table)."""
    from strategies import StrategyError, compiled_policy

    try:
        compiled = spec.tier != "python" and compiled_policy(strategy, spec.rules) is not None
    except StrategyError as exc:
        raise RunnerError(str(exc)) from None
    if spec.tier == "compiled" and not compiled:
        raise RunnerError(f"strategy {strategy.name!r} has no compiled tier; use tier auto or python")
    return compiled
