"""`bakers-dozen solve`: decide a range of deals with the solver, check every win with the referee.

Prints one row per deal (verdict, nodes, seconds, moves, referee check) and a
summary: decided fraction, wins with a 95% Wilson interval, time and nodes per
deal; writes the rows to a CSV or Parquet file. The solving itself (through the
runner and its store, so a killed solve resumes) is `studies.solving`; the
escalation ladder is `studies.atlas.ladder`: this module parses and prints.
"""

from __future__ import annotations

import json
import statistics
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np

from bakers_dozen.limits import MAX_SOLVE_DEALS, MAX_SOLVE_NODES, MAX_SOLVE_SECONDS, Bounded, memory_mib
from bakers_dozen.simulate import run_exits
from sim.deals import MAX_SEED, check_deal_range
from sim.errors import UserError, quoted
from sim.rules import LONG_NUMBER, MAX_NAME, PARAMETERS, Rules, resolve_variant
from studies.atlas.ladder import escalate, ladder, ladder_help, rung_strategies
from studies.solving import retry_unknown, solve_deals
from studies.spec import DEFAULT_STORE, MAX_CHUNK, max_jobs


class SolveInputError(UserError):
    """A deal range, rule override or output path that `solve` cannot use."""


COLUMNS = ("variant", "source", "seed", "deal", "verdict", "nodes", "seconds", "moves", "verified", "rules_fingerprint",
           "strategy")


def parse_params(items: Sequence[str]) -> dict[str, str]:
    """The solver parameters of ``--param KEY=VALUE`` options, as texts (the strategy checks the values)."""
    params: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SolveInputError(f"--param {quoted(item)} is not KEY=VALUE")
        params[key.strip()] = value.strip()
    return params


def parse_deals(text: str) -> tuple[int, int]:
    """``A-B`` (inclusive) or ``N`` as (first, last)."""
    head, sep, tail = text.strip().partition("-")
    try:
        if len(head) > 40 or len(tail) > 40:  # longer than any deal number
            raise ValueError
        first = int(head)
        last = int(tail) if sep else first
    except ValueError:
        first = last = None  # not numbers: refused as not a range, as the API's ranges are
    first, last = check_deal_range(first, last, f"--deals {quoted(text)}")
    if last - first + 1 > MAX_SOLVE_DEALS:
        raise SolveInputError(f"--deals {quoted(text)} names {last - first + 1:,} deals; allowed: at most {MAX_SOLVE_DEALS:,} "
                              "per command (split the range)")
    return first, last


def apply_overrides(rules: Rules, items: tuple[str, ...]) -> Rules:
    """Rules with ``key=value`` overrides (values in TOML syntax: true, 3, "any"), named after the overrides
    when they change the rules (``spanish-patience[worrying_back=true]``): the preset's name labels only its own rules."""
    changes: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or key not in PARAMETERS:
            raise SolveInputError(f"--set {quoted(item)}: expected KEY=VALUE with KEY one of {', '.join(PARAMETERS)}")
        try:
            parsed = tomllib.loads(f"v = {value.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            parsed = value.strip()
        except ValueError:  # a whole number longer than Python converts
            raise SolveInputError(f"--set {key}=...: {LONG_NUMBER}") from None
        changes[key] = tuple(parsed) if isinstance(parsed, list) else parsed
    changed = rules.replace(**changes) if changes else rules
    if changed.fingerprint == rules.fingerprint:
        return changed
    name = f"{rules.name}[{','.join(f'{k}={json.dumps(v)}' for k, v in changes.items())}]"
    return changed.replace(name=name if len(name) <= MAX_NAME else f"{rules.name}[modified]")


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Counts, decided fraction, win rate with its Wilson interval, time and nodes per deal."""
    from studies.stats import win_rate_interval

    n = len(rows)
    won = sum(r["verdict"] == "won" for r in rows)
    lost = sum(r["verdict"] == "lost" for r in rows)
    seconds = np.array([r["seconds"] for r in rows], dtype=float)
    nodes = np.array([r["nodes"] for r in rows], dtype=float)
    low, high = win_rate_interval(won, n)
    # statistics' median, not numpy's, which imports numpy.ma (tens of milliseconds of a warm solve): the same value
    median = float(statistics.median(seconds.tolist()))
    return {
        "deals": n, "won": won, "lost": lost, "unknown": n - won - lost,
        "timeout": sum(r.get("termination") == "timeout" for r in rows),
        "error": sum(r["verdict"] == "error" for r in rows),
        "verified": sum(r["verified"] is True for r in rows),
        "verify_failed": sum(r["verified"] is False for r in rows),
        "decided": (won + lost) / n, "win_rate": won / n, "win_low": low, "win_high": high,
        "mean_seconds": float(seconds.mean()), "median_seconds": median,
        "max_seconds": float(seconds.max()), "mean_nodes": float(nodes.mean()),
        "nodes_per_second": float(nodes.sum() / max(seconds.sum(), 1e-9)),
    }


def write_rows(rows: list[dict[str, Any]], path: Path) -> None:
    """Write the rows to ``path`` (.csv or .parquet) atomically: a failure leaves no partial file."""
    import pandas as pd

    from reports.output import write_file_atomically

    frame = pd.DataFrame(rows, columns=list(COLUMNS) + (["rung"] if rows and "rung" in rows[0] else []))
    if path.suffix == ".parquet":
        write_file_atomically(path, lambda tmp: frame.to_parquet(tmp, index=False))
    else:
        write_file_atomically(path, lambda tmp: frame.to_csv(tmp, index=False))


@click.command()
@click.option("--variant", "-v", default="bakers-dozen", show_default=True,
              help="A preset name or alias (see `bakers-dozen variants`) or a .toml variant file.")
@click.option("--set", "overrides", multiple=True, metavar="KEY=VALUE",
              help="Override a rule parameter, e.g. --set worrying_back=true (repeatable).")
@click.option("--deals", "-d", "deal_range", required=True, help="Deal numbers A-B (inclusive) or N.")
@click.option("--seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True, help="Deal seed (default source).")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
              help="Deal numbering: this toolkit's, or PySolFC's.")
@click.option("--nodes", type=Bounded(int, 1, MAX_SOLVE_NODES), default=None,
              help="Node budget per deal (solver default if unset).")
@click.option("--seconds", type=Bounded(float, 0.0, MAX_SOLVE_SECONDS), default=None,
              help="Safety cap in seconds per deal, at most a day (solver default if unset); a deal it stops "
                   "is stored as a timeout, apart from the deals the node budget leaves unknown.")
@click.option("--tt-mb", type=Bounded(float, 0.01, memory_mib), default=None,
              help="Transposition table MiB per worker; all workers' tables together must fit in memory.")
@click.option("--param", "extra", multiple=True, metavar="KEY=VALUE", help="Any other solver parameter (repeatable).")
@click.option("--jobs", "-j", type=Bounded(int, 1, max_jobs), default=None,
              help="Worker processes, at most 4 per core [default: every core].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True,
              help="Results directory: every deal is stored as it is decided, and the same command resumes.")
@click.option("--chunk", type=Bounded(int, 1, MAX_CHUNK), default=None,
              help="Deals per task [default: adaptive, about 3 s of work each]; a kill loses at most the chunks in play.")
@click.option("--force", is_flag=True, help="Solve again the deals the store already holds for these settings.")
@click.option("--retry-unknown", "retry", is_flag=True,
              help="Solve first with the default budget, then only the deals it leaves unknown with --nodes/--seconds.")
@click.option("--escalate", "escalate_flag", is_flag=True,
              help="Solve with the command's budget, then each deal still unknown (or stopped by the seconds cap) with "
                   f"the next rung of the ladder; the rows say which rung decided each deal. Rungs: {ladder_help()}.")
@click.option("--rung", "rung_texts", multiple=True, metavar="KEY=VALUE[,KEY=VALUE...]",
              help="With --escalate, a rung of your own instead of rungs 1 and up (repeatable, in order), e.g. "
                   "--rung nodes=30000000.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), default=None,
              help="Write the rows to FILE.csv or FILE.parquet.")
@click.option("--verify/--no-verify", default=True, show_default=True, help="Replay every win with the referee.")
@click.option("--rows", "show_rows", type=click.Choice(["auto", "all", "notable"]), default="auto", show_default=True,
              help="Which deals to print: all, or the undecided, lost and slowest (auto: all up to 100 deals).")
def solve(variant: str, overrides: tuple[str, ...], deal_range: str, seed: int, source: str, nodes: int | None,
          seconds: float | None, tt_mb: float | None, extra: tuple[str, ...], jobs: int | None, store_dir: str,
          chunk: int | None, force: bool, retry: bool, escalate_flag: bool, rung_texts: tuple[str, ...], quiet: bool,
          out: Path | None, verify: bool, show_rows: str) -> None:
    """Decide deals with the solver (won / lost / unknown) and check every win with the referee.

    Every deal is stored as it is decided (--store); running the same command again
    reuses them, so a killed or interrupted solve resumes where it stopped.

    \b
    Exit codes:
      0    done
      1    a win failed the referee's check, or a fault stopped the run (disk full,
           worker processes kept dying; what finished is saved)
      2    bad input, or the store cannot be used
      130  interrupted (Ctrl-C); what finished is saved and the same command resumes
    """
    from joblib import cpu_count
    from rich.table import Table

    from bakers_dozen.options import console, variant_title
    from sim.deals import check_deal_number
    from strategies.base import StrategyError
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy
    from studies.progress import make_progress

    rules = apply_overrides(resolve_variant(variant), overrides)
    first, last = parse_deals(deal_range)
    check_deal_number(first, seed, source)
    check_deal_number(last, seed, source)
    if out is not None:
        from reports.output import check_output_file

        check_output_file(out, (".csv", ".parquet"))
    if source == "pysol":
        from sim.deals import check_pysol_shape

        check_pysol_shape(rules)
    params: dict[str, Any] = dict(parse_params(extra))
    for key, value in (("nodes", nodes), ("seconds", seconds), ("tt_mb", tt_mb)):
        if value is not None:
            params[key] = value
    try:
        strategy = SolverStrategy(**params)
    except StrategyError as exc:
        raise SolveInputError(str(exc)) from None
    check_memory(strategy, rules, jobs or cpu_count())

    base = {k: v for k, v in params.items() if k not in ("nodes", "seconds")} if retry else params
    if retry and base == params:
        raise SolveInputError("--retry-unknown needs --nodes or --seconds: the bigger budget for the unknown deals")
    if rung_texts and not escalate_flag:
        raise SolveInputError("--rung is a rung of the --escalate ladder: add --escalate")
    if retry and escalate_flag:
        raise SolveInputError("--retry-unknown and --escalate both retry the unknown deals: use one")
    rungs = ladder(rung_texts)
    if escalate_flag:
        for rung_strategy in rung_strategies(rules, params, rungs):
            check_memory(rung_strategy, rules, jobs or cpu_count())
    with run_exits():
        options = {"store": store_dir, "jobs": jobs, "chunk": chunk, "verify": verify, "force": force,
                   "progress": make_progress(quiet), "command": sys.argv}
        if escalate_flag:
            rows, reports, result = escalate(rules, params, first, last, seed, source, rungs, **options)
        else:
            rows, result = solve_deals(rules, base, first, last, seed, source, **options)
        if retry:
            rows, retried = retry_unknown(rules, rows, params, seed, source, **options)
    s = summary(rows)

    where = f"deals {first}-{last}, source {source}" + (f", seed {seed}" if source == "default" else "")
    title = f"{variant_title(variant, rules)} ({rules.fingerprint}), {where}, {strategy.label_for(rules)}"
    if show_rows == "all" or (show_rows == "auto" and len(rows) <= 100):
        shown = rows
    else:
        slowest = sorted(rows, key=lambda r: -r["seconds"])[:10]
        keep = {r["deal"] for r in rows if r["verdict"] != "won" or r["verified"] is False} | {r["deal"] for r in slowest}
        shown = [r for r in rows if r["deal"] in keep]
        title += f" (undecided, lost and 10 slowest of {len(rows):,})"
    table = Table(title=title)
    for col in ("deal", "verdict", "nodes", "seconds", "moves", "referee") + (("rung",) if escalate_flag else ()):
        # fold, never cut, on 80 columns
        table.add_column(col, justify="left" if col in ("verdict", "referee") else "right", overflow="fold")
    for r in shown:
        check = "-" if r["verified"] is None else ("ok" if r["verified"] else "FAILED")
        table.add_row(str(r["deal"]), r["verdict"], f"{r['nodes']:,}", f"{r['seconds']:.3f}", str(r["moves"]), check,
                      *((str(r["rung"]),) if escalate_flag else ()))
    screen = console()
    screen.print(table)
    lines = [
        f"deals: {s['deals']:,}  won: {s['won']:,}  lost: {s['lost']:,}  unknown: {s['unknown']:,}"
        + (f" ({s['timeout']:,} stopped by the seconds cap, not the node budget)" if s["timeout"] else "")
        + (f"  error: {s['error']:,}" if s["error"] else ""),
        f"decided: {s['decided']:.2%}  won: {s['win_rate']:.2%} (95% Wilson {s['win_low']:.2%} - {s['win_high']:.2%})"
        + (f"; winnable fraction between {s['win_rate']:.2%} and {(s['won'] + s['unknown']) / s['deals']:.2%}"
           if s["unknown"] else ""),
        f"referee: {s['verified']:,} of {s['won']:,} wins replayed and won"
        + (f"; {s['verify_failed']:,} FAILED" if s["verify_failed"] else "")
        if verify else "referee: not run (--no-verify)",
        f"time per deal: mean {s['mean_seconds'] * 1000:.1f} ms, median {s['median_seconds'] * 1000:.1f} ms, "
        f"max {s['max_seconds']:.2f} s; {s['mean_nodes']:,.0f} nodes per deal, {s['nodes_per_second']:,.0f} nodes/s; "
        f"wall {result.seconds:.1f} s with {result.jobs} job(s)" + (" in rung 0" if escalate_flag else ""),
        f"store: {result.store} (key {result.key}" + (" of rung 0; each rung has its own" if escalate_flag else "")
        + f"); solved now {result.played:,}, reused {result.reused:,}",
    ]
    if retry:
        lines.append(f"retried: the {retried:,} deal(s) the default budget left unknown, with {strategy.label_for(rules)}")
    if escalate_flag:
        lines.extend(report.line() for report in reports)
    if rules.face_down:
        lines.append("clairvoyant: the solver sees face-down cards; its win rate is an upper bound for honest play")
    for line in lines:
        screen.print(line, highlight=False)
    if out is not None:
        write_rows(rows, out)
        screen.print(f"wrote {len(rows):,} rows to {out}", highlight=False)
    if s["verify_failed"]:
        sys.exit(1)


