"""The face-down question's figures (honest play beside the atlas, the budget curve) come from committed data."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path

import pandas as pd

from bakers_dozen import api
from reports import honest_figures as hf
from studies import atlas as atlas_files
from studies.atlas import honest

ROOT = Path(__file__).resolve().parent.parent


def test_the_pages_show_the_committed_honest_figures():
    for page, text in hf.pages(ROOT).items():
        assert page.read_text(encoding="utf-8") == text, f"{page} differs from the honest data: make docs-figures"


def test_the_budget_curve_chart_is_drawn_from_the_committed_curve(tmp_path):
    curve = hf.load_curve(ROOT / hf.CURVE)
    top = hf.ceilings(curve, ROOT / hf.ATLAS)
    assert set(top) == set(curve["variant"]), "every variant of the curve has its clairvoyant ceiling in the atlas"
    hf.draw_curve(curve, top, tmp_path / "c.png")
    drawn = (tmp_path / "c.png").read_bytes()
    assert hf.DIGEST_TAG.encode() + hf.curve_digest(curve, top).encode() in drawn
    assert hf.DIGEST_TAG.encode() + hf.curve_digest(curve, top).encode() in (ROOT / hf.CURVE_CHART).read_bytes(), \
        "docs/honest-curve.png is not drawn from data/honest-curve.csv: make docs-figures"


def test_the_table_sets_the_atlas_s_honest_rows_beside_its_clairvoyant_verdicts(tmp_path):
    store, atlas = tmp_path / "store", tmp_path / "atlas"
    atlas.mkdir()
    for name in (atlas_files.SUMMARY, atlas_files.deals_file("dick-1883", "default")):
        shutil.copy(ROOT / hf.ATLAS / name, atlas / name)
    api.simulate("dick-1883", "greedy", 6, first=3, store=store, jobs=1)
    api.simulate("castles-in-spain", "greedy", 3, store=store, jobs=1)  # a variant the copied atlas lacks
    honest.ship(store, atlas)
    lines = {r["variant"]: r for r in hf.honest_table(atlas).to_dict("records")}
    table = atlas_files.read_deals(atlas, "dick-1883", "default", ("deal", "verdict"))
    verdicts = dict(zip(atlas_files.deal_numbers(table), table.column("verdict").to_pylist(), strict=True))
    assert (lines["dick-1883"]["first"], lines["dick-1883"]["last"], lines["dick-1883"]["deals"]) == (3, 8, 6)
    assert lines["dick-1883"]["atlas_won"] == sum(verdicts[d] == "won" for d in range(3, 9))
    assert pd.isna(lines["castles-in-spain"]["atlas_won"])
    text = hf.honest_markdown(pd.DataFrame(list(lines.values())))
    assert "| dick-1883 | 3-8 | `greedy@1` |" in text and "not in the atlas" in text


def test_the_benchmark_appends_one_csv_row_a_setting_under_one_header(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("benchmark_honest", ROOT / "benchmarks" / "honest.py")
    honest = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, honest)
    spec.loader.exec_module(honest)
    path = tmp_path / "curve.csv"
    honest.curve("dick-1883", 1, 5, ["greedy"], 0, csv_path=path)
    honest.curve("dick-1883", 1, 5, ["greedy", "heuristic"], 0, csv_path=path)
    rows = pd.read_csv(path)
    assert list(rows.columns) == list(honest.CSV_COLUMNS) and list(rows["spec"]) == ["greedy", "greedy", "heuristic"]
    assert rows["deals"].eq(5).all() and rows["honest"].all()
    assert len(hf.load_curve(path)) == 3
