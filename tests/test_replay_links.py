"""A tournament's report links the deals it lists to replay pages of those very games."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main


@pytest.mark.slow
def test_a_tournament_report_links_its_upsets_to_replays_of_the_stored_games(tmp_path: Path) -> None:
    store, out = tmp_path / "store", tmp_path / "rep"
    # heuristic version 1's guard: it loses deals greedy wins, the upsets whose replays are linked
    r = CliRunner().invoke(main, ["tournament", "--strategies", "greedy;heuristic:guard=position", "-n", "200", "-j", "1", "-q",
                                  "--store", str(store), "--out", str(out)])
    assert r.exit_code == 0, r.output
    md = (out / "report.md").read_text(encoding="utf-8")
    table = md[md.index("Deals that disagree most"):]
    links = re.findall(r"\]\((replays/[^)]+\.html)\)", table.split("\n\n", 2)[1])
    assert links, "no replay links in the table of upsets"
    for link in links:
        page = (out / link).read_text(encoding="utf-8")
        assert "<svg" in page and "http://" not in page.replace("http://www.w3.org", "")
    html = (out / "report.html").read_text(encoding="utf-8")
    assert all(f"href='{link}'" in html for link in links)
    lost = [p for p in (out / "replays").glob("*.html") if "(lost" in p.read_text(encoding="utf-8")]
    assert lost and all('"verdicts":["' in p.read_text(encoding="utf-8") for p in lost)  # analysed losses carry verdicts

    again = CliRunner().invoke(main, ["report", str(store), "--out", str(out), "--force"])  # a rebuild reuses the pages
    assert again.exit_code == 0, again.output
    md2 = (out / "report.md").read_text(encoding="utf-8")
    assert re.findall(r"\]\((replays/[^)]+\.html)\)", md2[md2.index("Deals that disagree most"):].split("\n\n", 2)[1]) == links
    assert all((out / link).is_file() for link in links)
