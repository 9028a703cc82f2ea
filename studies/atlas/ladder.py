"""The escalation ladder behind `solve --escalate` and `atlas`: the default budget first, then bigger ones on only the
deals still undecided.

Each rung is a solver with its own parameters, so its own run in the store (its own key: `studies.solving.solve_deals`): the
store stays keyed by strategy identity, a killed escalation run again reuses every rung's finished deals, and a
rung reads the deals the rung below left unknown (at its node budget, or stopped by its seconds cap: ``timeout``)
from that rung's rows. A deal's verdict is the highest rung's that solved it, and its row names that rung
(``rung``: 0 for the command's own budget).

The default rungs' budgets come from the deals the default budget leaves open (docs/performance.md, "The solver"):
30,000,000 nodes win good-measure 507 and 859 (5.2 and 20.3 million nodes) and bakers-dozen 5133 (29.9 million);
the free-parking relaxation with 20,000,000 states proves PySol's Baker's Dozen 417 lost (19.2 million states);
the layered prover proves good-measure deals lost that no search decides (1175 in 9.9 million positions). Their
seconds are safety caps far above what the budgets take on a quiet machine; a deal a cap stops is a ``timeout``.

A climb can stop partway and lose nothing it finished: a ``checkpoint`` is handed the rows after every rung that
solved something and, on Ctrl-C, after reading back from the store the deals the interrupted rung had finished
(each then records that rung); a ``deadline`` stops the climb above rung 0 the same way, then returns what it
reached (`reached`), so that the row is written and a later climb (`atlas --reuse`) goes on from there.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from sim.errors import UserError, quoted
from sim.rules import Rules
from studies.solving import solve_again, solve_deals, stored_deals

Checkpoint = Callable[[list[dict[str, Any]], int], None]
"""What a climb hands its rows to after each rung and when stopped: the rows, and the highest rung begun."""


def _relaxation_applies(rules: Rules) -> bool:
    """Whether the free-parking relaxation applies to ``rules`` (in-suit foundations without worrying back, any-suit
    building, spaces never refilled)."""
    from sim.engine import rule_params
    from strategies.solver.capacity import applies_to

    return bool(applies_to(rule_params(rules)))


def _prover_applies(rules: Rules) -> bool:
    """Whether the layered prover applies to ``rules`` (in-suit foundations without worrying back)."""
    return rules.foundation == "suit" and not rules.worrying_back


@dataclass(frozen=True)
class Rung:
    """One rung: solver parameters laid over the command's own, and the rules it applies to (a rung whose stage
    does not apply is skipped: it could only repeat the rung below)."""

    params: dict[str, Any]
    applies: Callable[[Rules], bool] | None = field(default=None, compare=False)
    what: str = ""

    @property
    def budget(self) -> str:
        """The rung's parameters as ``key=value,...`` (the solver's defaults where empty)."""
        return ", ".join(f"{k}={v}" for k, v in self.params.items()) or "the solver's defaults"


LADDER = (
    Rung({}),
    Rung({"nodes": 30_000_000, "seconds": 3600.0}, what="a bigger search"),
    Rung({"nodes": 1, "capacity_states": 20_000_000, "seconds": 3600.0}, _relaxation_applies,
         "the free-parking relaxation alone"),
    Rung({"nodes": 1, "capacity_states": 0, "prover_mb": 2048, "prover_seconds": 600.0}, _prover_applies,
         "the layered prover alone"),
    Rung({"nodes": 1, "capacity_states": 0, "beam_width": 20_000, "beam_nodes": 20_000_000},
         what="a beam search for a win alone"),
)
"""The default ladder. Rung 0 is the command's own budget (the solver's defaults unless --nodes and the like say
otherwise); rung 1 searches with 30,000,000 nodes; rung 2 runs only the free-parking relaxation, with 20,000,000
states (one node of search first); rung 3 only the layered prover, within 2,048 MiB of positions (600 s cap);
rung 4 only the beam search (`strategies.solver.beam`), 20,000 positions wide, within 20,000,000 positions. The
beam comes last although it is the cheapest of rungs 1-4 (seconds a deal) so that an atlas written with rungs 0-3
climbs on to it (`atlas --reuse` takes a row whose rungs match this ladder's)."""


def ladder_help() -> str:
    """The default ladder's rungs and budgets, for ``--help``."""
    return "; ".join(f"{i}: " + (f"{r.budget} ({r.what})" if r.params else "the command's own budget")
                     for i, r in enumerate(LADDER))


def parse_rung(text: str) -> Rung:
    """A rung from ``key=value,key=value`` (solver parameters; values as `--param` takes them)."""
    params: dict[str, Any] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--rung {quoted(text)}: expected KEY=VALUE[,KEY=VALUE...] of solver parameters")
        if key.strip() in params:
            raise UserError(f"--rung {quoted(text)}: {quoted(key.strip())} given twice; name each parameter once")
        params[key.strip()] = value.strip()
    return Rung(params)


def ladder(rung_texts: tuple[str, ...] = (), last: int | None = None) -> tuple[Rung, ...]:
    """The rungs a command runs: rung 0 (its own budget), then its ``--rung`` values or the default rungs 1 and up,
    cut after rung ``last`` where given (a shorter ladder publishes sooner; the deals it leaves open stay unknown)."""
    rungs = (LADDER[0], *map(parse_rung, rung_texts)) if rung_texts else LADDER
    if last is not None and last >= len(rungs):
        raise UserError(f"--last-rung {last}: this ladder has rungs 0-{len(rungs) - 1}")
    return rungs if last is None else rungs[:last + 1]


BUDGET_PARAMETERS = ("nodes", "seconds", "capacity_states", "prover_mb", "prover_seconds")
"""The solver parameters that bound a deal's work, named in a summary's budgets even where a rung keeps the default."""


def budgets(rungs: tuple[Rung, ...], base: dict[str, Any]) -> str:
    """Every rung's budget (the solver's defaults, the command's own parameters and the rung's laid over in turn),
    as one line for a summary: the bounding parameters always, any other parameter where it was set."""
    from strategies.solver.strategy import SolverStrategy

    lines = []
    for i, r in enumerate(rungs):
        params = SolverStrategy(**{**base, **r.params}).params
        named = [k for k in BUDGET_PARAMETERS if params.get("prover_seconds") or not k.startswith("prover")]
        named += [k for k in {**base, **r.params} if k not in named]
        lines.append(f"{i}: " + ", ".join(f"{k}={params[k]}" for k in named))
    return "; ".join(lines)


@dataclass
class RungReport:
    """What one rung did: the deals it tried and what it decided (``skipped`` where its stage does not apply)."""

    rung: int
    budget: str
    tried: int = 0
    won: int = 0
    lost: int = 0
    left: int = 0
    skipped: bool = False
    reused: bool = False
    untried: int = 0
    """Deals the rung was to try when the deadline stopped the climb (they stay at the rung below)."""

    def line(self) -> str:
        """One line for the summary."""
        if self.skipped:
            return f"rung {self.rung} ({self.budget}): skipped, its stage does not apply to these rules"
        return (f"rung {self.rung} ({self.budget}): {self.tried:,} deal(s), won {self.won:,}, lost {self.lost:,}, "
                f"left unknown {self.left:,}" + (" (as the atlas reused ran it)" if self.reused else "")
                + (f"; {self.untried:,} not tried yet (the time given ran out)" if self.untried else ""))


def reached(reports: list[RungReport]) -> int:
    """The highest rung a climb that made ``reports`` began (one the deadline stopped before it tried a deal is not
    begun): the last rung its row's budgets name."""
    return max(r.rung for r in reports if r.tried or not r.untried)


def stopped(reports: list[RungReport]) -> bool:
    """Whether the deadline stopped the climb that made ``reports`` before the top of its ladder."""
    return any(r.untried for r in reports)


def rung_strategies(rules: Rules, base: dict[str, Any], rungs: tuple[Rung, ...]) -> list[Any]:
    """The solver of each rung (checked: a bad parameter is one line), rung 0 first."""
    from strategies.base import StrategyError
    from strategies.solver.strategy import SolverStrategy

    try:
        return [SolverStrategy(**{**base, **r.params}) for r in rungs]
    except StrategyError as exc:
        raise UserError(str(exc)) from None


def rung_report(i: int, rung: Rung, base: dict[str, Any], rows: list[dict[str, Any]]) -> RungReport:
    """What rung ``i`` did on ``rows``, the deals it was given: how many it won, lost and left unknown."""
    verdicts = [r["verdict"] for r in rows]
    return RungReport(i, Rung({**base, **rung.params}).budget, len(rows), verdicts.count("won"), verdicts.count("lost"),
                      verdicts.count("unknown"))


def escalate(rules: Rules, base: dict[str, Any], first: int, last: int, seed: int = 0, source: str = "default",
             rungs: tuple[Rung, ...] = LADDER, checkpoint: Checkpoint | None = None, deadline: float | None = None,
             **options: Any) -> tuple[list[dict[str, Any]], list[RungReport], Any]:
    """Solve deals first..last with rung 0 (``base`` with its parameters), then each later rung on the deals the
    rung below left unknown (`climb`, with ``checkpoint`` and ``deadline``); the rows (sorted by deal, each with the
    ``rung`` that gave its verdict), what each rung did, and rung 0's run summary. ``options`` go to `solve_deals`
    (store, jobs, verify, ...)."""
    rows, result = solve_deals(rules, {**base, **rungs[0].params}, first, last, seed, source, **options)
    for r in rows:
        r["rung"] = 0
    first_rung = rung_report(0, rungs[0], base, rows)
    if checkpoint is not None and len(rungs) > 1:
        checkpoint(rows, 0)
    rows, reports = climb(rules, base, rows, rungs, 1, seed, source, checkpoint, deadline, **options)
    return rows, [first_rung, *reports], result


def climb(rules: Rules, base: dict[str, Any], rows: list[dict[str, Any]], rungs: tuple[Rung, ...], start: int,
          seed: int = 0, source: str = "default", checkpoint: Checkpoint | None = None, deadline: float | None = None,
          **options: Any) -> tuple[list[dict[str, Any]], list[RungReport]]:
    """Run rungs ``start`` and up on ``rows`` (each with the ``rung`` that decided it, or the highest that tried
    it): each rung on the deals still unknown that no rung as high has tried; the rows and what each of these rungs
    did. After a rung below the top that solved something, ``checkpoint`` gets the rows. On Ctrl-C in a rung, the
    deals it finished are read back from the store and recorded at that rung, ``checkpoint`` gets the rows, and the
    interruption goes on up; when `time.monotonic` passes ``deadline`` the climb stops the same way but returns,
    its last report counting the deals not tried (`stopped`). ``options`` go to `solve_deals`."""
    reports = []
    for i, rung in enumerate(rungs[start:], start=start):
        budget, params = Rung({**base, **rung.params}).budget, {**base, **rung.params}
        if rung.applies is not None and not rung.applies(rules):
            reports.append(RungReport(i, budget, skipped=True))
            continue
        below = sorted(r["deal"] for r in rows if r["verdict"] == "unknown" and r["rung"] < i)
        if not below:
            reports.append(RungReport(i, budget))
            continue
        if deadline is not None and time.monotonic() >= deadline:
            reports.append(RungReport(i, budget, untried=len(below)))
            return rows, reports
        try:
            with _alarm(deadline):
                rows, retried = solve_again(rules, rows, below, params, seed, source, **options)
        except KeyboardInterrupt:  # the runner's `RunInterrupted`, or the alarm just after the runner returned
            if checkpoint is None and deadline is None:
                raise
            done = stored_deals(rules, params, below, seed, source, **options)
            rows, retried = solve_again(rules, rows, done, params, seed, source, **options) if done else (rows, [])
            for r in retried:
                r["rung"] = i
            if deadline is None or time.monotonic() < deadline:  # Ctrl-C, not the deadline
                if checkpoint is not None:
                    checkpoint(rows, i if retried else i - 1)
                raise
            reports.append(rung_report(i, rung, base, retried))
            reports[-1].untried = len(below) - len(retried)
            return rows, reports
        for r in retried:
            r["rung"] = i
        reports.append(rung_report(i, rung, base, retried))
        if checkpoint is not None and i < len(rungs) - 1:
            checkpoint(rows, i)
    return rows, reports


@contextmanager
def _alarm(deadline: float | None) -> Iterator[None]:
    """Within the block, interrupt this process as Ctrl-C does when `time.monotonic` reaches ``deadline`` (main thread
    only: elsewhere the deadline is looked at between rungs)."""
    if deadline is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def ring(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, ring)
    signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 1e-3))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
