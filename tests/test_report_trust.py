"""A rebuilt report reuses only what the previous build wrote, byte for byte: a chart, a replay page or a loss
analysis edited, replaced or linked since is made again, never carried (nor inlined) into the new report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.ledger import LEDGER, Ledger

EVIL = b"<script>alert('carried')</script>"


def _build(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "rep"
    r = CliRunner().invoke(main, [*args, "--store", str(tmp_path / "st"), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return out


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A small tournament's report, built once; each test rebuilds it from a copy of its store."""
    tmp = tmp_path_factory.mktemp("trust")
    out = _build(tmp, "tournament", "--strategies", "greedy,random", "-n", "40", "-j", "1", "-q")
    return tmp, out


def test_a_chart_edited_since_the_last_build_is_drawn_again_not_inlined(report):
    tmp, out = report
    charts = sorted((out / "charts").glob("*.svg"))
    assert charts
    clean = {p.name: p.read_bytes() for p in charts}
    charts[0].write_bytes(clean[charts[0].name].replace(b"</svg>", EVIL + b"</svg>"))  # its digest tag intact
    charts[1].write_bytes(b'<svg xmlns="http://www.w3.org/2000/svg">' + EVIL + b"</svg>")  # replaced whole
    again = CliRunner().invoke(main, ["report", str(tmp / "st"), "--out", str(out), "--force"])
    assert again.exit_code == 0, again.output
    html = (out / "report.html").read_bytes()
    assert EVIL not in html and b"<script" not in html
    for p in charts:
        assert EVIL not in p.read_bytes() and len(p.read_bytes()) > 0.9 * len(clean[p.name])  # drawn again


def test_an_unchanged_chart_is_reused_and_the_ledger_lists_what_the_build_wrote(report, monkeypatch):
    tmp, out = report
    CliRunner().invoke(main, ["report", str(tmp / "st"), "--out", str(out), "--force"])
    ledger = json.loads((out / "charts" / LEDGER).read_text(encoding="utf-8"))["files"]
    assert set(ledger) == {p.name for p in (out / "charts").glob("*.svg")}
    drawn: list[str] = []
    monkeypatch.setattr("reports.charts._draw_task", lambda task: drawn.append(task[3]))
    again = CliRunner().invoke(main, ["report", str(tmp / "st"), "--out", str(out), "--force"])
    assert again.exit_code == 0, again.output
    assert drawn == []  # every chart came from the last build


def test_a_ledger_edited_to_match_a_changed_input_is_not_enough_without_the_bytes(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    first = Ledger(old, None)
    old.mkdir()
    (old / "a.svg").write_bytes(b"<svg>a</svg>")
    (old / "b.html").write_bytes(b"<html>b</html>")
    (old / "c.json").write_bytes(b"[]")
    for name in ("a.svg", "b.html", "c.json"):
        first.wrote(name, f"inputs of {name}")
    first.seal()
    (old / "a.svg").write_bytes(b"<svg>a</svg>" + EVIL)  # edited
    (old / "b.html").unlink()
    (old / "b.html").symlink_to(old / "c.json")  # a link in its place
    second = Ledger(new, old)
    assert second.take("a.svg", "inputs of a.svg") is None
    assert second.take("b.html", "inputs of b.html") is None
    assert second.take("c.json", "other inputs") is None
    assert second.take("d.json", "inputs of d.json") is None  # never written
    assert second.take("c.json", "inputs of c.json") == new / "c.json" and (new / "c.json").read_bytes() == b"[]"


@pytest.mark.parametrize("ledger", [b"not json", b"[]", b'{"files": []}', b'{"files": {"a.svg": "x"}}',
                                    b'{"files": {"a.svg": {"sha256": 1, "inputs": "i"}}}'])
def test_an_unreadable_ledger_trusts_nothing(tmp_path, ledger):
    (tmp_path / "a.svg").write_bytes(b"<svg/>")
    (tmp_path / LEDGER).write_bytes(ledger)
    assert Ledger(tmp_path / "new", tmp_path).take("a.svg", "i") is None


@pytest.mark.slow
def test_a_replay_page_edited_or_replaced_since_the_last_build_is_made_again(tmp_path):
    # heuristic version 1's guard: it loses deals greedy wins, whose replay pages are tampered with here
    out = _build(tmp_path, "tournament", "--strategies", "greedy;heuristic:guard=position", "-n", "200", "-j", "1", "-q")
    pages = sorted((out / "replays").glob("*.html"))
    assert pages, "no replay pages to tamper with"
    clean = {p.name: p.read_bytes() for p in pages}
    pages[0].write_bytes(clean[pages[0].name].replace(b"</body>", EVIL + b"</body>"))
    if len(pages) > 1:
        pages[1].write_bytes(b"<html>" + EVIL + b"</html>")
    again = CliRunner().invoke(main, ["report", str(tmp_path / "st"), "--out", str(out), "--force"])
    assert again.exit_code == 0, again.output
    for p in pages[:2]:
        assert p.read_bytes() == clean[p.name]
