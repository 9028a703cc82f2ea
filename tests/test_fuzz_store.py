"""Hostile stores: symbolic links planted wherever the store reads or writes, names too long, edited rows,
partial reports of killed builds, and readers racing a forced run.

A link inside a store may lead anywhere; whatever the store then does (a run, a forced run, a read, a
report), nothing outside the store may change, and the answer is either a one-line error or a safe
behaviour (a linked chunk file is never read as data, a linked temporary file is removed, not followed).
A reader during a forced run sees the old rows or the new, whole, and a crash at any point of the run
leaves one of the two.
"""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.errors import UserError
from sim.rules import find_variant
from studies import store as S
from studies.files import TMP_PREFIX, DamagedFileWarning, StoreError, StoreFullError
from studies.reading import read_store
from studies.records import CORRUPT, KEY_INFO, MANIFESTS
from studies.rows import SCHEMA, chunk_name
from studies.runner import run
from studies.spec import RunSpec
from studies.store import Store
from studies.swap import STAGED, SWAP_PREFIX

RULES = find_variant("bakers-dozen")
SPEC = RunSpec(RULES, "greedy", 30)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, str]:
    """A store of one run (deals 1-30 in three chunks)."""
    path = tmp_path_factory.mktemp("links") / "store"
    return path, run(SPEC, path, jobs=1, chunk=10).key


@pytest.fixture
def world(pristine, tmp_path) -> tuple[Path, str, Path]:
    """A copy of the store, and beside it an outside folder holding a file, a folder with a note in it, a copy of
    the run's folder, a copy of the store's marker, and a copy of a chunk file."""
    path, key = pristine
    store = tmp_path / "store"
    shutil.copytree(path, store)
    outside = tmp_path / "outside"
    (outside / "folder").mkdir(parents=True)
    (outside / "file.txt").write_text("the user's own file\n")
    (outside / "folder" / "note.json").write_text('{"pid": 1}')
    shutil.copytree(store / key, outside / "run")
    shutil.copy(store / S.MARKER, outside / "marker.json")
    shutil.copy(Store(store).chunk_files(key)[0].path, outside / "chunk.parquet")
    shutil.copy(store / key / KEY_INFO, outside / "key.json")
    return store, key, outside


def _tree(root: Path) -> dict[str, str]:
    """Every name under ``root`` with a digest of what it is (a file's bytes, a link's target, a folder)."""
    found = {}
    for here, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(here) / name
            rel = str(p.relative_to(root))
            if p.is_symlink():
                found[rel] = "link " + os.readlink(p)
            elif p.is_dir():
                found[rel] = "folder"
            else:
                found[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    return found


def _plant(store: Path, key: str, outside: Path, where: str) -> Path:
    """Replace the store's ``where`` by a symbolic link to something outside; return the link."""
    d = store / key
    first = Store(store).chunk_files(key)[0].path
    places = {
        "run-lock": (d / S.RUN_LOCK, outside / "file.txt"),
        "commit-lock": (d / S.COMMIT_LOCK, outside / "file.txt"),
        "commit-lock-dangling": (d / S.COMMIT_LOCK, outside / "created.txt"),
        "manifests": (d / MANIFESTS, outside / "folder"),
        "corrupt": (d / CORRUPT, outside / "folder"),
        "tasks": (d / S.TASKS_DIR, outside / "folder"),
        "staging": (d / f"{SWAP_PREFIX}0123456789ab", outside / "folder"),
        "key-info": (d / KEY_INFO, outside / "key.json"),
        "chunk": (first, outside / "chunk.parquet"),
        "temp": (d / f"{TMP_PREFIX}1@abcd@nohost@x.parquet.tmp", outside / "file.txt"),
        "key-folder": (d, outside / "run"),
        "marker": (store / S.MARKER, outside / "marker.json"),
    }
    link, target = places[where]
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    else:
        link.unlink(missing_ok=True)
    link.symlink_to(target)
    return link


def _attempts(store: Path, key: str, tmp_path: Path) -> list[tuple[str, BaseException | None]]:
    """What each use of the store raised (None when it worked): a run, a forced run, a read, a report."""
    done: list[tuple[str, BaseException | None]] = []
    uses = [
        ("run", lambda: run(SPEC, store, jobs=1, chunk=10)),
        ("force", lambda: run(SPEC, store, jobs=1, chunk=15, force=True)),
        ("read", lambda: read_store(store)),
        ("open", lambda: Store.open(store)),
    ]
    for name, use in uses:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                use()
                done.append((name, None))
            except UserError as exc:
                done.append((name, exc))
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "report")])
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) <= 60, r.output
    return done


PLACES = ["run-lock", "commit-lock", "commit-lock-dangling", "manifests", "corrupt", "tasks", "staging", "key-info", "chunk",
          "temp", "key-folder", "marker"]


@pytest.mark.parametrize("where", PLACES)
def test_a_link_anywhere_in_a_store_changes_nothing_outside_it(world, tmp_path, where):
    store, key, outside = world
    if where == "corrupt":  # a damaged chunk, so that a run has something to move into _corrupt
        f = Store(store).chunk_files(key)[1].path
        f.write_bytes(f.read_bytes()[:100])
    _plant(store, key, outside, where)
    before = _tree(outside)
    for name, exc in _attempts(store, key, tmp_path):
        if exc is not None:
            text = str(exc)
            assert "\n" not in text, (name, text)
            assert isinstance(exc, StoreError) and "symbolic link" in text, (name, text)
    assert _tree(outside) == before
    assert not (outside / "created.txt").exists()


def test_a_linked_chunk_file_is_never_read_as_data_and_a_run_moves_it_aside(world):
    store, key, outside = world
    link = _plant(store, key, outside, "chunk")
    with pytest.warns(DamagedFileWarning, match="symbolic link"):
        rows = read_store(store)
    assert sorted(rows["deal"]) == list(range(11, 31))  # deals 1-10 are in the linked file: left out
    summary = run(SPEC, store, jobs=1, chunk=10)
    assert summary.corrupt and summary.played == 10
    assert not link.is_symlink() and (outside / "chunk.parquet").is_file()
    assert sorted(read_store(store)["deal"]) == list(range(1, 31))


@pytest.mark.parametrize("where", ["run-lock", "manifests", "key-folder", "marker"])
def test_the_command_line_says_so_in_one_line(world, where):
    store, key, outside = world
    _plant(store, key, outside, where)
    r = CliRunner().invoke(main, ["simulate", "-n", "30", "--chunk", "10", "-j", "1", "-q", "--store", str(store)])
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and "symbolic link" in r.output
    assert len([line for line in r.output.splitlines() if line.strip()]) == 1, r.output


def test_a_store_the_user_names_through_a_link_is_used_as_named(world, tmp_path):
    store, key, _ = world
    named = tmp_path / "named"
    named.symlink_to(store)
    summary = run(RunSpec(RULES, "greedy", 40), named, jobs=1, chunk=10)
    assert summary.reused == 30 and summary.played == 10
    assert len(Store(store).chunk_files(key)) == 4


def test_an_upgrade_never_moves_what_a_link_leads_to(world):
    store, key, outside = world
    (store / S.MARKER).rename(store / S.LEGACY_MARKER)
    shutil.rmtree(store / key / MANIFESTS)
    (store / key / "manifests").symlink_to(outside / "folder")
    before = _tree(outside)
    with pytest.raises(StoreError, match="symbolic link"):
        Store.open(store)
    assert _tree(outside) == before


@pytest.mark.parametrize("name", ["a" * 300, "st/" + "b" * 300 + "/x"])
def test_a_store_name_too_long_is_one_line(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "st").mkdir()
    for args in (["simulate", "-n", "5", "-j", "1", "-q", "--store", name], ["report", name]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 2, r.output
        assert "Traceback" not in r.output and os.strerror(errno.ENAMETOOLONG) in r.output
        assert len([line for line in r.output.splitlines() if line.strip()]) == 1, r.output
    with pytest.raises(StoreError, match=os.strerror(errno.ENAMETOOLONG)):
        read_store(name)


# --- rows whose strategy parameters were edited -----------------------------------------------------------------

@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, str, str]:
    """A store of a heuristic run (whose losses a report replays and analyses) and a greedy one."""
    path = tmp_path_factory.mktemp("params") / "store"
    h = run(RunSpec(RULES, "heuristic", 40), path, jobs=1, chunk=20)
    g = run(RunSpec(RULES, "greedy", 40), path, jobs=1, chunk=20)
    return path, h.key, g.key


def _edit_params(store: Path, key: str, text: str) -> None:
    """Write ``text`` as the strategy_params of every row of run ``key``, in files that are otherwise sound."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    field = SCHEMA.field("strategy_params")
    for c in Store(store).chunk_files(key):
        table = pq.read_table(c.path)
        column = pa.array([text] * table.num_rows).dictionary_encode().cast(field.type)
        table = table.set_column(table.schema.get_field_index(field.name), field, column)
        pq.write_table(table.replace_schema_metadata(pq.read_schema(c.path).metadata), c.path)


@pytest.mark.parametrize("text", ["not json", "[]", '{"no_such_parameter": 1}', '{"preset": "balanced"}'])
def test_edited_strategy_params_name_the_run_and_the_report_goes_on(two_runs, tmp_path, text):
    path, heuristic, greedy = two_runs
    store = tmp_path / "store"
    shutil.copytree(path, store)
    _edit_params(store, heuristic, text)
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep")])
    assert r.exit_code == 0, r.output + r.stderr
    assert "Traceback" not in r.stderr
    warned = [line for line in r.stderr.splitlines() if "cannot be replayed" in line]
    assert len(warned) == 1 and heuristic in warned[0], r.stderr
    md = (tmp_path / "rep" / "report.md").read_text(encoding="utf-8")
    assert "| greedy |" in md and "heuristic" in md  # both runs' win rates are reported


# --- partial reports left by killed builds ------------------------------------------------------------------------

def _dead_pid() -> int:
    """The pid of a process that has ended."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


@pytest.mark.parametrize("fresh", [True, False])
def test_a_killed_builds_partial_folders_are_removed_and_a_live_ones_kept(tmp_path, fresh):
    import socket
    import time

    from reports.output import STALE_SECONDS, staged_report

    out = tmp_path / "rep"
    if not fresh:
        out.mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "kept.txt").write_text("mine")
    host = socket.gethostname()[:64]
    places = [tmp_path, out] if not fresh else [tmp_path]
    planted = {}
    for where in places:
        for name, owner in [("dead", f"@{_dead_pid()}@{host}"), ("live", f"@{os.getpid()}@{host}"),
                            ("other-host-new", "@1@elsewhere"), ("old", ""), ("new", "")]:
            p = where / f".rep.partial-{name[:8]:0<8}{owner}"
            (p / "charts").mkdir(parents=True)
            (p / "charts" / "a.svg").write_text("<svg/>")
            if name == "old":
                then = time.time() - STALE_SECONDS - 60
                os.utime(p, (then, then))
            planted[p] = name in ("live", "other-host-new", "new")
        link = where / f".rep.partial-11111111@{_dead_pid()}@{host}"
        link.symlink_to(tmp_path / "outside")
        planted[link] = False
    with staged_report(out) as work:
        (work / "report.md").write_text("# report\n")
    for p, kept in planted.items():
        assert (p.exists() or p.is_symlink()) == kept, p
    assert (tmp_path / "outside" / "kept.txt").read_text() == "mine"
    assert (out / "report.md").is_file()


def test_a_killed_writers_partial_result_file_is_removed(tmp_path):
    import socket

    from reports.output import write_file_atomically

    host = socket.gethostname()[:64]
    dead = tmp_path / f".rows.csv.partial-00000000@{_dead_pid()}@{host}.csv"
    live = tmp_path / f".rows.csv.partial-00000001@{os.getpid()}@{host}.csv"
    dead.write_text("half")
    live.write_text("half")
    write_file_atomically(tmp_path / "rows.csv", lambda p: p.write_text("deal\n1\n"))
    assert not dead.exists() and live.exists() and (tmp_path / "rows.csv").read_text() == "deal\n1\n"


# --- a forced run while others read ------------------------------------------------------------------------------

FORCED = RunSpec(RULES, "greedy", 2000)


@pytest.fixture
def stored(tmp_path) -> tuple[Path, str]:
    """A store of 2,000 deals in four chunk files of 500."""
    path = tmp_path / "store"
    return path, run(FORCED, path, jobs=1, chunk=500).key


def _view(path: Path, key: str) -> tuple[int, set[int]]:
    """The deals a reader reads, and the sizes of the files they came from (listed under the same lock)."""
    from studies.reading import read_table

    st = Store(path)
    with st.reading(key):
        sizes = {c.count for c in st.chunk_files(key)}
    return read_table(path, columns=["deal"]).num_rows, sizes


def test_a_reader_during_a_forced_run_sees_the_old_rows_or_the_new_never_a_hole(stored, monkeypatch):
    import threading
    import time

    path, key = stored
    real = S.write_parquet

    def slow(table, p, root):  # a chunk every 30 ms: many reads fall while the forced run writes
        time.sleep(0.03)
        real(table, p, root)

    monkeypatch.setattr(S, "write_parquet", slow)
    done: list[object] = []
    writer = threading.Thread(target=lambda: done.append(run(FORCED, path, jobs=1, chunk=100, force=True)))
    writer.start()
    seen = []
    while writer.is_alive():
        seen.append(_view(path, key))
    writer.join()
    assert done and done[0].played == 2000
    assert len(seen) > 5
    for count, sizes in seen:
        assert count == 2000 and sizes in ({500}, {100}), (count, sizes)
    assert _view(path, key) == (2000, {100})
    assert not [p for p in (path / key).iterdir() if p.name.startswith(SWAP_PREFIX)]


class _Crash(BaseException):
    """A process dying part way (not an Exception: nothing may catch it and go on)."""


def test_a_forced_run_that_dies_mid_swap_leaves_the_new_rows_whole_and_the_next_run_completes_it(stored, monkeypatch):
    path, key = stored
    real = S.nofollow.replace
    moved = []

    def dies_after_one_move(root, src, dst):
        if src.name.endswith(STAGED):
            if moved:
                raise _Crash
            moved.append(src)
        real(root, src, dst)

    monkeypatch.setattr(S.nofollow, "replace", dies_after_one_move)
    with pytest.raises(_Crash):
        run(FORCED, path, jobs=1, chunk=100, force=True)
    monkeypatch.setattr(S.nofollow, "replace", real)
    assert [p for p in (path / key).iterdir() if p.name.startswith(SWAP_PREFIX)]  # committed, not complete
    assert _view(path, key) == (2000, {100})  # the readers already take the new set
    rows = read_store(path)
    assert sorted(rows["deal"]) == list(range(1, 2001))
    again = run(FORCED, path, jobs=1, chunk=100)  # takes the key: completes the swap, plays nothing
    assert again.played == 0 and again.reused == 2000
    assert not [p for p in (path / key).iterdir() if p.name.startswith(SWAP_PREFIX)]
    assert len(list((path / key).glob("*.parquet"))) == 20


def test_a_forced_run_that_stops_before_its_swap_keeps_the_old_rows(stored, monkeypatch):
    path, key = stored
    real = S.write_parquet
    written = []

    def full_after_five(table, p, root):
        if len(written) == 5:
            raise OSError(errno.ENOSPC, "No space left on device")
        written.append(p)
        real(table, p, root)

    monkeypatch.setattr(S, "write_parquet", full_after_five)
    with pytest.raises(StoreFullError, match="kept as they were"):
        run(FORCED, path, jobs=1, chunk=100, force=True)
    monkeypatch.setattr(S, "write_parquet", real)
    assert _view(path, key) == (2000, {500})
    assert not [p for p in (path / key).iterdir() if p.name.startswith(SWAP_PREFIX)]


def test_a_killed_forced_runs_staging_folder_is_never_read_and_is_removed(stored):
    path, key = stored
    staging = path / key / f"{SWAP_PREFIX}deadbeef0000"
    staging.mkdir()
    first = Store(path).chunk_files(key)[0]
    shutil.copy(first.path, staging / (chunk_name(key, 1, 500) + STAGED))
    assert _view(path, key) == (2000, {500})
    run(FORCED, path, jobs=1, chunk=500)
    assert not staging.exists()
