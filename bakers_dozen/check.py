"""The `check-strategy` verb: run `strategies.check.check_strategy` on a strategy and print each check."""

from __future__ import annotations

import sys

import click

from sim.deals import MAX_SEED
from sim.text import printable

EXIT_CHECK_FAILED = 1
"""A check failed (bad input, such as an unknown strategy, is exit 2 like every verb's)."""


@click.command("check-strategy")
@click.argument("spec")
@click.option("--deals", "-n", type=int, default=None,
              help="Deals of each preset variant to play (default: a few, seconds for the built-ins); each is played "
                   "twice in each tier.")
@click.option("--strategy-seed", type=int, default=0, show_default=True,
              help=f"Seed of the strategy's random generator, 0..{MAX_SEED}.")
@click.option("--deal-timeout", type=float, default=None,
              help="Seconds one game may take; a game past it fails the 'returns' check (default: no limit; the "
                   "first game in each tier includes numba's compilation).")
def check_strategy(spec: str, deals: int | None, strategy_seed: int, deal_timeout: float | None) -> None:
    """Check that the strategy SPEC keeps the toolkit's promises: a stable identity, every preset variant plays
    with legal moves, no exception or illegal choice, the same game for the same deal and seed, and (with a
    compiled policy) the same play in both tiers. Exit 0 when every check passes, 1 when one fails.

    SPEC is NAME, NAME:key=value,..., or package.module:ClassName[:key=value,...].
    """
    from strategies.check import DEFAULT_DEALS
    from strategies.check import check_strategy as run_checks

    report = run_checks(spec, deals=DEFAULT_DEALS if deals is None else deals, strategy_seed=strategy_seed,
                        deal_timeout=deal_timeout)
    click.echo(printable(report.text(), lines=True))
    if not report.passed:
        sys.exit(EXIT_CHECK_FAILED)
