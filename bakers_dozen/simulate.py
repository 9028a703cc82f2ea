"""`bakers-dozen simulate`: play many deals in parallel, store every row, print the figures."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from bakers_dozen.limits import Bounded
from sim.deals import MAX_DEAL, MAX_SEED, PYSOL_MAX_DEAL
from sim.text import one_line, printable
from strategies.play import MAX_DEAL_TIMEOUT
from studies.dask_backend import SchedulerLostError, quiet_logs
from studies.files import StoreFullError
from studies.runner import run
from studies.spec import (
    BACKENDS,
    DEFAULT_STORE,
    INT64_MAX,
    JOBS_PER_CORE,
    MAX_CHUNK,
    TIERS,
    RunInterrupted,
    RunnerError,
    RunSpec,
    RunSummary,
    WorkersDiedError,
)

EXIT_FAULT = 1
EXIT_INTERRUPTED = 130
FAULTS = (StoreFullError, WorkersDiedError, SchedulerLostError)
"""Errors that stop a run part way with its finished chunks saved: exit `EXIT_FAULT`, not 2."""


@contextmanager
def run_exits() -> Iterator[None]:
    """Say how a run that stopped part way ended, and exit: interrupted (resume with the same command, exit
    `EXIT_INTERRUPTED`) or a fault such as a full disk (exit `EXIT_FAULT`); the store keeps every finished chunk."""
    try:
        yield
    except RunInterrupted as exc:
        click.echo(f"bakers-dozen: {one_line(exc)}; run the same command again to resume", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except FAULTS as exc:
        click.echo(f"bakers-dozen: error: {one_line(exc)}", err=True)
        sys.exit(EXIT_FAULT)


@click.command()
@click.option("--variant", "-v", default="bakers-dozen", show_default=True,
              help="A preset name or alias (see `bakers-dozen variants`) or a .toml variant file.")
@click.option("--strategy", "-s", "strategy_spec", default="greedy", show_default=True,
              help="NAME, NAME:key=value,..., or package.module:ClassName[:key=value,...].")
@click.option("--deals", "-n", type=Bounded(int, 1, MAX_DEAL), required=True, help="How many deals to play (1 or more).")
@click.option("--first", "-k", type=Bounded(int, 1, min(max(MAX_DEAL, PYSOL_MAX_DEAL), INT64_MAX)), default=1,
              show_default=True, help="First deal number.")
@click.option("--seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True, help="Deal seed.")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
              help="Deal numbering: this toolkit's, or PySolFC's.")
@click.option("--strategy-seed", type=Bounded(int, 0, INT64_MAX), default=0, show_default=True,
              help="Seed of the strategy's random generator.")
@click.option("--tier", type=click.Choice(TIERS), default="auto", show_default=True,
              help="Play compiled when the strategy has a compiled tier (auto), or force one tier.")
@click.option("--jobs", "-j", type=Bounded(int, 1, INT64_MAX), default=None,
              help=f"Worker processes [default: every core; dask: every cluster thread]; at most {JOBS_PER_CORE} per "
                   "core (loky) or the cluster's threads (dask), and never more than there are chunks to play.")
@click.option("--chunk", type=Bounded(int, 1, MAX_CHUNK), default=None,
              help="Deals per task [default: adaptive, about 3 s of work each, 100-100,000 (Python tier 5-10,000)].")
@click.option("--deal-timeout", type=Bounded(float, 0.0, MAX_DEAL_TIMEOUT, above=True), default=None,
              help=f"Seconds a deal may take (above 0, at most {MAX_DEAL_TIMEOUT:g}); one that runs past it is stored "
                   "as outcome unknown, termination timeout [default: no limit].")
@click.option("--verify/--no-verify", default=None,
              help="Check rows with the independent referee before storing them (Python tier: every game's moves, "
                   "cards home and end; compiled tier: every win); a rejected row is stored as an error "
                   "[default: on for plug-in strategies, off for built-ins].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True,
              help="Results directory (Parquet); runs share it and are told apart by their keys.")
@click.option("--force", is_flag=True, help="Replay deals the store already holds for this run instead of reusing them.")
@click.option("--backend", type=click.Choice(BACKENDS), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a Dask cluster (needs --scheduler).")
@click.option("--scheduler", default=None, help="Dask scheduler address for --backend dask, e.g. tcp://scheduler-host:8786.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def simulate(variant: str, strategy_spec: str, deals: int, first: int, seed: int, source: str, strategy_seed: int,
             tier: str, jobs: int | None, chunk: int | None, deal_timeout: float | None, verify: bool | None,
             store_dir: str, force: bool, backend: str, scheduler: str | None, as_json: bool, quiet: bool) -> None:
    """Play deals first..first+deals-1 in parallel, store one row per deal, print the win rate.

    Running the same command again reuses what the store holds (a killed run
    resumes where it stopped); --force replays. One run at a time plays a
    given key of a store; a second one is refused, naming the first.

    \b
    Exit codes:
      0    done
      1    a fault stopped the run (disk full, worker processes kept dying, the Dask scheduler went away);
           what finished is saved and the same command resumes
      2    bad input, or the store cannot be used (or another run holds the key)
      130  interrupted (Ctrl-C); what finished is saved and the same command resumes
    """
    from sim.rules import resolve_variant
    from studies.progress import make_progress

    if backend == "loky" and scheduler:
        raise RunnerError("--scheduler is for --backend dask; add --backend dask or drop --scheduler")
    if backend == "dask":
        quiet_logs()
    rules = resolve_variant(variant)
    spec = RunSpec(rules, strategy_spec, deals, first, seed, source, strategy_seed, tier)
    with run_exits():
        summary = run(spec, store_dir, jobs=jobs, chunk=chunk, backend=backend, scheduler=scheduler, force=force,
                      progress=make_progress(quiet), command=sys.argv, deal_timeout=deal_timeout, verify=verify)
    if as_json:
        click.echo(json.dumps(summary.to_json()))
    else:
        click.echo(printable(format_summary(summary), lines=True))


def code_line(s: RunSummary) -> list[str]:
    """The line naming a plug-in's code digest, which the reused rows were played by (none for a built-in)."""
    if s.code_digest is None:
        return []
    reused = f"; the {s.reused:,} reused deals were played by this code" if s.reused else ""
    return [f"  code             {s.code_digest} (the plug-in's code digest{reused})"]


def format_summary(s: RunSummary) -> str:
    """The summary as a few lines of text."""
    low, high = s.interval
    last = s.first + s.deals - 1
    lines = [
        f"{s.variant} ({s.rules_fingerprint}) / {s.strategy}: deals {s.first:,}-{last:,} "
        f"(seed {s.seed}, source {s.source}" + (f", strategy seed {s.strategy_seed}" if s.strategy_seed else "") + ")",
        f"  deals            {s.deals:,}  (played {s.played:,}, reused {s.reused:,})",
        *code_line(s),
        f"  wins             {s.wins:,}",
        f"  win rate         {s.win_rate:.3%}  (95% Wilson interval {low:.3%} - {high:.3%})",
        f"  mean cards home  {s.mean_cards_home:.2f}",
    ]
    other = {k: v for k, v in s.outcomes.items() if k in ("unknown", "error") and v}
    if other:
        lines.append("  also             " + ", ".join(f"{v:,} {k}" for k, v in other.items()))
    rate = s.deals_per_second
    where = f"{s.jobs} job{'s' if s.jobs != 1 else ''}, {'in this process' if s.in_process else s.backend}"
    lines.append(f"  speed            {rate:,.0f} deals/s ({s.seconds:.1f} s, {where})" if rate
                 else "  speed            - (nothing to play: every deal was in the store)")
    lines.append(f"  store            {s.store} (key {s.key})")
    if s.corrupt:
        lines.append(f"  replayed         {len(s.corrupt)} damaged chunk file(s), moved aside: {', '.join(s.corrupt)}")
    lines.extend(f"  damaged          {line}" for line in s.damaged)
    if s.refused:
        more = f" (and {len(s.refused) - 1:,} more chunk(s))" if len(s.refused) > 1 else ""
        lines.append(f"  played again     {s.refused[0]}{more}")
    if s.retries:
        lines.append(f"  retried          {s.retries} time(s) after a worker died")
    return "\n".join(lines)
