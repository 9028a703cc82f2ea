"""`bakers-dozen solve`: decide a range of deals with the solver, check every win with the referee.

Prints one row per deal (verdict, nodes, seconds, moves, referee check) and a
summary: decided fraction, wins with a 95% Wilson interval, time and nodes per
deal; writes the rows to a CSV or Parquet file.

The deals run through the runner (`studies.runner.run`) like any strategy: the
solver with the given parameters is the run's strategy (its parameters are in
the run key), chunks go to worker processes (a solve of a few deals, or with
``--jobs 1``, plays in this process: `studies.backends.plays_in_process`) and into
the store as they finish, so a killed or interrupted solve loses only the chunks
in flight and the same command resumes; the rows are then read back from the
store. PySol's numbering
comes from the runner's deal sources.
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
import pyarrow as pa

from bakers_dozen.escalate import LADDER, Rung, RungReport, ladder, ladder_help, rung_report, rung_strategies
from bakers_dozen.limits import MAX_SOLVE_DEALS, MAX_SOLVE_NODES, MAX_SOLVE_SECONDS, Bounded, memory_mib
from bakers_dozen.simulate import run_exits
from sim.deals import MAX_SEED, check_deal_range
from sim.errors import UserError, quoted
from sim.rules import LONG_NUMBER, MAX_NAME, PARAMETERS, Rules, resolve_variant
from studies.chunks import REJECTED
from studies.progress import Progress
from studies.runner import run
from studies.spec import DEFAULT_STORE, MAX_CHUNK, RunSpec, RunSummary, max_jobs


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


def solver_spec(params: dict[str, Any]) -> str:
    """The strategy spec (``solver:key=value,...``) the runner loads for these solver parameters."""
    return "solver" + (":" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) if params else "")


def solve_deals(rules: Rules, params: dict[str, Any], first: int, last: int, seed: int = 0, source: str = "default",
                **options: Any) -> tuple[list[dict[str, Any]], RunSummary]:
    """Solve deals first..last through the runner and its store; the rows (sorted by deal) and the run's summary.

    The runner plays the deals the store does not hold yet (a killed run resumes; ``force``
    replays) and, with ``verify``, replays every win with the referee in the worker before
    storing it (a rejected win is stored as an error). Wins stored by an earlier run that did
    not verify are replayed here, so every win in the rows has been checked when ``verify``.
    ``options`` are `solve_spec`'s.
    """
    return solve_spec(rules, RunSpec(rules, solver_spec(params), last - first + 1, first, seed, source), **options)


def solve_scattered(rules: Rules, params: dict[str, Any], deals: Sequence[int], seed: int = 0,
                    source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], RunSummary]:
    """Solve just the deal numbers ``deals``, however scattered, as one run on every worker (`solve_deals`
    otherwise)."""
    return solve_spec(rules, RunSpec.over(rules, solver_spec(params), deals, seed=seed, source=source), **options)


def solve_spec(rules: Rules, spec: RunSpec, *, store: str | Path = DEFAULT_STORE, jobs: int | None = None,
               chunk: int | None = None, verify: bool = True, force: bool = False, backend: str = "loky",
               scheduler: str | None = None, progress: Progress | None = None, command: list[str] | None = None
               ) -> tuple[list[dict[str, Any]], RunSummary]:
    """Run the solver run ``spec`` in ``store`` and read back its rows (`store_rows`) and summary."""
    result = run(spec, store, jobs=jobs, chunk=chunk, backend=backend, scheduler=scheduler, force=force,
                 progress=progress, command=command, verify=verify)
    return store_rows(rules, result, verify, spec.spans), result


def retry_unknown(rules: Rules, rows: list[dict[str, Any]], params: dict[str, Any], seed: int = 0,
                  source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], int]:
    """Solve again, with ``params`` (a bigger budget), only the deals ``rows`` leave unknown.

    They are one run under the bigger budget's run key (`solve_scattered` with ``options``: store,
    jobs, verify, ...), played on every worker however scattered they are, and resumed like any solve; the
    decided rows stay. Returns the rows with the retried ones in place, and how many were retried."""
    unknown = [r["deal"] for r in rows if r["verdict"] == "unknown"]
    if not unknown:
        return rows, 0
    rows, _ = solve_again(rules, rows, unknown, params, seed, source, **options)
    return rows, len(unknown)


def solve_again(rules: Rules, rows: list[dict[str, Any]], deals: list[int], params: dict[str, Any], seed: int = 0,
                source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Solve ``deals`` (some of those ``rows`` hold) again with ``params`` (`solve_scattered` with ``options``) and
    put their new rows in place of the old; the rows, and the new rows alone."""
    again, _ = solve_scattered(rules, params, deals, seed, source, **options)
    by_deal = {r["deal"]: r for r in again}
    return [by_deal.get(r["deal"], r) for r in rows], again


def store_rows(rules: Rules, result: RunSummary, verify: bool,
               spans: Sequence[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
    """The solve rows (`COLUMNS`, and the termination: ``timeout`` where the seconds cap, not the node
    budget, left a deal unknown) of a finished run over ``spans`` (default: its deals from first on), read from
    its store (as Arrow rows: no pandas to import)."""
    from studies.reading import read_table
    from studies.store import Store

    spans = spans or ((result.first, result.first + result.deals - 1),)
    recheck = verify and not all(m.get("parameters", {}).get("verify") is True
                                 for m in Store.open(result.store, create=False).read_manifests(result.key)[0])
    columns = ["deal", "outcome", "termination", "nodes", "micros", "moves", "error"] + (["win_moves"] if recheck else [])
    table = read_table(result.store, key=result.key, deals=(spans[0][0], spans[-1][1]), columns=columns)
    if len(spans) > 1:  # the key may hold other deals between the run's
        import pyarrow.compute as pc

        wanted = [d for a, b in spans for d in range(a, b + 1)]
        table = table.filter(pc.is_in(table["deal"], value_set=pa.array(wanted, type=table.schema.field("deal").type)))
    rows = []
    fingerprint = rules.fingerprint  # a hash of the rules: once, not once a deal
    for r in table.to_pylist():
        verified: bool | None = None
        if verify and r["outcome"] == "won":
            verified = _replayed(rules, result, r["deal"], r["win_moves"]) if recheck else True
        elif verify and r["outcome"] == "error" and str(r["error"]).startswith(REJECTED):
            verified = False
        rows.append({
            "variant": rules.name, "source": result.source, "seed": result.seed, "deal": r["deal"],
            "verdict": r["outcome"], "nodes": r["nodes"], "seconds": r["micros"] / 1e6, "moves": r["moves"],
            "verified": verified, "rules_fingerprint": fingerprint, "strategy": result.strategy_identity,
            "termination": r["termination"],
        })
    return rows


def _replayed(rules: Rules, result: RunSummary, deal: int, codes: Any) -> bool:
    """Whether the referee wins deal ``deal`` with the stored move ``codes``."""
    from studies.reading import check_win

    v = check_win(rules, {"deal": deal, "seed": result.seed, "source": result.source, "win_moves": list(codes)})
    return bool(v.legal and v.won)


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


def escalate(rules: Rules, base: dict[str, Any], first: int, last: int, seed: int = 0, source: str = "default",
             rungs: tuple[Rung, ...] = LADDER, **options: Any) -> tuple[list[dict[str, Any]], list[RungReport], Any]:
    """Solve deals first..last with rung 0 (``base`` with its parameters), then each later rung on the deals the
    rung below left unknown; the rows (sorted by deal, each with the ``rung`` that gave its verdict), what each
    rung did, and rung 0's run summary. ``options`` go to `solve_deals` (store, jobs, verify, ...)."""
    rows, result = solve_deals(rules, {**base, **rungs[0].params}, first, last, seed, source, **options)
    for r in rows:
        r["rung"] = 0
    first_rung = rung_report(0, rungs[0], base, rows)
    rows, reports = climb(rules, base, rows, rungs, 1, seed, source, **options)
    return rows, [first_rung, *reports], result


def climb(rules: Rules, base: dict[str, Any], rows: list[dict[str, Any]], rungs: tuple[Rung, ...], start: int,
          seed: int = 0, source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], list[RungReport]]:
    """Run rungs ``start`` and up on ``rows`` (each with the ``rung`` that decided it, or the last that tried it):
    each rung on the deals still unknown that no rung as high has tried; the rows and what each of these rungs did.
    ``options`` go to `solve_deals`."""
    reports = []
    for i, rung in enumerate(rungs[start:], start=start):
        if rung.applies is not None and not rung.applies(rules):
            reports.append(RungReport(i, Rung({**base, **rung.params}).budget, skipped=True))
            continue
        below = {r["deal"] for r in rows if r["verdict"] == "unknown" and r["rung"] < i}
        if not below:
            reports.append(RungReport(i, Rung({**base, **rung.params}).budget))
            continue
        rows, retried = solve_again(rules, rows, sorted(below), {**base, **rung.params}, seed, source, **options)
        for r in retried:
            r["rung"] = i
        reports.append(rung_report(i, rung, base, retried))
    return rows, reports
