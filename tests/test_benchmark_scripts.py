"""The benchmark scripts refuse bad input as the command line does: one line naming it, exit status 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.game import Game
from sim.rules import find_variant
from strategies import load_strategy
from strategies.base import DealInfo
from strategies.play import play_compiled

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args, says", (
    (["prove_deal.py", "--variant", "no-such-game", "--deal", "1"], "error: unknown variant 'no-such-game'"),
    (["solver.py", "--part", "nodes", "--goal", "bakers-dozen:9-3"], "error: --deals '9-3': the first deal"),
    (["solver.py", "--part", "nodes", "--goal", "bakers-dozen:1-2", "--param", "final"], "error: --param 'final'"),
    (["relaxations.py", "--goal", "good-measure:one"], "error: --deals 'one' is not a range"),
    (["blunders.py", "--variant", "bakers-dozen"], "error: --variant 'bakers-dozen' deals every card face up"),
    (["blunders.py", "--first", "9", "--last", "3"], "error: --first 9 --last 3: the first deal (9) is after"),
    (["blunders.py", "--completions", "0"], "error: --nodes 300000 --completions 0: allowed"),
))
def test_a_benchmark_script_refuses_bad_input_in_one_line_with_exit_status_2(args, says):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(says) and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr


def _load_benchmark(name, monkeypatch):
    spec = importlib.util.spec_from_file_location(f"benchmark_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_blunders_finds_the_first_move_after_which_the_real_deal_cannot_be_won(monkeypatch):
    blunders = _load_benchmark("blunders", monkeypatch)
    rules = find_variant("dick-1883")
    strategy = load_strategy("sampling:preset=fast")
    referee = blunders.Referee(rules, 300_000)
    for number in range(2001, 2041):
        record = play_compiled(strategy, Game.from_deal(rules, number), DealInfo(rules, number, 0, "default"))
        if record.outcome != "won":
            row = blunders.diagnose(referee, number, record.moves, record.termination, completions=3)
            if row.fatal_move >= 0:
                break
    else:
        pytest.fail("no lost game with a fatal move in dick-1883 deals 2001-2040")
    before = referee.after(number, record.moves, row.fatal_move)
    after = referee.after(number, record.moves, row.fatal_move + 1)
    verdict, _, line, _ = referee.solver.solve_state(rules, before.state_array(), before.rule_params)
    assert verdict == "won"
    for code in line:  # the engine, not the solver, says the line wins
        before.play_code(code)
    assert before.is_won
    assert referee.solver.solve_state(rules, after.state_array(), after.rule_params)[0] != "won"
    assert row.played == str(record.moves[row.fatal_move])
    assert row.kind in ("choice", "no better move seen")
    assert 0 <= row.played_share <= 1 and 0 <= row.best_share <= 1
    assert row.hidden_before >= sum(after.view().face_down(p) for p in range(rules.columns))


def test_honest_counts_the_deals_any_honest_spec_won_and_leaves_the_clairvoyant_out(monkeypatch, capsys, tmp_path):
    honest = _load_benchmark("honest", monkeypatch)
    outcomes = tmp_path / "won.jsonl"
    honest.curve("dick-1883", 1, 12, ["greedy", "heuristic", "solver"], 0, outcomes=outcomes)
    won = {row["spec"]: set(row["won"]) for row in map(json.loads, outcomes.read_text().splitlines())}
    assert won["solver"] - (won["greedy"] | won["heuristic"]), "the clairvoyant solver wins deals they lose"
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("any of the 2 honest specs"))
    assert int(line.split()[6]) == len(won["greedy"] | won["heuristic"])
