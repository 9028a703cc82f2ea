"""The toolkit from Python, for notebooks: a few functions over the command line's machinery.

    >>> from bakers_dozen import api
    >>> rows = api.simulate("bakers-dozen", "greedy", deals=200)   # one row per deal, a pandas DataFrame
    >>> game = api.play("bakers-dozen", 3, "heuristic")            # a `sim.game.Game`; a notebook draws it
    >>> api.analyse(game).losing_move                               # where the game was lost
    >>> api.hint(api.deal("dick-1883", 3)).best                      # the move most likely to win, face-down cards unread
    >>> api.replay(game, "game.html", api.analyse(game))           # a page to step through it
    >>> api.solve("bakers-dozen", "1-20").summary                   # the solver's verdicts (won/lost/unknown)
    >>> api.tournament(["greedy", "heuristic"]).tables["Ranking"]   # compare, tournament, tune: the study verbs

Every function takes the names the command line takes (variant names or
files, strategy specs such as ``"heuristic:preset=balanced"``) and raises
`sim.errors.UserError` with the command line's one-line message on bad input.
docs/notebook.md is a page of this API in use; the tests run it.
"""

from __future__ import annotations

import functools
import inspect
import shlex
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import pandas as pd

from bakers_dozen.hint import MAX_SAMPLES
from bakers_dozen.limits import MAX_RUN_DEALS, MAX_SOLVE_NODES, MAX_SOLVE_SECONDS
from reports.output import check_output_file
from reports.replay import replay_page
from sim.deals import check_strategy_seed
from sim.draw import position_svg
from sim.errors import UserError
from sim.game import Game
from sim.position import Position, parse_position
from sim.regular_files import write_regular_text
from sim.rules import Rules, resolve_variant
from strategies.analyse import Analysis, analyse_game
from studies.reading import read_store as _read_store
from studies.reading import store_dataset
from studies.spec import RunSpec

if TYPE_CHECKING:
    from studies.hint import Hint  # numba's sampling code, imported when a hint is asked for

__all__ = ["SVG", "analyse", "deal", "draw", "hint", "play", "read_store", "replay", "simulate"]
__all__ += ["Solved", "Study", "Tuned", "compare", "solve", "tournament", "tune"]  # the studies section, below
__all__ += ["LadderResult", "atlas", "atlas_run", "escalate"]  # the escalation ladder and the atlas, below
__all__ += ["store_dataset", "store_relation", "summarise"]  # stores too big for a DataFrame, below

F = TypeVar("F", bound=Callable[..., Any])


def _checked_call(fn: F) -> F:
    """``fn`` with its arguments checked against its signature first: an unknown keyword or a missing argument is
    the API's `UserError` (one line naming it), as the command line's usage error is, rather than a `TypeError`."""
    signature = inspect.signature(fn)

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as exc:
            raise UserError(f"api.{fn.__name__}: {exc}") from None
        return fn(*args, **kwargs)

    return call  # type: ignore[return-value]


def _known(options: dict[str, Any], target: Callable[..., Any], name: str) -> None:
    """`UserError` naming each of ``options`` that ``target`` (which an API function passes them on to) does not take."""
    accepted = [k for k, p in inspect.signature(target).parameters.items() if p.kind is p.KEYWORD_ONLY]
    unknown = sorted(set(options) - set(accepted))
    if unknown:
        raise UserError(f"api.{name}: unknown option {', '.join(unknown)}; allowed: {', '.join(accepted)}")


def _game(value: Any, what: str = "game") -> Game:
    """``value`` when it is a `Game`; `UserError` otherwise (None, a deal number, ...)."""
    if not isinstance(value, Game):
        raise UserError(f"{what} must be a Game (from api.deal or api.play), not {type(value).__name__}")
    return value


def _output(path: str | Path, suffixes: tuple[str, ...]) -> Path:
    """``path`` checked as a file to write (its folder exists, it is not a folder nor a FIFO): `UserError` else."""
    if not isinstance(path, str | Path):
        raise UserError(f"path must be a file name, not {type(path).__name__}")
    if Path(path).is_dir():
        raise UserError(f"path {str(path)!r} is a folder; give a file name ending in {' or '.join(suffixes)}")
    return check_output_file(path, suffixes, "path")


class SVG(str):
    """SVG text that a notebook shows as a picture (and that writes itself to a file with `save`)."""

    def _repr_svg_(self) -> str:
        return str(self)

    def save(self, path: str | Path) -> Path:
        """Write the picture to ``path`` (an .svg file); return the path."""
        p = _output(path, (".svg",))
        write_regular_text(p, self + "\n")
        return p


def _rules(variant: str | Rules) -> Rules:
    return variant if isinstance(variant, Rules) else resolve_variant(variant)


@_checked_call
def simulate(variant: str | Rules = "bakers-dozen", strategy: str = "greedy", deals: int = 1000, *, first: int = 1,
             seed: int = 0, source: str = "default", strategy_seed: int = 0, store: str | Path | None = None,
             jobs: int | None = None, **options: Any) -> pd.DataFrame:
    """Play deals ``first``..``first + deals - 1`` with ``strategy`` and return one row per deal.

    The rows are the store's (`studies.reading.read_store`: outcome, cards_home, moves, ...);
    ``rows.attrs["summary"]`` holds the run's summary (win rate, interval, speed). With
    ``store`` the rows stay there, and a later call reuses them; without it they are
    played into a temporary store that is removed afterwards. ``options`` go to
    `studies.runner.run` (``deal_timeout``, ``verify``, ``chunk``, ...).
    """
    from sim.errors import UserError
    from studies.reading import READ_LIMIT
    from studies.runner import run
    from studies.spec import RunSpec

    if deals > READ_LIMIT:  # refused before playing: the rows could not be returned, and a temporary store's are lost
        raise UserError(f"simulate returns every row, and {deals:,} deals are more than the {READ_LIMIT:,} a DataFrame "
                        "holds here; play them into a store (`bakers-dozen simulate --store DIR`) and use summarise(DIR), "
                        "store_relation or store_dataset")
    _known(options, run, "simulate")
    spec = RunSpec(_rules(variant), strategy, deals, first, seed, source, strategy_seed)
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        where = Path(tmp) / "store" if store is None else Path(store)
        summary = run(spec, where, jobs=jobs, **options)
        rows = _read_store(where, key=summary.key, deals=(first, spec.last))
    rows.attrs["summary"] = summary.to_json()
    return rows


@_checked_call
def read_store(path: str | Path, **filters: Any) -> pd.DataFrame:
    """The rows of a store as a DataFrame; ``filters`` as `studies.reading.read_store` (variant, strategy, deals, ...).

    For a small store or selection: one refused as too big (over 20 million rows by default) says what to use
    instead: `summarise` (each run's figures), `store_relation` (DuckDB) or `store_dataset` (pyarrow)."""
    _known(filters, _read_store, "read_store")
    return _read_store(path, **filters)


@_checked_call
def summarise(path: str | Path) -> pd.DataFrame:
    """One line per run of a store: deals, wins, verified wins, win rate with its 95% Wilson interval, mean cards
    home and score, unknown verdicts, errors (the report's run table), aggregated in one pass over its checked
    chunk files (`reports.digest`): memory does not grow with the number of rows."""
    from reports.digest import digest_runs, summary

    return summary(list(digest_runs(path).values()))


@_checked_call
def store_relation(path: str | Path, connection: Any = None) -> Any:
    """A DuckDB relation over every chunk file of a store, for queries of any size out of core, e.g.
    ``store_relation(p).aggregate("key, count(*) AS deals, sum((outcome = 'won')::INT) AS wins").df()``.

    The files as they are (`studies.reading.store_dataset` says what that leaves out); needs ``duckdb``."""
    import duckdb

    from studies.reading import store_files

    files = [str(c.path) for c in store_files(path)]
    return (connection or duckdb.connect()).read_parquet(files)


@_checked_call
def deal(variant: str | Rules = "bakers-dozen", number: int = 1, seed: int = 0, source: str = "default") -> Game:
    """Deal ``number`` of ``variant``, ready to play (a notebook draws it)."""
    return Game.from_deal(_rules(variant), number, seed, source)


@_checked_call
def play(variant: str | Rules = "bakers-dozen", number: int = 1, strategy: str = "greedy", strategy_seed: int = 0,
         seed: int = 0, source: str = "default") -> Game:
    """Deal ``number`` played to its end by ``strategy``: the `Game` after the last move (``game.history`` holds
    the moves, ``game.start`` the deal)."""
    from strategies import DealInfo, load_strategy
    from strategies.play import play_python

    check_strategy_seed(strategy_seed)  # the command line's checks: a seed it refuses is refused here
    rules = _rules(variant)
    game = Game.from_deal(rules, number, seed, source)
    play_python(load_strategy(strategy), game, DealInfo(rules, number, seed, source), strategy_seed)
    return game


@_checked_call
def analyse(game: Game, nodes: int = 1_000_000, seconds: float = 10.0) -> Analysis:
    """The solver's verdict on every position of ``game`` and its losing move (see `strategies.analyse`);
    ``nodes`` and ``seconds`` are the budget per position searched."""
    from strategies.solver.strategy import SolverStrategy

    game = _game(game)
    return analyse_game(game.rules, game.start, game.history, SolverStrategy(nodes=nodes, seconds=seconds))


@_checked_call
def hint(where: Game | str, variant: str | Rules | None = None, *, samples: int = 256, nodes: int | None = None,
         seconds: float = 60.0, seed: int = 0) -> Hint:
    """The legal moves of a position ranked by their chance of winning, best first (see `studies.hint`): the
    current position of a `Game` (its face-down cards are never read), or a layout's text in ``variant`` with
    face-down cards written ``??``. The budgets are the ``hint`` verb's options (``seed``: its
    ``--strategy-seed``); the result is a frozen `studies.hint.Hint`."""
    from studies.hint import hint_position

    if isinstance(where, str):
        rules = _rules("bakers-dozen" if variant is None else variant)
        position = parse_position(where, rules, hidden=True)
    else:
        if variant is not None:
            raise UserError("api.hint: give variant only with a layout's text; a Game has its own rules")
        game = _game(where, "where")
        rules, position = game.rules, game.position().blanked()
    for name, value, low, high in (("samples", samples, 1, MAX_SAMPLES), ("nodes", nodes, 1, MAX_SOLVE_NODES)):
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and low <= value <= high):
            raise UserError(f"api.hint: {name} {value!r} is out of range; allowed: {low}..{high}")
    if not (isinstance(seconds, int | float) and 0 < seconds <= MAX_SOLVE_SECONDS):
        raise UserError(f"api.hint: seconds {seconds!r} is out of range; allowed: above 0, at most {MAX_SOLVE_SECONDS:g}")
    check_strategy_seed(seed)
    return hint_position(rules, position, samples=samples, nodes=nodes, seconds=float(seconds), seed=seed)


@_checked_call
def draw(what: Game | Position, reveal: bool = False) -> SVG:
    """A picture of a game's current position, or of a `Position` (face-down cards as backs unless ``reveal``)."""
    if not isinstance(what, Game | Position):
        raise UserError(f"api.draw takes a Game or a Position, not {type(what).__name__}")
    return SVG(what.svg(reveal) if isinstance(what, Game) else position_svg(what, reveal))


@_checked_call
def replay(game: Game, path: str | Path, analysis: Analysis | None = None, reveal: bool = False) -> Path:
    """Write a replay page of ``game`` (from its start through its history) to ``path``; return the path."""
    game = _game(game)
    p = _output(path, (".html",))
    numbered = game.rules.foundation != "suit"
    title = f"{game.rules.name}, " + (f"deal {game.deal.number}" if game.deal is not None else "typed layout")
    page = replay_page(game.rules, game.start, [m.text(numbered) for m in game.history], title,
                       analysis.to_json() if analysis is not None else None, reveal)
    write_regular_text(p, page)
    return p


# ---- the escalation ladder and the winnability atlas ------------------------------------------------------------------

class LadderResult:
    """What `escalate` or `atlas_run` decided: one row per deal (``to_frame``) and ``summary`` (counts, win rate and
    interval, and what each rung did)."""

    def __init__(self, rows: list[dict[str, Any]], reports: list[Any], extra: dict[str, Any] | None = None) -> None:
        from studies.stats import win_rate_interval

        self.rows = rows
        n = len(rows)
        counts = {v: sum(r["verdict"] == v for r in rows) for v in ("won", "lost", "unknown")}
        low, high = win_rate_interval(counts["won"], n) if n else (0.0, 0.0)
        self.summary: dict[str, Any] = {"deals": n, **counts, "win_rate": counts["won"] / n if n else None,
                                        "win_low": low, "win_high": high,
                                        "rungs": [report.line() for report in reports], **(extra or {})}

    def to_frame(self) -> pd.DataFrame:
        """One row per deal: deal, verdict, nodes, the rung that gave the verdict, and the run's labels."""
        return pd.DataFrame(self.rows)

    def __repr__(self) -> str:
        s = self.summary
        return f"LadderResult({s['deals']} deals: won {s['won']}, lost {s['lost']}, unknown {s['unknown']})"


def _ladder(rungs: list[dict[str, Any]] | None, last_rung: int | None) -> tuple[Any, ...]:
    from studies.atlas.ladder import ladder

    texts = tuple(",".join(f"{k}={v}" for k, v in rung.items()) for rung in rungs or ())
    return ladder(texts, last_rung)


def _check_rungs(rules: Rules, base: dict[str, Any], rungs: tuple[Any, ...], jobs: int | None) -> None:
    """The command line's checks of a ladder, before any work: each rung's parameters, and its solvers' memory on
    ``jobs`` workers."""
    from joblib import cpu_count

    from strategies.memory import check_memory
    from studies.atlas.ladder import rung_strategies

    for strategy in rung_strategies(rules, base, rungs):
        check_memory(strategy, rules, jobs or cpu_count())


@_checked_call
def escalate(variant: str | Rules = "bakers-dozen", deals: int | str | tuple[int, int] = (1, 100), *,
             params: dict[str, Any] | None = None, rungs: list[dict[str, Any]] | None = None,
             last_rung: int | None = None, seed: int = 0, source: str = "default", store: str | Path | None = None,
             jobs: int | None = None) -> LadderResult:
    """Decide ``deals`` (first, last) with the solver's escalation ladder (`studies.atlas.ladder`): rung 0 with
    ``params``, then each deal still unknown with the next rung (``rungs``: parameter dicts of your own, or the
    default ladder; ``last_rung`` cuts it). Every win is replayed by the referee. With ``store`` the rows stay there
    and a later call resumes; without it they go to a temporary store."""
    from studies.atlas.ladder import escalate as run_ladder

    rules = _rules(variant)
    first, last = _deal_range(deals)
    base = dict(params or {})
    ladder_rungs = _ladder(rungs, last_rung)
    _check_rungs(rules, base, ladder_rungs, jobs)
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        where = Path(tmp) / "store" if store is None else Path(store)
        rows, reports, _ = run_ladder(rules, base, first, last, seed, source, ladder_rungs, store=where, jobs=jobs)
    return LadderResult(rows, reports, {"variant": rules.name, "first": first, "last": last})


@_checked_call
def atlas(variant: str = "bakers-dozen", deal: int | None = None, *, listing: str | None = None,
          source: str = "default", folder: str | Path | None = None) -> dict[str, Any]:
    """What the atlas says of ``variant`` (a preset): its row's counts, win rate and interval and winnable fraction,
    and with ``deal`` that deal's verdict (``answer["deal"]``), with ``listing`` ("lost" or "unknown") the deals of
    that verdict; ``answer["honest"]``: the honest player's games the atlas keeps for a face-down variant (None for
    the others); ``answer["related"]``: what rows of related rules decide of its unknown deals
    (`studies.atlas.related`). From the atlas shipped with the toolkit, or ``folder``. Nothing is solved (`studies.atlas.lookup`)."""
    from studies.atlas import shipped
    from studies.atlas.lookup import look_up

    if deal is not None:
        from sim.deals import check_deal_number

        check_deal_number(deal, 0, source)
    return look_up(Path(folder) if folder is not None else shipped(), variant, source, deal, listing)


@_checked_call
def atlas_run(variant: str = "bakers-dozen", deals: int | str | tuple[int, int] = (1, 100), *, out: str | Path,
              params: dict[str, Any] | None = None, rungs: list[dict[str, Any]] | None = None,
              last_rung: int | None = None, seed: int = 0, source: str = "default",
              reuse: str | Path | list[str | Path] | None = None, hours: float | None = None, force: bool = False,
              store: str | Path | None = None, jobs: int | None = None) -> LadderResult:
    """`bakers-dozen atlas run` for one preset: decide ``deals`` by the ladder (climbing from the atlas or atlases
    ``reuse`` once a sample of each one's verdicts solved again agrees, each deal from the rung after the one it has
    been through) and write the variant's deal file and summary row into ``out`` as it climbs (a row that knows more
    is replaced only with ``force``); ``hours`` stops the climb above rung 0 and writes how far it went. ``summary``
    holds the row written."""
    import time

    from bakers_dozen.atlas_run import row_command
    from sim.errors import UserError
    from sim.rules import find_variant, is_variant_file
    from strategies.solver.strategy import SolverStrategy
    from studies.atlas.climbing import RowWriter, climb_row
    from studies.atlas.ladder import budgets
    from studies.atlas.reuse import take, vouch
    from studies.atlas.writing import Planned, check_out

    if isinstance(variant, str) and is_variant_file(variant):
        raise UserError(f"variant {variant!r}: the atlas holds presets only (see `bakers-dozen variants`)")
    rules = find_variant(variant)
    first, last = _deal_range(deals)
    base = dict(params or {})
    ladder_rungs = _ladder(rungs, last_rung)
    _check_rungs(rules, base, ladder_rungs, jobs)
    out = Path(out)
    check_out(out, [Planned(rules.name, source, first, last, len(ladder_rungs))], force)
    sources = tuple(Path(f) for f in ([] if reuse is None else [reuse] if isinstance(reuse, (str, Path)) else reuse))
    deadline = None if hours is None else time.monotonic() + hours * 3600
    command = row_command(rules.name, first, last, source, seed, tuple(f"{k}={v}" for k, v in base.items()),
                          tuple(",".join(f"{k}={v}" for k, v in rung.items()) for rung in rungs or ()), last_rung,
                          sources)  # the command line's: it computes the row again
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        options = {"store": Path(tmp) / "store" if store is None else Path(store), "jobs": jobs}
        got = take(sources, rules, source, seed, first, last, SolverStrategy.version,
                   budgets(ladder_rungs, base)) if sources else None
        if got is not None:
            vouch(got, rules, source, seed, {**base, **ladder_rungs[0].params}, **options)
        writer = RowWriter(out, rules, source, seed, ladder_rungs, base, SolverStrategy.version, command,
                           got.ran if got else 0, got.provenance if got else None, force)
        rows, reports, row = climb_row(writer, first, last, got, deadline, **options)
    if row is None:
        bad = [r["deal"] for r in rows if r["verdict"] not in ("won", "lost", "unknown")]
        raise UserError(f"{rules.name}: {len(bad):,} deal(s) without a verdict (a win the referee rejected, or an "
                        f"error), e.g. {bad[:5]}; nothing written")
    return LadderResult(rows, reports, {"row": row})

# --- Studies: solve, compare, tournament, tune -------------------------------------------------------------------
# Each runs the command's own machinery (the runner and its store, the report builder, the tuner) with the command's
# checks, before any deal is played; without ``store`` the deals are played into a temporary store that is removed
# afterwards (what they return stays), and without ``out`` no report folder is left behind.


@dataclass
class Solved:
    """What `solve` decided: one row per deal (``rows``: verdict, nodes, seconds, moves, referee check, ...) and
    ``summary`` (counts, decided fraction, win rate with its 95% Wilson interval, time and nodes per deal)."""

    rows: pd.DataFrame
    summary: dict[str, Any]

    def to_frame(self) -> pd.DataFrame:
        """The rows, one per deal."""
        return self.rows


@dataclass
class Study:
    """What `compare` or `tournament` played: ``summary`` has one row per run (variant, strategy, wins, win rate
    and its 95% interval, ...), ``rows`` one row per deal of each run, ``tables`` the report's tables by name
    (paired comparisons, ranking, ...), and ``report`` its HTML file when an ``out`` folder was given."""

    summary: pd.DataFrame
    rows: pd.DataFrame
    tables: dict[str, pd.DataFrame]
    report: Path | None
    sequential: dict[str, Any] | None = None
    """A sequential tournament's stop: whether every adjacent pair of the ranking was decided, the deals played,
    the ranking, and each adjacent pair's test (as the command's ``--json``)."""

    def to_frame(self) -> pd.DataFrame:
        """The rows, one per deal of each run."""
        return self.rows


@dataclass
class Tuned:
    """What `tune` found: the ``best`` strategy spec, its win rate on the tuning deals (``best_value``), its
    parameters, ``summary`` (the command's JSON: trials by state, and under ``"confirm"`` the best setting against
    the default on fresh deals, None with ``confirm=0``), every trial (``trials``), and ``report`` when an ``out``
    folder was given."""

    best: str
    best_value: float
    best_params: dict[str, Any]
    summary: dict[str, Any]
    trials: pd.DataFrame
    report: Path | None

    def to_frame(self) -> pd.DataFrame:
        """The trials, one row each (optuna's table: number, value, state, the parameters tried)."""
        return self.trials


@contextmanager
def _folder(path: str | Path | None, prefix: str) -> Iterator[Path]:
    """``path``, or a temporary folder removed on leaving when there is none."""
    if path is not None:
        yield Path(path)
        return
    with tempfile.TemporaryDirectory(prefix=f"bakers-dozen-{prefix}-") as tmp:
        yield Path(tmp) / prefix


def _deal_range(deals: int | str | tuple[int, int]) -> tuple[int, int]:
    """Deals as the command line's ``A-B`` or ``N``, or a (first, last) pair, checked as ``solve --deals`` is."""
    from bakers_dozen.solve import parse_deals

    if isinstance(deals, tuple):
        if len(deals) != 2:
            raise UserError(f"deals {deals!r}: expected (first, last), 'A-B' or a deal number")
        return parse_deals("-".join(str(d) for d in deals))
    return parse_deals(str(deals))


@_checked_call
def solve(variant: str | Rules = "bakers-dozen", deals: int | str | tuple[int, int] = "1-20", *, seed: int = 0,
          source: str = "default", nodes: int | None = None, seconds: float | None = None, tt_mb: float | None = None,
          params: dict[str, Any] | None = None, rules: dict[str, Any] | None = None, store: str | Path | None = None,
          jobs: int | None = None, verify: bool = True, force: bool = False) -> Solved:
    """Decide ``deals`` (``"1-20"``, ``7`` or ``(1, 20)``) with the solver, as ``bakers-dozen solve`` does: won with
    a line the referee replays (``verify``), lost when the search is exhausted, unknown when the budget runs out.

    ``nodes``, ``seconds`` and ``tt_mb`` are the budget per deal and the transposition table per worker; ``params``
    any other solver parameter; ``rules`` rule overrides (``{"worrying_back": True}``, as ``--set``). Stored
    deals are reused (``force`` solves them again).
    """
    from joblib import cpu_count

    from bakers_dozen.solve import apply_overrides, solve_deals, summary
    from sim.deals import check_deal_number, check_pysol_shape
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy

    played = apply_overrides(_rules(variant), tuple(f"{k}={_toml(v)}" for k, v in (rules or {}).items()))
    first, last = _deal_range(deals)
    check_deal_number(first, seed, source)
    check_deal_number(last, seed, source)
    if source == "pysol":
        check_pysol_shape(played)
    settings = dict(params or {})
    settings.update({k: v for k, v in (("nodes", nodes), ("seconds", seconds), ("tt_mb", tt_mb)) if v is not None})
    check_memory(SolverStrategy(**settings), played, jobs or cpu_count())
    with _folder(store, "store") as where:
        what = ["bakers-dozen", "solve", "--variant", played.name, "--deals", f"{first}-{last}", "--seed", str(seed),
                "--source", source, *(x for k, v in settings.items() for x in ("--param", f"{k}={v}"))]
        rows, _ = solve_deals(played, settings, first, last, seed, source, store=where, jobs=jobs, verify=verify,
                              force=force, command=what)
    return Solved(pd.DataFrame(rows), summary(rows))


def _toml(value: Any) -> str:
    """A rule override's value as ``--set`` reads it (TOML: true, 3, "text", [1, 2])."""
    import json

    return json.dumps(list(value) if isinstance(value, tuple) else value)


def _names(items: str | Sequence[str | Rules]) -> list[str | Rules]:
    """A list given as the command line's comma-separated text, or as a list."""
    return [s.strip() for s in items.split(",") if s.strip()] if isinstance(items, str) else list(items)


def _study(runs: list[Any], what: list[str], where: Path, report_dir: Path, keep_report: bool, *, title: str, maker: str,
           jobs: int | None, atlas_dir: str | Path | None, force: bool) -> Study:
    """Play ``runs`` into the store ``where`` and build their report in ``report_dir``
    (`bakers_dozen.report.play_study`); the report's tables, the runs' summaries and the study's rows. ``what`` is
    the command line that does the same, recorded with every run."""
    from bakers_dozen.report import play_study

    summaries, html, _, report, asked = play_study(runs, where, report_dir, title=title, maker=maker, force=force,
                                                   atlas_dir=None if atlas_dir is None else Path(atlas_dir), jobs=jobs,
                                                   command=what)
    tables = {caption if len(s.tables) > 1 else s.heading: df for s in report.sections for caption, df in s.tables}
    summary = pd.DataFrame([s.to_json() for s in summaries])
    return Study(summary, _study_rows(where, asked), tables, html.resolve() if keep_report else None)


def _study_rows(where: Path, asked: dict[str, list[tuple[int, int]]]) -> pd.DataFrame:
    """The deals a study asked of each run (run key -> deal ranges), one row per deal, read from the store."""
    parts = []
    for key, spans in asked.items():
        rows = _read_store(where, key=key, deals=(spans[0][0], spans[-1][1]))
        inside = np.zeros(len(rows), dtype=bool)
        for first, last in spans:
            inside |= rows["deal"].between(first, last).to_numpy()
        parts.append(rows[inside])
    return pd.concat(parts).drop_duplicates(["key", "deal"]).reset_index(drop=True)


def _check_number(name: str, value: Any, low: float, high: float) -> float:
    """``value`` as a float when it is a finite number in low..high; else a `UserError` naming the range."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        raise UserError(f"{name}={value!r} is out of range; allowed: a number in {low:g}..{high:g}")
    return float(value)


def _check_deals(deals: int) -> None:
    from studies.spec import check_whole

    check_whole("deals", deals, 1, MAX_RUN_DEALS)


def _run_options(first: int, seed: int, source: str) -> list[str]:
    return ["--first", str(first), "--seed", str(seed), "--source", source]


@_checked_call
def compare(variants: str | Sequence[str | Rules] = ("bakers-dozen", "dick-1883"), strategy: str = "heuristic",
            deals: int = 1000, *, first: int = 1, seed: int = 0, source: str = "default", store: str | Path | None = None,
            out: str | Path | None = None, jobs: int | None = None, atlas_dir: str | Path | None = None,
            force: bool = False) -> Study:
    """Play one ``strategy`` under several ``variants`` on the same deals and compare them (paired tests on the
    shared deals), as ``bakers-dozen compare`` does; the first variant is the baseline. With ``out`` the report
    (HTML and Markdown) is written there."""
    from bakers_dozen.report import StudyInputError

    names = _names(variants)
    if not names:
        raise StudyInputError("variants needs at least one variant name, e.g. ['bakers-dozen', 'dick-1883']")
    _check_deals(deals)
    runs = [RunSpec(_rules(v), strategy, deals, first, seed, source) for v in names]
    what = ["bakers-dozen", "compare", "--variants", ",".join(r.rules.name for r in runs), "--strategy", strategy,
            "--deals", str(deals), *_run_options(first, seed, source)]
    with _folder(store, "store") as where, _folder(out, "report") as report_dir:
        return _study(runs, what, where, report_dir, out is not None, title=f"Variant comparison: {strategy}, {deals:,} deals",
                      maker="compare", jobs=jobs, atlas_dir=atlas_dir, force=force)


@_checked_call
def tournament(strategies: str | Sequence[str] = ("greedy", "heuristic"), variant: str | Rules = "bakers-dozen",
               deals: int = 1000, *, first: int = 1, seed: int = 0, source: str = "default",
               store: str | Path | None = None, out: str | Path | None = None, jobs: int | None = None,
               atlas_dir: str | Path | None = None, force: bool = False, sequential: bool = False,
               round_deals: int = 1000, alpha: float = 0.05, beta: float = 0.05, delta: float = 0.01) -> Study:
    """Every strategy plays the same deals of ``variant``; the report's "Ranking" and "Pairwise comparisons"
    tables rank them with paired tests, as ``bakers-dozen tournament`` does. ``strategies`` is a list of specs or
    the command line's text (separated by ';', or ',' when none has parameters).

    With ``sequential`` the strategies play rounds of ``round_deals`` until a sequential test (SPRT) decides every
    adjacent pair of the ranking, ``deals`` being then the most played: ``alpha`` is the chance of calling two equal
    strategies different, ``beta`` of missing a difference of ``delta`` (a fraction: 0.01 is one percentage
    point); the result's ``sequential`` says where it stopped.
    """
    from bakers_dozen.report import StudyInputError, _split_strategies, check_study

    specs = _split_strategies(strategies) if isinstance(strategies, str) else list(strategies)
    if len(specs) < 2:
        raise StudyInputError(f"a tournament needs at least two strategies; got {specs}")
    _check_deals(deals)
    rules = _rules(variant)
    what = ["bakers-dozen", "tournament", "--variant", rules.name, "--strategies", ";".join(specs), "--deals", str(deals),
            *_run_options(first, seed, source)]
    if sequential:
        if len(set(specs)) != len(specs):
            raise StudyInputError(f"a sequential tournament names each strategy once; got {specs}")
        _check_deals(round_deals)
        what += ["--sequential", "--round-deals", str(round_deals), "--alpha", f"{_check_number('alpha', alpha, 0.0001, 0.49):g}",
                 "--beta", f"{_check_number('beta', beta, 0.0001, 0.49):g}",
                 "--delta", f"{_check_number('delta', delta, 0.0001, 0.99) * 100:g}"]
    with _folder(store, "store") as where, _folder(out, "report") as report_dir:
        stop = None
        if sequential:
            from studies.paired import store_player
            from studies.rounds import play_rounds

            check_study([RunSpec(rules, s, deals, first, seed, source) for s in specs], str(report_dir))
            stop = play_rounds(rules, specs, store_player(where, jobs, what), max_deals=deals, round_deals=round_deals,
                               first=first, seed=seed, source=source, alpha=alpha, beta=beta, delta=delta)
            deals = stop.deals_played
        runs = [RunSpec(rules, s, deals, first, seed, source) for s in specs]
        study = _study(runs, what, where, report_dir, out is not None, title=f"Tournament on {rules.name}, {deals:,} deals",
                       maker="tournament", jobs=jobs, atlas_dir=atlas_dir, force=force)
        if stop is not None:
            if out is not None:
                from reports.sequential import write_sequential_report

                write_sequential_report(stop, report_dir)
            study.sequential = {"decided": stop.decided, "deals_played": stop.deals_played, "ranking": stop.ranking,
                                "pairs": [p.to_json() for p in stop.pairs]}
    return study


@_checked_call
def tune(strategy: str, variant: str | Rules = "bakers-dozen", *, trials: int = 20, deals: int = 1000,
         confirm: int = 4000, params: Sequence[str] | dict[str, str] = (), first: int = 1, seed: int = 0,
         source: str = "default", store: str | Path | None = None, out: str | Path | None = None,
         jobs: int | None = None) -> Tuned:
    """Search ``strategy``'s declared parameters with optuna on the same ``deals`` for every trial, then confirm
    the best setting against the default on ``confirm`` fresh deals, as ``bakers-dozen tune`` does. ``params``
    replaces what a parameter searches (``["depth=1..3"]`` or ``{"depth": "1..3"}``). A study kept in ``store``
    is continued by the same call."""
    import optuna

    from bakers_dozen.report import check_study
    from bakers_dozen.tune import MAX_TRIALS
    from reports.tuning import write_tuning_report
    from studies.paired import store_player
    from studies.search_space import search_space
    from studies.spec import check_whole
    from studies.tuning import TuneSpec
    from studies.tuning import tune as run_tuning

    check_whole("trials", trials, 1, MAX_TRIALS)
    check_whole("deals", deals, 1, MAX_RUN_DEALS)
    check_whole("confirm", confirm, 0, MAX_RUN_DEALS)
    overrides = [f"{k}={v}" for k, v in params.items()] if isinstance(params, dict) else list(params)
    rules = _rules(variant)
    space = search_space(strategy, overrides)
    tuning = TuneSpec(rules, space, trials, deals, first, seed, source, confirm)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    what = ["bakers-dozen", "tune", strategy, "--variant", rules.name, *(x for p in overrides for x in ("--param", p)),
            "--trials", str(trials), "--deals", str(deals), "--confirm", str(confirm), *_run_options(first, seed, source)]
    with _folder(store, "store") as where, _folder(out, "report") as report_dir:
        check_study([RunSpec(rules, space.default_spec, deals + confirm, first, seed, source)], str(report_dir))
        result = run_tuning(tuning, where, store_player(where, jobs, what))
        html = write_tuning_report(result, tuning, report_dir, shlex.join(what))[0].resolve() if out is not None else None
        trials_frame, summary = result.study.trials_dataframe(), result.to_json()  # read while the journal is there
    return Tuned(result.best, result.best_value, dict(result.best_params), summary, trials_frame, html)
