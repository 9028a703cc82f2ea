"""Damaged store files are reported and never silently drop a run.

Every kind of file a store holds (the marker, a key's ``key.json``, a manifest, a chunk
file) is truncated, garbled, deleted or swapped for a sound file of another key, and
`read_store`, `bakers-dozen report` and a resumed `bakers-dozen simulate` must each say
so, name the file, and lose or duplicate no row.
"""

from __future__ import annotations

import errno
import json
import shutil
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from runner_helpers import rows

from bakers_dozen.cli import main
from sim.rules import find_variant
from studies import store as S
from studies.files import DamagedFileWarning, KeyInfoError, StoreError, StoreFullError
from studies.reading import read_store
from studies.records import CORRUPT, KEY_INFO, MANIFESTS
from studies.runner import run
from studies.spec import RunSpec
from studies.store import Store

RULES = find_variant("bakers-dozen")
OTHER = find_variant("dick-1883")
SIMULATE = ["simulate", "-n", "300", "--chunk", "100", "-j", "1", "-q"]
"""The command that made run ``a`` of the store (bakers-dozen, greedy, deals 1-300)."""
KINDS = ["key.json", "manifest", "chunk", "marker"]
HOW = ["truncate", "garble", "delete", "swap"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, str, str]:
    """A store of two runs: a (bakers-dozen, deals 1-300 in three chunks) and b (dick-1883, deals 1-100)."""
    path = tmp_path_factory.mktemp("damage") / "store"
    a = run(RunSpec(RULES, "greedy", 300), path, jobs=1, chunk=100)
    b = run(RunSpec(OTHER, "greedy", 100), path, jobs=1, chunk=100)
    return path, a.key, b.key


@pytest.fixture
def store(pristine, tmp_path) -> tuple[Path, str, str]:
    path, a, b = pristine
    shutil.copytree(path, tmp_path / "store")
    return tmp_path / "store", a, b


def _file(path: Path, key: str, kind: str) -> Path:
    if kind == "marker":
        return path / S.MARKER
    if kind == "key.json":
        return path / key / KEY_INFO
    if kind == "manifest":
        return sorted((path / key / MANIFESTS).glob("*.json"))[0]
    return Store(path).chunk_files(key)[0].path


def _damage(path: Path, a: str, b: str, kind: str, how: str) -> Path:
    """Damage the ``kind`` file of run ``a`` in the way ``how``; return its path."""
    f = _file(path, a, kind)
    data = f.read_bytes()
    if how == "truncate":
        f.write_bytes(data[: len(data) // 2])
    elif how == "garble":
        f.write_bytes(bytes(range(256)) + data[256:])
    elif how == "delete":
        f.unlink()
    else:  # a sound file, but another key's (the marker gets a key.json)
        shutil.copy(_file(path, b, "key.json" if kind == "marker" else kind), f)
    return f


def _read(path: Path, **filters) -> tuple[object, list[str]]:
    """read_store's rows and the damage it reported."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        df = read_store(path, **filters)
    return df, [str(w.message) for w in caught if issubclass(w.category, DamagedFileWarning)]


def _cli(*args: str):
    return CliRunner().invoke(main, list(args))


def _one_line_error(result, *needles: str) -> None:
    assert result.exit_code == 2, (result.exit_code, result.output)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.mark.parametrize("how", HOW)
@pytest.mark.parametrize("kind", KINDS)
def test_a_damaged_file_is_reported_by_read_store_report_and_simulate(pristine, store, tmp_path, kind, how):
    path, a, b = store
    clean = rows(read_store(pristine[0]))
    f = _damage(path, a, b, kind, how)
    if kind == "marker":
        with pytest.raises(StoreError, match=S.MARKER):
            read_store(path)
        _one_line_error(_cli("report", str(path), "--out", str(tmp_path / "out")), S.MARKER)
        _one_line_error(_cli(*SIMULATE, "--store", str(path)), S.MARKER)
        f.write_text(json.dumps({"format": S.FORMAT, "version": S.FORMAT_VERSION}))  # what the message says to do
        assert rows(read_store(path)).equals(clean)
        return

    # read_store: no run is dropped, and every damaged file that changes the rows is named
    df, damage = _read(path)
    lost = 100 if kind == "chunk" else 0
    assert len(df) == 400 - lost and set(df["key"].astype(str)) == {a, b}
    assert len(_read(path, variant=RULES.name)[0]) == 300 - lost  # a filter still finds a run whose key.json is damaged
    if kind == "manifest":
        assert damage == []  # a manifest holds no rows
    else:
        assert len(damage) == 1 and (str(f) in damage[0] or "no chunk file" in damage[0]), damage

    # report: a warning line for each damaged file, the same lines in the report, every run in it
    out = tmp_path / "out"
    r = _cli("report", str(path), "--out", str(out))
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if line.startswith("bakers-dozen: warning: ")]
    assert warned and all(line.count("\n") == 0 for line in warned)
    assert any(str(f) in line or a in line for line in warned), r.stderr
    md = (out / "report.md").read_text()
    assert f"2 run(s), {400 - lost:,} deals played" in md and "damaged file(s)" in md

    # simulate: says what it found (a deleted manifest leaves nothing to find), replays only what is missing
    r = _cli(*SIMULATE, "--store", str(path))
    assert r.exit_code == 0, r.output
    assert f"(played {lost}, reused {300 - lost})" in r.output
    if how != "delete":
        assert f.name in r.output and ("\n  damaged  " in r.output or "\n  replayed  " in r.output), r.output
    df, damage = _read(path)
    assert damage == [] and rows(df).equals(clean)
    assert Store(path).read_key_info(a)["key"] == a
    assert Store(path).read_manifests(a)[1] == []
    r = _cli(*SIMULATE, "--store", str(path))
    assert r.exit_code == 0 and "\n  damaged  " not in r.output and "(played 0, reused 300)" in r.output


KEY_JSON_DAMAGE = {
    # case: (text written to key.json, or a function of the sound info giving it, what the message says)
    "empty": ("", "it is empty"),
    "not json": ("{", "it is not JSON"),
    "binary": ("\udcff", "it is not JSON"),
    "nested": ("[" * 100_000, "nested too deeply"),
    "a list": ("[]", "a JSON list, not an object"),
    "a field missing": (lambda i: {k: v for k, v in i.items() if k != "seed"}, "field 'seed' is missing"),
    "a field of the wrong type": (lambda i: {**i, "seed": "0"}, "field 'seed' is '0'; it must be a int"),
    "a bool for an int": (lambda i: {**i, "strategy_seed": True}, "field 'strategy_seed' is True"),
    "an int for a bool": (lambda i: {**i, "clairvoyant": 0}, "field 'clairvoyant' is 0; it must be a bool"),
    "another key's fields": (lambda i: {**i, "seed": 5}, "not {key}, the key of its folder (it describes another run)"),
    "another key's name": (lambda i: {**i, "key": "0" * 16}, "it names run key '0000000000000000', not {key}"),
}


@pytest.mark.parametrize("case", sorted(KEY_JSON_DAMAGE))
def test_read_key_info_says_what_is_wrong_and_the_rows_stand_in(store, case):
    path, a, _ = store
    f = path / a / KEY_INFO
    sound = json.loads(f.read_text())
    text, reason = KEY_JSON_DAMAGE[case]
    if callable(text):
        text = json.dumps(text(sound))
    f.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(KeyInfoError) as info:
        Store(path).read_key_info(a)
    assert str(f) in str(info.value) and reason.format(key=a) in str(info.value), str(info.value)
    with pytest.warns(DamagedFileWarning, match="its rows are read with what their own columns say"):
        assert Store(path).key_info(a) == sound  # the rows carry every field of key.json


def test_a_key_json_too_large_to_be_ours_is_not_parsed(store, monkeypatch):
    path, a, _ = store
    monkeypatch.setattr("studies.files.MAX_JSON_BYTES", 100)
    with pytest.raises(KeyInfoError, match="larger than 100 bytes"):
        Store(path).read_key_info(a)


def test_a_key_json_lost_with_its_chunks_unreadable_leaves_just_the_key(store):
    path, a, _ = store
    (path / a / KEY_INFO).unlink()
    for c in Store(path).chunk_files(a):
        c.path.write_bytes(b"PAR1")
    with pytest.warns(DamagedFileWarning, match="no chunk file of it can be read either"):
        assert Store(path).key_info(a) == {"key": a}


def test_a_registration_cut_short_before_key_json_is_no_damage(tmp_path):
    Store.open(tmp_path)
    (tmp_path / ("ab" * 8) / MANIFESTS).mkdir(parents=True)
    df, damage = _read(tmp_path)
    assert df.empty and damage == []


def test_lost_deals_name_exactly_the_deleted_ranges_within_the_selection(store):
    path, a, _ = store
    Store(path).chunk_files(a)[1].path.unlink()  # deals 101-200
    st = Store(path)
    assert st.lost_deals(a, st.chunk_files(a)) == [(101, 200)]
    assert st.lost_deals(a, st.chunk_files(a, 150, 250), 150, 250) == [(150, 200)]
    assert st.lost_deals(a, st.chunk_files(a, 201, 300), 201, 300) == []
    df, damage = _read(path, deals=(190, 210))
    assert sorted(df.loc[df["key"] == a, "deal"]) == list(range(201, 211))
    assert len(damage) == 1 and "11 deals" in damage[0] and "190-200" in damage[0]


def test_an_unfinished_run_claims_no_deals(store):
    path, a, _ = store
    m = _file(path, a, "manifest")
    data = json.loads(m.read_text())
    del data["finished"]
    m.write_text(json.dumps(data))
    Store(path).chunk_files(a)[2].path.unlink()
    assert Store(path).lost_deals(a, Store(path).chunk_files(a)) == []


def test_a_store_without_its_marker_says_how_to_give_it_back(store):
    path, _, _ = store
    (path / S.MARKER).unlink()
    for create in (False, True):
        with pytest.raises(StoreError, match="holds run folders of a results store but not its marker") as info:
            Store.open(path, create=create)
        assert f'{{"format": "bakers-dozen-results", "version": {S.FORMAT_VERSION}}}' in str(info.value)


def test_a_file_system_that_refuses_is_a_store_error_never_a_bug(store, tmp_path, monkeypatch):
    path, a, _ = store
    real_mkdir, real_scandir = Path.mkdir, S.os.scandir

    def full(self, *args, **kwargs):
        if self.name in (MANIFESTS, CORRUPT):
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_mkdir(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", full)
    with pytest.raises(StoreFullError, match="disk full: cannot create the run folder"):
        run(RunSpec(RULES, "greedy", 10, seed=7), path, jobs=1)
    r = _cli("simulate", "-n", "10", "--seed", "8", "--store", str(path))
    assert r.exit_code == 1 and "disk full: cannot create the run folder" in r.output and "Traceback" not in r.output
    with pytest.raises(StoreFullError, match="cannot move the damaged file"):
        Store(path).quarantine(Store(path).chunk_files(a)[0])
    monkeypatch.setattr(Path, "mkdir", real_mkdir)

    def refused(d):
        if Path(d).name == a:
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_scandir(d)

    monkeypatch.setattr(S.os, "scandir", refused)
    with pytest.raises(StoreError, match=f"cannot list the run folder .*{a}: Permission denied"):
        read_store(path)
    _one_line_error(_cli("report", str(path), "--out", str(tmp_path / "out")), "cannot list the run folder")


@pytest.mark.parametrize("kind", ["key.json", "manifest", "chunk"])
def test_compare_says_what_its_runs_found_damaged_even_when_quiet(store, tmp_path, kind):
    path, a, b = store
    f = _damage(path, a, b, kind, "garble")
    r = _cli("compare", "--variants", f"{RULES.name},{OTHER.name}", "--strategy", "greedy", "--deals", "100", "-j", "1",
             "-q", "--store", str(path), "--out", str(tmp_path / "out"))
    assert r.exit_code == 0, r.output
    warned = [line for line in r.stderr.splitlines() if line.startswith("bakers-dozen: warning: ")]
    assert len(warned) == 1 and f.name in warned[0], r.stderr
    assert Store(path).read_manifests(a)[1] == [] and Store(path).read_key_info(a)["key"] == a


@pytest.mark.parametrize("key", ["../x", "", "ABCDEF0123456789", "0" * 17, 5])
def test_a_key_that_is_no_run_key_is_refused_not_read_outside_the_store(store, key):
    path, a, _ = store
    with pytest.raises(StoreError, match="is not a run key; a run key is 16 hex digits"):
        read_store(path, key=key)
    assert len(read_store(path, key=a)) == 300
