"""`tune`: search a strategy's declared parameters with optuna and confirm the best setting on fresh deals."""

from __future__ import annotations

import json
import shlex
import sys
from typing import Any

import click
from rich.text import Text

from bakers_dozen.limits import MAX_RUN_DEALS, Bounded
from bakers_dozen.options import console, table
from bakers_dozen.report import JOBS, RUN_DEALS, check_study
from bakers_dozen.simulate import run_exits
from sim.deals import MAX_SEED, PYSOL_MAX_DEAL
from studies.spec import DEFAULT_STORE, RunSpec

TUNE_OUT = "bakers-dozen-tuning"
MAX_TRIALS = 100_000
"""Trials per study: each is at least one run of the runner, with a manifest and a journal entry."""


@click.command()
@click.argument("spec")
@click.option("--variant", "-v", default="bakers-dozen", show_default=True, help="A preset name or a .toml file.")
@click.option("--param", "params", multiple=True, metavar="NAME=LOW..HIGH|NAME=a,b,c",
              help="Search NAME over this range or these choices instead of what it declares (repeatable).")
@click.option("--trials", type=Bounded(int, 1, MAX_TRIALS), default=20, show_default=True,
              help="Finished trials the study reaches (a resumed study counts those it has).")
@click.option("--deals", "-n", type=RUN_DEALS, default=1000, show_default=True, help="Tuning deals, the same for every trial.")
@click.option("--confirm", type=Bounded(int, 0, MAX_RUN_DEALS), default=4000, show_default=True,
              help="Fresh deals after the tuning deals on which the best setting meets the default (0: none).")
@click.option("--first", "-k", type=Bounded(int, 1, PYSOL_MAX_DEAL), default=1, show_default=True, help="First deal number.")
@click.option("--seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True, help="Deal seed.")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True, help="Deal numbering.")
@click.option("--jobs", "-j", type=JOBS, default=None, help="Worker processes, at most 4 per core [default: every core].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True, help="Results directory (the study is kept in it).")
@click.option("--out", "out_dir", default=TUNE_OUT, show_default=True, help="Folder for the report.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as one JSON object, on the last line.")
@click.option("--quiet", "-q", is_flag=True, help="No line per trial.")
def tune(spec: str, variant: str, params: tuple[str, ...], trials: int, deals: int, confirm: int, first: int, seed: int,
         source: str, jobs: int | None, store_dir: str, out_dir: str, as_json: bool, quiet: bool) -> None:
    """Tune SPEC's declared parameters on the same deals for every trial, then confirm the best on fresh deals.

    The study is kept in the store (``STORE/_tuning``): the same command after a kill continues it.
    """
    import optuna

    from reports.tuning import write_tuning_report
    from sim.rules import resolve_variant
    from studies.paired import store_player
    from studies.search_space import search_space
    from studies.tuning import TuneSpec
    from studies.tuning import tune as run_tuning

    # A line per trial is said here, not by optuna's log; and a trial that fails on the user's error (a busy key, a full
    # disk) ends in its one-line message, without the traceback optuna logs as a warning first.
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rules = resolve_variant(variant)
    space = search_space(spec, params)
    tuning = TuneSpec(rules, space, trials, deals, first, seed, source, confirm)
    check_study([RunSpec(rules, space.default_spec, deals + confirm, first, seed, source)], out_dir)

    def said(trial: Any, trial_spec: str) -> None:
        if not quiet:
            played = (max(trial.intermediate_values) + 1 if trial.intermediate_values else 0)
            value = trial.value if trial.value is not None else None
            shown = "" if value is None else f" {value:.2%}"
            click.echo(f"trial {trial.number} {trial.state.name.lower()} after {played} of {len(tuning.rounds())} rounds:"
                       f"{shown} {trial_spec}", err=True)

    with run_exits():
        result = run_tuning(tuning, store_dir, store_player(store_dir, jobs, sys.argv), said)
    html, md = write_tuning_report(result, tuning, out_dir, shlex.join(["bakers-dozen", *sys.argv[1:]]))
    code = space.strategy.code_digest
    if code is not None:  # a plug-in: its trials, and every row they reused, are of this code
        click.echo(f"code {code}: every trial of study {result.journal.stem} and every row it reused were played by "
                   "this code of the plug-in")
    if as_json:
        click.echo(json.dumps({**result.to_json(), "report": str(md)}))
        return
    screen = console()
    if result.confirmation is not None:
        c = result.confirmation
        t = table(f"Confirmation on deals {c.first}-{c.first + c.deals - 1} (never tuned on)",
                  {"setting": "left", "spec": "left", "wins": "right", "win rate": "right", "95% interval": "right"})
        for name, side in (("tuned", c.tuned), ("default", c.default)):
            j = side.to_json()
            t.add_row(name, Text(side.spec), f"{side.wins:,}", f"{j['win_rate']:.2%}", f"{j['ci_low']:.2%}-{j['ci_high']:.2%}")
        screen.print(t)
        screen.print(Text(f"tuned - default: {c.difference:+.2%} ({c.low:+.2%} to {c.high:+.2%}); McNemar's exact p = "
                          f"{c.p_value:.3g} ({c.only_tuned:,} deals won only tuned, {c.only_default:,} only default)"))
    screen.print(Text(f"best: {result.best} ({result.best_value:.2%} on the {deals:,} tuning deals)"))
    click.echo(f"report: {html} and {md}")
