"""Deals that end in an error are said, per player, by `tournament` and `compare`, and are left out of the ranking
and the paired tests instead of counting as losses."""

from __future__ import annotations

import json
import sys
import textwrap

import pandas as pd
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.tables import common_deals

FAULTY = """
from strategies.greedy import GreedyStrategy

class Faulty(GreedyStrategy):
    name = "faulty"

    def compiled(self, rules):
        return None  # played in Python, move by move

    def reset(self, deal, rng):
        super().reset(deal, rng)
        self.number = deal.number

    def choose(self, view, moves):
        if self.number % 7 == 0:
            raise RuntimeError("a bug of this plug-in")
        return super().choose(view, moves)
"""


def test_rows_that_ended_in_an_error_are_left_out_of_the_paired_figures():
    from reports.tables import errored

    rows = pd.DataFrame({"key": ["a"] * 4 + ["b"] * 4, "deal": [1, 2, 3, 4] * 2,
                         "outcome": ["won", "error", "won", "lost", "won", "won", "lost", "won"]})
    assert list(common_deals(rows, ["a", "b"])) == [1, 3, 4]  # deal 2 is not a loss of a's: it is left out
    assert errored(rows, ["a", "b"]) == {"a": 1}


@pytest.mark.parametrize("verb", ["tournament", "compare"])
def test_errored_deals_are_said_per_player(verb, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    (tmp_path / "plug_faulty.py").write_text(textwrap.dedent(FAULTY))
    common = ["-n", "70", "-j", "1", "--store", "st", "--out", "rep", "-q", "--json"]
    if verb == "tournament":
        args = ["tournament", "--strategies", "greedy;plug_faulty:Faulty", *common]
    else:
        args = ["compare", "--variants", "bakers-dozen,dick-1883", "--strategy", "plug_faulty:Faulty", *common]
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    said = [line for line in done.stderr.splitlines() if "ended in an error" in line]
    assert said and all("10 of 70 deals" in line for line in said), done.stderr
    assert len(said) == (1 if verb == "tournament" else 2)
    report = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "ended in an error" in report and "left out" in report
    assert "60 deals" in report  # every figure is on the 60 deals every player finished
    json.loads(done.output.strip().splitlines()[-1])
