"""`bakers-dozen atlas`: the winnability of every preset over a range of deals, decided by the escalation ladder and
written as data (`studies.atlas`: ``summary.csv`` and one Parquet file a variant).

Each variant's deals run through `bakers_dozen.escalate` (each rung a run of the solver in the store), so a killed
atlas run again resumes where it stopped; each variant's files are written as soon as its ladder finishes, so a
variant done is never lost to a later one's failure. The summary keeps the rows of the variants not run this time.
With ``--reuse`` a variant climbs from an atlas already written instead of from rung 0 (`bakers_dozen.atlas_reuse`),
so the shipped atlas's unknown deals can be escalated, and its range extended, on a machine without its store.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any

import click

from bakers_dozen.atlas_reuse import reused_reports, reused_rows, uncovered
from bakers_dozen.escalate import budgets, ladder, ladder_help, rung_report, rung_strategies
from bakers_dozen.limits import Bounded
from bakers_dozen.simulate import run_exits
from bakers_dozen.solve import climb, escalate, parse_deals, parse_params, solve_scattered
from sim.deals import MAX_SEED
from sim.errors import UserError, quoted
from sim.rules import Rules, find_variant, is_variant_file, preset_named, variant_names
from studies.spec import BACKENDS, DEFAULT_STORE, MAX_CHUNK, RunnerError, max_jobs

DEFAULT_OUT = Path("data") / "atlas"


class AtlasInputError(UserError):
    """A variant, deal range or option `atlas` cannot use."""


def deal_ranges(texts: tuple[str, ...], names: list[str]) -> dict[str, tuple[int, int]]:
    """Each variant's deal range from ``--deals`` values: ``A-B`` for every variant, ``VARIANT=A-B`` for one (a
    preset named by its name or an alias)."""
    common: tuple[int, int] | None = None
    own: dict[str, tuple[int, int]] = {}
    for text in texts:
        name, sep, deals = text.rpartition("=")
        if sep:
            preset = preset_named(name)
            name = preset.name if preset is not None and name not in names else name
            if name not in names:
                raise AtlasInputError(f"--deals {quoted(text)}: {quoted(name)} is not one of the variants run "
                                      f"({', '.join(names)})")
            own[name] = parse_deals(deals)
        else:
            common = parse_deals(deals)
    missing = [n for n in names if n not in own and common is None]
    if missing:
        raise AtlasInputError(f"no --deals range for {', '.join(missing)}: give --deals A-B for every variant")
    return {n: own.get(n, common) for n in names}  # type: ignore[misc]


def check_out(out: Path) -> None:
    """Make the output folder ``out`` (and its parents) before any work, or say in one line why it cannot be."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AtlasInputError(f"--out {quoted(str(out))}: cannot make the folder ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise AtlasInputError(f"--out {quoted(str(out))}: the folder is not writable")


@click.command()
@click.option("--variant", "-v", "variants", multiple=True,
              help="A preset name or alias (repeatable) [default: every preset]. The atlas holds presets only: its "
                   "files are named after them.")
@click.option("--deals", "-d", "deal_texts", multiple=True, default=("1-1000",), show_default=True,
              help="Deal numbers A-B for every variant, or VARIANT=A-B for one (repeatable).")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
              help="Deal numbering: this toolkit's, or PySolFC's (files named pysol-VARIANT, with a CSV of the deals "
                   "not proven winnable).")
@click.option("--seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True, help="Deal seed (default source).")
@click.option("--param", "extra", multiple=True, metavar="KEY=VALUE",
              help="A solver parameter for every rung (repeatable), e.g. --param tt_mb=256.")
@click.option("--rung", "rung_texts", multiple=True, metavar="KEY=VALUE[,KEY=VALUE...]",
              help=f"A rung of your own instead of rungs 1 and up (repeatable, in order). Rungs: {ladder_help()}.")
@click.option("--last-rung", type=Bounded(int, 0, 99), default=None,
              help="Stop the ladder after this rung (0: the command's own budget alone) [default: every rung]. The "
                   "deals it leaves open stay unknown; the summary's budgets name the rungs run.")
@click.option("--jobs", "-j", type=Bounded(int, 1, max_jobs), default=None,
              help="Worker processes [default: every core; dask: every cluster thread].")
@click.option("--chunk", type=Bounded(int, 1, MAX_CHUNK), default=None, help="Deals per task [default: adaptive].")
@click.option("--backend", type=click.Choice(BACKENDS), default="loky", show_default=True,
              help="loky: processes on this machine; dask: a Dask cluster (needs --scheduler).")
@click.option("--scheduler", default=None, help="Dask scheduler address for --backend dask, e.g. tcp://host:8786.")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True,
              help="Results directory: every deal is stored as it is decided, and the same command resumes.")
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), default=DEFAULT_OUT, show_default=True,
              help="Folder for summary.csv and the deal files.")
@click.option("--reuse", type=click.Path(path_type=Path), default=None, metavar="FOLDER",
              help="An atlas already written (e.g. data/atlas) to climb from: the deals its rows decided are taken "
                   "as they are (not solved or replayed again), only its unknown deals go on to the rungs above "
                   "those it ran, and deals asked for outside its range start at rung 0. Its row must have these "
                   "rules, numbering, seed, solver version and rung budgets, agree with its deal file and share "
                   "deals with the range asked for.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def atlas(variants: tuple[str, ...], deal_texts: tuple[str, ...], source: str, seed: int, extra: tuple[str, ...],
          rung_texts: tuple[str, ...], last_rung: int | None, jobs: int | None, chunk: int | None, backend: str, scheduler: str | None,
          store_dir: str, out: Path, reuse: Path | None, quiet: bool) -> None:
    """Decide every deal of a range of each variant (the escalation ladder) and write the atlas: summary.csv (one
    row a variant: counts, win rate, interval, budgets, command) and one Parquet file a variant (one row a deal).

    Running the same command again reuses every deal the store holds, so a killed atlas resumes.

    \b
    Exit codes:
      0    done
      1    a win failed the referee's check (that variant's files are not written), or a fault stopped the run
      2    bad input, or the store cannot be used
      130  interrupted (Ctrl-C); what finished is saved and the same command resumes
    """
    from joblib import cpu_count

    from bakers_dozen.options import console
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy
    from studies.progress import make_progress

    if backend == "loky" and scheduler:
        raise RunnerError("--scheduler is for --backend dask; add --backend dask or drop --scheduler")
    check_out(out)
    files = [v for v in variants if is_variant_file(v)]
    if files:
        raise AtlasInputError(f"--variant {quoted(files[0])}: the atlas holds presets only (see `bakers-dozen "
                              "variants`); solve a variant file with `bakers-dozen solve --escalate`")
    chosen = [find_variant(v) for v in variants] or [find_variant(n) for n in variant_names()]
    if source == "pysol":
        from sim.deals import check_pysol_shape

        for rules in chosen:
            check_pysol_shape(rules)
    ranges = deal_ranges(deal_texts, [r.name for r in chosen])
    base: dict[str, Any] = dict(parse_params(extra))
    rungs = ladder(rung_texts, last_rung)
    for rules in chosen:
        for strategy in rung_strategies(rules, base, rungs):
            check_memory(strategy, rules, jobs or cpu_count())

    reused = {}
    if reuse is not None:
        for rules in chosen:
            first, last = ranges[rules.name]
            reused[rules.name] = reused_rows(reuse, rules, source, seed, first, last, SolverStrategy.version,
                                             budgets(rungs, base))
    screen = console()
    failed = False
    for rules in chosen:
        first, last = ranges[rules.name]
        options = {"store": store_dir, "jobs": jobs, "chunk": chunk, "backend": backend, "scheduler": scheduler,
                   "progress": make_progress(quiet), "command": sys.argv}
        with run_exits():
            if rules.name in reused:
                rows, ran = reused[rules.name]
                reports = reused_reports(rows, rungs, ran, rules, base)
                missing = uncovered(rows, first, last)
                if missing:  # deals outside the reused range: rung 0 first
                    new, _ = solve_scattered(rules, {**base, **rungs[0].params}, missing, seed, source, **options)
                    for r in new:
                        r["rung"] = 0
                    reports.append(rung_report(0, rungs[0], base, new))
                    rows = sorted([*rows, *new], key=lambda r: r["deal"])
                rows, climbed = climb(rules, base, rows, rungs, 1, seed, source, **options)
                reports += [r for r in climbed if r.rung >= ran or r.tried]  # not the reused rungs again, idle
            else:
                rows, reports, _ = escalate(rules, base, first, last, seed, source, rungs, **options)
        bad = [r["deal"] for r in rows if r["verdict"] not in ("won", "lost", "unknown")]
        if bad:
            screen.print(f"{rules.name}: {len(bad):,} deal(s) without a verdict (a win the referee rejected, or an "
                         f"error), e.g. {bad[:5]}; its files are not written", highlight=False)
            failed = True
            continue
        command = row_command(rules.name, first, last, source, seed, extra, rung_texts, last_rung)
        written = write_variant(out, rules, source, seed, rows, budgets(rungs, base), SolverStrategy.version, command)
        for report in reports:
            screen.print(f"  {report.line()}", highlight=False)
        screen.print(written, highlight=False)
    if failed:
        sys.exit(1)


def row_command(name: str, first: int, last: int, source: str, seed: int, extra: tuple[str, ...],
                rung_texts: tuple[str, ...], last_rung: int | None = None) -> str:
    """The command that computes one summary row again (jobs, store and output folder change no verdict)."""
    args = ["bakers-dozen", "atlas", "--variant", name, "--deals", f"{first}-{last}", "--source", source]
    if source == "default":
        args += ["--seed", str(seed)]
    for item in extra:
        args += ["--param", item]
    for item in rung_texts:
        args += ["--rung", item]
    if last_rung is not None:
        args += ["--last-rung", str(last_rung)]
    return shlex.join(args)


def write_variant(out: Path, rules: Rules, source: str, seed: int, rows: list[dict[str, Any]], budget_line: str,
                  solver_version: str, command: str) -> str:
    """Write one variant's deal file (and, for PySolFC numbering, its not-winnable list) and its summary row; one
    line saying what the row holds."""
    from reports.output import write_file_atomically
    from studies import atlas as files

    out.mkdir(parents=True, exist_ok=True)
    table = files.deal_table(rows)
    write_file_atomically(out / files.deals_file(rules.name, source), lambda tmp: files.write_deals(table, tmp))
    if source == "pysol":
        write_file_atomically(out / files.not_winnable_file(rules.name), lambda tmp: files.write_not_winnable(table, tmp))
    row = files.summary_row(table, variant=rules.name, fingerprint=rules.fingerprint, source=source,
                            seed=seed if source == "default" else 0, solver_version=solver_version,
                            budgets=budget_line, clairvoyant=bool(rules.face_down), command=command)
    merged = files.merge_summary(files.read_summary(out / files.SUMMARY), row)
    write_file_atomically(out / files.SUMMARY, lambda tmp: files.write_summary(merged, tmp))
    return (f"{rules.name}: deals {row['first']:,}-{row['last']:,}: won {row['won']:,}, lost {row['lost']:,}, "
            f"unknown {row['unknown']:,} ({row['timeout']:,} stopped by the seconds cap); win rate "
            f"{row['win_rate']:.3%} (95% {row['ci_low']:.3%} - {row['ci_high']:.3%})"
            + (", clairvoyant" if rules.face_down else "") + f"; wrote {out}")
