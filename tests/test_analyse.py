"""`analyse`: the solver's verdict on every position of a game, the losing move and a move that keeps the game won."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.game import Game
from sim.referee import replay
from sim.rules import Rules, find_variant
from strategies.analyse import analyse_game
from strategies.solver.strategy import SolverStrategy

BUDGET = ["--nodes", "200000", "--seconds", "20"]


def record_of(tmp_path, *args: str) -> tuple[dict, str]:
    r = CliRunner().invoke(main, ["play", "--json", *args])
    assert r.exit_code == 0, r.output
    path = tmp_path / "game.json"
    path.write_text(r.output, encoding="utf-8")
    return json.loads(r.output), str(path)


def test_a_heuristic_loss_of_a_winnable_deal_names_the_losing_move_and_a_winning_alternative(tmp_path):
    record, path = record_of(tmp_path, "-d", "1", "-s", "heuristic")
    assert record["outcome"] == "lost"
    r = CliRunner().invoke(main, ["analyse", path, "--json", *BUDGET])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    moves, verdicts, k = record["moves"], out["verdicts"], out["losing_move"]
    assert len(verdicts) == len(moves) + 1 and out["clairvoyant"] is False
    assert k is not None and verdicts[k] == "won" and verdicts[k + 1] == "lost"
    assert verdicts == ["won"] * (k + 1) + ["lost"] * (len(moves) - k)
    assert out["alternative"] != moves[k] and out["alternative_line"][0] == out["alternative"]
    start = Game.from_deal(Rules(), 1).start
    verdict = replay(Rules(), start, moves[:k] + out["alternative_line"])
    assert verdict.legal and verdict.won  # the referee: the line from the alternative wins
    assert out["solves"] < len(moves) // 2  # bisection, not a search per position
    text = CliRunner().invoke(main, ["analyse", path, *BUDGET]).output
    assert f"losing move: {k + 1}. {moves[k]}" in text and f"instead {out['alternative']}" in text


def test_the_inferred_verdicts_agree_with_a_search_of_every_position():
    rules = Rules()
    solver = SolverStrategy(nodes=200_000, seconds=20)
    game = Game.from_deal(rules, 5)
    start = game.start
    from strategies import DealInfo, load_strategy
    from strategies.play import play_python

    moves = play_python(load_strategy("heuristic"), game, DealInfo(rules, 5, 0, "default")).moves
    result = analyse_game(rules, start, moves, solver)
    each = Game(rules, start)
    searched = [solver.solve_position(rules, each.position())[0]]
    for mv in moves:
        each.play(mv)
        searched.append(solver.solve_position(rules, each.position())[0])
    assert list(result.verdicts) == searched
    assert result.losing_move is not None and searched[result.losing_move : result.losing_move + 2] == ["won", "lost"]


def test_a_won_game_has_no_losing_move_and_costs_no_search():
    rules = Rules()
    start = Game.from_deal(rules, 3).start
    _, _, line, _ = SolverStrategy().solve_position(rules, start)
    won = Game(rules, start)
    for code in line:
        won.play_code(code)
    result = analyse_game(rules, start, won.history)
    assert set(result.verdicts) == {"won"} and result.losing_move is None and result.alternative is None
    assert result.solves == 0 and result.how[-1] == "end"
    part = analyse_game(rules, start, won.history[:20])
    assert set(part.verdicts) == {"won"} and part.solves == 1  # the game followed the solver's own line


def test_face_down_verdicts_are_labelled_clairvoyant(tmp_path):
    _, path = record_of(tmp_path, "-v", "dick", "-d", "2", "-s", "greedy")
    r = CliRunner().invoke(main, ["analyse", path, *BUDGET])
    assert r.exit_code == 0, r.output
    assert "clairvoyant" in r.output.splitlines()[0]
    assert json.loads(CliRunner().invoke(main, ["analyse", path, "--json", *BUDGET]).output)["clairvoyant"] is True
    assert analyse_game(find_variant("dick"), Game.from_deal(find_variant("dick"), 2).start, []).clairvoyant


@pytest.mark.parametrize("args, message", [
    (["-d", "3", "--moves", "KC 1>2"], "move 1: KC 1>2: KC is not the exposed card of pile 1"),
    (["-d", "3"], "missing RECORD"),
    (["-d", "3", "--moves", "9H 3>7", "--nodes", "0"], "--nodes"),
])
def test_bad_input_is_one_line_and_exit_2(args, message):
    r = CliRunner().invoke(main, ["analyse", *args])
    assert r.exit_code == 2 and message in r.output, r.output


def test_a_record_and_a_deal_together_are_refused(tmp_path):
    _, path = record_of(tmp_path, "-d", "3", "-s", "greedy")
    r = CliRunner().invoke(main, ["analyse", path, "-d", "3"])
    assert r.exit_code == 2 and "not both" in r.output
