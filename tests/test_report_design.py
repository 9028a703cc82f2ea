"""The report as a reader meets it: it fits the window (headless Chromium at 1,280 and 1,024 px), a table of
contents links every section, headings are short and unique, charts hold no raw TeX, and a figure that saw
face-down cards says so in every table that shows it."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from reports.build import build
from reports.render import Cell, Report, Section, to_html, to_markdown
from sim.rules import Rules, find_variant
from studies.runner import run
from studies.spec import RunSpec

DEALS = 150
FACE_DOWN = Rules(name="bakers-dozen[face_down=1]", face_down=1)
PEEK = textwrap.dedent("""
    from strategies.greedy import GreedyStrategy

    class Peek(GreedyStrategy):
        name = "peek"
        peeks = True
""")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path, Report]:
    """A store with a variant comparison of a peeking strategy (face up and face down) and a tournament."""
    root = tmp_path_factory.mktemp("design")
    (root / "peek_plug.py").write_text(PEEK)
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)  # plug-ins load from the current folder
        store = root / "store"
        for rules in (find_variant("bakers-dozen"), FACE_DOWN):
            for spec in ("random:home_first=true", "peek_plug:Peek"):
                run(RunSpec(rules, spec, DEALS), store, jobs=1)
        # heuristic version 1's guard: on these deals it loses some that a weaker player wins (the upsets inspected)
        run(RunSpec(find_variant("bakers-dozen"), "heuristic:guard=position", DEALS), store, jobs=1)
        html, _, report = build(store, root / "report")
    return root / "report", html, report


def test_no_chart_holds_raw_tex(built):
    out, html, _ = built
    svgs = list((out / "charts").glob("*.svg"))
    assert svgs
    for svg in svgs:
        text = svg.read_text()
        assert "mathdefault" not in text and "$" not in text, svg.name
    assert "mathdefault" not in html.read_text()


def test_the_table_of_contents_links_every_section_once(built):
    _, html, report = built
    text = html.read_text()
    ids = re.findall(r"<h2 id='([^']+)'", text)
    nav = text[text.index("<nav"): text.index("</nav>")]
    assert len(ids) == len(report.sections) == len(set(ids))
    assert re.findall(r"href='#([^']+)'", nav) == ids


def test_headings_are_short_unique_and_name_strategies_without_parameters(built):
    _, html, report = built
    headings = [s.heading for s in report.sections]
    assert len(headings) == len(set(headings))
    assert not any(re.search(r"\w:\w+=", h) or "(clairvoyant)" in h for h in headings), headings
    random = next(s for s in report.sections if s.heading == "Variant comparison: random")
    assert random.tooltip == "random:home_first=True"
    assert f"title='{random.tooltip}'" in html.read_text()


def test_the_comparison_marks_clairvoyant_only_the_rows_that_saw_face_down_cards(built):
    _, _, report = built
    table = next(s for s in report.sections if s.heading == "Variant comparison: peek").tables[0][1]
    assert list(table["variant"]) == ["bakers-dozen", f"{FACE_DOWN.name} (clairvoyant)"]
    honest = next(s for s in report.sections if s.heading == "Variant comparison: random").tables[0][1]
    assert not honest["variant"].str.contains("clairvoyant").any()


def test_the_grid_shows_the_rate_large_and_its_details_small(built):
    _, html, _ = built
    grid = html.read_text().split("</table>")[0]
    assert "<span class='rate'>" in grid and "<span class='detail'>" in grid and " deals" in grid


def test_the_inspect_command_shows_the_loss_of_the_highest_ranked_loser(built):
    _, _, report = built
    section = next(s for s in report.sections if s.heading.startswith("Tournament on bakers-dozen,"))
    ranking, *_, dis = (df for _, df in section.tables)
    order = list(ranking["strategy"])
    assert len(dis)
    for cmd, lost in zip(dis["inspect"], dis["lost_by"], strict=True):
        loser = min((s for s in order if s in lost), key=order.index)
        assert cmd.endswith(f"--strategy {loser.removesuffix(' (clairvoyant)')}") or f"--strategy '{loser}" in cmd


def test_an_empty_table_says_none_instead_of_printing_its_headers(tmp_path):
    empty = pd.DataFrame({"deal": [], "won by": []})
    report = Report("t", [], [Section("Upsets", tables=[("Deals that disagree", empty)])])
    html, md = to_html(report, tmp_path).read_text(), to_markdown(report, tmp_path).read_text()
    assert "<table" not in html and "Deals that disagree: none." in html
    assert "| deal |" not in md and "Deals that disagree: none." in md


_MEASURE = """<script>
window.addEventListener('load', () => {
  const tables = [...document.querySelectorAll('table')].map(t => {
    const box = t.parentElement;
    return {caption: (t.caption || {}).textContent || '', scroll: t.scrollWidth, client: t.clientWidth,
            boxScroll: box.scrollWidth, boxClient: box.clientWidth};
  });
  const ids = [...document.querySelectorAll('h2[id]')].map(h => h.id);
  const links = [...document.querySelectorAll('nav a')].map(a => a.getAttribute('href').slice(1));
  const out = document.createElement('pre');
  out.id = 'measured';
  out.textContent = JSON.stringify({page: document.documentElement.scrollWidth, window: window.innerWidth,
                                    tables, ids, links});
  document.body.appendChild(out);
});
</script>"""


def _chromium(*args: str, profile: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         f"--user-data-dir={profile}", *args], check=True, capture_output=True, text=True, timeout=180)


def _widest(out: Path) -> Path:
    """A page with the widest tables a default study makes: a grid of seven variants by eight players whose
    cells carry every detail, and the appendix's thirteen columns with their longest values."""
    players = ["random:home_first=True", "greedy", "heuristic", "heuristic:preset=builder", "lookahead",
               "sampling:fast=true", "perfect play (solver)", "mine.module:VeryLongPluginStrategyName"]
    cell = Cell("90.60–93.50%", "88.63%–94.87% · 20,000 deals · 29 unknown · 3 errors · clairvoyant", "x")
    grid = pd.DataFrame({"variant": [f"castles-in-spain[face_down={k}]" for k in range(7)],
                         **{p: [cell] * 7 for p in players}})
    wide = pd.DataFrame({  # the appendix's columns, each with the longest value it takes
        "variant": "castles-in-spain[face_down=3]", "player": "heuristic:preset=balanced,allow_dig=False (clairvoyant)",
        "deals": "20,000", "deal range": "1–20,000, 30,001–40,000", "seed": 123456789, "wins": "19,980",
        "win rate": "99.90%", "95% interval": "99.44% – 99.98%", "wins verified": "12,345 of 19,980",
        "mean cards home": "51.99", "mean score": "25,999.9", "unknown": "20,000", "errors": "20,000"}, index=range(3))
    report = Report("widest", [], [Section("Grid", tables=[("Win rates", grid)],
                                           colours={"Win rates": grid.map(lambda _: "#aaccaa")}),
                                   Section("Wide", tables=[("Every run", wide)])])
    return to_html(report, out)


NEEDS_CHROMIUM = pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (CI installs it)")


@NEEDS_CHROMIUM
@pytest.mark.parametrize("width", [1280, 1024])
def test_at_this_width_no_table_is_clipped_and_the_page_does_not_scroll_sideways(built, tmp_path, width):
    _fits(built[1], tmp_path, width)


@NEEDS_CHROMIUM
@pytest.mark.parametrize("width", [1280, 1024])
def test_at_this_width_the_widest_tables_fit(tmp_path, width):
    _fits(_widest(tmp_path), tmp_path, width)


def _fits(html: Path, tmp_path: Path, width: int) -> None:
    """No table of ``html`` is clipped and the page does not scroll sideways at ``width`` pixels, in Chromium;
    the table of contents links every section."""
    probe = tmp_path / "probe.html"  # the report itself has no script: a copy with one measures it
    probe.write_text(html.read_text().replace("</body>", _MEASURE + "</body>"))
    dom = _chromium(f"--window-size={width},4000", "--virtual-time-budget=5000", "--dump-dom", probe.as_uri(),
                    profile=tmp_path / "profile").stdout
    found = re.search(r"<pre id=\"measured\">(.*?)</pre>", dom, re.S)
    assert found, dom[-2000:]
    m = json.loads(found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&"))
    assert m["window"] == width and m["page"] <= m["window"], m["page"]
    for t in m["tables"]:
        assert t["scroll"] <= t["client"] and t["boxScroll"] <= t["boxClient"], t
    assert m["links"] == m["ids"] and m["ids"]


def test_headings_repeated_by_the_data_are_numbered_and_names_shortened_only_where_they_stay_apart():
    from reports import grid
    from reports.build import _unique_headings

    sections = [Section("Tournament on x"), Section("Sweep"), Section("Tournament on x"), Section("Tournament on x")]
    _unique_headings(sections)
    assert [s.heading for s in sections] == ["Tournament on x", "Sweep", "Tournament on x (2)", "Tournament on x (3)"]
    names = grid.short_names(["solver:nodes=200000,seconds=1000000.0 (clairvoyant)", "heuristic:preset=builder",
                              "heuristic", "greedy"])
    assert names == {"solver:nodes=200000,seconds=1000000.0 (clairvoyant)": "perfect play (solver)",
                     "heuristic:preset=builder": "heuristic:preset=builder", "heuristic": "heuristic", "greedy": "greedy"}
    long = grid.short_names(["heuristic:preset=balanced,allow_dig=False,depth=12", "heuristic"])
    assert len(long["heuristic:preset=balanced,allow_dig=False,depth=12"]) == grid.SHORT_CHARS
