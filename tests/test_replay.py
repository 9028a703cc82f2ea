"""`replay`: a self-contained HTML page that steps through a game, checked as text and in headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main

CHROMIUM = shutil.which("chromium")


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """A heuristic's lost game of deal 1 (won from its start): its record, its analysis and its replay page with the analysis."""
    tmp = tmp_path_factory.mktemp("replay")
    run = CliRunner().invoke
    played = run(main, ["play", "--json", "-d", "1", "-s", "heuristic"])
    assert played.exit_code == 0, played.output
    record = tmp / "game.json"
    record.write_text(played.output, encoding="utf-8")
    analysed = run(main, ["analyse", str(record), "--json", "--nodes", "200000"])
    assert analysed.exit_code == 0, analysed.output
    analysis = tmp / "analysis.json"
    analysis.write_text(analysed.output, encoding="utf-8")
    html = tmp / "game.html"
    r = run(main, ["replay", str(record), "--analysis", str(analysis), "--out", str(html)])
    assert r.exit_code == 0, r.output
    return json.loads(played.output), json.loads(analysed.output), html


def test_the_page_holds_every_position_the_moves_and_the_losing_move(pages):
    record, analysis, html = pages
    text = html.read_text(encoding="utf-8")
    game = json.loads(re.search(r'<script type="application/json" id="game">(.*?)</script>', text, re.S).group(1))
    assert game["moves"] == record["moves"] and len(game["steps"]) == len(record["moves"])  # one change per move
    assert game["verdicts"] == analysis["verdicts"] and game["losing"] == analysis["losing_move"]
    k = analysis["losing_move"]
    assert f"<b>{k + 1}. {record['moves'][k].replace('>', '&gt;')}</b>" in text
    assert f"Instead, <b>{analysis['alternative'].replace('>', '&gt;')}</b>" in text


def test_the_page_holds_no_remote_references(pages):
    text = pages[2].read_text(encoding="utf-8")
    assert not re.search(r"\b(src|href)\s*=|@import|url\(", text)
    assert set(re.findall(r"https?://[^\s\"'<>]*", text)) <= {"http://www.w3.org/2000/svg"}  # a namespace name, not a fetch


def test_an_analysis_of_another_game_is_refused(pages, tmp_path):
    record, analysis, html = pages
    other = tmp_path / "other.json"
    other.write_text(json.dumps({**analysis, "moves": analysis["moves"][:-1]}), encoding="utf-8")
    game = html.parent / "game.json"
    r = CliRunner().invoke(main, ["replay", str(game), "--analysis", str(other), "--out", str(tmp_path / "x.html")])
    assert r.exit_code == 2 and "another move list" in r.output
    r = CliRunner().invoke(main, ["replay", str(game), "--out", str(tmp_path / "x.txt")])
    assert r.exit_code == 2 and "allowed file types" in r.output


def _dom(page, tmp_path, name: str) -> str:
    """The page's DOM after its scripts ran in headless Chromium."""
    r = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={tmp_path / ('profile-' + name)}", "--virtual-time-budget=3000", "--dump-dom", page],
        check=True, capture_output=True, timeout=120, text=True,
    )
    return r.stdout


def _shown(dom: str) -> tuple[list[str], str]:
    """The cards of the position drawn, and the move-list entry marked current."""
    shown = re.findall(r'<div id="board"[^>]*>(.*?)</div>', dom, re.S)
    assert len(shown) == 1
    current = re.findall(r'<li class="[^"]*current[^"]*"[^>]*>([^<]*)', dom)
    assert len(current) == 1
    return re.findall(r'data-card="(\w\w)"', shown[0]), current[0]


@pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (CI installs it)")
def test_in_chromium_cards_are_drawn_and_a_step_changes_the_position(pages, tmp_path):
    record, _, html = pages
    cards, current = _shown(_dom(html.as_uri(), tmp_path, "start"))
    assert len(cards) == 52 and current.startswith("start")
    # the page's own controls, pressed: the forward button once, then the right arrow key; then back by the left arrow
    after, current = _shown(_dom(_pressing(html, tmp_path, "next", "ArrowRight"), tmp_path, "two"))
    assert current.startswith(f"2. {record['moves'][1].replace('>', '&gt;')}")
    assert after != cards
    back, current = _shown(_dom(_pressing(html, tmp_path, "next", "ArrowRight", "ArrowLeft"), tmp_path, "one"))
    assert current.startswith(f"1. {record['moves'][0].replace('>', '&gt;')}")
    assert back not in (cards, after)
    assert _shown(_dom(html.as_uri() + "#1", tmp_path, "hash"))[0] == back


def _pressing(html, tmp_path, *keys: str) -> str:
    """The address of a copy of the page that, once loaded, clicks the button with id ``next`` or presses keys."""
    acts = "".join(f"document.getElementById('{k}').click();" if k == "next" else
                   f"document.dispatchEvent(new KeyboardEvent('keydown', {{key: '{k}'}}));" for k in keys)
    page = tmp_path / f"pressing-{len(keys)}.html"
    page.write_text(html.read_text(encoding="utf-8").replace("</body>", f"<script>{acts}</script></body>"), encoding="utf-8")
    return page.as_uri()
