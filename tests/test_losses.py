"""Where strategies lose (`reports.losses`): the kinds of losing moves, the replayed losses of a run, and the report section."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.losses import KINDS, analyse_losses, move_kind
from reports.replays import REPLAY_COLUMNS
from sim.game import Game
from sim.notation import Move
from sim.position import Position
from sim.rules import Rules, find_variant
from studies.reading import read_store


def test_move_kinds():
    game = Game.from_deal(Rules(), 3)
    view = game.view()
    for mv in game.legal_moves():
        if mv.to_foundation:
            assert move_kind(game, mv, []) == "home"
        else:
            covered = view.top(mv.dst)
            assert move_kind(game, mv, []) == "onto a pile"
            assert move_kind(game, mv, [Move(covered, mv.dst, mv.src)]) == "buried a needed card"
            assert move_kind(game, mv, [Move(0, 1, 2)] * 6 + [Move(covered, mv.dst, mv.src)]) == "onto a pile"
    spanish = find_variant("spanish-patience")
    piles = list(Game.from_deal(spanish, 3).start.piles)
    piles[11], piles[12] = piles[11] + piles[12], ()
    empty = Game(spanish, Position(tuple(piles), (0,) * 13))
    card = empty.view().top(0)
    assert move_kind(empty, Move(card, 0, 12), []) == "into an empty pile"
    assert move_kind(empty, Move(card, 56, 0), []) == "from home"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    path = tmp_path_factory.mktemp("losses") / "store"
    for strategy in ("heuristic:preset=balanced", "greedy"):  # parameters in the label: still the heuristic
        r = CliRunner().invoke(main, ["simulate", "-s", strategy, "-n", "60", "--store", str(path), "-j", "1", "-q"])
        assert r.exit_code == 0, r.output
    return path


@pytest.mark.slow
def test_a_runs_losses_replay_as_stored_and_name_their_losing_moves(store):
    run = read_store(store, strategy="heuristic", columns=REPLAY_COLUMNS)
    assert set(run["strategy_params"].map(lambda p: json.loads(p)["preset"])) == {"balanced"}
    found = analyse_losses(Rules(), run, sample=6)
    assert len(found) == 6 and found["replayed"].all()
    assert set(found["deal"]) <= set(run.loc[run["outcome"] == "lost", "deal"])
    losing = found.dropna(subset=["kind"])
    assert len(losing) >= 1 and set(losing["kind"]) <= set(KINDS)
    assert (found["kind"].notna() | (found["end"] == "won")).sum() >= 4  # a losing move, or given up while won
    assert (losing["losing_move"] <= losing["moves"]).all() and (losing["start"] == "won").all()


@pytest.mark.slow
def test_the_report_says_where_the_heuristic_loses(store, tmp_path):
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    section = md[md.index("## Where strategies lose") :]
    section = section[: section.find("\n## ", 3) if "\n## " in section[3:] else None]
    assert "| bakers-dozen | heuristic:preset=balanced | 12 |" in section and "| greedy |" not in section
    assert (tmp_path / "rep" / "charts" / "losses.svg").stat().st_size > 1000
