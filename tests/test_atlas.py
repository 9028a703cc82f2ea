"""`bakers-dozen atlas`: every variant's deals decided by the ladder, written as a summary and one deal file a variant
that agree, resumed after a kill; and the atlas shipped in studies/atlas/data agrees with itself."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.rules import variant_names
from studies.atlas import SUMMARY_COLUMNS, check_atlas, interval, read_summary, shipped

SHIPPED = shipped()
SMALL = ["--param", "nodes=2000", "--rung", "nodes=200000", "--jobs", "1", "--quiet"]
"""Small budgets: bakers-dozen 31 and several good-measure deals among 28-35 are unknown at 2,000 nodes, and all but
one decided at 200,000, within seconds."""


def _atlas(tmp_path: Path, *args: str, out: str = "out", store: str = "store") -> Path:
    done = CliRunner().invoke(main, ["atlas", *args, *SMALL, "--store", str(tmp_path / store),
                                     "--out", str(tmp_path / out)])
    assert done.exit_code == 0, done.output
    return tmp_path / out


def test_the_summary_counts_the_deal_files_and_names_the_rung_that_decided_each_deal(tmp_path):
    out = _atlas(tmp_path, "-v", "bakers-dozen", "-v", "dick-1883", "--deals", "28-35", "--deals", "Dick 1883=1-4")
    assert check_atlas(out) == []
    rows = {r["variant"]: r for r in read_summary(out / "summary.csv")}
    assert list(rows) == ["bakers-dozen", "dick-1883"]
    bd = rows["bakers-dozen"]
    assert (bd["first"], bd["last"], bd["deals"], bd["won"] + bd["lost"] + bd["unknown"]) == (28, 35, 8, 8)
    assert (rows["dick-1883"]["first"], rows["dick-1883"]["last"]) == (1, 4)
    assert rows["dick-1883"]["clairvoyant"] == "True" and bd["clairvoyant"] == "False"
    assert bd["budgets"] == ("0: nodes=2000, seconds=600.0, capacity_states=5000000; "
                             "1: nodes=200000, seconds=600.0, capacity_states=5000000")
    assert bd["solver_version"] == "11"
    assert bd["command"].startswith("bakers-dozen atlas --variant bakers-dozen --deals 28-35 --source default --seed 0")
    assert (bd["ci_low"], bd["ci_high"]) == interval(bd["won"], bd["unknown"], bd["deals"])
    table = pq.read_table(out / "bakers-dozen.parquet")
    assert table.column_names == ["deal", "verdict", "nodes", "rung", "timeout"]
    assert str(table.schema.field("verdict").type) == "dictionary<values=string, indices=int8, ordered=0>"
    frame = table.to_pandas().set_index("deal")
    assert frame.loc[31, "verdict"] == "won" and frame.loc[31, "rung"] == 1 and frame.loc[30, "rung"] == 0
    with (out / "summary.csv").open() as f:
        assert tuple(next(csv.reader(f))) == SUMMARY_COLUMNS
    # another variant later joins the summary; the rows already there stay
    _atlas(tmp_path, "-v", "good-measure", "--deals", "28-30")
    assert [r["variant"] for r in read_summary(out / "summary.csv")] == ["bakers-dozen", "dick-1883", "good-measure"]
    assert check_atlas(out) == []


def test_a_shorter_ladder_leaves_open_deals_unknown_and_says_so_and_the_full_ladder_reuses_it(tmp_path):
    short = _atlas(tmp_path, "-v", "bakers-dozen", "--deals", "28-35", "--last-rung", "0", out="short")
    row = read_summary(short / "summary.csv")[0]
    assert row["budgets"] == "0: nodes=2000, seconds=600.0, capacity_states=5000000"
    assert row["command"].endswith("--rung nodes=200000 --last-rung 0") and row["unknown"] >= 1
    frame = pq.read_table(short / "bakers-dozen.parquet").to_pandas().set_index("deal")
    assert frame.loc[31, "verdict"] == "unknown" and frame.loc[31, "rung"] == 0
    stored = _chunks(tmp_path / "store")
    full = _atlas(tmp_path, "-v", "bakers-dozen", "--deals", "28-35", out="full")
    assert all(_chunks(tmp_path / "store")[p] == t for p, t in stored.items())  # rung 0 reused, not played again
    assert read_summary(full / "summary.csv")[0]["unknown"] < row["unknown"]
    r = CliRunner().invoke(main, ["atlas", "-v", "bakers-dozen", "--last-rung", "2", *SMALL,
                                  "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2 and r.output.strip().splitlines() == ["bakers-dozen: error: --last-rung 2: this ladder has rungs 0-1"]


def test_reuse_climbs_from_a_written_atlas_without_its_store_and_writes_what_the_full_ladder_writes(tmp_path):
    both = ("-v", "bakers-dozen", "-v", "good-measure", "--deals", "28-35")
    short = _atlas(tmp_path, *both, "--last-rung", "0", out="short", store="short-store")
    assert read_summary(short / "summary.csv")[1]["unknown"] >= 2
    climbed = _atlas(tmp_path, *both, "--reuse", str(short), out="climbed", store="climb-store")
    full = _atlas(tmp_path, *both, out="full", store="full-store")
    assert _computed(climbed) == _computed(full)
    for row, there in zip(read_summary(climbed / "summary.csv"), read_summary(full / "summary.csv"), strict=True):
        assert row["command"] == f"{there['command']} --reuse {short}" and there["reused"] is None
        assert row["reused"].startswith(f"{short} sha256:")  # the source and a digest of what was taken from it
    for name in ("bakers-dozen.parquet", "good-measure.parquet"):
        assert pq.read_table(climbed / name).equals(pq.read_table(full / name))
    runs = lambda store: sorted(p.name for p in store.iterdir() if p.is_dir())  # noqa: E731
    # rung 1 alone climbed; rung 0 solved only the sample of reused deals, under the same key as a fresh rung 0
    assert len(runs(tmp_path / "climb-store")) == 4 and len(runs(tmp_path / "full-store")) == 4
    again = _atlas(tmp_path, *both, "--reuse", str(full), out="again", store="again-store")  # nothing left to climb
    assert _computed(again) == _computed(full)
    assert len(runs(tmp_path / "again-store")) == 2  # rung 0 on the sample of reused deals alone


def _computed(out: Path) -> list[dict]:
    """The summary rows without what says how they were made (command and source)."""
    return [{k: v for k, v in r.items() if k not in ("command", "reused")} for r in read_summary(out / "summary.csv")]


def test_reuse_grows_a_written_range_and_writes_what_the_whole_range_from_rung_0_writes(tmp_path):
    short = _atlas(tmp_path, "-v", "good-measure", "--deals", "28-31", "--last-rung", "0", out="short", store="s1")
    grown = _atlas(tmp_path, "-v", "good-measure", "--deals", "25-35", "--reuse", str(short), out="grown", store="s2")
    full = _atlas(tmp_path, "-v", "good-measure", "--deals", "25-35", out="full", store="s3")
    assert _computed(grown) == _computed(full)
    assert pq.read_table(grown / "good-measure.parquet").equals(pq.read_table(full / "good-measure.parquet"))
    assert read_summary(grown / "summary.csv")[0]["command"].startswith("bakers-dozen atlas --variant good-measure "
                                                                         "--deals 25-35 ")


def test_reuse_refuses_verdicts_it_cannot_vouch_for_in_one_line_before_any_work(tmp_path):
    short = _atlas(tmp_path, "-v", "bakers-dozen", "--deals", "28-35", "--last-rung", "0", out="short")
    summary = (short / "summary.csv").read_text()
    cases = [(["--deals", "40-45"], summary, "covers deals 28-35, none of 40-45"),
             (["--deals", "28-35"], summary.replace(",28,35,8,", ",27,35,8,"), "not every deal of 27-35"),
             (["--deals", "28-35", "--param", "nodes=3000"], summary, "rung 0 ran with nodes=2000"),
             (["--deals", "28-35", "--last-rung", "0"],
              summary.replace('5000000",', '5000000; 1: nodes=200000, seconds=600.0, capacity_states=5000000",'),
              "ran rungs 0-1, more than this command's 0-0"),
             (["--deals", "28-35", "-v", "dick-1883"], summary, "no row for dick-1883"),
             (["--deals", "28-35"], summary.replace(",11,", ",10,"), "solver version 10"),
             (["--deals", "28-35"], summary.replace(",bf62c6d47d1a,", ",000000000000,"), "rules fingerprint"),
             (["--deals", "28-35"], summary.replace(",8,7,0,1,", ",8,8,0,0,"), "disagrees with its deal file")]
    for args, text, message in cases:
        (short / "summary.csv").write_text(text)
        r = CliRunner().invoke(main, ["atlas", "-v", "bakers-dozen", *SMALL, *args, "--reuse", str(short),
                                      "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and message in r.output, (args, r.output)
        assert not (tmp_path / "o" / "summary.csv").exists() and not (tmp_path / "s").exists()


def test_the_check_finds_a_summary_that_disagrees_with_its_rows(tmp_path):
    out = _atlas(tmp_path, "-v", "bakers-dozen", "--deals", "28-31")
    text = (out / "summary.csv").read_text()
    (out / "summary.csv").write_text(text.replace(",4,4,0,0,", ",4,3,1,0,"))
    assert any("summary won 3, rows 4" in p for p in check_atlas(out))


def test_pysol_numbering_writes_the_deals_not_winnable(tmp_path):
    out = _atlas(tmp_path, "-v", "bakers-dozen", "--source", "pysol", "--deals", "63-64")
    assert check_atlas(out) == []
    assert sorted(p.name for p in out.iterdir()) == ["pysol-bakers-dozen-not-winnable.csv", "pysol-bakers-dozen.parquet",
                                                     "summary.csv"]
    assert (out / "pysol-bakers-dozen-not-winnable.csv").read_text() == "deal,verdict\n64,lost\n"


def test_bad_input_is_one_line_and_writes_nothing(tmp_path):
    variant_file = tmp_path / "mine.toml"
    variant_file.write_text('name = "mine"\ncolumns = 12\n')
    for args, message in ((["-v", "good-measure", "--source", "pysol", "--seed", "3"], "takes no seed"),
                          (["-v", str(variant_file)], "presets only"),
                          (["-v", "bakers-dozen", "--deals", "dick-1883=1-3"], "not one of the variants"),
                          (["-v", "bakers-dozen", "--rung", "nodes=-1"], "nodes"),
                          (["-v", "bakers-dozen", "--scheduler", "tcp://x:1"], "--backend dask")):
        r = CliRunner().invoke(main, ["atlas", *args, "--store", str(tmp_path / "s"), "--out", str(tmp_path / "o")])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1 and message in r.output, (args, r.output)
        assert not (tmp_path / "o" / "summary.csv").exists()


def _chunks(store: Path) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in store.glob("*/*_*_*.parquet")}


def test_a_killed_atlas_resumes_and_gives_the_same_files(tmp_path):
    args = [sys.executable, "-m", "bakers_dozen", "atlas", "-v", "bakers-dozen", "--deals", "1-40", "--chunk", "1",
            *SMALL, "--store", "store", "--out", "out"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    proc = subprocess.Popen(args, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while len(_chunks(tmp_path / "store")) < 3 and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _chunks(tmp_path / "store")
    if len(before) >= 40:
        pytest.skip("the run finished before the kill")
    assert before and not (tmp_path / "out" / "summary.csv").exists()
    subprocess.run(args, cwd=tmp_path, env=env, check=True, stdout=subprocess.DEVNULL)
    after = _chunks(tmp_path / "store")
    assert all(after[p] == t for p, t in before.items())  # what the killed run stored was reused, not replayed
    fresh = _atlas(tmp_path, "-v", "bakers-dozen", "--deals", "1-40", out="fresh", store="fresh-store")
    assert pq.read_table(tmp_path / "out" / "bakers-dozen.parquet").equals(pq.read_table(fresh / "bakers-dozen.parquet"))
    assert check_atlas(tmp_path / "out") == []


def test_the_shipped_atlas_summary_matches_its_deal_files():
    rows = read_summary(SHIPPED / "summary.csv")
    assert rows, "studies/atlas/data/summary.csv is shipped"
    assert check_atlas(SHIPPED) == []
    for r in rows:
        assert r["clairvoyant"] == str(r["variant"] in ("dick-1883", "castles-in-spain"))
        assert r["command"].startswith("bakers-dozen atlas --variant ")


PYSOL_GAMES = ("bakers-dozen", "kings-into-empty", "spanish-patience", "castles-in-spain", "good-measure")
"""The presets that are games PySolFC has (Baker's Dozen, Portuguese Solitaire, Spanish Patience, Castles in Spain,
Good Measure): the atlas ships PySolFC's numbering of each."""


def test_the_shipped_atlas_holds_every_range_it_publishes():
    """Baker's Dozen deals 1-1,000,000, every other preset's 1-100,000, and PySolFC's deals 1-100,000 of each game
    it has: a smaller row must never replace a published one."""
    rows = {(r["variant"], r["source"]): r for r in read_summary(SHIPPED / "summary.csv")}
    wanted = {(name, "default"): 1_000_000 if name == "bakers-dozen" else 100_000 for name in variant_names()}
    wanted |= {(name, "pysol"): 100_000 for name in PYSOL_GAMES}
    short = {key: rows[key]["deals"] if key in rows else 0 for key, size in wanted.items()
             if key not in rows or rows[key]["first"] != 1 or rows[key]["deals"] < size}
    assert short == {}


def test_shipped_rows_of_the_same_game_give_each_deal_one_verdict():
    """Rows whose rules differ only in face-down cards hold the same game for the clairvoyant solver (it sees every
    card): on the deals they share, in the same numbering and seed, they must give each deal the same verdict."""
    import itertools

    import pyarrow.compute as pc

    from sim.rules import find_variant

    groups: dict[tuple, list[dict]] = {}
    for row in read_summary(SHIPPED / "summary.csv"):
        game = find_variant(row["variant"]).replace(face_down=0).fingerprint
        groups.setdefault((game, row["source"], row["seed"]), []).append(row)
    pairs = [pair for rows in groups.values() for pair in itertools.combinations(rows, 2)]
    assert any({a["variant"], b["variant"]} == {"bakers-dozen", "dick-1883"} for a, b in pairs)
    for a, b in pairs:
        first, last = max(a["first"], b["first"]), min(a["last"], b["last"])
        tables = []
        for row in (a, b):
            t = pq.read_table(SHIPPED / f"{'pysol-' if row['source'] == 'pysol' else ''}{row['variant']}.parquet",
                              columns=["deal", "verdict"])
            tables.append(t.filter(pc.and_(pc.greater_equal(t["deal"], first), pc.less_equal(t["deal"], last))))
        left, right = (t.column("verdict").cast("string").to_pylist() for t in tables)
        assert tables[0].column("deal").equals(tables[1].column("deal"))
        differ = [(d, x, y) for d, x, y in zip(tables[0].column("deal").to_pylist(), left, right, strict=True) if x != y]
        assert not differ, f"{a['variant']} and {b['variant']} ({a['source']}) disagree on {len(differ)} deals: {differ[:12]}"
