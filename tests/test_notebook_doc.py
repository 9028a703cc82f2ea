"""docs/notebook.md: every Python block of the page runs, in order, in one namespace (as a notebook would)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "notebook.md"


def blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)


@pytest.mark.slow
def test_the_notebook_page_runs(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    code = blocks()
    assert len(code) >= 5
    for i, block in enumerate(code):
        exec(compile(block, f"{DOC.name} block {i + 1}", "exec"), namespace)  # noqa: S102 (the page's own code)
    assert (tmp_path / "game.html").stat().st_size > 10_000
    assert (tmp_path / "dick-3.svg").read_text(encoding="utf-8").startswith("<svg")
    assert namespace["game"]._repr_svg_().startswith("<svg")
    assert namespace["analysis"].verdicts[namespace["k"] + 1] == "lost"
    solved = namespace["solved"]
    assert solved.summary["deals"] == 20 == len(solved.to_frame()) and solved.summary["verify_failed"] == 0
    assert list(namespace["variants"].summary["variant"]) == ["bakers-dozen", "dick-1883"]
    assert len(namespace["variants"].to_frame()) == 600
    ranked = namespace["ranked"]
    assert sorted(ranked.tables["Ranking"]["strategy"]) == ["greedy", "heuristic"]
    assert ranked.report == tmp_path / "tournament" / "report.html" and ranked.report.stat().st_size > 10_000
    tuned = namespace["tuned"]
    assert len(tuned.to_frame()) >= 3 and tuned.summary["confirm"]["deals"] == 200
    assert tuned.best.startswith("heuristic")


def test_the_api_draws_and_refuses_in_one_line():
    from bakers_dozen import api
    from sim.errors import UserError

    assert api.draw(api.deal("bakers-dozen", 1))._repr_svg_().count('data-card=') == 52
    with pytest.raises(UserError, match="variant"):
        api.deal("no-such-variant", 1)
    with pytest.raises(UserError):
        api.play("bakers-dozen", 1, "no-such-strategy")
