"""A report writes only inside its --out folder, under safe names, and only when complete.

Hostile variant names come from a store's manifests (a shared store) and from
variant files; symbolic links already in --out must not be written through; a
failing disk leaves an earlier report as it was and no partial folder.
"""

from __future__ import annotations

import errno
import html
import json
import os
import re
import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

import reports.render
from bakers_dozen.cli import main
from reports.build import build, variant_toml
from reports.output import (
    MAX_NAME_CHARS,
    OutputError,
    check_report_dir,
    contained,
    safe_name,
    staged_report,
    write_file_atomically,
)
from reports.render import md_escape
from sim.rules import VARIANTS, Rules, RulesError, rules_from_mapping
from studies.files import DamagedFileWarning
from studies.runner import run
from studies.spec import RunSpec

HOSTILE = [
    "/some/dir/x", "../../x", "../../../../../../../../tmp/x", "a/b", "a\\b", "a_b", "a?b", "..", ".", "", " ",
    "~/.bashrc", "C:\\Windows\\x", "con", "NUL", "x.toml/../../y", "ｆｕｌｌｗｉｄｔｈ", "café", "emoji 🂡🂮",
    "right-to-left \u202eexe.toml", "zero\u200bwidth", "new\nline", "tab\there", "bell\x07", "lone \udc80 surrogate",
    "x" * 5000, "é" * 300, "$\\frac{1}{0}$", "<script>alert(1)</script>", "[l](http://e) ![i](j)", "`code` | pipe",
]
SAFE = re.compile(r"^[A-Za-z0-9._-]+$")


# --- names and paths ------------------------------------------------------------------------


def test_safe_names_are_safe_bounded_and_unique():
    taken: set[str] = set()
    stems = [safe_name(n, taken) for n in HOSTILE]
    for name, stem in zip(HOSTILE, stems, strict=True):
        assert SAFE.match(stem), (name, stem)
        assert len(stem) <= MAX_NAME_CHARS and not stem.startswith(".") and stem not in ("..", ".")
        assert stem.lower() not in ("con", "nul")
    assert len({s.lower() for s in stems}) == len(stems)  # unique even on a case-insensitive file system


def test_safe_names_are_deterministic_and_keep_plain_names():
    assert safe_name("my-variant_2.1", set()) == "my-variant_2.1"
    assert safe_name("a/b", set()) == safe_name("a/b", set())
    taken: set[str] = set()
    first, second = safe_name("Foo", taken), safe_name("foo", taken)
    assert first == "Foo" and second.lower() != "foo"


def test_contained_refuses_paths_that_leave_the_folder(tmp_path):
    root = tmp_path / "out"
    (root / "sub").mkdir(parents=True)
    assert contained(root, root / "sub" / "x.toml") == root / "sub" / "x.toml"
    for bad in (root / ".." / "x", root / "sub" / ".." / ".." / "x", Path("/etc/passwd"), tmp_path):
        with pytest.raises(OutputError, match="outside the output folder"):
            contained(root, bad)
    (tmp_path / "elsewhere").mkdir()
    (root / "link").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(OutputError, match="outside the output folder"):
        contained(root, root / "link" / "x.toml")


def test_variant_files_read_back_as_the_same_rules():
    read_back = 0
    for name in HOSTILE:
        rules = Rules(face_down=1, worrying_back=True).replace(name=name)
        data = tomllib.loads(variant_toml(rules))
        try:
            back = rules_from_mapping(data)
        except RulesError as exc:  # a name that variant files may not carry (a store's manifest can still hold it)
            assert str(exc).startswith("rule 'name' has value"), exc
            continue
        read_back += 1
        assert back.fingerprint == rules.fingerprint
        assert back.name == name.encode("utf-8", "replace").decode("utf-8")
    assert read_back >= 15  # most hostile names are legal names: path characters, markup, unicode


def test_markdown_escape_leaves_no_markup():
    for name in HOSTILE:
        text = md_escape(name)
        assert "\n" not in text
        assert not re.search(r"(?<!\\)[\[\]<>|`*_#!]", text), text


# --- a store whose manifests carry hostile names ------------------------------------------------


RUN_RULES = [Rules(name="custom-a", face_down=1), Rules(name="custom-b", face_down=2), Rules(name="custom-c", face_down=3),
             Rules(name="custom-d", worrying_back=True)]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("paths") / "store"
    for rules in RUN_RULES:
        run(RunSpec(rules, "greedy", 40), path, jobs=1)
    return path


@pytest.fixture
def renamed(store):
    """Gives the store's manifests other variant names; puts them back afterwards, so that the module's store
    stays sound for the other tests (a manifest whose name no variant may carry is reported as damaged)."""
    files = sorted(store.glob("*/_manifests/*.json"))
    originals = [f.read_bytes() for f in files]

    def rename(names: list[str]) -> None:
        assert len(files) == len(RUN_RULES)
        for f, name in zip(files, names, strict=True):
            data = json.loads(f.read_text())
            data["parameters"]["variant"] = name
            f.write_text(json.dumps(data))

    yield rename
    for f, data in zip(files, originals, strict=True):
        f.write_bytes(data)


def _snapshot(root: Path, skip: tuple[Path, ...]) -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in root.rglob("*")
            if p.is_file() and not any(s == p or s in p.parents for s in skip)}


def _legal_name(name: str) -> bool:
    try:
        rules_from_mapping({"name": name.encode("utf-8", "replace").decode("utf-8")})  # as the file is written
    except RulesError:
        return False
    return True


@pytest.mark.parametrize("names", [HOSTILE[i : i + 4] for i in range(0, 28, 4)])
def test_hostile_manifest_names_write_only_inside_out(store, renamed, tmp_path, names):
    renamed(names)
    out = tmp_path / "deep" / "er" / "out"
    before = _snapshot(tmp_path, (out,))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedFileWarning)
        html_path, md_path, report = build(store, out)
    presets = {v.rules.fingerprint for v in VARIANTS}
    unusable = {f.parent.parent.name for f, name, rules in zip(sorted(store.glob("*/_manifests/*.json")), names, RUN_RULES,
                                                                strict=True)
                if not _legal_name(name) and rules.fingerprint not in presets}
    assert {k for k in (store.glob("*")) if any(f"run {k.name} does not record valid rules" in str(w.message)
                                                for w in caught)} == {store / k for k in unusable}
    assert _snapshot(tmp_path, (out,)) == before  # nothing written outside --out
    assert not (tmp_path / "x.toml").exists() and not Path("/some/dir/x.toml").exists()
    written = [p for p in out.rglob("*")]
    assert all(out in p.parents for p in written) and not any(p.is_symlink() for p in written)
    tomls = sorted((out / "variants").glob("*.toml"))
    # a variant file is written only for a name a variant file may carry, on rules that are no preset's (those
    # are named by the preset in the commands)
    manifests = sorted(store.glob("*/_manifests/*.json"))
    legal = [n for f, n in zip(manifests, names, strict=True) if _legal_name(n) and rules_from_mapping(
        json.loads(f.read_text())["parameters"]["rules"]).fingerprint not in presets]
    assert len(tomls) == len(legal)
    for t in tomls:
        assert SAFE.match(t.stem) and len(t.stem) <= MAX_NAME_CHARS
        assert rules_from_mapping(tomllib.loads(t.read_text("utf-8"))).fingerprint in {r.fingerprint for r in RUN_RULES}
    shown = {tomllib.loads(t.read_text("utf-8"))["name"] for t in tomls}
    assert shown == {n.encode("utf-8", "replace").decode("utf-8") for n in legal}
    md = md_path.read_text("utf-8")
    for t in tomls:  # the commands name the files where they are
        assert str(out / "variants" / t.name) in md


def test_manifests_that_lie_about_rules_or_are_not_json_are_ignored_and_named(store, renamed, tmp_path):
    files = sorted(store.glob("*/_manifests/*.json"))
    renamed(["../../a", "../../b", "../../c", "../../d"])
    data = json.loads(files[0].read_text())
    rules = data["parameters"]["rules"]
    rules["worrying_back"] = not rules["worrying_back"]  # not the rules of the rows: its fingerprint differs
    files[0].write_text(json.dumps(data))
    files[1].write_text("[" * 100_000)
    files[2].write_text(json.dumps({"parameters": "x"}))
    data = json.loads(files[3].read_text())
    data["parameters"]["rules"] = {"columns": [1], "face_down": "many"}
    files[3].write_text(json.dumps(data))
    out = tmp_path / "out"
    with pytest.warns(DamagedFileWarning) as caught:
        build(store, out)
    assert not (out / "variants").exists()  # no rules trusted, so no variant file
    said = [str(w.message) for w in caught if issubclass(w.category, DamagedFileWarning)]
    assert any(str(files[1]) in m and "nested too deeply" in m for m in said), said
    presets = {v.rules.fingerprint for v in VARIANTS}
    for f in (files[0], files[2], files[3]):  # each run whose rules are unknown (no preset's either) is named
        key = f.parent.parent.name
        fingerprint = json.loads((store / key / "_key.json").read_text())["rules_fingerprint"]
        named = any(f"manifest of run {key} does not record valid rules" in m for m in said)
        assert named == (fingerprint not in presets), (key, said)
    report = (out / "report.md").read_text("utf-8")
    assert all(md_escape(m) in report or m in report for m in said)


def test_manifests_are_read_only_from_the_store_keys_own_folder(tmp_path):
    from reports.build import latest_manifest

    store = tmp_path / "store"
    (tmp_path / "outside" / "manifests").mkdir(parents=True)
    (tmp_path / "outside" / "manifests" / "m.json").write_text('{"parameters": {"variant": "from outside"}}')
    (store / "abc123" / "manifests").mkdir(parents=True)
    (store / "abc123" / "manifests" / "m.json").write_text('{"parameters": {"variant": "mine"}}')
    assert latest_manifest(store, "abc123")["parameters"]["variant"] == "mine"
    for key in ("../outside", "..", str(tmp_path / "outside"), "a/../../outside"):
        assert latest_manifest(store, key) == {}


# --- names from the rows (variant files) shown as written, escaped ---------------------------------


def test_names_in_the_report_keep_their_text_escaped(tmp_path):
    name = "<script>alert(1)</script> | [l](http://e) $\\frac{1}{0}$ *e* `q`"
    st = tmp_path / "store"
    run(RunSpec(Rules(face_down=1).replace(name=name), "greedy", 30), st, jobs=1)
    run(RunSpec(Rules(face_down=2).replace(name="x" * 64), "greedy", 30), st, jobs=1)
    html_path, md_path, _ = build(st, tmp_path / "out")
    page = html_path.read_text("utf-8")
    assert html.escape(name) in page.replace("<wbr>", "") and "<script" not in page  # <wbr>: a line may break there
    md = md_path.read_text("utf-8")
    assert md_escape(name) in md and not re.search(r"(?<!\\)<script", md)
    for svg in (tmp_path / "out" / "charts").glob("*.svg"):
        assert "<script" not in svg.read_text("utf-8")


def test_a_variant_file_with_a_hostile_name_through_the_cli(tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    out = tmp_path / "a" / "b" / "out"
    for i, name in enumerate([str(victim / "x"), "../../../victim/y", "../victim/z", "a/../../victim/w"]):
        toml = tmp_path / f"v{i}.toml"
        toml.write_text(f'name = {json.dumps(name)}\nface_down = {1 + i % 3}\n', encoding="utf-8")
        r = CliRunner().invoke(main, ["compare", "--variants", f"bakers-dozen,{toml}", "--strategy", "greedy", "--deals", "30",
                                      "--store", str(tmp_path / "store"), "--out", str(out), "-j", "1", "-q"])
        if r.exit_code == 2:  # refused as input: one line, nothing written
            assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("bakers-dozen: error:")
            continue
        assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["report", str(tmp_path / "store"), "--out", str(out), "--force"])  # compare's folder
    assert r.exit_code == 0, r.output
    assert list(victim.iterdir()) == []
    assert all(out in p.parents for p in out.rglob("*"))
    assert all(SAFE.match(t.stem) for t in (out / "variants").glob("*"))


def test_a_result_file_is_written_atomically(tmp_path):
    target = tmp_path / "rows.csv"
    target.write_text("old rows")

    def half_then_full(tmp: Path) -> None:
        tmp.write_text("half")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    with pytest.raises(OutputError, match="No space left on device"):
        write_file_atomically(target, half_then_full)
    assert target.read_text() == "old rows" and [p.name for p in tmp_path.iterdir()] == ["rows.csv"]
    write_file_atomically(target, lambda tmp: tmp.write_text("new rows"))
    assert target.read_text() == "new rows" and [p.name for p in tmp_path.iterdir()] == ["rows.csv"]


# --- symbolic links in --out ------------------------------------------------------------------


@pytest.mark.parametrize("item", ["charts", "variants", "report.html", "report.md"])
def test_a_symlink_in_out_is_refused_before_any_work(store, tmp_path, item):
    out = tmp_path / "out"
    out.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (out / item).symlink_to(elsewhere if "." not in item else elsewhere / "keep.txt")
    r = CliRunner().invoke(main, ["report", str(store), "--out", str(out)])
    assert r.exit_code == 2 and "symbolic link" in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"] and (elsewhere / "keep.txt").read_text() == "keep"


# --- checked before the work, written atomically -------------------------------------------------


def test_unusable_out_folders_are_refused_at_once(store, tmp_path, monkeypatch):
    afile = tmp_path / "file"
    afile.write_text("x")
    for out in (afile, afile / "below"):
        with pytest.raises(OutputError):
            check_report_dir(out)
        r = CliRunner().invoke(main, ["report", str(store), "--out", str(out)])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert afile.read_text() == "x"

    def read_only(self, *args, **kwargs):
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(OutputError, match="not writable"):
        check_report_dir(tmp_path / "new")


def _old_report(out: Path) -> dict[str, str]:
    (out / "charts").mkdir(parents=True)
    files = {"report.html": "old html", "report.md": "old md", "charts/old.png": "old png", "notes.txt": "mine"}
    for rel, text in files.items():
        (out / rel).write_text(text)
    return files


def _same(out: Path, files: dict[str, str]) -> None:
    assert {str(p.relative_to(out)) for p in out.rglob("*") if p.is_file()} == set(files)
    for rel, text in files.items():
        assert (out / rel).read_text() == text
    assert not [p for p in out.parent.rglob("*") if ".partial-" in p.name]


@pytest.mark.parametrize("where", ["charts", "markdown", "html", "move"])
def test_a_failing_disk_leaves_the_old_report_and_no_partial_folder(store, tmp_path, monkeypatch, where):
    out = tmp_path / "out"
    files = _old_report(out)
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def boom(*args, **kwargs):
        raise full

    if where == "charts":
        monkeypatch.setattr("matplotlib.figure.Figure.savefig", boom)  # charts load pyplot when they draw
        monkeypatch.setattr("joblib.cpu_count", lambda *a, **k: 1)  # drawn in this process, where savefig fails
    elif where == "markdown":
        monkeypatch.setattr("reports.build.to_markdown", boom)
    elif where == "html":
        monkeypatch.setattr("reports.build.to_html", boom)
    else:
        real = os.replace
        state = {"calls": 0, "fail_at": 6}  # after the 3 old items are moved aside and 2 new ones are in place

        def replace_then_fail(a, b):
            state["calls"] += 1
            if state["calls"] == state["fail_at"]:
                raise full
            real(a, b)

        monkeypatch.setattr("reports.output.os.replace", replace_then_fail)
    with pytest.raises(OutputError, match="No space left on device"):
        build(store, out)
    _same(out, files)
    if where == "move":
        state.update(calls=0, fail_at=1)  # a new folder: its one rename fails
    fresh = tmp_path / "fresh"
    with pytest.raises(OutputError):
        build(store, fresh)
    assert not fresh.exists()


def test_a_complete_report_replaces_the_old_one_and_leaves_other_files(store, tmp_path):
    out = tmp_path / "out"
    _old_report(out)
    build(store, out)
    assert (out / "notes.txt").read_text() == "mine"
    assert not (out / "charts" / "old.png").exists() and (out / "charts" / "answer.svg").exists()
    assert (out / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert not [p for p in tmp_path.rglob("*") if ".partial-" in p.name]


def test_staged_report_removes_its_folder_on_any_error(tmp_path):
    out = tmp_path / "out"
    with pytest.raises(KeyError), staged_report(out) as work:
        (work / "report.html").write_text("half")
        raise KeyError("a bug")
    assert not out.exists() and list(tmp_path.iterdir()) == []


def _mount_tmpfs(path: Path, size: str) -> bool:
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], capture_output=True)
    return done.returncode == 0


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.geteuid() != 0, reason="mounting a tmpfs needs root on Linux")
def test_a_really_full_and_a_read_only_disk(store, tmp_path):
    disk = tmp_path / "disk"
    if not _mount_tmpfs(disk, "96k"):
        pytest.skip("cannot mount a tmpfs here")
    try:
        out = disk / "out"
        files = _old_report(out)
        r = CliRunner().invoke(main, ["report", str(store), "--out", str(out)])
        assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
        assert "No space left on device" in r.output
        _same(out, files)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        r = CliRunner().invoke(main, ["report", str(store), "--out", str(out)])
        assert r.exit_code == 2 and "not writable" in r.output and len(r.output.strip().splitlines()) == 1, r.output
        _same(out, files)
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_the_report_command_moves_a_report_into_place_only_when_complete(store, tmp_path):
    """Through the real command in its own process: a writer failing half-way leaves the old report."""
    out = tmp_path / "out"
    files = _old_report(out)
    code = ("import sys, errno, os, reports.build as b\n"
            "def boom(*a, **k): raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
            "b.to_markdown = boom\n"
            "from bakers_dozen.cli import main\n"
            "main(sys.argv[1:])\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(reports.render.__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, "-c", code, "report", str(store), "--out", str(out)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and done.stderr.startswith("bakers-dozen: error:")
    _same(out, files)
    done = subprocess.run([sys.executable, "-m", "bakers_dozen", "report", str(store), "--out", str(out)], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    assert (out / "report.md").read_text().startswith("# ") and (out / "notes.txt").read_text() == "mine"
