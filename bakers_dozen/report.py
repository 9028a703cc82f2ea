"""`compare`, `tournament`, `report` and `demo`: play studies and write reports.

Each plays its runs into a results store (reusing what the store holds), then
writes one HTML and one Markdown report with charts into ``--out`` and prints
its main tables.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import click
import numpy as np
from rich.table import Table
from rich.text import Text

from bakers_dozen.limits import MAX_RUN_DEALS, Bounded
from bakers_dozen.options import console
from sim.deals import MAX_SEED, PYSOL_MAX_DEAL, DealError
from sim.errors import UserError
from sim.text import one_line, printable
from studies.spec import DEFAULT_STORE, RunSpec, RunSummary, max_jobs
from studies.study import FAST_DEALS, SLOW_DEALS, default_study, run_study

DEFAULT_OUT = "bakers-dozen-report"
"""Where `demo` writes its report; `compare` and `tournament` have their own folders, so none overwrites another."""
COMPARE_OUT = "bakers-dozen-compare"
TOURNAMENT_OUT = "bakers-dozen-tournament"


class StudyInputError(UserError):
    """Options of compare, tournament or demo that make no study (no variants, fewer than two strategies)."""


JOBS = Bounded(int, 1, max_jobs)
RUN_DEALS = Bounded(int, 1, MAX_RUN_DEALS)


def _common(out: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The options compare and tournament share; ``out`` is the verb's own default report folder."""
    def options(f: Callable[..., Any]) -> Callable[..., Any]:
        return _study_options(click.option("--out", "out_dir", default=out, show_default=True, help="Folder for the report.")(f))
    return options


def _force(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--force", is_flag=True,
                        help="Replace the report in --out even when another command wrote it.")(f)


ATLAS_HELP = ("The winnability atlas whose perfect-play figures the report shows beside its own, for the same rules "
              "[default: the atlas shipped with bakers-dozen].")


def _atlas(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--atlas", "atlas_dir", type=click.Path(path_type=Path), default=None, help=ATLAS_HELP)(f)


def _study_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = _atlas(f)
    f = _force(f)
    f = click.option("--quiet", "-q", is_flag=True, help="No progress bar.")(f)
    f = click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True, help="Results directory.")(f)
    f = click.option("--jobs", "-j", type=JOBS, default=None,
                     help="Worker processes, at most 4 per core [default: every core].")(f)
    f = click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
                     help="Deal numbering.")(f)
    f = click.option("--seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True, help="Deal seed.")(f)
    f = click.option("--first", "-k", type=Bounded(int, 1, PYSOL_MAX_DEAL), default=1, show_default=True,
                     help="First deal number.")(f)
    return f


def check_study(runs: Sequence[RunSpec], out_dir: str, maker: str = "", force: bool = False) -> None:
    """Refuse, before any deal is played, a study that cannot finish or report: an unusable ``--out`` (or one
    holding another command's report than ``maker``'s, unless ``force``), deal numbers or a seed outside what
    the source deals, a source that cannot deal the rules, a bad strategy."""
    from reports.output import check_report_dir
    from sim.deals import check_deal_number, make_deal
    from strategies import load_strategy

    check_report_dir(out_dir, maker, force)
    for r in runs:
        check_deal_number(r.first, r.seed, r.source)
        try:
            check_deal_number(r.last, r.seed, r.source)
        except DealError as exc:
            raise DealError(f"--first {r.first} with --deals {r.deals} runs to deal {r.last}, past the last one: {exc}") from None
        make_deal(r.rules, r.first, r.seed, r.source)  # the source can deal these rules
    for spec in dict.fromkeys(r.strategy for r in runs):
        load_strategy(spec)


def check_distinct_players(runs: Sequence[RunSpec]) -> None:
    """Refuse a tournament two of whose strategies are one player: the same spec twice, or two specs that load
    the same code, name, version and parameters (an alias of a class, a default written out), whose runs would
    be one run key, so that the report would rank one player."""
    from strategies import load_strategy
    from studies.spec import run_labels

    seen: dict[str, str] = {}
    for r in runs:
        key = run_labels(r, load_strategy(r.strategy)).key.hash
        if key in seen:
            raise StudyInputError(f"strategies {seen[key]!r} and {r.strategy!r} are the same player (the same code, "
                                  f"name, version and parameters, run key {key}); a tournament needs different players")
        seen[key] = r.strategy


def _say_code(summaries: Sequence[RunSummary]) -> None:
    """A line for each plug-in run: the code digest its rows, reused or played, came from."""
    for s in summaries:
        if s.code_digest is not None:
            reused = f", {s.reused:,} of them reused from the store" if s.reused else ""
            click.echo(printable(f"{s.strategy} on {s.variant}: code {s.code_digest} played its {s.deals:,} deals{reused}"))


@contextlib.contextmanager
def _damage_on_stderr() -> Iterator[None]:
    """Show each damaged store file met inside (a `studies.files.DamagedFileWarning`), and each atlas file or row
    the report cannot use (a `reports.atlas.AtlasWarning`), as one ``bakers-dozen: warning:`` line on standard
    error, once, even when the command then fails."""
    from reports.atlas import AtlasWarning
    from studies.files import DamagedFileWarning

    said = (DamagedFileWarning, AtlasWarning)
    caught: list[warnings.WarningMessage] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            for category in said:
                warnings.simplefilter("always", category)
            yield
    finally:
        for message in dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, said)):
            click.echo("bakers-dozen: warning: " + one_line(message), err=True)
        for w in caught:
            if not issubclass(w.category, said):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)


def _print(report: Any, headings: Sequence[str]) -> None:
    """Print the tables whose section heading or caption is in ``headings`` (a heading ending in '*' is a prefix),
    and on standard error what the report could not use."""
    screen = console()
    for note in report.notes:
        click.echo("bakers-dozen: note: " + one_line(note), err=True)

    def wanted(text: str) -> bool:
        return any(text == h or (h.endswith("*") and text.startswith(h[:-1])) for h in headings)

    for section in report.sections:
        shown = False
        for caption, df in section.tables:
            if wanted(caption) or wanted(section.heading):
                if not shown:  # the answer in words first, as in the report
                    for p in section.lead:
                        screen.print(Text(printable(p, lines=True)))
                title = section.heading if len(section.tables) == 1 else f"{section.heading}: {caption}"
                if len(df):
                    screen.print(_terminal_table(Text(printable(title)), df, screen.width))
                else:  # as the report says it: a table of headers alone reads as if rows were lost
                    screen.print(Text(printable(f"{title}: none.")))
                shown = True
        if shown:
            for p in section.paragraphs:
                screen.print(Text(printable(p, lines=True)))


def _terminal_table(title: Text, df: Any, width: int) -> Table:
    """``df`` as a rich table when it fits ``width`` columns with no word broken (cells wrap between words;
    a grid cell is its rate over its details), else one block of ``column  value`` lines per row (a wide table
    squeezed into 80 columns breaks every word). Cells fold rather than end in '...'; they are `Text`, so names
    like "x[face_down=1]" are not markup."""
    from rich.console import Console
    from rich.measure import Measurement

    cells = [[Text(printable(_cell(col, v), lines=True)) for col, v in zip(df.columns, row, strict=True)]
             for row in df.itertuples(index=False)]
    table = Table(title=title, title_justify="left")
    for col in df.columns:
        table.add_column(Text(printable(col)), justify="left" if df[col].dtype == object else "right", overflow="fold")
    for row in cells:
        table.add_row(*row)
    probe = Console(width=10 * width)
    if Measurement.get(probe, probe.options, table).minimum <= width:
        return table
    blocks = Table(title=title, title_justify="left", show_header=False)
    blocks.add_column(overflow="fold")
    blocks.add_column(overflow="fold")
    for row in cells:
        for col, cell in zip(df.columns, row, strict=True):
            blocks.add_row(Text(printable(col), style="bold" if col == df.columns[0] else ""), cell)
        blocks.add_section()
    return blocks


NUMBER_COLUMNS = ("deal", "first", "last", "seed")
"""Columns that hold numbers naming a deal or a seed: printed as typed on the command line, without separators."""


def _cell(column: object, value: object) -> str:
    """A table cell as the terminal shows it: counts with thousands separators ("27,139"), like the report."""
    from reports.render import Cell

    if isinstance(value, Cell):
        return f"{value.main}\n{value.detail}"
    if isinstance(value, int | np.integer) and not isinstance(value, bool) and str(column) not in NUMBER_COLUMNS:
        return f"{int(value):,}"
    return str(value)


def _play_and_report(runs: list[RunSpec], jobs: int | None, store_dir: str, out_dir: str, quiet: bool, title: str,
                     headings: Sequence[str], maker: str, force: bool, atlas_dir: Path | None) -> list[RunSummary]:
    from studies.progress import make_progress

    with _damage_on_stderr():
        summaries, html, md, report, _ = play_study(runs, store_dir, out_dir, title=title, maker=maker, force=force,
                                                    atlas_dir=atlas_dir, jobs=jobs, progress=make_progress(quiet),
                                                    command=sys.argv)
    _say_code(summaries)
    for s in summaries:
        failed = s.outcomes.get("error", 0)
        if failed and len(runs) > 1:  # said even with --quiet: these deals are left out of the paired tests
            click.echo("bakers-dozen: warning: " + one_line(
                f"{s.strategy} on {s.variant}: {failed:,} of {s.deals:,} deals ended in an error (neither won nor "
                "lost); the ranking and the paired tests leave out every deal that ended in an error for any "
                "player"), err=True)
    _wrote(maker, html, md)
    _print(report, headings)
    return summaries


def play_study(runs: list[RunSpec], store_dir: str | Path, out_dir: str | Path, *, title: str, maker: str,
               force: bool = False, atlas_dir: Path | None = None, jobs: int | None = None, progress: Any = None,
               command: list[str] | None = None) -> tuple[list[RunSummary], Path, Path, Any, dict[str, Any]]:
    """Check the study (`check_study`), play its runs into ``store_dir`` (reusing what it holds) and write its
    report into ``out_dir``: the runs' summaries, the report's HTML and Markdown paths, the report (its sections'
    tables are DataFrames) and the deals each run contributes (run key -> deal ranges). What the runs found damaged
    and repaired is a `studies.files.DamagedFileWarning` each (the command line says them on standard error)."""
    from reports.atlas import atlas_folder
    from reports.build import COLUMNS, build
    from reports.digest import Spans, union
    from studies.files import DamagedFileWarning
    from studies.reuse import ACCEPT_COLUMNS
    from studies.rows import chunk_cache

    check_study(runs, str(out_dir), maker, force)
    with contextlib.ExitStack() as reading:
        # the runs check each stored chunk they reuse, and the report's rows come from those same reads
        reading.enter_context(chunk_cache([*COLUMNS, *ACCEPT_COLUMNS]))
        summaries = run_study(runs, store_dir, jobs=jobs, progress=progress, command=command)
        for s in summaries:  # what the runs found damaged and repaired, said even with --quiet
            for line in [*s.damaged, *(f"damaged chunk file moved aside and replayed: {p}" for p in s.corrupt)]:
                warnings.warn(line, DamagedFileWarning, stacklevel=2)
        # Each run contributes exactly the deals this study asked of it, even when the store holds more.
        asked: dict[str, Spans] = {}
        for s, r in zip(summaries, runs, strict=True):
            asked[s.key] = union(asked.get(s.key, []), [(r.first, r.first + r.deals - 1)])
        html, md, report = build(store_dir, out_dir, runs=asked, title=title,
                                 command=shlex.join(["bakers-dozen", *(command or sys.argv)[1:]]), maker=maker,
                                 force=force, atlas=atlas_folder(atlas_dir),
                                 current_code=_codes_now(r.strategy for r in runs))
    return summaries, html, md, report, asked


def _codes_now(specs: Iterable[str]) -> dict[str, str | None]:
    """Each plug-in's name -> its code digest as it loads now, for the specs that load (a report marks that code
    of a plug-in "current"); built-ins and specs that no longer load are left out."""
    from strategies import is_builtin, load_strategy

    codes: dict[str, str | None] = {}
    for spec in dict.fromkeys(specs):
        try:
            strategy = load_strategy(spec)
        except UserError:  # a plug-in removed or broken since its runs: its latest run's code is shown instead
            continue
        if not is_builtin(strategy):
            codes[strategy.name] = strategy.code_digest
    return codes


def _stored_specs(store_dir: str) -> list[str]:
    """The strategy specs of the plug-in runs in a store, as their newest manifests name them."""
    from reports.build import run_manifests
    from strategies.code import identity_code
    from studies.store import Store

    specs = []
    with warnings.catch_warnings():  # a damaged manifest is the report's to say, once, as it reads the runs
        warnings.simplefilter("ignore")
        for key in Store(store_dir).keys():
            newest = (run_manifests(Path(store_dir), key) or [{}])[-1].get("parameters", {})
            if isinstance(newest, dict) and identity_code(str(newest.get("strategy_identity", ""))) is not None:
                specs.append(str(newest.get("strategy_spec", "")))
    return specs


def _wrote(maker: str, html: Path, md: Path) -> None:
    """Say where the report went: its folder (which ``maker`` now owns: another command refuses to
    overwrite it without --force) and its two files."""
    click.echo(printable(f"report: {html} and {md}"))
    click.echo(printable(f"report: {maker} wrote the folder {html.parent}; another command replaces it only with --force"))


def _variants(names: str) -> list[Any]:
    from sim.rules import resolve_variant

    items = [n.strip() for n in names.split(",") if n.strip()]
    if not items:
        raise StudyInputError("--variants needs at least one variant name, e.g. bakers-dozen,dick-1883")
    return [resolve_variant(n) for n in items]


def _json_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--json", "as_json", is_flag=True,
                        help="End with one JSON object on the last line: deals_played, the ranking (best first), the runs.")(f)


@click.command()
@click.option("--variants", default="bakers-dozen,kings-into-empty,dick-1883,spanish-patience", show_default=True,
              help="Comma-separated presets or .toml files; the first is the baseline.")
@click.option("--strategy", "-s", "strategy_spec", default="heuristic", show_default=True, help="The strategy that plays them.")
@click.option("--deals", "-n", type=RUN_DEALS, default=20_000, show_default=True, help="Deals per variant.")
@_common(COMPARE_OUT)
@_json_option
def compare(variants: str, strategy_spec: str, deals: int, first: int, seed: int, source: str, jobs: int | None,
            store_dir: str, out_dir: str, quiet: bool, force: bool, atlas_dir: Path | None, as_json: bool) -> None:
    """Play one strategy under several variants on the same deals and compare them."""
    rules = _variants(variants)
    runs = [RunSpec(r, strategy_spec, deals, first, seed, source) for r in rules]
    label = _label(strategy_spec)
    summaries = _play_and_report(runs, jobs, store_dir, out_dir, quiet, f"Variant comparison: {label}, {deals:,} deals",
                                 ["Variants compared"], "compare", force, atlas_dir)
    if as_json:  # the variants, best first, for the one strategy
        best = sorted(summaries, key=lambda s: -s.wins)
        click.echo(json.dumps({"deals_played": deals, "strategy": label, "spec": strategy_spec,
                               "ranking": [s.variant for s in best],
                               "runs": [s.to_json() for s in best]}))


@click.command()
@click.option("--variant", "-v", default="bakers-dozen", show_default=True, help="A preset name or a .toml file.")
@click.option("--strategies", default="greedy,heuristic:preset=builder,heuristic:preset=balanced,heuristic", show_default=True,
              help="Strategies separated by ';' (or ',' when no strategy has parameters).")
@click.option("--deals", "-n", type=RUN_DEALS, default=10_000, show_default=True, help="Deals each.")
@_common(TOURNAMENT_OUT)
@click.option("--sequential", is_flag=True,
              help="Play in rounds and stop once a sequential test (SPRT) decides every adjacent pair of the ranking; "
                   "--deals is then the most played.")
@click.option("--round-deals", type=RUN_DEALS, default=1000, show_default=True, help="With --sequential: deals per round.")
@click.option("--alpha", type=Bounded(float, 0.0001, 0.49), default=0.05, show_default=True,
              help="With --sequential: the chance of calling two equal strategies different.")
@click.option("--beta", type=Bounded(float, 0.0001, 0.49), default=0.05, show_default=True,
              help="With --sequential: the chance of missing a difference of --delta.")
@click.option("--delta", type=Bounded(float, 0.01, 99.0), default=1.0, show_default=True,
              help="With --sequential: the smallest difference in win rate worth detecting, in percentage points.")
@_json_option
def tournament(variant: str, strategies: str, deals: int, first: int, seed: int, source: str, jobs: int | None,
               store_dir: str, out_dir: str, quiet: bool, force: bool, atlas_dir: Path | None, sequential: bool,
               round_deals: int, alpha: float, beta: float, delta: float, as_json: bool) -> None:
    """Every strategy plays the same deals; rank them with paired tests."""
    from sim.rules import resolve_variant

    specs = _split_strategies(strategies)
    if len(specs) < 2:
        raise StudyInputError(f"a tournament needs at least two strategies; got {specs}")
    rules = resolve_variant(variant)
    rounds = None
    check_distinct_players([RunSpec(rules, s, deals, first, seed, source) for s in specs])
    if sequential:
        from bakers_dozen.sequential import play_sequential

        check_study([RunSpec(rules, s, deals, first, seed, source) for s in specs], out_dir)
        rounds = play_sequential(rules, specs, deals, round_deals, first, seed, source, jobs, store_dir, quiet,
                                 alpha, beta, delta / 100)
        deals = rounds.deals_played
    runs = [RunSpec(rules, s, deals, first, seed, source) for s in specs]
    summaries = _play_and_report(runs, jobs, store_dir, out_dir, quiet, f"Tournament on {rules.name}, {deals:,} deals",
                                 ["Ranking", "Pairwise comparisons"], "tournament", force, atlas_dir)
    if rounds is not None:
        from bakers_dozen.sequential import labelled, show_sequential

        rounds = labelled(rounds, {spec: summary.strategy for summary, spec in zip(summaries, specs, strict=True)})
        show_sequential(rounds, out_dir)
    if as_json:  # players by their labels, as the report's tables name them
        ranking = rounds.ranking if rounds is not None else [s for _, s in sorted(
            ((-summary.wins, summary.strategy) for summary in summaries), key=lambda x: x[0])]
        out: dict[str, Any] = {"deals_played": deals, "ranking": ranking,
                               "runs": [{"spec": spec, **s.to_json()} for spec, s in zip(specs, summaries, strict=True)]}
        if rounds is not None:
            out["sequential"] = {"decided": rounds.decided, "alpha": alpha, "beta": beta, "delta": delta / 100,
                                 "round_deals": round_deals, "pairs": [p.to_json() for p in rounds.pairs]}
        click.echo(json.dumps(out))


def _label(spec: str) -> str:
    """The label a strategy spec's player has in the report's tables (without "(clairvoyant)", which depends on
    the variant)."""
    from strategies import load_strategy
    from strategies.base import CLAIRVOYANT

    return load_strategy(spec).label.removesuffix(CLAIRVOYANT)


def _split_strategies(text: str) -> list[str]:
    """Strategies separated by ';', or by ',' when none carries parameters (``name:key=value,...``)."""
    if ";" in text:
        return [s.strip() for s in text.split(";") if s.strip()]
    parts = [s.strip() for s in text.split(",") if s.strip()]
    out: list[str] = []
    for p in parts:  # "heuristic:preset=x,allow_dig=false": a bare key=value continues the previous strategy
        if out and "=" in p and ":" not in p:
            out[-1] += "," + p
        else:
            out.append(p)
    return out


@click.command()
@click.argument("store_dir", type=click.Path(file_okay=False))
@click.option("--out", "out_dir", default=None,
              help="Folder for the report [default: the store's name + '-report', e.g. bakers-dozen-store-report].")
@click.option("--allow-mixed", is_flag=True, hidden=True,
              help="Accepted for scripts written when a name under several rule fingerprints was refused; such runs "
                   "are now always reported apart, each labelled with its rules.")
@click.option("--runs", "run_keys", default="", help="Only these runs: keys (or their first characters), comma-separated.")
@click.option("--variant", "variants", multiple=True, help="Only runs of this variant (repeat for several).")
@click.option("--strategy", "strategies", multiple=True,
              help="Only runs of this strategy: a label (heuristic:preset=builder) or a name (heuristic); repeat for several.")
@click.option("--png", is_flag=True, help="Write each chart as PNG too, beside its SVG (for slides and papers).")
@_force
@_atlas
def report(store_dir: str, out_dir: str | None, allow_mixed: bool, run_keys: str, variants: tuple[str, ...],
           strategies: tuple[str, ...], png: bool, force: bool, atlas_dir: Path | None) -> None:
    """Write the HTML and Markdown report of a results store: every run, or those --runs, --variant and
    --strategy choose (the report names the runs it left out).

    Rules are told apart by fingerprint: runs of different rules under one name are
    shown as different variants, each label naming its rules' fingerprint."""
    from reports.atlas import atlas_folder
    from reports.build import build
    from reports.select import Selection
    from reports.tables import ReportError

    try:
        folder = Path(store_dir).is_dir()
    except OSError as exc:  # a name too long, a folder that cannot be searched
        raise ReportError(f"{store_dir}: {exc.strerror or exc}") from None
    if not folder:
        raise ReportError(f"{store_dir} is not a directory; give a results store made by simulate, compare or demo")
    if out_dir is None:  # its own folder, beside none of demo's, compare's or tournament's
        out_dir = (Path(store_dir).resolve().name or "store") + "-report"
    with _damage_on_stderr():
        select = Selection(tuple(k.strip() for k in run_keys.split(",") if k.strip()), variants, strategies)
        html, md, rep = build(store_dir, out_dir, maker="report", force=force, select=select, png=png,
                              atlas=atlas_folder(atlas_dir), current_code=_codes_now(_stored_specs(store_dir)))
    _wrote("report", html, md)
    _print(rep, ["Win rates"])


@click.command()
@click.option("--deals", "-n", type=RUN_DEALS, default=FAST_DEALS, show_default=True,
              help="Deals per run of the fast strategies.")
@click.option("--slow-deals", type=RUN_DEALS, default=SLOW_DEALS, show_default=True,
              help="Deals per run of the slow rollout player.")
@click.option("--jobs", "-j", type=JOBS, default=None, help="Worker processes, at most 4 per core [default: every core].")
@click.option("--store", "store_dir", default=DEFAULT_STORE, show_default=True, help="Results directory.")
@click.option("--out", "out_dir", default=DEFAULT_OUT, show_default=True, help="Folder for the report.")
@click.option("--quiet", "-q", is_flag=True, help="No progress bar.")
@_force
@_atlas
def demo(deals: int, slow_deals: int, jobs: int | None, store_dir: str, out_dir: str, quiet: bool, force: bool,
         atlas_dir: Path | None) -> None:
    """The default study: every preset variant under the built-in strategies, reported with charts."""
    runs = default_study(deals, slow_deals)
    _play_and_report(runs, jobs, store_dir, out_dir, quiet, "Baker's Dozen and its family: the default study",
                     ["Win rates", "Tournament on bakers-dozen*"], "demo", force, atlas_dir)
