"""A report never drops a run silently and never invents a tournament: tournaments and variant
comparisons come only from runs one command played on the same deals, and what cannot be used is
named in the report and on the terminal. Also: the ladder of players, number formats, bounded charts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports import charts, grid
from reports.build import COLUMNS, NOT_USED, build
from reports.digest import running_wins
from reports.formats import count, deal_ranges, p_clause, p_value
from reports.front import APPENDIX
from sim.rules import find_variant
from studies.files import DamagedFileWarning
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec
from studies.stats import win_rate_interval

N = 150
TOUR = ["bakers-dozen", "tournament", "--strategies", "greedy,random", "--first", "1001"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A tournament on deals 1001..1000+N, plus runs on other deals and unrelated simulate runs."""
    path = tmp_path_factory.mktemp("groups") / "store"
    bd, dick = find_variant("bakers-dozen"), find_variant("dick-1883")
    for s in ("greedy", "random"):  # in chunks of 50, so that a test can take one chunk file away
        run(RunSpec(bd, s, N, first=1001), path, jobs=1, chunk=50, command=TOUR)
    # the same greedy run key also holds deals 1..N from a simulate, and heuristic played only deals 1..N:
    # before, heuristic joined the "tournament", the runs then shared no deals, and the tournament vanished
    run(RunSpec(bd, "greedy", N), path, jobs=1, command=["bakers-dozen", "simulate", "-s", "greedy"])
    run(RunSpec(bd, "heuristic", N), path, jobs=1, command=["bakers-dozen", "simulate", "-s", "heuristic"])
    # two unrelated simulate runs on the same deals of dick-1883: not a tournament
    for s in ("greedy", "random"):
        run(RunSpec(dick, s, N), path, jobs=1, command=["bakers-dozen", "simulate", "-v", "dick-1883", "-s", s])
    return path


def test_only_the_tournament_that_was_played_is_reported(store, tmp_path):
    _, md, report = build(store, tmp_path / "out")
    tournaments = [s for s in report.sections if s.heading.startswith("Tournament")]
    assert len(tournaments) == 1 and "dick-1883" not in tournaments[0].heading
    ranking = dict(tournaments[0].tables)["Ranking"]
    assert sorted(ranking["strategy"]) == ["greedy", "random:home_first=False"] or len(ranking) == 2
    rows = read_store(store, columns=COLUMNS)
    rows = rows[rows["deal"].between(1001, 1000 + N)]
    for _, r in ranking.iterrows():  # the ranking is on the tournament's deals only, not the run's other deals
        won = rows[rows["strategy_label"].astype(str) == r["strategy"]]["outcome"].astype(str).eq("won")
        assert len(won) == N and r["win rate"] == f"{won.mean():.2%}"
    assert f"deals 1,001–{1000 + N:,}" in tournaments[0].paragraphs[0]
    assert not any(s.heading.startswith("Variant comparison") for s in report.sections)  # no run pairs invented
    appendix = dict(next(s for s in report.sections if s.heading == APPENDIX).tables)["Every run"]
    assert len(appendix) == 5  # every run is shown (greedy's key holds both deal sets)
    assert f"1–{N}, 1,001–{1000 + N:,}" in set(appendix["deal range"])


def test_a_tournament_missing_deals_is_used_on_what_remains_and_named(store, tmp_path):
    damaged = tmp_path / "store"
    import shutil

    shutil.copytree(store, damaged)
    key = next(k for k in read_store(damaged, columns=["strategy"]).query("strategy == 'random'")["key"].astype(str)
               if (damaged / k).exists() and any((damaged / k).glob("*_0000000000000001001_*.parquet")))
    for f in sorted((damaged / key).glob("*_0000000000000001001_*.parquet")):
        f.unlink()
    with pytest.warns(DamagedFileWarning):
        _, _, report = build(damaged, tmp_path / "out")
    assert report.notes and any("tournament" in n for n in report.notes)
    assert any(s.heading == NOT_USED for s in report.sections)
    result = CliRunner().invoke(main, ["report", str(damaged), "--out", str(tmp_path / "cli")])
    assert result.exit_code == 0, result.output
    assert "bakers-dozen: note:" in result.output and "tournament" in result.output


def test_the_ladder_puts_perfect_play_last_and_shows_unknown_verdicts():
    labels = ["solver", "heuristic", "mine", "random:home_first=True", "lookahead", "greedy", "sampling"]
    assert grid.player_order(labels) == ["random:home_first=True", "greedy", "heuristic", "lookahead", "sampling",
                                         "mine", "solver"]
    assert grid.player_name("solver") == "perfect play (solver)"
    cell = pd.Series({"win_rate": 0.5, "ci_low": 0.4, "ci_high": 0.6, "deals": 1000, "wins": 500, "unknown": 0,
                      "errors": 0, "clairvoyant": False})
    assert grid.cell_text(cell) == "50.00% (40.00%–60.00%) of 1,000"
    assert grid.cell_text(pd.Series({**cell, "clairvoyant": True})) == "50.00% (40.00%–60.00%) of 1,000 (clairvoyant)"
    low = win_rate_interval(500, 1000)[0]
    bounds = pd.Series({"win_rate": 0.5, "ci_low": low, "ci_high": 0.53, "deals": 1000, "wins": 500, "unknown": 12,
                        "errors": 0, "clairvoyant": False})  # winnable between 500 and 512 of 1,000
    assert grid.cell_text(bounds) == f"50.00%–51.20% ({low:.2%}–54.29%) of 1,000, 12 unknown"
    assert round(win_rate_interval(512, 1000)[1], 4) == 0.5429


def test_numbers_have_one_format():
    assert count(27139) == "27,139" and p_clause(1e-7) == "p < 0.0001" and p_clause(0.01234) == "p = 0.0123"
    assert p_value(float("nan")) == "–" and deal_ranges([1, 2, 3, 7, 9, 10]) == "1–3, 7, 9–10"


def test_convergence_charts_keep_a_bounded_number_of_points(tmp_path):
    won = np.random.default_rng(0).random(1_000_000) < 0.1
    paths = charts.save(charts.convergence([("a", running_wins(won)), ("b", running_wins(won[::-1]))], "t"), tmp_path, "c")
    assert paths["svg"].stat().st_size < 200_000
    points = charts.sample_points(10, 1_000_000)
    assert len(points) <= charts.MAX_POINTS + 2 and points[0] == 10 and points[-1] == 1_000_000
    assert list(charts.sample_points(1, 5)) == [1, 2, 3, 4, 5]


def test_a_chart_with_the_same_inputs_is_reused_and_one_with_others_is_drawn(tmp_path):
    won, lost = running_wins(np.arange(500) % 7 == 0), running_wins(np.arange(500) % 7 != 0)
    first = charts.Painter(tmp_path / "a")
    old = first(charts.convergence, "c", [("x", won)], "title")["svg"]
    assert not old.exists()  # drawn by finish
    first.finish()
    again = charts.Painter(tmp_path / "b", earlier=tmp_path / "a")
    assert again(charts.convergence, "c", [("x", won)], "title")["svg"].read_bytes() == old.read_bytes()
    assert (again.drawn, again.reused) == (0, 1)
    new = again(charts.convergence, "c", [("x", lost)], "title")["svg"]
    assert (again.drawn, again.reused) == (1, 1)
    again.finish()
    assert new.read_bytes() != old.read_bytes()


def _manifest(command: list[str], first: int, last: int) -> dict:
    return {"command": command, "parameters": {"first": first, "last": last}}


def test_an_interrupted_invocation_is_named_and_not_shown_twice():
    from reports.groups import find_groups
    from reports.tables import summary

    n = 100
    rows = pd.DataFrame({"key": np.repeat(["a", "b"], n), "deal": np.tile(np.arange(1, n + 1), 2), "outcome": "lost",
                         "cards_home": 10, "variant": "bakers-dozen", "rules_fingerprint": "f",
                         "strategy_label": np.repeat(["greedy", "heuristic"], n), "strategy_identity": np.repeat(["g", "h"], n),
                         "clairvoyant": False, "seed": 0, "source": "default", "toolkit_version": "t"})
    done, cut = ["tournament", "-n", "100"], ["tournament", "-n", "400"]  # the second was stopped after 100 deals
    manifests = {k: [_manifest(done, 1, n), _manifest(cut, 1, 400)] for k in ("a", "b")}
    held = {"a": [(1, n)], "b": [(1, n)]}
    groups, notes = find_groups(held, summary(rows), manifests, whole_store=True)
    assert [(g.kind, g.first, g.last) for g in groups] == [("tournament", 1, n)]
    assert len(notes) == 1 and "holds 100 of its 400 deals" in notes[0] and "shown" in notes[0]
    groups, notes = find_groups(held, summary(rows), manifests, whole_store=False)  # one study's rows: the other is not this report's
    assert len(groups) == 1 and notes == []
    separate = {"a": [_manifest(["simulate", "-s", "greedy"], 1, n)], "b": [_manifest(["simulate", "-s", "heuristic"], 1, n)]}
    assert find_groups(held, summary(rows), separate, whole_store=True) == ([], [])  # no tournament invented


def test_the_solver_is_named_as_in_the_grid_and_its_parameters_are_in_small_print():
    labels = ["heuristic", "solver:nodes=200000,seconds=1000000.0 (clairvoyant)"]
    names = grid.player_names(labels)
    assert names == {"heuristic": "heuristic", labels[1]: "perfect play (solver)"}
    assert grid.parameter_notes(names) == [
        "perfect play (solver): the strategy `solver:nodes=200000,seconds=1000000.0`, which sees the face-down "
        "cards: on a variant that deals some, its figure is an upper bound for an honest player, marked (clairvoyant)."]
    two = ["solver:nodes=10", "solver:nodes=20"]  # short names would make two players one: both keep their parameters
    assert grid.player_names(two) == {x: grid.player_name(x) for x in two} and grid.parameter_notes(grid.player_names(two)) == []


def test_deal_ranges_of_unsorted_deals_with_repeats():
    assert deal_ranges(np.array([9, 3, 1, 2, 3, 10, 7], dtype=np.int64)) == "1–3, 7, 9–10"


def test_a_game_without_a_page_is_remembered_and_not_played_again(tmp_path):
    from reports.ledger import Ledger
    from reports.replays import NO_PAGE, _inputs, earlier_answer

    earlier, out = tmp_path / "old", tmp_path / "new"
    assert earlier_answer("abc", 5, "x", Ledger(out, None)) == (False, None)
    wrote = Ledger(earlier, None)  # the previous build, which found deal 5 cannot be shown and drew deal 6
    earlier.mkdir()
    (earlier / ("abc-deal-5.html" + NO_PAGE)).write_text("no page")
    (earlier / "abc-deal-6.html").write_text("<html>page</html>")
    wrote.wrote("abc-deal-5.html" + NO_PAGE, _inputs("abc", 5, "x"))
    wrote.wrote("abc-deal-6.html", _inputs("abc", 6, "x"))
    assert earlier_answer("abc", 5, "x", Ledger(out, earlier)) == (False, None)  # no ledger yet: nothing is trusted
    wrote.seal()
    ledger = Ledger(out, earlier)
    assert earlier_answer("abc", 5, "x", ledger) == (True, None)
    assert (out / ("abc-deal-5.html" + NO_PAGE)).is_file()  # carried on, for the build after this one
    known, page = earlier_answer("abc", 6, "x", ledger)
    assert known and page == out / "abc-deal-6.html" and page.read_text() == "<html>page</html>"
    assert earlier_answer("abc", 6, "another label", ledger) == (False, None)  # made from other inputs


def test_the_appendix_names_a_player_once_and_says_clairvoyant_only_where_it_saw_hidden_cards():
    from reports.front import appendix
    from reports.tables import summary

    n, solver = 50, "solver:nodes=200000"
    labels = [solver, solver + " (clairvoyant)"]  # a face-up run, and a face-down run (`Strategy.label_for`)
    rows = pd.DataFrame({"key": np.repeat(["up", "down"], n), "deal": np.tile(np.arange(1, n + 1), 2),
                         "outcome": "won", "cards_home": 52, "variant": np.repeat(["bakers-dozen", "dick-1883"], n),
                         "rules_fingerprint": np.repeat(["f", "g"], n), "strategy_label": np.repeat(labels, n),
                         "strategy_identity": "solver@1:nodes=200000", "clairvoyant": np.repeat([False, True], n),
                         "seed": 0, "source": "default", "toolkit_version": "t"})
    s = summary(rows)
    table = appendix(s, {k: f"1–{n}" for k in s["key"]}, lambda keys, deals: []).tables[0][1]
    players = dict(zip(table["variant"], table["player"], strict=True))
    assert players == {"bakers-dozen": "perfect play (solver)", "dick-1883": "perfect play (solver) (clairvoyant)"}


def test_the_paired_differences_name_the_solver_once_and_mark_only_face_down_rows_clairvoyant():
    from reports.front import differences
    from reports.tables import summary, variant_comparison

    n, solver = 60, "solver:nodes=200000"
    variants = ["bakers-dozen", "dick-1883", "good-measure"]
    labels = [solver, solver + " (clairvoyant)", solver]  # as `Strategy.label_for` writes them
    won = np.arange(n) % 3 != 0
    rows = pd.DataFrame({"key": np.repeat(variants, n), "deal": np.tile(np.arange(1, n + 1), 3),
                         "outcome": np.where(np.tile(won, 3), "won", "lost"), "cards_home": 52,
                         "variant": np.repeat(variants, n), "rules_fingerprint": np.repeat(["f", "g", "h"], n),
                         "strategy_label": np.repeat(labels, n), "strategy_identity": "solver@1:nodes=200000",
                         "clairvoyant": np.repeat([False, True, False], n), "seed": 0, "source": "default",
                         "toolkit_version": "t"})
    s = summary(rows)
    section = differences(s, [(variant_comparison(rows, variants), [(1, n)])])
    table = section.tables[0][1]
    assert dict(zip(table["variant"], table["player"], strict=True)) == {
        "dick-1883": "perfect play (solver) (clairvoyant)", "good-measure": "perfect play (solver)"}
    assert section.small_print == ["perfect play (solver): the strategy `solver:nodes=200000`."]
    assert grid.player_name("solver:nodes=10") == "perfect play (solver:nodes=10)"
    assert grid.player_name("solver:nodes=10 (clairvoyant)") == "perfect play (solver:nodes=10) (clairvoyant)"


def test_the_paired_differences_say_how_many_deals_are_unknown_and_what_that_bounds():
    from reports.front import UNKNOWN_COLUMN, differences
    from reports.tables import summary, variant_comparison

    n, variants = 40, ["bakers-dozen", "good-measure"]

    def rows_with(unknown_deals: int) -> pd.DataFrame:
        outcome = np.where(np.arange(n) % 4 == 0, "lost", "won").astype(object)
        second = outcome.copy()
        second[:unknown_deals] = "unknown"
        return pd.DataFrame({"key": np.repeat(variants, n), "deal": np.tile(np.arange(1, n + 1), 2),
                             "outcome": np.concatenate([outcome, second]), "cards_home": 52,
                             "variant": np.repeat(variants, n), "rules_fingerprint": np.repeat(["f", "g"], n),
                             "strategy_label": "solver", "strategy_identity": "solver@1", "clairvoyant": False,
                             "seed": 0, "source": "default", "toolkit_version": "t"})

    decided = differences(summary(rows_with(0)), [(variant_comparison(rows_with(0), variants), [(1, n)])])
    assert UNKNOWN_COLUMN not in decided.tables[0][1].columns and len(decided.paragraphs) == 1
    rows = rows_with(3)
    section = differences(summary(rows), [(variant_comparison(rows, variants), [(1, n)])])
    table = section.tables[0][1]
    assert table[UNKNOWN_COLUMN].tolist() == ["3 / 0"]
    assert "lower bounds" in section.paragraphs[-1]
