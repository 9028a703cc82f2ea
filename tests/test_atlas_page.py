"""The guide's atlas page is made from the atlas: `make atlas-docs` rewrites its table and chart from whatever rows
summary.csv holds (and refuses an atlas that disagrees with itself), the page shipped shows the summary shipped, and
its pandas and DuckDB examples run on the shipped files."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reports import charts
from reports.atlas_page import (
    END,
    README_BLOCK,
    START,
    AtlasPageError,
    chart_table,
    main,
    refresh,
    rungs_run,
    summary_markdown,
    table_markdown,
    winnable,
    with_block,
)
from studies.atlas import read_summary, shipped
from tests.atlas_helpers import BAKERS, make_atlas, verdicts

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = shipped()
PAGE = ROOT / "docs" / "atlas.md"


def _page(tmp_path: Path) -> Path:
    page = tmp_path / "atlas.md"
    page.write_text(f"# Atlas\n\nBefore.\n\n{START}\n\nold table\n\n{END}\n\nAfter.\n")
    return page


def test_the_table_shows_every_row_with_its_deals_interval_and_clairvoyance(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1)),
                                            ("bakers-dozen", BAKERS, "pysol", verdicts(1998, 2, unknown=3, timeout=2))])
    rows = read_summary(atlas / "summary.csv")
    rows[1]["clairvoyant"] = "True"
    text = table_markdown(rows).splitlines()
    answer, counts = text[:4], text[7:]
    assert len(text) == 11 and text[4] == text[6] == ""
    # the answer first: the win rate and its interval within six short columns
    assert answer[0] == "| variant | numbering | deals | win rate | 95% interval |  |"
    assert answer[2].startswith("| `bakers-dozen` | toolkit (seed 0) | 1-10 | 90.00% | ")
    assert answer[3].startswith("| `bakers-dozen` | PySolFC | 1-2,003 | 99.75% | ") and answer[3].endswith("| clairvoyant |")
    # then the counts behind it
    assert "stopped by the clock" in counts[0]
    assert counts[2] == "| `bakers-dozen` | toolkit (seed 0) | 10 | 9 | 1 | 0 | 0 | 0 |"
    assert counts[3] == "| `bakers-dozen` | PySolFC | 2,003 | 1,998 | 2 | 3 | 2 | 0 |"
    assert rungs_run("0: nodes=4000000, seconds=600.0; 1: nodes=30000000; 2: nodes=1, capacity_states=20000000") == "0-2"
    # rows from files without the clock count: no such column
    assert "stopped by the clock" not in table_markdown([{**r, "timeout": None} for r in rows])
    assert "| – |" in table_markdown([{**rows[0], "timeout": None}, rows[1]])


MEASURE = """<script>window.addEventListener('load', () => {
  const table = document.querySelector('article table');
  const wrap = table.closest('.md-typeset__scrollwrap') || table.parentElement;
  const heads = Object.fromEntries([...table.querySelectorAll('th')].map(h => [h.textContent.trim(),
                                                                               h.getBoundingClientRect().right]));
  const out = document.createElement('pre'); out.id = 'measured';
  out.textContent = JSON.stringify({heads, right: wrap.getBoundingClientRect().right, scroll: wrap.scrollWidth,
                                    client: wrap.clientWidth});
  document.body.appendChild(out);
});</script>"""


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (CI installs it)")
@pytest.mark.skipif(importlib.util.find_spec("mkdocs") is None, reason="mkdocs is not installed (pip install -e '.[docs]')")
@pytest.mark.parametrize("width", [1024, 1280])
def test_the_built_pages_first_table_shows_the_win_rate_and_interval_without_scrolling(tmp_path, width):
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "mkdocs", "build", "--quiet", "--site-dir", str(site)], cwd=ROOT, check=True,
                   timeout=600, capture_output=True)
    probe = site / "atlas-probe.html"
    probe.write_text((site / "atlas.html").read_text(encoding="utf-8").replace("</body>", MEASURE + "</body>"))
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},800",
                          "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         check=True, capture_output=True, text=True, timeout=180).stdout
    m = json.loads(re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    assert m["scroll"] <= m["client"], m  # the table needs no horizontal scroll
    assert max(m["heads"]["win rate"], m["heads"]["95% interval"]) <= min(m["right"], width), m


def test_the_block_between_the_markers_is_replaced_and_nothing_else(tmp_path):
    page = _page(tmp_path).read_text()
    new = with_block(page, "| a |\n|---|")
    assert new.startswith("# Atlas\n\nBefore.\n\n" + START) and new.endswith(END + "\n\nAfter.\n")
    assert "old table" not in new and "| a |" in new
    assert with_block(new, "| a |\n|---|") == new
    with pytest.raises(AtlasPageError, match="no block"):
        with_block("# no markers\n", "x")


def test_refresh_writes_the_page_and_the_chart_from_the_atlas(tmp_path):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1)),
                                            ("other", "0123456789ab", "default", verdicts(5, 5))])
    page, chart = _page(tmp_path), tmp_path / "chart.png"
    assert main(["--atlas", str(atlas), "--page", str(page), "--chart", str(chart)]) == 0
    text = page.read_text()
    assert "| `bakers-dozen` |" in text and "| `other` |" in text and "old table" not in text
    assert chart.read_bytes().startswith(b"\x89PNG")


def test_the_readme_list_has_a_line_a_variant_with_both_numberings_and_its_range():
    def row(variant, source, won, lost, unknown, clairvoyant="False"):
        return {"variant": variant, "source": source, "first": 1, "last": won + lost + unknown,
                "deals": won + lost + unknown, "won": won, "lost": lost, "unknown": unknown, "clairvoyant": clairvoyant}

    rows = [row("b", "pysol", 99725, 267, 8), row("b", "default", 997116, 2561, 323), row("c", "default", 9490, 510, 0,
                                                                                         "True")]
    assert summary_markdown(rows).splitlines() == [
        "- `b`: 99.71-99.74% of deals 1-1,000,000 (2,561 proven lost, 323 unknown); PySolFC's numbering: "
        "99.725-99.733% of deals 1-100,000 (267 proven lost, 8 unknown).",
        "- `c`: 94.90% of deals 1-10,000 (510 proven lost, none unknown), for a player who sees the face-down cards.",
    ]
    assert winnable(row("d", "default", 1, 0, 1)) == "50.00-100.00%"


def test_refresh_puts_the_list_into_the_readme_when_asked(tmp_path, capsys):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    readme = tmp_path / "README.md"
    readme.write_text(f"# Top\n\n{README_BLOCK.start}\nold\n{README_BLOCK.end}\n\nAfter.\n")
    page, chart = _page(tmp_path), tmp_path / "chart.png"
    assert main(["--atlas", str(atlas), "--page", str(page), "--chart", str(chart), "--readme", str(readme)]) == 0
    assert README_BLOCK.get(readme.read_text()) == summary_markdown(read_summary(atlas / "summary.csv"))
    assert "90.00% of deals 1-10 (1 proven lost, none unknown)" in readme.read_text()
    readme.write_text("# no block\n")
    assert main(["--atlas", str(atlas), "--page", str(page), "--chart", str(chart), "--readme", str(readme)]) == 2
    assert readme.read_text() == "# no block\n" and "README.md: the page has no block" in capsys.readouterr().err


def test_an_atlas_that_disagrees_with_itself_changes_nothing(tmp_path, capsys):
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    (atlas / "summary.csv").write_text((atlas / "summary.csv").read_text().replace(",10,9,1,0,", ",10,8,2,0,"))
    page, chart = _page(tmp_path), tmp_path / "chart.png"
    before = page.read_text()
    with pytest.raises(AtlasPageError, match="does not agree with itself"):
        refresh(atlas, page, chart)
    assert main(["--atlas", str(atlas), "--page", str(page), "--chart", str(chart)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "summary won 8, rows 9" in err
    assert page.read_text() == before and not chart.exists()
    assert main(["--atlas", str(tmp_path / "none"), "--page", str(page), "--chart", str(chart)]) == 2


def test_the_chart_draws_one_line_per_row_with_its_interval(tmp_path):
    rows = read_summary(SHIPPED / "summary.csv")
    table = chart_table(rows)
    fig = charts.winnability(table, "title")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(rows)
    assert labels[0].startswith(f"{rows[0]['variant']} (") and f"n={rows[0]['deals']:,}" in labels[0]
    low, high = ax.get_xlim()
    assert low <= min(r["ci_low"] for r in rows) and high >= 1.0
    charts.pyplot().close(fig)


def test_the_shipped_page_shows_the_shipped_summary():
    text = PAGE.read_text(encoding="utf-8")
    block = text[text.index(START) + len(START): text.index(END)].strip()
    assert block == table_markdown(read_summary(SHIPPED / "summary.csv")), (
        "docs/atlas.md's table is not studies/atlas/data/summary.csv's: run `make atlas-docs`")
    assert (ROOT / "docs" / "atlas-winnability.png").is_file()
    readme = README_BLOCK.get((ROOT / "README.md").read_text(encoding="utf-8"))
    assert readme == summary_markdown(read_summary(SHIPPED / "summary.csv")), (
        "the README's atlas list is not studies/atlas/data/summary.csv's: run `make atlas-docs`")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.S)


def test_the_pandas_example_runs_on_the_shipped_files():
    (code,) = _blocks("python")
    names: dict = {}
    exec(code.replace("studies/atlas/data/", f"{SHIPPED.as_posix()}/"), names)  # noqa: S102 - the page's own example
    summary = read_summary(SHIPPED / "summary.csv")
    bakers = next(r for r in summary if r["variant"] == "bakers-dozen" and r["source"] == "default")
    assert len(names["lost"]) == bakers["lost"] and int(names["counts"]["won"]) == bakers["won"]
    assert len(names["rates"]) == len(summary)
    assert names["skip"] == {int(line.split(",")[0]) for line in
                             (SHIPPED / "pysol-bakers-dozen-not-winnable.csv").read_text().splitlines()[1:]}


def test_the_duckdb_examples_run_on_the_shipped_files():
    duckdb = pytest.importorskip("duckdb")
    (sql,) = _blocks("sql")
    statements = [s.strip() for s in sql.replace("studies/atlas/data/", f"{SHIPPED.as_posix()}/").split(";") if s.strip()]
    results = [duckdb.sql(s).fetchall() for s in statements]
    summary = read_summary(SHIPPED / "summary.csv")
    bakers = next(r for r in summary if r["variant"] == "bakers-dozen" and r["source"] == "default")
    assert dict(results[0]) == {v: bakers[v] for v in ("won", "lost", "unknown") if bakers[v]}
    assert len(results[1]) == len(summary)
    assert len(results[2]) == next(r for r in summary if r["variant"] == "bakers-dozen" and r["source"] == "pysol")["lost"] \
        + next(r for r in summary if r["variant"] == "bakers-dozen" and r["source"] == "pysol")["unknown"]
