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

import functools
import inspect
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from reports.output import check_output_file
from reports.replay import replay_page
from sim.deals import check_strategy_seed
from sim.draw import position_svg
from sim.errors import UserError
from sim.game import Game
from sim.position import Position
from sim.regular_files import write_regular_text
from sim.rules import Rules, resolve_variant
from strategies.analyse import Analysis, analyse_game
from studies.reading import read_store as _read_store

__all__ = ["SVG", "analyse", "deal", "draw", "play", "read_store", "replay", "simulate"]

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
    from studies.runner import run
    from studies.spec import RunSpec

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
    """The rows of a store as a DataFrame; ``filters`` as `studies.reading.read_store` (variant, strategy, deals, ...)."""
    _known(filters, _read_store, "read_store")
    return _read_store(path, **filters)


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
