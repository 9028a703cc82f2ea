"""`bakers-dozen simulate`: play many deals in parallel, store every row, print the figures."""

from __future__ import annotations

import json
import sys

import click

from sim.runner import BACKENDS, DEFAULT_STORE, TIERS, RunInterrupted, RunnerError, RunSpec, RunSummary, SchedulerError, run
from sim.store import StoreFullError

EXIT_FAULT = 1
EXIT_INTERRUPTED = 130


@click.command()
@click.option("--variant", "-v", default="bakers-dozen", show_default=True,
              help="A preset name or alias (see `bakers-dozen variants`) or a .toml variant file.")
@click.option("--strategy", "-s", "strategy_spec", default="greedy", show_default=True,
              help="NAME, NAME:key=value,..., or package.module:ClassName[:key=value,...].")
@click.option("--deals", "-n", type=int, required=True, help="How many deals to play (1 or more).")
@click.option("--first", "-k", type=int, default=1, show_default=True, help="First deal number.")
@click.option("--seed", type=int, default=0, show_default=True, help="Deal seed.")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
              help="Deal numbering: this toolkit's, or PySolFC's.")
@click.option("--strategy-seed", type=int, default=0, show_default=True, help="Seed of the strategy's random generator.")
@click.option("--tier", type=click.Choice(TIERS), default="auto", show_default=True,
              help="Play compiled when the strategy has a compiled tier (auto), or force one tier.")
@click.option("--jobs", "-j", type=int, default=None, help="Worker processes [default: every core; dask: every cluster thread].")
@click.option("--chunk", type=int, default=None,
              help="Deals per task [default: adaptive, about 3 s of work each, 100-100,000 (Python tier 5-10,000)].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True,
              help="Results directory (Parquet); runs share it and are told apart by their keys.")
@click.option("--force", is_flag=True, help="Replay deals the store already holds for this run instead of reusing them.")
@click.option("--backend", type=click.Choice(BACKENDS), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a Dask cluster (needs --scheduler).")
@click.option("--scheduler", default=None, help="Dask scheduler address for --backend dask, e.g. tcp://scheduler-host:8786.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def simulate(variant: str, strategy_spec: str, deals: int, first: int, seed: int, source: str, strategy_seed: int,
             tier: str, jobs: int | None, chunk: int | None, store_dir: str, force: bool, backend: str,
             scheduler: str | None, as_json: bool, quiet: bool) -> None:
    """Play deals first..first+deals-1 in parallel, store one row per deal, print the win rate.

    Running the same command again reuses what the store holds (a killed run
    resumes where it stopped); --force replays.
    """
    from sim.progress import make_progress
    from sim.rules import resolve_variant

    if backend == "loky" and scheduler:
        raise RunnerError("--scheduler is for --backend dask; add --backend dask or drop --scheduler")
    rules = resolve_variant(variant)
    spec = RunSpec(rules, strategy_spec, deals, first, seed, source, strategy_seed, tier)
    try:
        summary = run(spec, store_dir, jobs=jobs, chunk=chunk, backend=backend, scheduler=scheduler, force=force,
                      progress=make_progress(quiet), command=sys.argv)
    except RunInterrupted as exc:
        click.echo(f"bakers-dozen: {exc}; run the same command again to resume", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except StoreFullError as exc:
        click.echo(f"bakers-dozen: error: {exc}", err=True)
        sys.exit(EXIT_FAULT)
    except RunnerError as exc:
        if isinstance(exc, SchedulerError) or "worker processes died" not in str(exc):
            raise
        click.echo(f"bakers-dozen: error: {exc}", err=True)
        sys.exit(EXIT_FAULT)
    if as_json:
        click.echo(json.dumps(summary.to_json()))
    else:
        click.echo(format_summary(summary))


def format_summary(s: RunSummary) -> str:
    """The summary as a few lines of text."""
    low, high = s.interval
    last = s.first + s.deals - 1
    lines = [
        f"{s.variant} ({s.rules_fingerprint}) / {s.strategy}: deals {s.first:,}-{last:,} "
        f"(seed {s.seed}, source {s.source}" + (f", strategy seed {s.strategy_seed}" if s.strategy_seed else "") + ")",
        f"  deals            {s.deals:,}  (played {s.played:,}, reused {s.reused:,})",
        f"  wins             {s.wins:,}",
        f"  win rate         {s.win_rate:.3%}  (95% Wilson interval {low:.3%} - {high:.3%})",
        f"  mean cards home  {s.mean_cards_home:.2f}",
    ]
    other = {k: v for k, v in s.outcomes.items() if k in ("unknown", "error") and v}
    if other:
        lines.append("  also             " + ", ".join(f"{v:,} {k}" for k, v in other.items()))
    rate = s.deals_per_second
    where = f"{s.jobs} job{'s' if s.jobs != 1 else ''}, {s.backend}"
    lines.append(f"  speed            {rate:,.0f} deals/s ({s.seconds:.1f} s, {where})" if rate
                 else "  speed            - (nothing to play: every deal was in the store)")
    lines.append(f"  store            {s.store} (key {s.key})")
    if s.corrupt:
        lines.append(f"  replayed         {len(s.corrupt)} damaged chunk file(s), moved aside: {', '.join(s.corrupt)}")
    if s.retries:
        lines.append(f"  retried          {s.retries} time(s) after a worker died")
    return "\n".join(lines)
