"""Replay pages of stored games: a run's deal played again exactly as the store recorded it, drawn step by step.

The store keeps outcomes, not the moves of lost games, so a game is replayed by
playing its strategy again (same parameters, seeds and deal: the play is
deterministic) and is used only when it ends with the cards home that the store
holds. Reports link the deals they list (a tournament's upsets) to these pages.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from reports.ledger import Ledger
from reports.output import contained, safe_name
from sim.game import Game
from sim.rules import Rules


@dataclass(frozen=True)
class Replays:
    """Where a report writes the replay pages of the games it lists, and what it needs to play them again;
    ``ledger`` gives it what the previous build wrote into ``earlier`` (`reports.ledger`)."""

    store_path: Path
    rules: dict[str, Rules | None]
    out_dir: Path
    earlier: Path | None
    ledger: Ledger = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "ledger", Ledger(self.out_dir, self.earlier))


REPLAY_COLUMNS = ["deal", "seed", "source", "strategy", "strategy_params", "strategy_identity", "strategy_seed", "outcome",
                  "cards_home"]
"""What a replay reads of a run's row."""
MAX_REPLAY_MOVES = 300
"""Games longer than this get no page: a lost game's page has every position analysed by the solver
(`ANALYSIS_BUDGET` each), so a long game would hold up the report."""
REPLAYED_UPSETS = 5
"""How many of a tournament's listed deals get replay pages (the report stays a few megabytes)."""
ANALYSIS_BUDGET = {"nodes": 200_000, "seconds": 2.0}
"""The solver's budget per position when a replayed loss is analysed for its losing move."""


class UnusableRowError(ValueError):
    """A stored row whose strategy cannot be made again as it played (its parameters were edited or damaged)."""


def row_strategy(row: Any) -> Any:
    """The strategy that played a stored row (`REPLAY_COLUMNS`), made from its ``strategy`` and ``strategy_params``;
    `UnusableRowError` when they do not make the strategy of the row's ``strategy_identity`` (parameters that are
    not a JSON object, that the strategy refuses, or that are not those of the run)."""
    from strategies import StrategyError, available

    cls = available().get(str(row.strategy))
    if cls is None:
        raise UnusableRowError(f"strategy {str(row.strategy)[:60]!r} is not installed")
    try:
        params = json.loads(str(row.strategy_params))
    except (ValueError, RecursionError):
        raise UnusableRowError(f"its strategy_params {str(row.strategy_params)[:60]!r} are not JSON") from None
    if not isinstance(params, dict):
        raise UnusableRowError(f"its strategy_params hold a JSON {type(params).__name__}, not an object")
    try:
        strategy = cls(**params)
    except (TypeError, ValueError, StrategyError) as exc:
        raise UnusableRowError(f"its strategy_params do not make a {row.strategy} ({' '.join(str(exc).split())[:120]})") from None
    if _unversioned(strategy.identity) != _unversioned(str(row.strategy_identity)):
        raise UnusableRowError(f"its strategy_params make {strategy.identity[:80]!r}, not the run's "
                               f"{str(row.strategy_identity)[:80]!r}")
    return strategy


def _unversioned(identity: str) -> tuple[str, str]:
    """A strategy identity's name and parameters, without its version (a run of an older version replays with
    today's, and its page is then checked against the stored outcome)."""
    name, _, rest = identity.partition("@")
    return name, rest.partition(":")[2]


def usable_rows(rows: pd.DataFrame, key: str) -> pd.DataFrame:
    """The rows of run ``key`` whose strategy can be made again (`row_strategy`); the others are left out with one
    `studies.files.DamagedFileWarning` for the run, so that a damaged run (or one of a plug-in no longer installed)
    costs its replays, not the report."""
    import warnings

    from studies.files import DamagedFileWarning

    columns = ["strategy", "strategy_params", "strategy_identity"]
    bad: dict[tuple[str, ...], str] = {}
    for combo in rows[columns].astype(str).drop_duplicates().itertuples(index=False):
        try:
            row_strategy(combo)
        except UnusableRowError as exc:
            bad[tuple(combo)] = str(exc)
    if not bad:
        return rows
    damaged = rows[columns].astype(str).apply(tuple, axis=1).isin(list(bad))
    warnings.warn(DamagedFileWarning(
        f"{int(damaged.sum()):,} stored rows of run {key} cannot be replayed: {next(iter(bad.values()))}; "
        "they are left out of replays and loss analyses (where the rows were edited or damaged, "
        "`bakers-dozen simulate --force` of that run stores them again)"), stacklevel=2)
    return rows[~damaged]


def replay_row(rules: Rules, row: Any) -> tuple[Game, Any]:
    """The game of one stored row (`REPLAY_COLUMNS`) played again: the dealt game and the strategy's record."""
    from strategies.base import DealInfo
    from strategies.play import play_python

    strategy = row_strategy(row)
    seed, source, number = int(row.seed), str(row.source), int(row.deal)
    game = Game.from_deal(rules, number, seed, source)
    record = play_python(strategy, game, DealInfo(rules, number, seed, source), int(row.strategy_seed))
    return game, record


NO_PAGE = ".no-page"
"""Suffix of the file that remembers, beside where a game's page would be, that the game has none: the next build
then neither reads its row nor plays it again (the same run key plays the same game)."""


PAGE_CODE = hashlib.sha256(b"".join(Path(__file__).with_name(f).read_bytes() for f in ("replay.py", "replays.py"))
                           + json.dumps(ANALYSIS_BUDGET).encode()).hexdigest()
"""What a replay page is made by: a page of an earlier build is reused only when the code is the same."""


def _page_name(key: str, deal: int) -> str:
    return safe_name(f"{key}-deal-{deal}", set()) + ".html"


def _inputs(key: str, deal: int, label: str) -> str:
    """What a page of run ``key``'s game of ``deal`` is made from (the run key names its rules, strategy and seeds)."""
    return f"{PAGE_CODE}:{key}:{deal}:{label}"


def earlier_answer(key: str, deal: int, label: str, ledger: Ledger) -> tuple[bool, Path | None]:
    """Whether the previous build answered for run ``key``'s game of ``deal`` (and wrote that answer itself, unchanged
    since: `Ledger.take`), and its answer carried into this build's folder: the page, or None when that build found
    the game cannot be shown."""
    name, inputs = _page_name(key, deal), _inputs(key, deal, label)
    for found, page in ((name, True), (name + NO_PAGE, False)):
        path = ledger.take(found, inputs)
        if path is not None:
            return True, path if page else None
    return False, None


def replay_title(rules: Rules, deal: int, player: str, outcome: str, cards_home: int) -> str:
    """A replay page's title: "bakers-dozen, deal 12: heuristic (lost, 30 cards home)", each fact once."""
    return f"{rules.name}, deal {deal}: {player} ({outcome}, {cards_home} cards home)"


def write_replay(rules: Rules, key: str, row: Any, label: str, player: str, ledger: Ledger) -> Path | None:
    """The replay page (titled `replay_title` with ``player``; ``label``, the link's text, keys the ledger) of one
    stored row of run ``key`` in the ledger's folder (carried over from the previous build
    when it answered for the same game, see `earlier_answer`), analysed for its losing move when it was lost; None
    when the game cannot be shown faithfully (the replay does not end as stored, or it is longer than
    `MAX_REPLAY_MOVES`), which is remembered in a `NO_PAGE` file."""
    from reports.replay import replay_page
    from strategies.analyse import analyse_game
    from strategies.solver.strategy import SolverStrategy

    known, page = earlier_answer(key, int(row.deal), label, ledger)
    if known:
        return page
    out_dir, inputs = ledger.out_dir, _inputs(key, int(row.deal), label)
    name = _page_name(key, int(row.deal))
    path = contained(out_dir, out_dir / name)
    game, record = replay_row(rules, row)
    if record.cards_home != int(row.cards_home) or len(record.moves) > MAX_REPLAY_MOVES:
        out_dir.mkdir(parents=True, exist_ok=True)
        why = "does not end as stored" if record.cards_home != int(row.cards_home) else f"is longer than {MAX_REPLAY_MOVES} moves"
        contained(out_dir, out_dir / (name + NO_PAGE)).write_text(f"no page: the replay {why}\n", encoding="utf-8")
        ledger.wrote(name + NO_PAGE, inputs)
        return None
    analysis = None
    if str(row.outcome) == "lost":
        analysis = analyse_game(rules, game.start, record.moves, SolverStrategy(**ANALYSIS_BUDGET)).to_json()
    title = replay_title(rules, int(row.deal), player, str(row.outcome), record.cards_home)
    out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(replay_page(rules, game.start, record.moves, title, analysis), encoding="utf-8")
    ledger.wrote(name, inputs)
    return path


def upset_replays(store_path: Path, rules: Rules, ranked: pd.DataFrame, outcomes: pd.DataFrame, deals: list[int],
                  ledger: Ledger) -> dict[int, list[tuple[str, Path]]]:
    """For the first `REPLAYED_UPSETS` of ``deals``, the replay page of the highest-ranked strategy that lost
    the deal, its losing move marked by the solver, as (what, page) pairs.

    ``ranked`` has one row per run in ranking order (``key``, ``strategy``); ``outcomes`` the
    group's rows (``key``, ``deal``, ``outcome``). A game that cannot be shown is left out.
    """
    from studies.reading import read_store

    pages: dict[int, list[tuple[str, Path]]] = {}
    for deal in deals[:REPLAYED_UPSETS]:
        on_deal = outcomes[outcomes["deal"] == deal]
        won = dict(zip(on_deal["key"].astype(str), on_deal["outcome"].astype(str) == "won", strict=True))
        top = next((r for r in ranked.itertuples() if not won.get(str(r.key), True)), None)
        if top is None:
            continue
        label = f"{top.strategy} (lost)"
        known, page = earlier_answer(str(top.key), int(deal), label, ledger)
        if not known:
            row = usable_rows(read_store(store_path, key=str(top.key), deals=(deal, deal), columns=REPLAY_COLUMNS),
                              str(top.key))
            page = None if row.empty else write_replay(rules, str(top.key), next(row.itertuples()), label,
                                                           str(top.strategy), ledger)
        if page is not None:
            pages[deal] = [(label, page)]
    return pages
