"""Numeric options and output paths of solve, compare, tournament, demo and report: a value outside its
range, or an output that cannot be written, is one line naming the option and what is allowed, exit 2,
before any deal is played."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner

import bakers_dozen.report
import bakers_dozen.solve
import studies.solving
from bakers_dozen.cli import main
from bakers_dozen.limits import MAX_RUN_DEALS, MAX_SOLVE_DEALS, Bounded, OptionRangeError
from bakers_dozen.simulate import simulate
from strategies.play import ArenaError, timeout_seconds
from studies.spec import RunnerError, check_deal_timeout, max_jobs


@pytest.fixture(autouse=True)
def no_work(monkeypatch):
    """Any deal played fails the test: every refusal must come first."""
    def played(*args, **kwargs):
        raise AssertionError("work started before the input was checked")

    monkeypatch.setattr(bakers_dozen.report, "run_study", played)
    monkeypatch.setattr(bakers_dozen.solve, "solve_deals", played)
    monkeypatch.setattr(studies.solving, "solve_spec", played)


def one_line(args: list[str], *expected: str) -> str:
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    assert isinstance(r.exception, SystemExit), r.exception
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), r.output
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


HUGE = "9" * 60
SOLVE = [
    (["--deals", "1", "--tt-mb", "1e12"], "--tt-mb 1e12 is out of range; allowed: 0.01.."),
    (["--deals", "1", "--tt-mb", "0"], "--tt-mb 0 is out of range"),
    (["--deals", "1", "--tt-mb", "nan"], "--tt-mb 'nan' is not a finite number"),
    (["--deals", "1-100000000000"], f"allowed: at most {MAX_SOLVE_DEALS:,} per command"),
    (["--deals", f"1-{HUGE}"], "is not a range"),
    (["--deals", "99999999999999999990"], "out of range"),
    (["--deals", "1", "--nodes", "1e13"], "--nodes 1e13 is out of range; allowed: 1..1000000000000"),
    (["--deals", "1", "--nodes", "0"], "--nodes 0 is out of range"),
    (["--deals", "1", "--nodes", "2.5"], "--nodes '2.5' is not a whole number"),
    (["--deals", "1", "--nodes", HUGE], "--nodes 999"),
    (["--deals", "1", "--seconds", "-1"], "--seconds -1 is out of range; allowed: 0..86400"),
    (["--deals", "1", "--seconds", "inf"], "--seconds 'inf' is not a finite number"),
    (["--deals", "1", "--seconds", "1e400"], "is not a finite number"),
    (["--deals", "1", "--jobs", "100000"], f"--jobs 100000 is out of range; allowed: 1..{max_jobs()}"),
    (["--deals", "1", "--jobs", "0"], "--jobs 0 is out of range"),
    (["--deals", "1", "--seed", "1e23"], "--seed 1e23 is out of range"),
    (["--deals", "1", "--seed", "-3"], "--seed -3 is out of range"),
    (["--deals", "1", "--out", "/nonexistent/x.csv"], "the folder /nonexistent does not exist"),
    (["--deals", "1", "--out", "x.txt"], "allowed file types are .csv and .parquet"),
    (["--deals", "1", "--out", "/tmp/" + "x" * 300 + "/y.csv"], "File name too long"),
]


@pytest.mark.parametrize(("args", "message"), SOLVE)
def test_solve_refuses_at_once(args, message):
    one_line(["solve", *args], message)


def test_solve_out_that_is_a_folder_or_unwritable(tmp_path, monkeypatch):
    folder = tmp_path / "x.csv"
    folder.mkdir()
    one_line(["solve", "--deals", "1", "--out", str(folder)], "is a folder")
    one_line(["solve", "--deals", "1", "--out", str(tmp_path / "file.csv" / "x.csv")], "does not exist")

    def read_only(self, *args, **kwargs):
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr("pathlib.Path.mkdir", read_only)
    one_line(["solve", "--deals", "1", "--out", str(tmp_path / "x.parquet")], "not writable")


def test_solve_tables_must_fit_in_memory(monkeypatch):
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: 1000.0)  # a small machine, whatever this one is
    one_line(["solve", "--deals", "1", "--tt-mb", "600", "--jobs", "2"], "MiB in all", "lower tt_mb or --jobs")


STUDY = [
    (["--deals", "1e10"], f"--deals 1e10 is out of range; allowed: 1..{MAX_RUN_DEALS}"),
    (["--deals", "0"], "--deals 0 is out of range"),
    (["--deals", "ten"], "--deals 'ten' is not a whole number"),
    (["--deals", "10", "--first", "99999999999999999990"], "out of range"),
    (["--deals", "10", "--first", HUGE], "--first 999"),
    (["--deals", "10", "--first", "0"], "--first 0 is out of range"),
    (["--deals", "10", "--first", "4611686018427387900"], "runs to deal 4611686018427387909, past the last one"),
    (["--deals", "10", "--seed", "-1"], "--seed -1 is out of range"),
    (["--deals", "10", "--seed", "1e23"], "--seed 1e23 is out of range"),
    (["--deals", "10", "--source", "pysol", "--seed", "3"], "takes no seed"),
    (["--deals", "10", "--jobs", "100000"], f"allowed: 1..{max_jobs()}"),
    (["--deals", "10", "--jobs", "-1"], "--jobs -1 is out of range"),
    (["--deals", "10", "--out", "/etc/passwd"], "it is an existing file"),
    (["--deals", "10", "--out", "/etc/passwd/x"], "is a file, so no folder can be made under it"),
    (["--deals", "10", "--out", "/tmp/" + "x" * 300 + "/y"], "File name too long"),
    (["--deals", "10", "--out", "/tmp/" + "y/" * 3000], "File name too long"),
]


@pytest.mark.parametrize("verb", ["compare", "tournament"])
@pytest.mark.parametrize(("args", "message"), STUDY)
def test_compare_and_tournament_refuse_at_once(tmp_path, verb, args, message):
    one_line([verb, *args, "--store", str(tmp_path / "s"), *([] if "--out" in args else ["--out", str(tmp_path / "o")])],
             message)
    assert not (tmp_path / "s").exists() and not (tmp_path / "o").exists()


@pytest.mark.parametrize(("args", "message"), [
    (["--deals", "0"], "--deals 0 is out of range"),
    (["--deals", "1e12"], f"allowed: 1..{MAX_RUN_DEALS}"),
    (["--slow-deals", "-1"], "--slow-deals -1 is out of range"),
    (["--slow-deals", "nan"], "is not a whole number"),
    (["--jobs", "100000"], "--jobs 100000 is out of range"),
    (["--out", "/etc/passwd"], "it is an existing file"),
])
def test_demo_refuses_at_once(tmp_path, args, message):
    one_line(["demo", *args, "--store", str(tmp_path / "s"), *([] if "--out" in args else ["--out", str(tmp_path / "o")])],
             message)


def test_a_bad_strategy_or_variant_later_in_a_study_stops_it_before_the_first_run(tmp_path):
    one_line(["tournament", "--strategies", "greedy,nope", "--deals", "10", "--store", str(tmp_path / "s")], "nope")
    colour = tmp_path / "gm-colour.toml"  # PySolFC's Good Measure renames suits: refused where colours count
    colour.write_text('base = "good-measure"\nname = "gm-colour"\nbuild = "alternate-colour"\n')
    one_line(["compare", "--variants", f"bakers-dozen,{colour}", "--source", "pysol", "--deals", "10",
              "--store", str(tmp_path / "s")], "pysol source's Good Measure renames suits", "'gm-colour'")


def test_bounded_accepts_what_it_allows():
    whole = Bounded(int, 1, 100)
    assert [whole.convert(v, None, None) for v in ("1", "1e2", "2_0", 7)] == [1, 100, 20, 7]
    real = Bounded(float, 0.0, lambda: 2.5)
    assert real.convert("2.5", None, None) == 2.5 and real.convert(0, None, None) == 0.0
    for bad in ("101", "0", "1.5", "x", "nan", True, "-inf"):
        with pytest.raises(OptionRangeError, match="allowed: 1..100"):
            whole.convert(bad, None, None)


def test_bounded_above_leaves_out_its_low_end():
    seconds = Bounded(float, 0.0, 86_400.0, above=True)
    assert seconds.convert("0.001", None, None) == 0.001 and seconds.convert("86400", None, None) == 86_400.0
    for bad in ("0", "-1", "86400.5", "nan", "soon"):
        with pytest.raises(OptionRangeError, match="allowed: above 0, at most 86400"):
            seconds.convert(bad, None, None)


@pytest.mark.parametrize("value", [0, -1, 1e-9, 1, 2.5, 86_400, 86_400.5, float("nan"), float("inf"), True, "1",
                                   np.float32(3.0), np.int64(0)])
def test_the_runner_the_arena_and_simulate_allow_the_same_deal_timeouts(value):
    def allows(check, error):  # noqa: ANN001, ANN202
        try:
            check(value)
        except error:
            return False
        return True

    runner = allows(check_deal_timeout, RunnerError)
    assert runner == allows(timeout_seconds, ArenaError)
    if not isinstance(value, str | bool):  # the command line reads numbers written out; the rest is the library's
        option = next(p for p in simulate.params if p.name == "deal_timeout")
        assert allows(lambda v: option.type.convert(str(v), option, None), OptionRangeError) == runner
