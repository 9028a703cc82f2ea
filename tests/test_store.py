"""The results store: Parquet chunks written atomically, checked on read, never mixed across keys."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from runner_helpers import FillingStore, rows

from sim.engine import T_NO_PROGRESS, T_WON, TERMINATIONS
from sim.game import Game
from sim.rules import Rules, find_variant
from studies import store as S
from studies.files import CorruptChunkError, StoreError, StoreFullError, temp_path
from studies.reading import check_win, decode_moves, move_texts, read_store
from studies.records import CORRUPT, KEY_INFO, LEGACY_NAMES, MANIFESTS
from studies.rows import ABSENT, COLUMNS, META_KEY, ChunkFile, RunKey, RunLabels, chunk_table, verified_digest
from studies.runner import run
from studies.spec import RunSpec
from studies.store import Store

RULES = Rules()


@pytest.fixture
def small_store(tmp_path):
    """600 greedy deals in chunks of 100, played in this process."""
    path = tmp_path / "store"
    summary = run(RunSpec(RULES, "greedy", 600), path, jobs=1, chunk=100)
    return path, summary


def test_one_row_per_deal_with_every_column(small_store):
    path, summary = small_store
    df = read_store(path)
    assert list(df.columns) == list(COLUMNS)
    assert df["deal"].tolist() == list(range(1, 601))
    assert set(df["outcome"].astype(str)) <= {"won", "lost"}
    assert (df["variant"] == "bakers-dozen").all() and (df["rules_fingerprint"] == RULES.fingerprint).all()
    assert (df["strategy"] == "greedy").all() and (df["strategy_identity"] == "greedy@1").all()
    assert (df["strategy_version"] == "1").all() and (df["strategy_params"] == "{}").all()
    assert (df["seed"] == 0).all() and (df["source"] == "default").all() and (df["tier"] == "compiled").all()
    assert (df["key"] == summary.key).all() and df["error"].isna().all()
    assert df["micros_averaged"].all() and (df["micros"] >= 0).all()
    won = df["outcome"] == "won"
    assert int(won.sum()) == summary.wins
    assert df.loc[~won, "win_moves"].isna().all()
    assert all(len(m) == n for m, n in zip(df.loc[won, "win_moves"], df.loc[won, "moves"], strict=True))
    assert df["cards_home"].sum() == summary.cards_home_sum


def test_stored_wins_pass_the_referee(tmp_path):
    run(RunSpec(RULES, "greedy", 2000), tmp_path, jobs=1, chunk=1000)
    df = read_store(tmp_path)
    wins = df[df["outcome"] == "won"]
    assert len(wins) >= 3
    for _, row in wins.iterrows():
        verdict = check_win(RULES, row)
        assert verdict.legal and verdict.won, verdict
    first = wins.iloc[0]
    texts = move_texts(RULES, first["deal"], first["seed"], first["source"], first["win_moves"])
    assert len(texts) == first["moves"] and all(" " in t and ">" in t for t in texts)
    game = Game.from_deal(RULES, int(first["deal"]))
    for code in first["win_moves"]:
        game.play_code(int(code))
    assert decode_moves(RULES, first["deal"], first["seed"], first["source"], first["win_moves"]) == game.history
    spoiled = [*first["win_moves"][:5], 63 * 64, *first["win_moves"][6:]]  # a source that is no place
    verdict = check_win(RULES, {**first, "win_moves": spoiled})
    assert not verdict.legal and verdict.first_illegal == 6
    with pytest.raises(StoreError, match="deal .* not a legal game: move 6 code 4032: its source 63"):
        decode_moves(RULES, first["deal"], first["seed"], first["source"], spoiled)


def test_chunk_files_are_named_by_key_and_range(small_store):
    path, summary = small_store
    files = Store(path).chunk_files(summary.key)
    assert [(c.first, c.last) for c in files] == [(a, a + 99) for a in range(1, 601, 100)]
    assert all(c.path.name.startswith(summary.key + "_") for c in files)
    manifests = list((path / summary.key / MANIFESTS).glob("*.json"))
    assert len(manifests) == 1
    m = json.loads(manifests[0].read_text())
    assert m["toolkit_version"] and m["command"] and m["started"]
    assert m["parameters"]["deals"] == 600 and m["parameters"]["chunk"] == 100
    assert m["parameters"]["rules"] == RULES.parameters() and m["summary"]["wins"] == summary.wins
    assert not [p for p in (path / summary.key).iterdir() if p.name.startswith(".tmp")]


def test_reading_selects_deals_and_columns(small_store):
    path, _ = small_store
    df = read_store(path, deals=(150, 249), columns=["outcome"])
    assert list(df.columns) == ["deal", "outcome", "key"]  # in the store's column order
    assert df["deal"].tolist() == list(range(150, 250))
    assert read_store(path, strategy="random").empty
    with pytest.raises(StoreError, match="unknown column"):
        read_store(path, columns=["nope"])


# --- damaged chunk files -------------------------------------------------------------

def _first_chunk(path, key):
    return Store(path).chunk_files(key)[0]


@pytest.mark.parametrize("damage", ["truncate", "garbage", "flip", "renamed", "empty"])
def test_damaged_chunk_is_detected_never_read_and_replayed(small_store, damage):
    path, summary = small_store
    clean = rows(read_store(path))
    chunk = _first_chunk(path, summary.key)
    data = chunk.path.read_bytes()
    if damage == "truncate":  # a half-written file
        chunk.path.write_bytes(data[: len(data) // 2])
    elif damage == "garbage":
        chunk.path.write_bytes(b"deal,outcome\n1,won\n")
    elif damage == "flip":  # one byte changed in the middle of the data pages
        mid = len(data) // 3
        chunk.path.write_bytes(data[:mid] + bytes([data[mid] ^ 0xFF]) + data[mid + 1 :])
    elif damage == "renamed":  # a sound file under the name of other deals
        second = Store(path).chunk_files(summary.key)[1]
        shutil.copy(second.path, chunk.path)
    else:
        chunk.path.write_bytes(b"")
    with pytest.raises(CorruptChunkError):
        Store(path).load_chunk(chunk)
    with pytest.warns(UserWarning, match="not usable"):
        partial = read_store(path)
    assert len(partial) == 500 and 1 not in set(partial["deal"])
    again = run(RunSpec(RULES, "greedy", 600), path, jobs=1, chunk=100)
    assert again.played == 100 and again.reused == 500
    assert len(again.corrupt) == 1 and "corrupt" in again.corrupt[0]
    assert rows(read_store(path)).equals(clean)
    assert again.wins == summary.wins


def test_temporary_files_are_ignored_and_cleaned(small_store):
    path, summary = small_store
    d = path / summary.key
    chunk = _first_chunk(path, summary.key)
    dead = d / f".tmp-999999@abcd0123@{os.uname().nodename}@{chunk.path.name}"
    dead.write_bytes(b"half a chunk")
    assert len(read_store(path)) == 600
    assert Store(path).clean_temp(summary.key) == 1
    assert not dead.exists()


# --- the store directory itself ------------------------------------------------------------

def test_a_file_is_not_a_store(tmp_path):
    f = tmp_path / "results"
    f.write_text("hello")
    with pytest.raises(StoreError, match="is a file, not a directory"):
        Store.open(f)


def test_a_directory_of_other_files_is_refused(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n")
    with pytest.raises(StoreError, match="not a bakers-dozen results store"):
        Store.open(tmp_path)
    with pytest.raises(StoreError, match="not a bakers-dozen results store"):
        run(RunSpec(RULES, "greedy", 10), tmp_path, jobs=1)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv"]


def test_a_store_of_another_format_is_refused(tmp_path):
    (tmp_path / S.MARKER).write_text(json.dumps({"format": "something-else", "version": 7}))
    with pytest.raises(StoreError, match="another format"):
        Store.open(tmp_path)
    (tmp_path / S.MARKER).write_text(json.dumps({"format": S.FORMAT, "version": 99}))
    with pytest.raises(StoreError, match="format version 99"):
        Store.open(tmp_path)
    (tmp_path / S.MARKER).write_text("{not json")
    with pytest.raises(StoreError, match="damaged"):
        Store.open(tmp_path)


def test_reading_a_directory_that_is_no_store(tmp_path):
    with pytest.raises(StoreError, match="not a bakers-dozen results store"):
        read_store(tmp_path)


def test_an_unwritable_place_is_refused():
    with pytest.raises(StoreError, match="cannot create store directory|not writable"):
        Store.open("/proc/bakers-dozen-store")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_a_read_only_directory_is_refused(tmp_path):
    d = tmp_path / "ro"
    d.mkdir()
    d.chmod(0o500)
    try:
        with pytest.raises(StoreError, match="not writable"):
            Store.open(d)
    finally:
        d.chmod(0o700)


def test_disk_full_loses_no_finished_chunk(tmp_path):
    Store.open(tmp_path)
    with pytest.raises(StoreFullError, match=r"disk full.*200 of 500 deals are saved.*run the same command again"):
        run(RunSpec(RULES, "greedy", 500), FillingStore(tmp_path, full_from=201), jobs=1, chunk=100)
    summary_key = Store(tmp_path).keys()[0]
    files = Store(tmp_path).chunk_files(summary_key)
    assert [(c.first, c.last) for c in files] == [(1, 100), (101, 200)]
    assert not [p for p in (tmp_path / summary_key).iterdir() if p.name.startswith(".tmp")]
    again = run(RunSpec(RULES, "greedy", 500), tmp_path, jobs=1, chunk=100)
    assert again.reused == 200 and again.played == 300
    clean = run(RunSpec(RULES, "greedy", 500), tmp_path / "clean", jobs=1, chunk=250)
    assert rows(read_store(tmp_path)).equals(rows(read_store(tmp_path / "clean")))
    assert again.wins == clean.wins


# --- several runs in one store ---------------------------------------------------------------

def test_runs_share_a_store_and_are_told_apart(tmp_path):
    a = run(RunSpec(RULES, "greedy", 200), tmp_path, jobs=1)
    b = run(RunSpec(find_variant("dick-1883"), "greedy", 200), tmp_path, jobs=1)
    c = run(RunSpec(RULES, "random:home_first=true", 100), tmp_path, jobs=1)
    d = run(RunSpec(RULES, "greedy", 200, seed=5), tmp_path, jobs=1)
    assert len({a.key, b.key, c.key, d.key}) == 4
    df = read_store(tmp_path)
    assert len(df) == 700
    assert df.groupby("key", observed=True).size().to_dict() == {a.key: 200, b.key: 200, c.key: 100, d.key: 200}
    assert len(read_store(tmp_path, variant="dick-1883")) == 200
    assert len(read_store(tmp_path, strategy="greedy", seed=5)) == 200
    runs = Store(tmp_path).runs()
    assert {r["key"] for r in runs} == {a.key, b.key, c.key, d.key}


def test_results_of_other_rules_under_the_same_name_are_never_pooled(tmp_path):
    mine = Rules(name="mine", face_down=1)
    run(RunSpec(mine, "greedy", 100), tmp_path, jobs=1)
    other = mine.replace(kings_to_bottom=False)  # same name, other rules
    assert other.fingerprint != mine.fingerprint
    s = run(RunSpec(other, "greedy", 100), tmp_path, jobs=1)
    assert s.reused == 0 and s.played == 100
    with pytest.raises(StoreError, match="2 rules fingerprints"):
        read_store(tmp_path, variant="mine")
    assert len(read_store(tmp_path, variant="mine", rules_fingerprint=other.fingerprint)) == 100
    assert len(read_store(tmp_path, variant="mine", allow_mixed=True)) == 200


def test_results_of_another_strategy_version_are_never_pooled(tmp_path):
    run(RunSpec(RULES, "greedy", 100), tmp_path, jobs=1)
    s = run(RunSpec(RULES, "tests.runner_helpers:GreedyV2", 100), tmp_path, jobs=1)
    assert s.strategy_identity == f"greedy@2#{s.code_digest}" and s.reused == 0  # a plug-in: its code digest too
    with pytest.raises(StoreError, match="2 strategy versions"):
        read_store(tmp_path, strategy="greedy", columns=["outcome"])
    assert len(read_store(tmp_path, strategy="greedy", strategy_identity=s.strategy_identity)) == 100


def test_key_hash_depends_on_everything_that_decides_a_row():
    base = RunKey("abc", "greedy@1", 0, "default", 0)
    variants = [
        RunKey("abd", "greedy@1", 0, "default", 0),
        RunKey("abc", "greedy@2", 0, "default", 0),
        RunKey("abc", "greedy@1", 1, "default", 0),
        RunKey("abc", "greedy@1", 0, "pysol", 0),
        RunKey("abc", "greedy@1", 0, "default", 1),
    ]
    assert len({base.hash, *(k.hash for k in variants)}) == 6
    assert base.hash == RunKey("abc", "greedy@1", 0, "default", 0).hash and len(base.hash) == 16


def test_chunk_table_keeps_only_the_wins_move_lists():
    labels = RunLabels(RunKey("f", "x@1", 0, "default"), "v", "x", "1", "{}", "x", False, "0")
    outcome = np.array([1, 0, 1], dtype=np.int8)
    offsets = np.array([0, 2, 2, 5])
    termination = np.array([T_WON, T_NO_PROGRESS, T_WON])
    table = chunk_table(labels, "compiled", np.array([4, 5, 6]), outcome, termination, np.array([52, 3, 52]),
                          np.array([2, 7, 3]), np.zeros(3), np.zeros(3), True, {1: "bad"}, offsets,
                          np.array([10, 11, 12, 13, 14]))
    assert table.column("win_moves").to_pylist() == [[10, 11], None, [12, 13, 14]]
    assert table.column("error").to_pylist() == [None, "bad", None]
    assert table.column("outcome").to_pylist() == ["won", "lost", "won"]
    assert table.column("termination").to_pylist() == ["won", "no_progress", "won"]


@pytest.fixture
def tiny_disk(tmp_path):
    """A 64 KiB tmpfs (root only; skipped where mounting is not allowed)."""
    where = tmp_path / "tiny"
    where.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(where)], check=True, capture_output=True,
                       timeout=10)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=10)


def test_a_really_full_disk_stops_the_run_cleanly_and_it_resumes_after_space_is_freed(tiny_disk, tmp_path):
    from click.testing import CliRunner

    from bakers_dozen.cli import main

    store = tiny_disk / "store"
    args = ["simulate", "-n", "6000", "--chunk", "500", "--jobs", "1", "--store", str(store), "--quiet"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert "disk full" in result.output and "run the same command again to resume" in result.output
    assert "Traceback" not in result.output
    key = Store(store).keys()[0]
    files = Store(store).chunk_files(key)
    assert 0 < len(files) < 12
    for c in files:  # every file that is there is whole
        Store(store).load_chunk(c)
    assert not [p for p in (store / key).iterdir() if p.name.startswith(".tmp")]
    subprocess.run(["mount", "-o", "remount,size=8m", str(tiny_disk)], check=True, timeout=10)
    again = CliRunner().invoke(main, [*args, "--json"])
    assert again.exit_code == 0, again.output
    assert json.loads(again.output)["reused"] == 500 * len(files)
    run(RunSpec(RULES, "greedy", 6000), tmp_path / "clean", jobs=1)
    assert rows(read_store(store)).equals(rows(read_store(tmp_path / "clean")))


def test_a_read_only_filesystem_is_refused_even_for_root(tiny_disk):
    run(RunSpec(RULES, "greedy", 100), tiny_disk / "store", jobs=1)
    subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], check=True, timeout=10)
    with pytest.raises(StoreError, match="not writable: Read-only file system"):
        run(RunSpec(RULES, "greedy", 200), tiny_disk / "store", jobs=1)
    with pytest.raises(StoreError, match="cannot create store directory .*Read-only file system"):
        Store.open(tiny_disk / "new")
    assert len(read_store(tiny_disk / "store")) == 100  # reading still works


# --- the termination column, and chunks written before it ------------------------------------

def test_termination_is_stored_and_agrees_with_the_outcome(small_store):
    path, _ = small_store
    df = read_store(path)
    assert set(df["termination"].astype(str)) <= set(TERMINATIONS)
    won = df["outcome"] == "won"
    assert (df.loc[won, "termination"] == "won").all()
    assert df.loc[~won, "termination"].isin(["no_moves", "no_progress", "resigned"]).all()


def _as_format_1(chunk: ChunkFile) -> None:
    """Rewrite a chunk file as the toolkit wrote it before the termination column (chunk format 1), which had
    none of the columns added since either."""
    table = pq.read_table(chunk.path)
    info = json.loads(table.schema.metadata[META_KEY])
    info["version"] = 1
    table = table.drop_columns(list(ABSENT)).replace_schema_metadata({META_KEY: json.dumps(info).encode()})
    pq.write_table(table, chunk.path)


def test_chunks_of_format_1_still_read_with_termination_null_and_are_reused(small_store):
    path, summary = small_store
    before = rows(read_store(path)).drop(columns="termination")
    old = Store(path).chunk_files(summary.key)[:2]
    for c in old:
        _as_format_1(c)
    df = read_store(path)
    assert df.loc[df["deal"] <= 200, "termination"].isna().all() and df.loc[df["deal"] > 200, "termination"].notna().all()
    assert rows(df).drop(columns="termination").equals(before)
    assert read_store(path, columns=["outcome", "termination"])["termination"].isna().sum() == 200
    again = run(RunSpec(RULES, "greedy", 600), path, jobs=1, chunk=100)
    assert (again.reused, again.played, again.corrupt) == (600, 0, [])


def _as_legacy(path, version: int) -> None:
    """Give a store the layout of format ``version`` (1 or 2): its metadata named like data."""
    (path / S.MARKER).rename(path / S.LEGACY_MARKER)
    (path / S.LEGACY_MARKER).write_text(json.dumps({"format": S.FORMAT, "version": version}))
    for key in Store(path).keys():
        for old, new in LEGACY_NAMES.items():
            if (path / key / new).exists():
                (path / key / new).rename(path / key / old)


def _files(path) -> list[str]:
    return sorted(str(f.relative_to(path)) for f in path.rglob("*") if not f.name.startswith("."))


def _pyarrow_rows(path) -> pd.DataFrame:
    """The store's rows as pyarrow's own dataset reader sees them, with no options."""
    table = ds.dataset(path, format="parquet").to_table()
    return table.to_pandas().sort_values(["key", "deal"], kind="stable").reset_index(drop=True)


@pytest.mark.parametrize("version", [1, 2])
def test_a_store_of_an_older_format_is_read_as_it_is_and_upgraded_when_written(tmp_path, version):
    path = tmp_path / "store"
    run(RunSpec(RULES, "greedy", 200), path, jobs=1, chunk=100)
    expected = rows(read_store(path))
    _as_legacy(path, version)
    with pytest.raises(pa.ArrowInvalid):  # the reason for the upgrade: pyarrow takes key.json for a Parquet file
        ds.dataset(path, format="parquet").to_table()
    files = _files(path)
    key = Store(path).keys()[0]
    assert rows(read_store(path)).equals(expected) and Store(path).read_key_info(key)["key"] == key
    assert len(Store(path).read_manifests(key)[0]) == 1
    assert _files(path) == files  # reading changes nothing
    again = run(RunSpec(RULES, "greedy", 300), path, jobs=1, chunk=100)
    assert (again.reused, again.played, again.damaged, again.corrupt) == (200, 100, [], [])
    assert json.loads((path / S.MARKER).read_text())["version"] == S.FORMAT_VERSION
    assert not (path / S.LEGACY_MARKER).exists() and not any((path / key / old).exists() for old in LEGACY_NAMES)
    assert len(Store(path).read_manifests(key)[0]) == 2
    assert rows(_pyarrow_rows(path)).equals(rows(read_store(path)))


def test_an_upgrade_cut_short_is_finished_by_the_next_writer(tmp_path):
    path = tmp_path / "store"
    run(RunSpec(RULES, "greedy", 100), path, jobs=1)
    key = Store(path).keys()[0]
    _as_legacy(path, 2)
    (path / key / MANIFESTS).mkdir()  # a crash after some entries moved: both folders exist
    first = next((path / key / "manifests").glob("*.json"))
    first.rename(path / key / MANIFESTS / first.name)
    (path / key / KEY_INFO).write_bytes((path / key / "key.json").read_bytes())
    (path / S.MARKER).write_text(json.dumps({"format": S.FORMAT, "version": S.FORMAT_VERSION}))
    assert len(read_store(path)) == 100 and len(Store(path).read_manifests(key)[0]) == 1
    Store.open(path)
    assert not (path / S.LEGACY_MARKER).exists() and not any((path / key / old).exists() for old in LEGACY_NAMES)
    assert len(Store(path).read_manifests(key)[0]) == 1 and len(_pyarrow_rows(path)) == 100


def test_pyarrow_reads_a_store_directly_even_with_damaged_files_moved_aside(small_store):
    path, summary = small_store
    other = run(RunSpec(RULES, "random", 150), path, jobs=1, chunk=100)
    chunk = Store(path).chunk_files(summary.key)[0]
    chunk.path.write_bytes(chunk.path.read_bytes()[:100])  # damaged: the next run moves it aside and replays it
    manifest = next((path / other.key / MANIFESTS).glob("*.json"))
    manifest.write_text("{not json")
    again = run(RunSpec(RULES, "greedy", 600), path, jobs=1, chunk=100)
    assert len(again.corrupt) == 1 and CORRUPT in again.corrupt[0]
    run(RunSpec(RULES, "random", 150), path, jobs=1, chunk=100)  # moves the damaged manifest aside
    assert list((path / other.key / MANIFESTS / CORRUPT).iterdir())
    direct = _pyarrow_rows(path)
    assert len(direct) == 750 and rows(direct).equals(rows(read_store(path)))
    assert not [f for f in path.rglob("*.parquet") if f.parent.name == CORRUPT]


def test_duckdb_reads_a_store_directly(small_store):
    import duckdb  # a test dependency: this test must run, never skip
    path, summary = small_store
    chunk = _first_chunk(path, summary.key)
    shutil.copy(chunk.path, temp_path(chunk.path))  # a writer that died before renaming its file
    shutil.copy(chunk.path, path / summary.key / "moved.parquet")
    Store.move_aside(path / summary.key / "moved.parquet")  # a damaged file moved aside
    count, wins = duckdb.sql(f"select count(*), count(*) filter (where outcome = 'won') "
                             f"from read_parquet('{path}/**/*.parquet')").fetchall()[0]
    assert (count, wins) == (600, summary.wins)


def test_a_chunk_cache_reads_each_file_once_and_a_replaced_file_anew(tmp_path, monkeypatch):
    import studies.rows as rows_module
    from sim.rules import find_variant
    from studies.reading import read_store
    from studies.rows import chunk_cache, load_chunk_file
    from studies.runner import run
    from studies.spec import RunSpec
    from studies.store import Store

    run(RunSpec(find_variant("bakers-dozen"), "greedy", 40), tmp_path / "st", jobs=1, chunk=20)
    st = Store(tmp_path / "st")
    key = st.keys()[0]
    chunks = st.chunk_files(key)
    reads: list[str] = []
    real = rows_module._load_chunk_file
    monkeypatch.setattr(rows_module, "_load_chunk_file", lambda c, cols=None: reads.append(c.path.name) or real(c, cols))
    plain = read_store(tmp_path / "st", columns=["outcome", "cards_home"])
    reads.clear()
    with chunk_cache(["outcome", "cards_home", "variant"]):
        counted = [load_chunk_file(c, ["outcome"]) for c in chunks]
        again = read_store(tmp_path / "st", columns=["outcome", "cards_home"])
        assert len(reads) == len(chunks)  # the second reader took every table from the first read
        assert counted[0].column_names == ["deal", "outcome"]
        table = load_chunk_file(chunks[0])  # every column: not what the cache holds, read as ever
        st.write_chunk(table, key, chunks[0].first, chunks[0].last)  # replaced: a new file
        load_chunk_file(st.chunk_files(key)[0], ["outcome"])
        assert len(reads) == len(chunks) + 2
    assert again.equals(plain)
    load_chunk_file(chunks[1], ["outcome"])  # the block is over: read from the file
    assert len(reads) == len(chunks) + 3


def _wins_table(rows: list[tuple]) -> pa.Table:
    """A chunk's digest columns from (outcome, verified, deal, seed, source, win_moves) rows."""
    names = ["outcome", "verified", "deal", "seed", "source", "win_moves"]
    types = [pa.string(), pa.bool_(), pa.int64(), pa.int64(), pa.string(), pa.list_(pa.int16())]
    return pa.table([pa.array([r[i] for r in rows], type=t) for i, t in enumerate(types)], names=names)


def _digest_by_definition(table: pa.Table) -> str:
    texts = [json.dumps([r["deal"], r["seed"], r["source"], r["win_moves"]]) for r in table.to_pylist()
             if r["outcome"] == "won" and r["verified"]]
    return hashlib.sha256("".join(texts).encode()).hexdigest()[:32]


@pytest.mark.parametrize("odd", [None, (7, -3), (7, 4096), (7, None), ("moves", None), ("source", 'we"ird\u00e9'),
                                 ("source", None), ("deal", None)])
def test_the_verified_digest_is_the_json_of_each_marked_win(odd):
    rng = np.random.default_rng(5)
    rows = [("won" if k % 4 else "lost", k % 7 != 3, 1000 + k, k % 2, ("default", "pysol")[k % 3 == 0],
             rng.integers(0, 4096, rng.integers(0, 120)).tolist() if k % 4 else None) for k in range(60)]
    rows[8] = ("won", True, 1008, 0, "default", [])  # a win of no moves (a deal dealt won)
    if odd is not None:
        what, value = odd
        k = 9
        outcome, verified, deal, seed, source, moves = rows[k]
        if what == "moves":
            moves = value
        elif what == "source":
            source = value
        elif what == "deal":
            deal = value
        else:
            moves = [*moves[:what], value, *moves[what:]]
        rows[k] = ("won", True, deal, seed, source, moves)
    table = _wins_table(rows)
    for t in (table, table.slice(5), pa.concat_tables([table.slice(0, 30), table.slice(30)])):
        assert verified_digest(t) == _digest_by_definition(t)
