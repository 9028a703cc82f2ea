"""The atlas against hostile input (issue 61): a forged verdict is caught by solving a sample again, two commands
writing one folder lose no row, a damaged summary or deal file is one line before any work, a report refuses a deal
file that repeats a deal, a rung names a parameter once; and (issue 62) a row that knows more is replaced only with
--force, and `atlas` writes to ./bakers-dozen-atlas unless told."""

from __future__ import annotations

import multiprocessing
import os
import warnings
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from atlas_helpers import BAKERS, make_atlas, verdicts
from click.testing import CliRunner

import studies.solving
from bakers_dozen.cli import main
from reports.atlas import AtlasWarning, perfect_play
from sim.rules import find_variant
from studies.atlas import check_atlas, read_summary, shipped
from studies.atlas.writing import AtlasWriteError, folder_lock, write_variant

BUDGET = "0: nodes=2000, seconds=600.0, capacity_states=5000000"
"""Rung 0's budget as `atlas --param nodes=2000 --last-rung 0` records it."""
RUN = ["--param", "nodes=2000", "--last-rung", "0", "--jobs", "1", "--quiet"]


def _invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def _one_line(result, *expected: str) -> str:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 2 and len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), result.output
    for text in expected:
        assert text in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def no_solving(monkeypatch):
    """Any deal solved fails the test: every refusal must come before the work."""
    def solved(*args, **kwargs):
        raise AssertionError("work started before the input was checked")

    monkeypatch.setattr(studies.solving, "solve_spec", solved)


def _reusable(folder: Path, deals: int = 10) -> Path:
    """A small atlas (bakers-dozen deals 1..deals) whose row `atlas -d 1-N --param nodes=2000 --last-rung 0` may
    reuse: its budgets are that command's."""
    from studies.atlas import write_summary

    make_atlas(folder, [("bakers-dozen", BAKERS, "default", verdicts(deals - 1, 1))])
    write_summary([{**r, "budgets": BUDGET} for r in read_summary(folder / "summary.csv")], folder / "summary.csv")
    return folder


# ---- a forged verdict (issue 61, 3) ---------------------------------------------------------------------------------

def test_a_forged_verdict_is_refused_by_reuse_and_named_by_verify(tmp_path):
    src = tmp_path / "src"
    done = _invoke("atlas", "-v", "bakers-dozen", "-d", "464-469", *RUN, "--store", str(tmp_path / "s0"), "--out", str(src))
    assert done.exit_code == 0, done.output
    table = pq.read_table(src / "bakers-dozen.parquet")
    rows = table.to_pylist()
    lost = next(r for r in rows if r["verdict"] == "lost")  # deal 467 is lost in one node
    assert _invoke("atlas", "verify", str(src), "--store", str(tmp_path / "v0"), "-q").exit_code == 0
    # forge it: the lost deal won, the summary adjusted to agree, so the files agree with themselves
    for r in rows:
        if r["deal"] == lost["deal"]:
            r["verdict"] = "won"
    from studies.atlas import deal_table, summary_row, write_deals, write_summary

    forged = deal_table([{**r, "termination": None} for r in rows])
    write_deals(forged, src / "bakers-dozen.parquet")
    old = read_summary(src / "summary.csv")[0]
    write_summary([summary_row(forged, **{k: old[k] for k in ("variant", "fingerprint", "source", "seed",
                                                             "solver_version", "budgets", "clairvoyant", "command")})],
                  src / "summary.csv")
    assert check_atlas(src) == []  # the files agree: only solving again can tell
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "464-472", *RUN, "--reuse", str(src), "--store", str(tmp_path / "s1"),
                "--out", str(tmp_path / "out"))
    _one_line(r, "not reused", f"deal {lost['deal']}: recorded won", "now finds it lost")
    assert not (tmp_path / "out" / "summary.csv").exists()
    v = _invoke("atlas", "verify", str(src), "--store", str(tmp_path / "v1"), "-q")
    assert v.exit_code == 1 and f"deal {lost['deal']}: recorded won (rung 0), rung 0 now finds it lost" in " ".join(
        v.output.split())


# ---- two writers, one folder (issue 61, 4) --------------------------------------------------------------------------

def _write_rows(out: str, name: str, rounds: int) -> None:
    rules = find_variant(name)
    rows = [{"deal": d, "verdict": "won", "nodes": 1, "rung": 0, "termination": None} for d in range(1, 11)]
    for _ in range(rounds):
        write_variant(Path(out), rules, "default", 0, rows, "0: nodes=1", "11", f"bakers-dozen atlas -v {name}")


def test_two_commands_writing_one_folder_lose_no_row(tmp_path):
    filler = [(f"filler{i:04d}", BAKERS, "default", verdicts(3, 0)) for i in range(1500)]  # a large summary: a slow
    make_atlas(tmp_path, filler)                                                         # read-merge-write
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_rows, args=(str(tmp_path), name, 3))
               for name in ("good-measure", "other-suit", "castles-in-spain")]
    for w in writers:
        w.start()
    for w in writers:
        w.join(300)
        assert w.exitcode == 0
    names = {r["variant"] for r in read_summary(tmp_path / "summary.csv")}
    assert {"good-measure", "other-suit", "castles-in-spain"} <= names and len(names) == 1503


def test_a_writer_that_cannot_get_the_lock_says_so_and_writes_nothing(tmp_path):
    with folder_lock(tmp_path):
        with pytest.raises(AtlasWriteError, match="another atlas command has been writing there"):
            with folder_lock(tmp_path, wait=0.2):
                pass
    assert list(tmp_path.iterdir()) == []


# ---- damaged files: one line, before any work (issue 61, 5) ---------------------------------------------------------

def _damage_summary(folder: Path, change) -> None:
    path = folder / "summary.csv"
    path.write_bytes(change(path.read_bytes()))


def _field(name: str, value: str):
    """A change to the summary: its data row's ``name`` field set to ``value``."""
    def change(data: bytes) -> bytes:
        header, row = data.decode().splitlines()[:2]
        import csv
        import io

        fields = next(csv.reader([row]))
        fields[header.split(",").index(name)] = value
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerow(fields)
        return f"{header}\n{out.getvalue()}".encode()
    return change


def _replace_deals(table: pa.Table):
    def change(folder: Path) -> None:
        pq.write_table(table, folder / "bakers-dozen.parquet")
    return change


def _deal_file(action):
    def change(folder: Path) -> None:
        path = folder / "bakers-dozen.parquet"
        action(path)
    return change


def _truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:200])


def _as_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _as_link(path: Path) -> None:
    target = path.with_name("elsewhere.parquet")
    path.rename(target)
    path.symlink_to(target)


GOOD = pa.table({"deal": pa.array(range(1, 11), pa.int64()), "verdict": ["won"] * 9 + ["lost"],
                 "nodes": pa.array([1] * 10, pa.int64()), "rung": pa.array([0] * 10, pa.int8())})

SUMMARY_DAMAGE = {
    "a count that is not a number": (_field("won", "nine"), "won 'nine' is not a whole number"),
    "a huge count": (_field("deals", "1" + "0" * 30), "is not a whole number"),
    "a float seed": (_field("seed", "0.5"), "seed '0.5' is not a whole number"),
    "a rate that is not a number": (_field("win_rate", "x"), "win_rate 'x' is not a rate"),
    "a binary summary": (lambda data: b"\x00\xff\xfe" * 100, "cannot be read as an atlas summary"),
    "a short row": (lambda data: data.rsplit(b",", 3)[0] + b"\n", "fewer fields than the header"),
    "a long row": (lambda data: data.rstrip(b"\n") + b",extra,more\n", "more fields than the header"),
    "a missing column": (lambda data: data.replace(b"fingerprint", b"fingerprunt", 1), "no column fingerprint"),
}
DEAL_DAMAGE = {
    "not Parquet": (_deal_file(lambda p: p.write_text("deal,verdict\n1,won\n")), "cannot be read as an atlas deal file"),
    "truncated": (_deal_file(_truncate), "cannot be read as an atlas deal file"),
    "a folder": (_deal_file(_as_folder), "is a folder, not a regular file"),
    "a link": (_deal_file(_as_link), "is a symbolic link"),
    "no verdict column": (_replace_deals(GOOD.drop_columns(["verdict"])), "no column verdict"),
    "no rung column": (_replace_deals(GOOD.drop_columns(["rung"])), "no column rung"),
    "a null deal": (_replace_deals(GOOD.set_column(0, "deal", pa.array([None, *range(2, 11)], pa.int64()))),
                    "without a number"),
    "a verdict that is none": (_replace_deals(GOOD.set_column(1, "verdict", pa.array(["maybe"] + ["won"] * 9))),
                               "without a verdict"),
}


@pytest.mark.parametrize("case", sorted(SUMMARY_DAMAGE))
def test_reuse_of_a_damaged_summary_is_one_line_before_any_work(tmp_path, no_solving, case):
    change, message = SUMMARY_DAMAGE[case]
    src = _reusable(tmp_path / "src")
    _damage_summary(src, change)
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-10", *RUN, "--reuse", str(src), "--store", str(tmp_path / "s"),
                "--out", str(tmp_path / "out"))
    _one_line(r, message)
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("case", sorted(DEAL_DAMAGE))
def test_reuse_of_a_damaged_deal_file_is_one_line_before_any_work(tmp_path, no_solving, case):
    change, message = DEAL_DAMAGE[case]
    src = _reusable(tmp_path / "src")
    change(src)
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-10", *RUN, "--reuse", str(src), "--store", str(tmp_path / "s"),
                "--out", str(tmp_path / "out"))
    _one_line(r, message)
    assert not (tmp_path / "s").exists()


def test_a_missing_reuse_folder_is_reported_missing(tmp_path, no_solving):
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-10", *RUN, "--reuse", str(tmp_path / "nowhere"),
                "--store", str(tmp_path / "s"), "--out", str(tmp_path / "out"))
    _one_line(r, "--reuse", "no such folder")
    (tmp_path / "empty").mkdir()
    _one_line(_invoke("atlas", "-v", "bakers-dozen", "-d", "1-10", *RUN, "--reuse", str(tmp_path / "empty"),
                      "--store", str(tmp_path / "s"), "--out", str(tmp_path / "out")), "holds no summary.csv")


@pytest.mark.parametrize("case", sorted(SUMMARY_DAMAGE))
def test_an_out_folder_with_a_damaged_summary_is_refused_before_any_work(tmp_path, no_solving, case):
    change, message = SUMMARY_DAMAGE[case]
    out = _reusable(tmp_path / "out")
    _damage_summary(out, change)
    before = (out / "summary.csv").read_bytes()
    r = _invoke("atlas", "-v", "good-measure", "-d", "1-10", *RUN, "--store", str(tmp_path / "s"), "--out", str(out))
    _one_line(r, message)
    assert (out / "summary.csv").read_bytes() == before and not (out / "good-measure.parquet").exists()


# ---- silent acceptance (issue 61, 7) --------------------------------------------------------------------------------

def test_a_report_refuses_a_deal_file_that_repeats_a_deal(tmp_path):
    rows = verdicts(9, 1)
    rows[8]["deal"] = 8  # deals 1-8, 8 again, 10: the counts, range and size still add up
    atlas = make_atlas(tmp_path / "atlas", [("bakers-dozen", BAKERS, "default", rows)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert perfect_play(atlas, [BAKERS]) == {}
    assert any(isinstance(w.message, AtlasWarning) and "more than once" in str(w.message) for w in caught)


def test_a_rung_that_names_a_parameter_twice_is_refused(tmp_path, no_solving):
    for verb in (["atlas", "-v", "bakers-dozen", "-d", "1-3", "--out", str(tmp_path / "o")],
                 ["solve", "-d", "1-3", "--escalate"]):
        r = _invoke(*verb, "--rung", "nodes=5,nodes=6", "--store", str(tmp_path / "s"))
        _one_line(r, "'nodes' given twice")


# ---- the shipped atlas is never overwritten by accident (issue 62, 3) -----------------------------------------------

def test_a_row_that_knows_less_replaces_one_only_with_force(tmp_path, no_solving):
    out = _reusable(tmp_path / "out")
    before = (out / "summary.csv").read_bytes()
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-4", *RUN, "--store", str(tmp_path / "s"), "--out", str(out))
    _one_line(r, "holds deals 1-10", "would lose the verdicts of deals 5-10 (6 deals)", "--force")
    from studies.atlas import write_summary

    summary = out / "summary.csv"
    write_summary([{**r, "budgets": f"{BUDGET}; 1: nodes=9"} for r in read_summary(summary)], summary)
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-10", *RUN, "--store", str(tmp_path / "s"), "--out", str(out))
    _one_line(r, "rungs 0-1", "would lose rungs 1-1 of its ladder", "--force")
    assert (out / "summary.csv").read_bytes() != before and not (tmp_path / "s").exists()


def test_force_replaces_the_row(tmp_path):
    out = _reusable(tmp_path / "out")
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-4", *RUN, "--force", "--store", str(tmp_path / "s"),
                "--out", str(out))
    assert r.exit_code == 0, r.output
    assert [(x["first"], x["last"]) for x in read_summary(out / "summary.csv")] == [(1, 4)]


def test_atlas_writes_to_a_folder_of_the_users_and_leaves_the_shipped_atlas_alone(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shipped_files = {p.name: p.stat().st_mtime_ns for p in shipped().iterdir()}
    for _ in range(2):
        r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-3", *RUN, "--store", "s")
        assert r.exit_code == 0, r.output
    assert [x["deals"] for x in read_summary(tmp_path / "bakers-dozen-atlas" / "summary.csv")] == [3]
    assert {p.name: p.stat().st_mtime_ns for p in shipped().iterdir()} == shipped_files
    assert not (tmp_path / "data").exists()


# ---- looking a deal up (issue 62, 2) --------------------------------------------------------------------------------

def test_show_answers_from_the_shipped_atlas_wherever_it_runs(tmp_path, monkeypatch):
    import json

    monkeypatch.chdir(tmp_path)
    r = _invoke("atlas", "show", "-v", "bakers-dozen", "--deal", "417", "--source", "pysol")
    assert r.exit_code == 0 and "deal 417 (PySolFC's numbering): not winnable (proven lost)" in r.output, r.output
    answer = json.loads(_invoke("atlas", "show", "-v", "good-measure", "--unknown", "--json").output)
    row = next(x for x in read_summary(shipped() / "summary.csv") if (x["variant"], x["source"]) == ("good-measure", "default"))
    assert len(answer["unknown_deals"]) == row["unknown"] == answer["unknown"]
    assert answer["winnable_low"] == row["won"] / row["deals"]
    own = make_atlas(tmp_path / "mine", [("bakers-dozen", BAKERS, "default", verdicts(9, 1))])
    r = _invoke("atlas", "show", "-v", "bakers-dozen", "--deal", "10", "--atlas", str(own))
    assert "deal 10 (this toolkit's numbering): not winnable" in r.output and str(own) in r.output
    _one_line(_invoke("atlas", "show", "-v", "bakers-dozen", "--deal", "11", "--atlas", str(own)), "not in the atlas")
    _one_line(_invoke("atlas", "show", "-v", "bakers-dozen", "--atlas", str(tmp_path / "none")), "no such folder")
    _one_line(_invoke("atlas", "show", "-v", "other-suit", "--atlas", str(own)), "no row for other-suit")


def test_the_old_form_of_atlas_still_runs(tmp_path):
    r = _invoke("atlas", "-v", "bakers-dozen", "-d", "1-2", *RUN, "--store", str(tmp_path / "s"), "--out",
                str(tmp_path / "o"))
    assert r.exit_code == 0 and (tmp_path / "o" / "bakers-dozen.parquet").exists(), r.output
    assert os.path.exists(tmp_path / "o" / "summary.csv")


# ---- the API (issue 62, 4) ------------------------------------------------------------------------------------------

def test_the_api_looks_up_escalates_and_refuses_in_one_line(tmp_path, no_solving):
    import json

    from bakers_dozen import api
    from sim.errors import UserError

    answer = api.atlas("bakers-dozen", 417, source="pysol")
    assert answer == json.loads(_invoke("atlas", "show", "-v", "bakers-dozen", "--deal", "417", "--source", "pysol",
                                        "--json").output)
    assert answer["deal"]["verdict"] == "lost"
    for call, message in ((lambda: api.atlas("no-such"), "unknown variant"),
                          (lambda: api.atlas("bakers-dozen", 0), "deal"),
                          (lambda: api.atlas("bakers-dozen", listing="maybe"), "listing"),
                          (lambda: api.escalate("bakers-dozen", (5, 3)), "after the last"),
                          (lambda: api.escalate("bakers-dozen", (1, 3), rungs=[{"nodes": -1}]), "nodes"),
                          (lambda: api.atlas_run("bakers-dozen", (1, 4), out=_reusable(tmp_path / "a"),
                                                 params={"nodes": 2000}, last_rung=0), "--force")):
        with pytest.raises(UserError, match=message):
            call()
