"""The default study plays the solver on every preset, and its report carries the solver's figure (won, win
rate with its interval, unknown) for each of them, in report.md and report.html alike."""

from __future__ import annotations

import html as H
import re

import pytest

from reports.build import build
from sim.rules import VARIANTS, find_variant
from strategies import load_strategy
from studies.backends import warm_order, warm_study
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec
from studies.study import HONEST, HONEST_DEALS, SOLVER, SOLVER_DEALS, default_study, run_study

DEALS = 30


def test_the_default_study_has_the_solver_on_every_preset_with_a_node_budget():
    runs = default_study()
    solver = [r for r in runs if r.strategy == SOLVER]
    assert sorted(r.rules.name for r in solver) == sorted(v.name for v in VARIANTS)
    assert all(r.deals == SOLVER_DEALS and r.first == 1 and r.seed == 0 for r in solver)
    strategy = load_strategy(SOLVER)  # verdicts must not depend on the machine's speed: the node budget binds first
    assert strategy.params["nodes"] / 1e6 < strategy.params["seconds"]  # under a million nodes a second
    assert len(runs) - len(solver) == len(default_study(solver_deals=1)) - len(solver)  # the other runs are as before


def test_a_study_hands_each_strategy_it_will_play_to_the_workers_once(tmp_path):
    """Each compiled strategy still to play goes to the workers once, in the study's order; runs the store holds
    are left out, and with one job (or one strategy left) the runs' own warm-ups are enough."""
    store = tmp_path / "s"
    base, face_down = find_variant("bakers-dozen"), find_variant("dick-1883")
    runs = [RunSpec(base, "greedy", 20_000), RunSpec(base, "heuristic", 20_000), RunSpec(face_down, "greedy", 20_000)]
    assert warm_study(runs, store, jobs=2) == ["greedy", "heuristic"]
    assert warm_study(runs, store, jobs=1) == []
    run_study(runs[:1], store, jobs=2)
    assert warm_study(runs, store, jobs=2) == ["heuristic", "greedy"]  # greedy for dick-1883's run
    run_study(runs[1:2], store, jobs=2)
    assert warm_study(runs, store, jobs=2) == []  # one strategy left


def test_the_strategies_others_use_are_compiled_first_and_those_using_them_last():
    """The sampling player's completions are solved by the solver's search: the solver goes first (by its name
    when no run plays it), the sampling player last, so that it finds the search in numba's cache."""
    def order(*specs: str) -> list[str]:
        return warm_order({spec: load_strategy(spec) for spec in specs})

    assert order("sampling:preset=fast", "greedy", "solver:nodes=5") == ["solver:nodes=5", "greedy", "sampling:preset=fast"]
    assert order("heuristic", "sampling:preset=fast", "greedy") == ["solver", "heuristic", "greedy", "sampling:preset=fast"]
    assert order("random", "greedy") == ["random", "greedy"]


def test_the_default_study_has_the_honest_player_on_every_face_down_preset_and_only_there():
    runs = default_study()
    honest = [r for r in runs if r.strategy == HONEST]
    face_down = sorted(v.name for v in VARIANTS if v.rules.face_down > 0)
    assert face_down and sorted(r.rules.name for r in honest) == face_down
    assert all(r.deals == HONEST_DEALS and r.first == 1 and r.seed == 0 for r in honest)
    assert load_strategy(HONEST).name == "sampling"
    assert len(default_study(honest_deals=1)) == len(runs)  # the count changes, not the runs


@pytest.fixture(scope="module")
def solved(tmp_path_factory):
    """The study's solver runs on a few deals of every preset, and their report."""
    store = tmp_path_factory.mktemp("store") / "results"
    runs = [r for r in default_study(solver_deals=DEALS) if r.strategy == SOLVER]
    summaries = [run(spec, store, jobs=2) for spec in runs]
    out = tmp_path_factory.mktemp("report")
    html, md, _ = build(store, out, title="study")
    return store, summaries, html.read_text(), md.read_text()


def _rows(text: str, variant: str) -> list[str]:
    """The Markdown table rows that name ``variant`` and the solver."""
    return [line for line in text.splitlines() if line.startswith("|") and f"| {variant} |" in line.replace("\\", "")
            and "solver" in line]


@pytest.mark.slow
def test_report_md_and_html_carry_the_solvers_win_rate_for_every_preset(solved):
    store, summaries, html, md = solved
    cells = {re.sub(r"<[^>]+>", "|", row) for row in re.findall(r"<tr>.*?</tr>", html, flags=re.S)}
    for s in summaries:
        figure = f"{s.win_rate:.2%}"
        rows = _rows(md, s.variant)
        assert any(figure in r for r in rows), (s.variant, figure, rows)
        assert any(s.variant in H.unescape(c) and "solver" in c and figure in c for c in cells), s.variant


@pytest.mark.slow
def test_unknown_verdicts_are_counted_in_the_store_and_the_report(solved):
    store, summaries, _, md = solved
    frame = read_store(store, strategy="solver", columns=["variant", "outcome"])
    for s in summaries:
        mine = frame[frame["variant"] == s.variant]
        assert len(mine) == DEALS  # no row dropped, whatever its verdict
        unknown = int((mine["outcome"] == "unknown").sum())
        assert s.outcomes["unknown"] == unknown
        assert s.wins == int((mine["outcome"] == "won").sum())
        assert any(f"| {unknown} |" in r for r in _rows(md, s.variant)), s.variant
