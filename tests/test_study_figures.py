"""The default study's figures in the README and the guide come from the pinned run, and the prose agrees with it."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from reports import study_figures as sf
from reports.finding import finding
from reports.formats import exact_pct

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def pinned():
    return sf.load(ROOT / sf.PINNED)


def _rate(pinned, variant, spec):
    r = next(r for r in pinned["runs"] if r["variant"] == variant and r["spec"] == spec)
    return r["wins"] / r["deals"]


def test_the_pages_show_the_pinned_figures(pinned):
    for page, text in sf.pages(pinned, ROOT).items():
        assert page.read_text(encoding="utf-8") == text, f"{page} differs from data/default-study.json: make docs-figures"


def test_the_demo_chart_is_drawn_from_the_pinned_figures(pinned, tmp_path):
    assert sf.shown_digest(ROOT / sf.CHART) == sf.chart_digest(pinned), "make docs-figures"
    changed = {**pinned, "runs": [{**r, "wins": r["wins"] + 1} if i == 0 else r for i, r in enumerate(pinned["runs"])]}
    sf.draw(changed, tmp_path / "c.png")
    assert sf.shown_digest(tmp_path / "c.png") == sf.chart_digest(changed) != sf.chart_digest(pinned)


def test_a_changed_figure_changes_the_pages(pinned):
    changed = {**pinned, "runs": [{**r, "wins": r["wins"] + 7} if r["spec"] == "heuristic" else r for r in pinned["runs"]]}
    old, new = sf.pages(pinned, ROOT), sf.pages(changed, ROOT)
    assert all(old[p] != new[p] for p in old)


def test_the_prose_claims_about_directions_hold_in_the_pinned_run(pinned):
    base = _rate(pinned, "bakers-dozen", "heuristic")
    # docs/strategies-findings.md and docs/reports.md: face-down cards per pile lower the heuristic, each one more
    assert base > _rate(pinned, "bakers-dozen[face_down=1]", "heuristic") > _rate(
        pinned, "bakers-dozen[face_down=2]", "heuristic") > _rate(pinned, "dick-1883", "heuristic")
    # docs/reports.md: random play wins as often in dick-1883 as in bakers-dozen (the same deals, the same moves)
    assert _rate(pinned, "dick-1883", "random:home_first=true") == _rate(pinned, "bakers-dozen", "random:home_first=true")
    assert sf.sweep_text(pinned).endswith("each face-down card lowers it.")
    texts = "\n".join((ROOT / p).read_text(encoding="utf-8") for p in ("README.md", "docs/reports.md", "docs/index.md"))
    assert not re.search(r"face-down card per pile \*?raises", texts)


def test_an_exact_tie_rounds_half_up_everywhere():
    assert exact_pct(11321, 20000) == "56.61%" and exact_pct(185, 20000) == "0.93%" and exact_pct(1, 3) == "33.33%"


def _cells(rows):
    from studies.stats import win_rate_interval

    df = pd.DataFrame(rows, columns=["variant", "strategy", "clairvoyant", "wins", "unknown", "deals"])
    lo, hi = zip(*(win_rate_interval(w, n) for w, n in zip(df["wins"], df["deals"], strict=True)), strict=True)
    return df.assign(win_rate=df["wins"] / df["deals"], ci_low=lo, ci_high=hi)


def test_the_finding_names_ties_together_and_leaves_clairvoyant_figures_out_of_honest_play():
    c = _cells([("a", "solver", False, 999, 0, 1000), ("b", "solver", True, 999, 0, 1000),
                ("a", "heuristic", False, 300, 0, 1000), ("b", "heuristic", False, 30, 0, 1000),
                ("b", "sampling", True, 900, 0, 1000)])
    names = {"solver": "perfect play", "heuristic": "heuristic", "sampling": "sampling"}
    text = finding(c, names, {"b": "a"})
    assert "Perfect play wins most often on a and b (99.90% each)." in text
    assert "a for heuristic (30.00%)" in text and "sampling" not in text.split("Dealt")[0]
    assert "Dealt as b instead of a: heuristic 30.00% to 3.00%" in text


def test_the_finding_does_not_claim_a_cost_within_the_intervals():
    c = _cells([("a", "random", False, 10, 0, 1000), ("b", "random", False, 11, 0, 1000)])
    text = finding(c, {"random": "random"}, {"b": "a"})
    assert "no player's win rate moves beyond its interval" in text


def test_a_block_replaces_only_its_own_text():
    page = f"before\n{sf.TABLE.start}\nold\n{sf.TABLE.end}\nafter\n"
    assert sf.TABLE.put(page, "new") == f"before\n{sf.TABLE.start}\nnew\n{sf.TABLE.end}\nafter\n"
    with pytest.raises(sf.FiguresError):
        sf.FINDING.put(page, "x")
