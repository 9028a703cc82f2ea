"""Reports built from a small store: tables equal recomputation from the rows, every chart
is written, the HTML stands alone, and bad input is answered clearly."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner
from statsmodels.stats.multitest import multipletests

from bakers_dozen.cli import main
from reports.build import COLUMNS, build
from reports.front import ANSWER, APPENDIX, GRID_CAPTION
from reports.tables import ReportError, summary, tournament, variant_comparison
from sim.rules import Rules, find_variant
from studies.files import DamagedFileWarning
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec
from studies.stats import paired_comparison, pairwise_mcnemar, win_rate_interval

DEALS = 1200


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "results"
    for v in ("bakers-dozen", "dick-1883", "spanish-patience"):
        run(RunSpec(find_variant(v), "greedy", DEALS), path, jobs=1)
    for s in ("heuristic", "random:home_first=true"):
        run(RunSpec(find_variant("bakers-dozen"), s, DEALS), path, jobs=1)
    for k in (1, 2):
        run(RunSpec(Rules(name=f"bakers-dozen[face_down={k}]", face_down=k), "heuristic", DEALS), path, jobs=1)
    return path


@pytest.fixture(scope="module")
def built(store, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    html, md, report = build(store, out, command="bakers-dozen report results")
    return out, html, md, report


def test_every_chart_is_written_and_embedded(built):
    out, html, md, report = built
    charts = [c for s in report.sections for c in s.charts]
    assert len(charts) >= 10
    text = html.read_text()
    for c in charts:
        svg = c.paths["svg"]
        assert svg.stat().st_size > 5000 and "<svg" in svg.read_text()
        assert c.title.split(":")[0] in text or c.facts in text
        assert f"charts/{svg.name}" in md.read_text()
        assert c.reproduce and all(cmd.startswith("bakers-dozen ") for cmd in c.reproduce)
    assert text.count("<svg") == len(charts)


def test_the_html_needs_no_server_and_no_network(built):
    _, html, _, _ = built
    text = html.read_text()
    assert "<script" not in text
    assert not re.search(r"""(src|href)=["']https?://""", text)
    assert "xlink:href=\"data:image/png;base64" in text or "<path" in text


def test_sections_cover_comparisons_tournament_and_sweep(built):
    headings = [s.heading for s in built[3].sections]
    assert headings[0] == ANSWER and headings[1] == "Paired variant differences" and headings[-1] == APPENDIX
    assert "Variant comparison: greedy" in headings
    assert "Variant comparison: heuristic" in headings
    assert any(h.startswith("Tournament on bakers-dozen") for h in headings)
    assert "Sweep of face_down" in headings


def test_summary_equals_a_recomputation_from_the_rows(store):
    rows = read_store(store, columns=COLUMNS)
    s = summary(rows)
    for _, r in s.iterrows():
        g = rows[rows["key"] == r["key"]]
        wins = int((g["outcome"] == "won").sum())
        assert r["deals"] == len(g) == DEALS and r["wins"] == wins
        assert (r["ci_low"], r["ci_high"]) == win_rate_interval(wins, len(g))
        assert r["mean_cards_home"] == pytest.approx(g["cards_home"].mean())
        assert r["mean_score"] == pytest.approx(5 * g["cards_home"].mean() + 500 * wins / len(g))


def test_comparison_and_tournament_equal_a_recomputation(store):
    rows = read_store(store, columns=COLUMNS)
    rows = rows.assign(key=rows["key"].astype(str))
    s = summary(rows)
    greedy = s[s["strategy"] == "greedy"]
    keys = [greedy.loc[greedy["variant"] == v, "key"].iloc[0] for v in ("bakers-dozen", "dick-1883", "spanish-patience")]
    t = variant_comparison(rows, keys)

    def won(key):
        g = rows[rows["key"] == key].sort_values("deal")
        return (g["outcome"] == "won").to_numpy()

    expected = paired_comparison(won(keys[2]), won(keys[0]))
    assert t["difference"].iloc[2] == pytest.approx(expected.difference)
    assert (t["diff_low"].iloc[2], t["diff_high"].iloc[2]) == pytest.approx((expected.low, expected.high))
    bd = s[s["variant"] == "bakers-dozen"]
    tour = tournament(rows, list(bd["key"]))
    assert list(tour.ranking["win_rate"]) == sorted(tour.ranking["win_rate"], reverse=True)
    top, bottom = tour.ranking["key"].iloc[0], tour.ranking["key"].iloc[-1]
    a, b = won(top), won(bottom)
    names = list(tour.wins_over.index)
    assert tour.wins_over.loc[names[0], names[-1]] == int((a & ~b).sum())
    assert tour.wins_over.loc[names[-1], names[0]] == int((~a & b).sum())
    assert tour.deals == DEALS


def _rows(wins: np.ndarray) -> pd.DataFrame:
    """Store-like rows: run k won deal d+1 where ``wins[d, k]``."""
    n, k = wins.shape
    return pd.DataFrame({
        "key": np.repeat([f"run{j}" for j in range(k)], n), "deal": np.tile(np.arange(1, n + 1), k),
        "outcome": np.where(wins.T.ravel(), "won", "lost"), "cards_home": np.where(wins.T.ravel(), 52, 20),
        "variant": "bakers-dozen", "rules_fingerprint": "f", "strategy_label": np.repeat([f"s{j}" for j in range(k)], n),
        "strategy_identity": "i", "clairvoyant": False, "seed": 0, "source": "default", "toolkit_version": "t",
    })


@pytest.mark.parametrize("runs", [1, 2, 3, 5])
def test_tournament_pairs_are_the_statistics_modules_mcnemar_with_holm(runs):
    wins = np.random.default_rng(runs).random((300, runs)) < np.linspace(0.2, 0.4, runs)
    tour = tournament(_rows(wins), [f"run{j}" for j in range(runs)])
    ranked = wins[:, [int(k[3:]) for k in tour.ranking["key"]]]
    expected = pairwise_mcnemar(ranked, list(tour.ranking["strategy"]))
    assert len(tour.pairwise) == len(expected) == runs * (runs - 1) // 2
    for (_, row), (first, second, c, p_holm) in zip(tour.pairwise.iterrows(), expected, strict=True):
        assert (row["first"], row["second"], row["p_value"], row["p_holm"]) == (first, second, c.p_value, p_holm)
        assert tour.adjusted_p.loc[first, second] == tour.adjusted_p.loc[second, first] == p_holm
    if runs > 1:
        assert np.allclose(tour.pairwise["p_holm"], multipletests(tour.pairwise["p_value"], method="holm")[1])


def test_the_report_opens_with_the_grid_and_the_grouped_chart(built):
    out, html, md, report = built
    first = report.sections[0]
    caption, grid = first.tables[0]
    assert caption == GRID_CAPTION and first.charts[0].paths["svg"].stem == "answer"
    assert list(grid["variant"][:3]) == ["bakers-dozen", "dick-1883", "spanish-patience"]
    # the ladder, weakest first, by the names the default study gives its players (studies.study.PLAYER_NAMES)
    assert list(grid.columns[1:]) == ["random (home first)", "greedy", "heuristic"]
    text = html.read_text()
    assert first.lead and text.index("<p class='lead'>") < text.index("<table") < text.index("Each cell: the win rate")
    assert text.index("<caption>") == text.index(f"<caption>{GRID_CAPTION}</caption>")  # the first table
    assert text.index("<svg") > text.index(f"<caption>{GRID_CAPTION}</caption>")
    assert "style='background:#" in text.split("</table>")[0]  # the grid's cells are coloured by their rate
    assert md.read_text().index(f"**{GRID_CAPTION}**") < md.read_text().index("![")
    for chart in (c for s in report.sections for c in s.charts):  # each figure replays its own runs, not the report
        assert all(cmd.startswith("bakers-dozen simulate ") for cmd in chart.reproduce), chart.reproduce
        assert "deals" in chart.facts


def test_the_report_stays_small(built):
    out, html, _, _ = built
    assert html.stat().st_size < 1_500_000
    assert sum(f.stat().st_size for f in (out / "charts").iterdir()) < 3_000_000


def test_markdown_tables_show_the_computed_figures(built, store):
    md = built[2].read_text()
    s = summary(read_store(store, columns=COLUMNS))
    for _, r in s.iterrows():
        assert f"{r['win_rate']:.2%}" in md and f"{r['ci_low']:.2%} – {r['ci_high']:.2%}" in md


def test_an_empty_store_is_refused_and_one_name_on_two_rules_is_shown_apart(tmp_path):
    empty = tmp_path / "empty"
    run(RunSpec(Rules(), "greedy", 10), empty, jobs=1)
    for key_dir in empty.iterdir():
        if key_dir.is_dir():
            for f in key_dir.glob("*.parquet"):
                f.unlink()
    with pytest.raises(ReportError, match="holds no results"), pytest.warns(DamagedFileWarning, match="in no chunk file"):
        build(empty, tmp_path / "out")
    mixed = tmp_path / "mixed"
    run(RunSpec(Rules(name="mine"), "greedy", 50), mixed, jobs=1)
    run(RunSpec(Rules(name="mine", worrying_back=True), "greedy", 50), mixed, jobs=1)  # the same name, other rules
    html, md, _ = build(mixed, tmp_path / "out2")
    text = md.read_text(encoding="utf-8")
    assert html.exists() and "bakers-dozen" in text  # the preset's rules by the preset's name
    assert f"mine (rules {Rules(worrying_back=True).fingerprint})" in text


def test_cli_report_compare_and_tournament(tmp_path):
    """The verbs on a store of their own (the module's store, already built into a report by `built`, is left as
    the other tests read it): compare, tournament, then report of what they stored."""
    store = tmp_path / "s"
    r = CliRunner().invoke(main, ["compare", "--variants", "bakers-dozen,nope", "--deals", "10", "--store", str(store)])
    assert r.exit_code == 2 and "unknown variant 'nope'" in r.output
    r = CliRunner().invoke(main, ["report", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "is not a directory" in r.output
    r = CliRunner().invoke(main, ["tournament", "--strategies", "greedy", "--deals", "10", "--store", str(store)])
    assert r.exit_code == 2 and "at least two strategies" in r.output
    r = CliRunner().invoke(main, ["compare", "--variants", "bakers-dozen,other-suit", "--strategy", "greedy", "--deals", "300",
                                  "--store", str(store), "--out", str(tmp_path / "cmp"), "-j", "1", "-q"])
    assert r.exit_code == 0, r.output
    assert "difference vs bakers-dozen" in r.output
    r = CliRunner().invoke(main, ["tournament", "--strategies", "greedy,heuristic:preset=balanced,allow_dig=false",
                                  "--deals", "300", "--store", str(store), "--out", str(tmp_path / "tour"), "-j", "1", "-q"])
    assert r.exit_code == 0, r.output
    assert "heuristic:preset=balanced,allow_dig=False" in r.output and "McNemar" in r.output
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "rep" / "report.html").exists() and ANSWER in r.output


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (CI installs it)")
def test_the_html_renders_in_headless_chromium(built, tmp_path):
    _, html, _, _ = built
    shot = tmp_path / "shot.png"
    subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / 'profile'}", "--window-size=1200,2400", f"--screenshot={shot}", html.as_uri()],
        check=True, capture_output=True, timeout=120,
    )
    from matplotlib.image import imread

    pixels = imread(shot)
    assert pixels.shape[0] >= 2000 and pixels.std() > 0.05  # a page with content, not a blank one
