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
from studies.reading import store_dataset

__all__ = ["SVG", "analyse", "deal", "draw", "play", "read_store", "replay", "simulate", "store_dataset", "store_relation",
           "summarise"]


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
    from sim.errors import UserError
    from studies.reading import READ_LIMIT
    from studies.runner import run
    from studies.spec import RunSpec

    if deals > READ_LIMIT:  # refused before playing: the rows could not be returned, and a temporary store's are lost
        raise UserError(f"simulate returns every row, and {deals:,} deals are more than the {READ_LIMIT:,} a DataFrame "
                        "holds here; play them into a store (`bakers-dozen simulate --store DIR`) and use summarise(DIR), "
                        "store_relation or store_dataset")
    spec = RunSpec(_rules(variant), strategy, deals, first, seed, source, strategy_seed)
    with tempfile.TemporaryDirectory(prefix="bakers-dozen-") as tmp:
        where = Path(tmp) / "store" if store is None else Path(store)
        summary = run(spec, where, jobs=jobs, **options)
        rows = _read_store(where, key=summary.key, deals=(first, spec.last))
    rows.attrs["summary"] = summary.to_json()
    return rows


def read_store(path: str | Path, **filters: Any) -> pd.DataFrame:
    """The rows of a store as a DataFrame; ``filters`` as `studies.reading.read_store` (variant, strategy, deals, ...).

    For a small store or selection: one refused as too big (over 20 million rows by default) says what to use
    instead: `summarise` (each run's figures), `store_relation` (DuckDB) or `store_dataset` (pyarrow)."""
    return _read_store(path, **filters)


def summarise(path: str | Path) -> pd.DataFrame:
    """One line per run of a store: deals, wins, verified wins, win rate with its 95% Wilson interval, mean cards
    home and score, unknown verdicts, errors (the report's run table), aggregated in one pass over its checked
    chunk files (`reports.digest`): memory does not grow with the number of rows."""
    from reports.digest import digest_runs, summary

    return summary(list(digest_runs(path).values()))


def store_relation(path: str | Path, connection: Any = None) -> Any:
    """A DuckDB relation over every chunk file of a store, for queries of any size out of core, e.g.
    ``store_relation(p).aggregate("key, count(*) AS deals, sum((outcome = 'won')::INT) AS wins").df()``.

    The files as they are (`studies.reading.store_dataset` says what that leaves out); needs ``duckdb``."""
    import duckdb

    from studies.reading import store_files

    files = [str(c.path) for c in store_files(path)]
    return (connection or duckdb.connect()).read_parquet(files)


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
