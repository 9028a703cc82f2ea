"""The study verbs from Python (`bakers_dozen.api.solve`, `compare`, `tournament`, `tune`) refuse what the
command line refuses, in one line (`UserError`), before any deal is played or anything is written.

docs/notebook.md runs each of them on real deals (tests/test_notebook_doc.py, slow).
"""

from __future__ import annotations

import os

import pytest

from bakers_dozen import api
from sim.errors import UserError

REFUSED = [
    (lambda: api.solve(deals="5-1"), "after the last"),
    (lambda: api.solve(deals=(1, 2, 3)), "expected"),
    (lambda: api.solve(deals="1-2000000"), "at most 1,000,000"),
    (lambda: api.solve(deals=3, nodes=0), "nodes=0 is out of range"),
    (lambda: api.solve(deals=3, params={"no_such": 1}), "no_such"),
    (lambda: api.solve(deals=3, rules={"nonsense": 1}), "nonsense"),
    (lambda: api.solve(deals=3, tt_mb=1e9), "tt_mb=1000000000.0 is out of range"),
    (lambda: api.solve(deals=3, tt_mb=600, jobs=2), "MiB in all"),  # on a machine of 1,000 MiB (below)
    (lambda: api.solve(deals=3, seed=-1), "seed"),
    (lambda: api.compare([], "greedy"), "at least one variant"),
    (lambda: api.compare(["bakers-dozen", "no-such-variant"], "greedy"), "no-such-variant"),
    (lambda: api.compare("bakers-dozen", "greedy", deals=0), "deals"),
    (lambda: api.compare("bakers-dozen", "greedy", deals=10, first=0), "deal number 0"),
    (lambda: api.tournament(["greedy"]), "at least two strategies"),
    (lambda: api.tournament("greedy;no-such-strategy", deals=10), "no-such-strategy"),
    (lambda: api.tournament(["greedy", "random"], deals=10, jobs=0), "jobs"),
    (lambda: api.tournament(["greedy", "greedy"], deals=10, sequential=True), "names each strategy once"),
    (lambda: api.tournament(["greedy", "random"], deals=10, sequential=True, alpha=0.5), "alpha=0.5 is out of range"),
    (lambda: api.tournament(["greedy", "random"], deals=10, sequential=True, delta=float("nan")), "delta=nan"),
    (lambda: api.tournament(["greedy", "random"], deals=10, sequential=True, round_deals=0), "deals"),
    (lambda: api.tune("heuristic", trials=0), "trials"),
    (lambda: api.tune("greedy", trials=1), "declares no parameters"),
    (lambda: api.tune("heuristic", params=["no_such=1..2"]), "no_such"),
]


@pytest.mark.parametrize(("call", "says"), REFUSED)
def test_bad_input_is_one_line_before_any_work(call, says, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: 1000.0)  # a small machine, whatever this one is
    with pytest.raises(UserError) as caught:
        call()
    message = str(caught.value)
    assert says in message and "\n" not in message, message
    assert os.listdir(tmp_path) == []


def test_a_report_folder_that_cannot_be_written_is_refused_before_play(tmp_path):
    (tmp_path / "file").write_text("not a folder")
    with pytest.raises(UserError, match="report"):
        api.compare("bakers-dozen", "greedy", deals=10, out=tmp_path / "file" / "report", store=tmp_path / "store")
    assert not (tmp_path / "store").exists()


def test_a_sequential_tournament_stops_by_its_tests_and_says_where(tmp_path):
    """The rounds and the study are one store: the study's runs are the deals the rounds played."""
    ranked = api.tournament(["random:home_first=true", "greedy"], deals=600, round_deals=200, sequential=True, jobs=1,
                            store=tmp_path / "store", out=tmp_path / "report")
    stop = ranked.sequential
    assert stop is not None and stop["deals_played"] in (200, 400, 600) and len(stop["pairs"]) == 1
    assert stop["decided"] or stop["deals_played"] == 600
    assert set(ranked.summary["deals"]) == {stop["deals_played"]} and len(ranked.to_frame()) == 2 * stop["deals_played"]
    assert sorted(stop["ranking"]) == ["greedy", "random:home_first=true"]
    assert (tmp_path / "report" / "sequential.md").exists() and ranked.report == tmp_path / "report" / "report.html"
