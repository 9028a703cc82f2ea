"""What the command line shows on an 80-column terminal, and where its verbs keep results by default.

Rich shortens a cell that does not fit with '…'; every table and the progress
bar must instead fold or be narrow enough, so nothing a user reads is cut.
"""

from __future__ import annotations

import io

import click
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from bakers_dozen.report import COMPARE_OUT, DEFAULT_OUT, TOURNAMENT_OUT, compare, demo, tournament
from bakers_dozen.simulate import simulate
from studies.progress import RichProgress
from studies.spec import DEFAULT_STORE

WIDTH = 80


def _fits(text: str) -> None:
    """Every line fits WIDTH columns and no cell was shortened with an ellipsis (the closing
    ``report: PATH`` line is plain text that a terminal wraps, as long as the paths are)."""
    too_wide = [line for line in text.splitlines() if len(line.rstrip()) > WIDTH and not line.startswith("report: ")]
    assert not too_wide, too_wide
    assert "…" not in text, text


def _run80(*args: str) -> str:
    r = CliRunner().invoke(main, list(args), env={"COLUMNS": str(WIDTH)})
    assert r.exit_code == 0, r.output
    return r.output


@pytest.mark.parametrize("args", [("variants",), ("strategies",), ("solve", "--deals", "62-65", "--source", "pysol")])
def test_listing_and_solving_fit_80_columns(args):
    """The verbs' tables fold long cells rather than cutting them."""
    out = _run80(*args)
    _fits(out)
    assert out.count("\n") > 5


def test_solve_prints_counts_with_separators():
    out = _run80("solve", "--deals", "1-3", "--param", "nodes=1000")
    assert "deals: 3  won:" in out  # the summary lines are there, formatted by the same code as larger runs
    _fits(out)


def test_compare_and_tournament_tables_fit_80_columns(tmp_path):
    """Tables too wide for 80 columns are printed as one block per row, nothing cut."""
    store, common = str(tmp_path / "s"), ["-j", "1", "-q", "--deals", "40"]
    out = _run80("compare", "--variants", "bakers-dozen,dick-1883,spanish-patience", "-s", "random:home_first=true",
                 "--store", store, "--out", str(tmp_path / "c"), *common)
    _fits(out)
    assert "difference vs bakers-dozen" in out
    out = _run80("tournament", "--strategies", "greedy;random:home_first=true;random", "--store", store,
                 "--out", str(tmp_path / "t"), *common)
    _fits(out)
    assert "McNemar" in out


@pytest.mark.parametrize("total, done, played, wins", [(40_000, 0, 1_234, 127), (100_000_000, 99_000_000, 999_999, 999_999),
                                                       (1, 0, 0, 0)])
def test_progress_bar_fits_80_columns(total, done, played, wins):
    buf = io.StringIO()
    bar = RichProgress(file=buf)
    bar.start(total, done, 0, "bakers-dozen[face_down=3] / heuristic:preset=balanced,allow_dig=False")
    bar._tally.start -= 1e-3  # a fast rate: the widest figures
    bar.advance(played, wins)
    bar.stop()
    _fits(buf.getvalue())
    assert f"{total:,}" in buf.getvalue()


def _default(command: click.Command, name: str) -> object:
    return next(p.default for p in command.params if p.name == name)


def test_verbs_share_one_store_and_keep_their_own_report_folders():
    assert {_default(c, "store_dir") for c in (simulate, compare, tournament, demo)} == {DEFAULT_STORE}
    outs = [_default(c, "out_dir") for c in (demo, compare, tournament)]
    assert outs == [DEFAULT_OUT, COMPARE_OUT, TOURNAMENT_OUT] and len(set(outs)) == 3


def test_default_folders_in_the_current_directory(tmp_path, monkeypatch):
    """compare with its defaults, then report of the default store: each in its own folder of the current
    directory (in this process, moved there: the default paths are relative, and resolved at each call; the
    console script's own process is tested in test_cli)."""
    monkeypatch.chdir(tmp_path)
    for args in (["compare", "--variants", "bakers-dozen", "-s", "greedy", "--deals", "5", "-j", "1", "-q"],
                 ["report", DEFAULT_STORE]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
    assert (tmp_path / DEFAULT_STORE).is_dir() and (tmp_path / COMPARE_OUT / "report.html").is_file()
    assert (tmp_path / f"{DEFAULT_STORE}-report" / "report.html").is_file()
    assert not (tmp_path / DEFAULT_OUT).exists()
