"""`bakers-dozen atlas run` (also plain `bakers-dozen atlas` with run's options) and `atlas verify`: compute an atlas,
and check one by solving a sample of its deals again.

`atlas run` decides every deal of a range of each preset by the escalation ladder (`studies.atlas.ladder`, each rung
a run of the solver in the store, so a killed run resumes) and writes each variant's files as its ladder climbs
(`studies.atlas.climbing`: after each rung, on Ctrl-C or SIGTERM, when ``--hours`` run out; under the folder's lock,
never replacing a row that knows more without ``--force``), to ``./bakers-dozen-atlas`` unless ``--out`` names
another folder: the shipped atlas is written only when named. With ``--reuse`` (repeatable) a variant climbs from
atlases already written (`studies.atlas.reuse`), each deal from the rung after the one it has been through, once a
sample of each one's verdicts solved again agrees (`studies.atlas.verify`). This module parses and prints; the work
is in `studies.atlas`.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import click

from bakers_dozen.atlas import AtlasInputError, atlas_folder
from bakers_dozen.limits import Bounded
from bakers_dozen.simulate import run_exits
from bakers_dozen.solve import parse_deals, parse_params
from sim.deals import MAX_SEED
from sim.errors import quoted
from sim.rules import find_variant, is_variant_file, preset_named, variant_names
from studies.atlas.ladder import budgets, ladder, ladder_help, rung_strategies
from studies.atlas.verify import DEFAULT_SAMPLE
from studies.atlas.writing import DEFAULT_OUT, Planned, check_out
from studies.spec import BACKENDS, DEFAULT_STORE, MAX_CHUNK, RunnerError, max_jobs


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


@click.command("run")
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
              help="Folder for summary.csv and the deal files; the shipped atlas is written only when named here.")
@click.option("--force", is_flag=True,
              help="Replace a row of --out even with one that leaves out some of its deals or ran fewer rungs.")
@click.option("--reuse", "reuse", type=click.Path(path_type=Path), multiple=True, metavar="FOLDER",
              help="An atlas already written to climb from (repeatable: the folders of a climb split by deal range "
                   "merge into one row): the deals its rows decided are taken as they are once a random sample of "
                   f"them ({DEFAULT_SAMPLE}, or all if fewer) solved again at rung 0 agrees, each unknown deal goes on "
                   "from the rung after the highest it has been through, and deals asked for outside its range start "
                   "at rung 0. Its row must have these rules, numbering, seed, solver version and rung budgets, agree "
                   "with its deal file and share deals with the range asked for. The row written names it.")
@click.option("--hours", type=Bounded(float, 0.0, 1e6), default=None,
              help="Stop climbing above rung 0 after this many hours and write how far each deal climbed (exit 0); "
                   "--reuse the folder to go on. 0: climb nothing, write what --reuse takes [default: no limit].")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def run(variants: tuple[str, ...], deal_texts: tuple[str, ...], source: str, seed: int, extra: tuple[str, ...],
        rung_texts: tuple[str, ...], last_rung: int | None, jobs: int | None, chunk: int | None, backend: str,
        scheduler: str | None, store_dir: str, out: Path, force: bool, reuse: tuple[Path, ...], hours: float | None,
        quiet: bool) -> None:
    """Decide every deal of a range of each variant (the escalation ladder) and write the atlas: summary.csv (one
    row a variant: counts, win rate, interval, budgets, command) and one Parquet file a variant (one row a deal).

    Running the same command again reuses every deal the store holds, so a killed atlas resumes. A row is written
    after each rung and when the climb stops (Ctrl-C, kill, --hours), each deal with the highest rung it has been
    through: --reuse OUT goes on from there on any machine.

    \b
    Exit codes:
      0    done, or --hours ran out (what was climbed is written)
      1    a win failed the referee's check (that variant's files are not written), or a fault stopped the run
      2    bad input (a damaged --out or --reuse atlas too), or the store cannot be used
      130  interrupted (Ctrl-C, kill); what was climbed is written, and the same command resumes
    """
    import time

    from joblib import cpu_count

    from bakers_dozen.options import console
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy
    from studies.atlas.climbing import RowWriter, climb_row, terms_interrupt
    from studies.atlas.ladder import stopped
    from studies.atlas.reuse import take, vouch
    from studies.atlas.writing import rungs_run
    from studies.progress import make_progress

    if backend == "loky" and scheduler:
        raise RunnerError("--scheduler is for --backend dask; add --backend dask or drop --scheduler")
    files_given = [v for v in variants if is_variant_file(v)]
    if files_given:
        raise AtlasInputError(f"--variant {quoted(files_given[0])}: the atlas holds presets only (see `bakers-dozen "
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
    check_out(out, [Planned(r.name, source, *ranges[r.name], len(rungs)) for r in chosen], force)

    screen = console()
    options = {"store": store_dir, "jobs": jobs, "chunk": chunk, "backend": backend, "scheduler": scheduler,
               "progress": make_progress(quiet), "command": sys.argv}
    deadline = None if hours is None else time.monotonic() + hours * 3600
    taken = {rules.name: take(reuse, rules, source, seed, *ranges[rules.name], SolverStrategy.version,
                              budgets(rungs, base)) for rules in chosen} if reuse else {}
    for rules in chosen if reuse else ():  # before any work: a sample of each source's verdicts solved again
        with run_exits():
            lines = vouch(taken[rules.name], rules, source, seed, {**base, **rungs[0].params}, **options)
        for line in lines:
            screen.print(line, highlight=False)
    failed = False
    for rules in chosen:
        first, last = ranges[rules.name]
        got = taken.get(rules.name)
        writer = RowWriter(out, rules, source, seed, rungs, base, SolverStrategy.version,
                           row_command(rules.name, first, last, source, seed, extra, rung_texts, last_rung, reuse),
                           got.ran if got else 0, got.provenance if got else None, force,
                           lambda line: screen.print(line, highlight=False))
        with run_exits(), terms_interrupt():
            rows, reports, row = climb_row(writer, first, last, got, deadline, **options)
        if row is None:
            bad = [r["deal"] for r in rows if r["verdict"] not in ("won", "lost", "unknown")]
            screen.print(f"{rules.name}: {len(bad):,} deal(s) without a verdict (a win the referee rejected, or an "
                         f"error), e.g. {bad[:5]}; these rows are not written", highlight=False)
            failed = True
            continue
        for report in reports:
            screen.print(f"  {report.line()}", highlight=False)
        screen.print(f"{rules.name}: deals {row['first']:,}-{row['last']:,}: won {row['won']:,}, lost {row['lost']:,}, "
                     f"unknown {row['unknown']:,} ({row['timeout']:,} stopped by the seconds cap); win rate "
                     f"{row['win_rate']:.3%} (95% {row['ci_low']:.3%} - {row['ci_high']:.3%}), rungs 0-"
                     f"{rungs_run(row) - 1}, every unknown deal through rung {row['climbed']}"
                     + (", clairvoyant" if rules.face_down else "") + f"; wrote {out}"
                     + (f" (--hours ran out: --reuse {out} goes on)" if stopped(reports) else ""), highlight=False)
    if failed:
        sys.exit(1)


@click.command("verify")
@click.argument("folder", type=click.Path(path_type=Path), required=False)
@click.option("--variant", "-v", "variants", multiple=True, help="Only this preset's rows (repeatable).")
@click.option("--sample", type=Bounded(int, 1, 1_000_000), default=DEFAULT_SAMPLE, show_default=True,
              help="Decided deals of each row solved again at rung 0 (all where it has fewer).")
@click.option("--jobs", "-j", type=Bounded(int, 1, max_jobs), default=None, help="Worker processes [default: every core].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True,
              help="Results directory for the deals solved again.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
def verify(folder: Path | None, variants: tuple[str, ...], sample: int, jobs: int | None, store_dir: str,
           quiet: bool) -> None:
    """Check an atlas FOLDER [default: the shipped atlas]: each row against its deal file, then a random sample of its
    decided deals solved again at the row's rung 0; a deal the sample contradicts is named. Rows of related rules
    are checked against each other: a deal won under stricter rules may not be lost under looser ones.

    \b
    Exit codes:
      0    every row agrees
      1    a row's sample disagrees with it, or two related rows disagree
      2    bad input, or a row that disagrees with its own deal file
    """
    from bakers_dozen.options import console
    from studies.atlas.related import contradictions
    from studies.atlas.verify import verify_atlas
    from studies.progress import make_progress

    where = atlas_folder(folder)
    names = tuple(find_variant(v).name for v in variants)
    with run_exits():
        checks = verify_atlas(where, sample, names, store=store_dir, jobs=jobs, progress=make_progress(quiet),
                              command=sys.argv)
    screen = console()
    for check in checks:
        screen.print(check.line(), highlight=False)
        for line in check.disagreements[1:]:
            screen.print(f"  {line}", highlight=False)
    with run_exits():
        crossed = [line for source in ("default", "pysol") for line in contradictions(where, source)]
    for line in crossed:
        screen.print(f"related rules: {line}", highlight=False)
    if not crossed:
        screen.print("related rules: no deal won under stricter rules is lost under looser ones", highlight=False)
    if crossed or any(c.disagreements for c in checks):
        sys.exit(1)


def row_command(name: str, first: int, last: int, source: str, seed: int, extra: tuple[str, ...],
                rung_texts: tuple[str, ...], last_rung: int | None = None, reuse: tuple[Path, ...] = ()) -> str:
    """The command that computes one summary row again (jobs, store and output folder change no verdict; ``--reuse``
    does, since the verdicts it takes are not computed again)."""
    args = ["bakers-dozen", "atlas", "--variant", name, "--deals", f"{first}-{last}", "--source", source]
    if source == "default":
        args += ["--seed", str(seed)]
    for item in extra:
        args += ["--param", item]
    for item in rung_texts:
        args += ["--rung", item]
    if last_rung is not None:
        args += ["--last-rung", str(last_rung)]
    for folder in reuse:
        args += ["--reuse", str(folder)]
    return shlex.join(args)


