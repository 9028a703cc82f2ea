"""The report and study commands as a newcomer meets them: the answer grid in one table when the terminal
is wide enough, a report of chosen runs that says what it left out, charts as PNG too, report folders that
one command does not overwrite for another unasked, and `play` saying why the game ended."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.output import MAKER
from sim.engine import TERMINATIONS
from sim.rules import find_variant
from studies.runner import run
from studies.spec import RunSpec

DEALS = 60
PLAYERS = ("random", "random:home_first=true", "greedy")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("cli-design") / "store"
    for v in ("bakers-dozen", "dick-1883", "spanish-patience"):
        for s in PLAYERS:
            run(RunSpec(find_variant(v), s, DEALS), path, jobs=1)
    return path


def _cli(*args: str, columns: int = 200) -> str:
    r = CliRunner().invoke(main, list(args), env={"COLUMNS": str(columns)})
    assert r.exit_code == 0, r.output
    return r.output


def test_the_answer_grid_is_one_table_when_it_fits_and_folds_only_when_it_must(store, tmp_path):
    wide = _cli("report", str(store), "--out", str(tmp_path / "a"), columns=200)
    header = next(line for line in wide.splitlines() if "┃" in line and "variant" in line)
    assert all(p in header for p in ("random", "greedy")), wide  # every player a column of one table
    # one row of the grid (the lines below it, about the shipped atlas's column, may name the variant too)
    assert sum("bakers-dozen" in line for line in wide.splitlines() if "│" in line) == 1
    narrow = _cli("report", str(store), "--out", str(tmp_path / "b"), "--force", columns=40)
    assert max(len(line) for line in narrow.splitlines() if "│" in line) <= 40
    assert "greedy" in narrow and "bakers-dozen" in narrow


def test_report_chooses_runs_and_says_what_it_left_out(store, tmp_path):
    out = tmp_path / "chosen"
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(out), "--variant", "bakers-dozen",
                                  "--strategy", "random"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    html = (out / "report.html").read_text()
    assert "Left out at your request (--variant bakers-dozen --strategy random): 7 run(s)" in html
    assert "note: Left out at your request" in r.output
    grid = html[html.index("<table"): html.index("</table>")]
    assert "greedy" not in grid and "dick-1883" not in grid and "random (home first)" in grid  # players by name, not spec
    keys = [p.name for p in store.iterdir() if p.is_dir()]
    one = _cli("report", str(store), "--out", str(tmp_path / "one"), "--runs", keys[0][:8])
    assert "8 run(s)" in (tmp_path / "one" / "report.html").read_text() and one


@pytest.mark.parametrize("option", [["--variant", "nope"], ["--strategy", "nobody"], ["--runs", "zzzz"],
                                    ["--variant", "dick-1883", "--strategy", "greedy", "--runs", "0000000000000000"]])
def test_a_selection_that_names_no_run_is_one_line_and_exit_2(store, tmp_path, option):
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "x"), *option])
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "no run" in r.output and not (tmp_path / "x").exists()


def test_report_png_writes_each_chart_as_png_beside_its_svg(store, tmp_path):
    _cli("report", str(store), "--out", str(tmp_path / "p"), "--png", "--strategy", "greedy")
    svgs = sorted(p.stem for p in (tmp_path / "p" / "charts").glob("*.svg"))
    assert svgs and sorted(p.stem for p in (tmp_path / "p" / "charts").glob("*.png")) == svgs
    assert (tmp_path / "p" / "charts" / f"{svgs[0]}.png").read_bytes()[:4] == b"\x89PNG"


def test_a_report_folder_is_not_overwritten_by_another_command_unless_forced(store, tmp_path):
    out = tmp_path / "mine"
    said = _cli("compare", "--variants", "bakers-dozen,dick-1883", "--strategy", "greedy", "--deals", str(DEALS),
                "--store", str(store), "--out", str(out), "-j", "1", "-q")
    assert f"report: compare wrote the folder {out}; another command replaces it only with --force" in said
    assert json.loads((out / MAKER).read_text()) == {"command": "compare"}
    before = (out / "report.html").read_text()
    r = CliRunner().invoke(main, ["tournament", "--strategies", "greedy,random", "--deals", str(DEALS), "--store",
                                  str(store), "--out", str(out), "-j", "1", "-q"])
    assert r.exit_code == 2 and "holds the report of `bakers-dozen compare`" in r.output and "--force" in r.output
    assert (out / "report.html").read_text() == before
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(out)])
    assert r.exit_code == 2 and (out / "report.html").read_text() == before
    _cli("compare", "--variants", "bakers-dozen,dick-1883", "--strategy", "greedy", "--deals", str(DEALS),
         "--store", str(store), "--out", str(out), "-j", "1", "-q")  # its own folder: rewritten without a word
    said = _cli("tournament", "--strategies", "greedy,random", "--deals", str(DEALS), "--store", str(store),
                "--out", str(out), "-j", "1", "-q", "--force")
    assert "report: tournament wrote the folder" in said and json.loads((out / MAKER).read_text()) == {"command": "tournament"}


def test_every_termination_has_words_and_play_prints_them():
    from bakers_dozen.games import ended

    phrases = [ended(t) for t in TERMINATIONS]
    assert len(set(phrases)) == len(TERMINATIONS) and ended(None) not in phrases
    out = _cli("play", "--deal", "1", "--strategy", "random")
    last = out.strip().splitlines()[-1]
    assert last.startswith("outcome: lost (") and any(f"({p})" in last for p in phrases), last


def test_loky_retiring_a_grown_worker_prints_no_warning():
    from studies import backends

    message = ("A worker stopped while some jobs were given to the executor. This can be caused by a too short "
               "worker timeout or by a memory leak.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backends.worker_pool(1)
        warnings.warn_explicit(message, UserWarning, "process_executor.py", 1,
                               module="joblib.externals.loky.process_executor")
        warnings.warn_explicit("another of loky's warnings", UserWarning, "process_executor.py", 2,
                               module="joblib.externals.loky.process_executor")
        warnings.warn_explicit(message, UserWarning, "mine.py", 1, module="mine")
    backends.close_pools()
    assert [str(w.message) for w in caught] == ["another of loky's warnings", message]
