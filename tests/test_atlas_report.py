"""The report's perfect play reads the winnability atlas: the atlas's figure for the same rules (by fingerprint, not
name), with its deal count and interval, beside the report's own live figure; an atlas file missing or damaged, or a
row that does not add up, costs one warning line and never the report."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.atlas import COLUMN, AtlasWarning, atlas_folder, cell, grid_column, perfect_play
from reports.render import Cell
from sim.rules import VARIANTS, Rules, find_variant
from studies.atlas import read_summary, shipped
from studies.runner import RunSpec, run
from tests.atlas_helpers import BAKERS, make_atlas, verdicts

SHIPPED = shipped()
SPANISH = find_variant("spanish-patience").fingerprint


def _figures(folder: Path | None, fingerprints) -> tuple[dict, list[str]]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figures = perfect_play(folder, fingerprints)
    return figures, [str(w.message) for w in caught if issubclass(w.category, AtlasWarning)]


def test_rows_match_by_rules_fingerprint_in_the_toolkit_numbering_the_row_with_most_deals_first(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [
        ("renamed", BAKERS, "default", verdicts(18, 2)),  # a name that is no preset's: the fingerprint decides
        ("bakers-dozen", BAKERS, "default", verdicts(9, 1)),
        ("bakers-dozen", BAKERS, "pysol", verdicts(30, 0)),  # PySolFC's numbering is not the report's
        ("spanish-patience", "0123456789ab", "default", verdicts(5, 0)),  # a preset's name on other rules
    ])
    figures, said = _figures(atlas, [BAKERS, SPANISH])
    assert said == []
    assert list(figures) == [BAKERS]
    f = figures[BAKERS]
    assert (f.variant, f.deals, f.won, f.lost, f.first, f.last, f.win_rate) == ("renamed", 20, 18, 2, 1, 20, 0.9)
    assert f.command == "bakers-dozen atlas --variant renamed --deals 1-20"
    text = cell(f).text
    assert text.startswith("90.00% (") and "of 20 deals (1–20)" in text
    assert f"{f.ci_low:.2%}–{f.ci_high:.2%}" in text


def test_unknown_and_clock_stopped_deals_make_the_cell_a_range(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(7, 1, unknown=2, timeout=1))])
    (f,) = _figures(atlas, [BAKERS])[0].values()
    assert (f.unknown, f.timeout) == (2, 1)
    c = cell(f)
    assert c.main == "70.00–90.00%"
    assert "2 unknown, 1 stopped by the clock" in c.detail


def test_files_from_before_the_timeout_column_are_shown(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 0, unknown=1))])
    table = pd.read_parquet(atlas / "bakers-dozen.parquet").drop(columns="timeout")
    table.to_parquet(atlas / "bakers-dozen.parquet")
    rows = list(csv.DictReader((atlas / "summary.csv").open()))
    with (atlas / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=[c for c in rows[0] if c != "timeout"], lineterminator="\n")
        writer.writeheader()
        writer.writerows({k: v for k, v in r.items() if k != "timeout"} for r in rows)
    figures, said = _figures(atlas, [BAKERS])
    assert said == [] and figures[BAKERS].timeout is None and figures[BAKERS].unknown == 1
    assert cell(figures[BAKERS]).detail.endswith("1 unknown")


def _damage(atlas: Path, change) -> None:
    rows = list(csv.DictReader((atlas / "summary.csv").open()))
    change(rows[0])
    with (atlas / "summary.csv").open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


@pytest.mark.parametrize(("change", "said"), [
    (lambda r: r.update(won="8"), "won 8 + lost 1 + unknown 0 is not its 10 deals"),
    (lambda r: r.update(win_rate="0.95"), "its win rate or interval is not that of its counts"),
    (lambda r: r.update(ci_high="0.999"), "its win rate or interval is not that of its counts"),
    (lambda r: r.update(deals="x"), "a count or rate is not a number"),
    (lambda r: r.update(timeout="3"), "timeout 3 is not among its 0 unknown deals"),
    (lambda r: r.update(first="5"), "10 deals do not fit in deals 5-10"),
    (lambda r: r.update(variant="../bakers-dozen"), "its variant is not a name its deal file can have"),
])
def test_a_row_that_does_not_add_up_is_not_shown_and_said_in_one_warning(tmp_path, change, said):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    _damage(atlas, change)
    figures, warned = _figures(atlas, [BAKERS])
    assert figures == {}
    assert len(warned) == 1 and said in warned[0] and "bakers-dozen" in warned[0], warned


def test_a_row_its_deal_file_does_not_count_is_not_shown(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    other = make_atlas(tmp_path / "other", [("bakers-dozen", BAKERS, "default", verdicts(8, 2))])
    (atlas / "bakers-dozen.parquet").write_bytes((other / "bakers-dozen.parquet").read_bytes())
    figures, warned = _figures(atlas, [BAKERS])
    assert figures == {} and len(warned) == 1 and "its deal file counts won 8, not 9, lost 2, not 1" in warned[0]


@pytest.mark.parametrize(("damage", "said"), [
    (lambda a: (a / "summary.csv").unlink(), "summary.csv does not exist"),
    (lambda a: (a / "summary.csv").write_bytes(b"variant,deals\n\xff\xfe\x00\n"), "summary.csv cannot be read"),
    (lambda a: (a / "summary.csv").write_text("variant,deals\nbakers-dozen,10\n"), "is not an atlas summary (no column"),
    (lambda a: (a / "bakers-dozen.parquet").unlink(), "its deal file bakers-dozen.parquet does not exist"),
    (lambda a: (a / "bakers-dozen.parquet").write_bytes(b"PAR1 not parquet"), "its deal file bakers-dozen.parquet cannot"),
    (lambda a: pd.DataFrame({"deal": [1]}).to_parquet(a / "bakers-dozen.parquet"), "bakers-dozen.parquet cannot be read"),
])
def test_a_missing_or_damaged_file_is_one_warning(tmp_path, damage, said):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    damage(atlas)
    figures, warned = _figures(atlas, [BAKERS])
    assert figures == {} and len(warned) == 1 and said in warned[0], warned


def test_the_atlas_is_the_one_given_else_the_shipped_one_wherever_the_report_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # an empty folder: no checkout around
    assert atlas_folder(None) == SHIPPED and (SHIPPED / "summary.csv").is_file()
    assert atlas_folder(tmp_path / "elsewhere") == tmp_path / "elsewhere"


def test_the_atlas_column_stands_after_the_live_perfect_play_and_only_where_the_rules_match(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    figures, _ = _figures(atlas, [BAKERS])
    text = pd.DataFrame({"variant": ["bakers-dozen", "mine"], "greedy": ["1%", "2%"],
                         "perfect play (solver)": ["99%", "98%"], "other": ["x", "y"]})
    colours = pd.DataFrame({c: ["", ""] for c in text.columns})
    out, hues, used = grid_column(text, colours, {"bakers-dozen": BAKERS, "mine": "0123456789ab"}, figures)
    assert list(out.columns) == ["variant", "greedy", "perfect play (solver)", COLUMN, "other"]
    assert list(hues.columns) == list(out.columns)
    assert isinstance(out[COLUMN][0], Cell) and out[COLUMN][1] == "–" and hues[COLUMN][1] == ""
    assert used == [figures[BAKERS]]
    # no match: the grid as it was
    same, _, none = grid_column(text, colours, {"bakers-dozen": "0123456789ab"}, figures)
    assert none == [] and list(same.columns) == list(text.columns)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """Random play on Baker's Dozen and on a variant file of other rules."""
    root = tmp_path_factory.mktemp("atlas-report")
    mine = Rules(name="mine", kings_to_bottom=False)
    assert mine.fingerprint not in {v.rules.fingerprint for v in VARIANTS}
    for rules in (find_variant("bakers-dozen"), mine):
        run(RunSpec(rules, "random", 20), root / "store", jobs=1)
    return root / "store"


def test_the_report_shows_the_atlas_figure_for_the_rules_it_holds_and_the_live_ones_elsewhere(store, tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    done = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep"), "--atlas", str(atlas)])
    assert done.exit_code == 0, done.output
    md = (tmp_path / "rep" / "report.md").read_text()
    header = next(line for line in md.splitlines() if line.startswith("| variant |"))
    assert header.rstrip(" |").endswith(COLUMN)
    bakers = next(line for line in md.splitlines() if line.startswith("| bakers-dozen |"))
    mine = next(line for line in md.splitlines() if line.startswith("| mine |"))
    assert "90.00% (" in bakers and "of 10 deals (1–10)" in bakers
    assert mine.rstrip(" |").endswith("–")
    assert "bakers-dozen atlas --variant bakers-dozen --deals 1-10" in md
    assert "warning" not in done.output


def test_a_damaged_atlas_is_one_warning_line_and_the_report_is_written(store, tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    (atlas / "summary.csv").write_bytes(b"\x00\xff garbage")
    done = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep"), "--atlas", str(atlas)])
    assert done.exit_code == 0, done.output
    warned = [line for line in done.output.splitlines() if line.startswith("bakers-dozen: warning:")]
    assert len(warned) == 1 and "summary.csv cannot be read" in warned[0]
    md = (tmp_path / "rep" / "report.md").read_text()
    assert COLUMN not in md and "summary.csv cannot be read" in md


def test_without_atlas_the_report_reads_the_shipped_atlas_from_any_folder(store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    done = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep")])
    assert done.exit_code == 0, done.output
    assert COLUMN in (tmp_path / "rep" / "report.md").read_text()


def test_the_report_shows_every_shipped_row_of_the_toolkit_numbering():
    rows = [r for r in read_summary(SHIPPED / "summary.csv") if r["source"] == "default"]
    assert rows
    figures, said = _figures(SHIPPED, [r["fingerprint"] for r in rows])
    assert said == []
    for r in rows:
        f = figures[r["fingerprint"]]
        if f.variant == r["variant"]:
            assert (f.deals, f.won, f.lost, f.unknown) == (r["deals"], r["won"], r["lost"], r["unknown"])


def test_compare_shows_the_atlas_it_is_given(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    done = CliRunner().invoke(main, ["compare", "--variants", "bakers-dozen,spanish-patience", "--strategy", "random",
                                     "--deals", "10", "--jobs", "1", "--quiet", "--store", str(tmp_path / "store"),
                                     "--out", str(tmp_path / "rep"), "--atlas", str(atlas)])
    assert done.exit_code == 0, done.output
    lines = (tmp_path / "rep" / "report.md").read_text().splitlines()
    assert "of 10 deals (1–10)" in next(line for line in lines if line.startswith("| bakers-dozen |"))
    assert next(line for line in lines if line.startswith("| spanish-patience |")).rstrip(" |").endswith("–")
