"""The answer on the first screen (headless Chromium): at 1,024 x 800 the finding and the grid's first row, at
1,280 x 800 the whole grid of a default-study-sized report (nine variants, seven players and the atlas)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from reports.render import Cell, Report, Section, to_html

MEASURE = """<script>
window.addEventListener('load', () => {
  const lead = document.querySelector('p.lead').getBoundingClientRect();
  const rows = [...document.querySelectorAll('table.grid tbody tr')].map(r => r.getBoundingClientRect().bottom);
  const out = document.createElement('pre'); out.id = 'measured';
  out.textContent = JSON.stringify({height: window.innerHeight, lead: lead.bottom, rows});
  document.body.appendChild(out);
});
</script>"""


SCREEN = 800


def _page(out: Path) -> Path:
    """A report shaped as the default study's: its title, a finding as long as the default study's, the grid."""
    players = ["random (home first)", "greedy", "heuristic", "lookahead (rollouts)", "honest sampling (fast)",
               "perfect play (solver)", "perfect play (atlas)"]
    cell = Cell("99.71–99.74%", "99.70–99.75% · 1,000,000 deals · 335 unknown", "x")
    variants = ["bakers-dozen", "kings-into-empty", "dick-1883", "spanish-patience", "castles-in-spain", "good-measure",
                "other-suit", "bakers-dozen[face_down=1]", "bakers-dozen[face_down=2]"]
    grid = pd.DataFrame({"variant": variants, **{p: [cell] * len(variants) for p in players}})
    finding = " ".join(["Perfect play wins most often on dick-1883 and bakers-dozen (99.90% each)."] * 10)
    sections = [Section("Win rate by variant and player", paragraphs=["legend " * 80], lead=[finding],
                        tables=[("Win rates", grid)], colours={"Win rates": grid.map(lambda _: "#aaccaa")}),
                *(Section(f"Section {i}", paragraphs=["text"]) for i in range(21))]
    return to_html(Report("Baker's Dozen and its family: the default study", ["method " * 60], sections), out)


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Chromium is not installed (CI installs it)")
@pytest.mark.parametrize("width", [1024, 1280])
def test_the_first_screen_holds_the_finding_and_the_grid(tmp_path, width):
    probe = tmp_path / "probe.html"
    probe.write_text(_page(tmp_path).read_text().replace("</body>", MEASURE + "</body>"))
    dom = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                          f"--user-data-dir={tmp_path / 'profile'}", f"--window-size={width},800",
                          "--virtual-time-budget=5000", "--dump-dom", probe.as_uri()],
                         check=True, capture_output=True, text=True, timeout=180).stdout
    m = json.loads(re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S).group(1).replace("&quot;", '"'))
    # the screen is the 800 px asked for: a screenshot at this size shows 800 px of page, while --dump-dom's
    # innerHeight leaves out window decorations (657 px in Chromium 14x), so it is not the measure
    assert m["lead"] <= SCREEN
    shown = m["rows"][0] if width == 1024 else m["rows"][-1]
    assert shown <= SCREEN, m
