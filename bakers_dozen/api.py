"""The toolkit from Python, for notebooks: a few functions over the command line's machinery.

    >>> from bakers_dozen import api
    >>> rows = api.simulate("bakers-dozen", "greedy", deals=200)   # one row per deal, a pandas DataFrame
    >>> game = api.play("bakers-dozen", 3, "heuristic")            # a `sim.game.Game`; a notebook draws it
    >>> api.analyse(game).losing_move                               # where the game was lost
    >>> api.replay(game, "game.html", api.analyse(game))           # a page to step through it

Every function takes the names the command line takes (variant names or
files, strategy specs such as ``"heuristic:preset=balanced"``) and raises
`sim.errors.UserError` with the command line's one-line message on bad input.
docs/notebook.md is a page of this API in use; the tests run it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from reports.replay import replay_page
from sim.deals import check_strategy_seed
from sim.draw import position_svg
from sim.game import Game
from sim.position import Position
from sim.rules import Rules, resolve_variant
from strategies.analyse import Analysis, analyse_game
from studies.reading import read_store as _read_store

__all__ = ["SVG", "LadderResult", "analyse", "atlas", "atlas_run", "deal", "draw", "escalate", "play", "read_store", "replay",
           "simulate"]


class SVG(str):
    """SVG text that a notebook shows as a picture (and that writes itself to a file with `save`)."""

    def _repr_svg_(self) -> str:
        return str(self)

    def save(self, path: str | Path) -> Path:
        """Write the picture to ``path`` (an .svg file); return the path."""
        p = Path(path)
        p.write_text(self + "\n", encoding="utf-8")
        return p


def _rules(variant: str | Rules) -> Rules:
    return variant if isinstance(variant, Rules) else resolve_variant(variant)


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
    from studies.runner import run
    from studies.spec import RunSpec

    spec = RunSpec(_rules(variant), strategy, deals, first, seed, source, strategy_seed)
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        where = Path(tmp) / "store" if store is None else Path(store)
        summary = run(spec, where, jobs=jobs, **options)
        rows = _read_store(where, key=summary.key, deals=(first, spec.last))
    rows.attrs["summary"] = summary.to_json()
    return rows


def read_store(path: str | Path, **filters: Any) -> pd.DataFrame:
    """The rows of a store as a DataFrame; ``filters`` as `studies.reading.read_store` (variant, strategy, deals, ...)."""
    return _read_store(path, **filters)


def deal(variant: str | Rules = "bakers-dozen", number: int = 1, seed: int = 0, source: str = "default") -> Game:
    """Deal ``number`` of ``variant``, ready to play (a notebook draws it)."""
    return Game.from_deal(_rules(variant), number, seed, source)


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


def analyse(game: Game, nodes: int = 1_000_000, seconds: float = 10.0) -> Analysis:
    """The solver's verdict on every position of ``game`` and its losing move (see `strategies.analyse`);
    ``nodes`` and ``seconds`` are the budget per position searched."""
    from strategies.solver.strategy import SolverStrategy

    return analyse_game(game.rules, game.start, game.history, SolverStrategy(nodes=nodes, seconds=seconds))


def draw(what: Game | Position, reveal: bool = False) -> SVG:
    """A picture of a game's current position, or of a `Position` (face-down cards as backs unless ``reveal``)."""
    return SVG(what.svg(reveal) if isinstance(what, Game) else position_svg(what, reveal))


def replay(game: Game, path: str | Path, analysis: Analysis | None = None, reveal: bool = False) -> Path:
    """Write a replay page of ``game`` (from its start through its history) to ``path``; return the path."""
    numbered = game.rules.foundation != "suit"
    title = f"{game.rules.name}, " + (f"deal {game.deal.number}" if game.deal is not None else "typed layout")
    page = replay_page(game.rules, game.start, [m.text(numbered) for m in game.history], title,
                       analysis.to_json() if analysis is not None else None, reveal)
    p = Path(path)
    p.write_text(page, encoding="utf-8")
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


def _deal_range(deals: tuple[int, int] | int) -> tuple[int, int]:
    from sim.deals import check_deal_range

    first, last = deals if isinstance(deals, tuple) else (deals, deals)
    return check_deal_range(first, last, f"deals={deals!r}")


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


def escalate(variant: str | Rules = "bakers-dozen", deals: tuple[int, int] | int = (1, 100), *,
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


def atlas(variant: str = "bakers-dozen", deal: int | None = None, *, listing: str | None = None,
          source: str = "default", folder: str | Path | None = None) -> dict[str, Any]:
    """What the atlas says of ``variant`` (a preset): its row's counts, win rate and interval and winnable fraction,
    and with ``deal`` that deal's verdict (``answer["deal"]``), with ``listing`` ("lost" or "unknown") the deals of
    that verdict; from the atlas shipped with the toolkit, or ``folder``. Nothing is solved (`studies.atlas.lookup`)."""
    from studies.atlas import shipped
    from studies.atlas.lookup import look_up

    if deal is not None:
        from sim.deals import check_deal_number

        check_deal_number(deal, 0, source)
    return look_up(Path(folder) if folder is not None else shipped(), variant, source, deal, listing)


def atlas_run(variant: str = "bakers-dozen", deals: tuple[int, int] | int = (1, 100), *, out: str | Path,
              params: dict[str, Any] | None = None, rungs: list[dict[str, Any]] | None = None,
              last_rung: int | None = None, seed: int = 0, source: str = "default", reuse: str | Path | None = None,
              force: bool = False, store: str | Path | None = None, jobs: int | None = None) -> LadderResult:
    """`bakers-dozen atlas run` for one preset: decide ``deals`` by the ladder (climbing from the atlas ``reuse`` once
    a sample of its verdicts solved again agrees) and write the variant's deal file and summary row into ``out``
    (a row that knows more is replaced only with ``force``). ``summary`` holds the row written."""
    import pyarrow as pa

    from bakers_dozen.atlas_run import row_command
    from sim.errors import UserError
    from sim.rules import find_variant, is_variant_file
    from strategies.solver.strategy import SolverStrategy
    from studies.atlas.ladder import budgets
    from studies.atlas.ladder import escalate as run_ladder
    from studies.atlas.reuse import AtlasReuseError, climb_reused, provenance, reused_rows
    from studies.atlas.verify import check_sample
    from studies.atlas.writing import Planned, check_out, write_variant

    if isinstance(variant, str) and is_variant_file(variant):
        raise UserError(f"variant {variant!r}: the atlas holds presets only (see `bakers-dozen variants`)")
    rules = find_variant(variant)
    first, last = _deal_range(deals)
    base = dict(params or {})
    ladder_rungs = _ladder(rungs, last_rung)
    _check_rungs(rules, base, ladder_rungs, jobs)
    out = Path(out)
    check_out(out, [Planned(rules.name, source, first, last, len(ladder_rungs))], force)
    line = budgets(ladder_rungs, base)
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        options = {"store": Path(tmp) / "store" if store is None else Path(store), "jobs": jobs}
        if reuse is not None:
            rows, ran = reused_rows(Path(reuse), rules, source, seed, first, last, SolverStrategy.version, line)
            table = pa.Table.from_pylist([{k: r[k] for k in ("deal", "verdict", "rung")} for r in rows])
            check = check_sample(rules, {"variant": rules.name, "source": source, "seed": seed}, table,
                                 params={**base, **ladder_rungs[0].params}, **options)
            if check.disagreements:
                raise AtlasReuseError(f"reuse={str(reuse)!r}: not reused: {check.line()}")
            rows, reports = climb_reused(rules, base, rows, ran, first, last, ladder_rungs, seed, source, **options)
        else:
            rows, reports, _ = run_ladder(rules, base, first, last, seed, source, ladder_rungs, **options)
    bad = [r["deal"] for r in rows if r["verdict"] not in ("won", "lost", "unknown")]
    if bad:
        raise UserError(f"{rules.name}: {len(bad):,} deal(s) without a verdict (a win the referee rejected, or an "
                        f"error), e.g. {bad[:5]}; nothing written")
    command = row_command(rules.name, first, last, source, seed, tuple(f"{k}={v}" for k, v in base.items()),
                          tuple(",".join(f"{k}={v}" for k, v in rung.items()) for rung in rungs or ()), last_rung,
                          None if reuse is None else Path(reuse))  # the command line's: it computes the row again
    row = write_variant(out, rules, source, seed, rows, line, SolverStrategy.version, command,
                        provenance(Path(reuse), rules, source) if reuse is not None else None, force)
    return LadderResult(rows, reports, {"row": row})
