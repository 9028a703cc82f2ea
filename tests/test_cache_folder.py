"""numba's cache folder is named by the sources (`sim.compile_cache`): a changed callee is never run stale.

Numba checks only the timestamp of the file a cached function is defined in,
so a caller cached before its callee (in another file) changed keeps the old
callee. The end-to-end test below shows that on a copy of `sim`: with numba
imported first (numba's own cache folder) the caller returns the old value;
imported as the project does, it returns the new one.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sim import compile_cache
from sim.compile_cache import PREFIX, cache_folder, source_digest, source_root

CALLEE = '''
import numba as nb


@nb.njit(cache=True)
def probe():
    return {value}
'''

CALLER = '''
import numba as nb

from sim.zz_probe import probe


@nb.njit(cache=True)
def call():
    return probe() * 10
'''


def _tree(root: Path) -> Path:
    """A source tree with the project's two compiled packages as files only (no caches)."""
    for package in compile_cache.PACKAGES:
        shutil.copytree(source_root() / package, root / package, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def test_the_digest_changes_with_any_source_file_and_only_then(tmp_path: Path) -> None:
    root = tmp_path / "tree"
    root.mkdir()
    for package in compile_cache.PACKAGES:
        (root / package / "sub").mkdir(parents=True)
        (root / package / "a.py").write_text("x = 1\n")
        (root / package / "sub" / "b.py").write_text("y = 2\n")
    (root / "elsewhere.py").write_text("z = 3\n")  # not in the packages: not in the digest
    seen = set()

    def digest() -> str:
        source_digest.cache_clear()
        return source_digest(root)

    first = digest()
    assert digest() == first  # stable
    seen.add(first)
    (root / "elsewhere.py").write_text("z = 4\n")
    assert digest() == first
    (root / "strategies" / "sub" / "b.py").write_text("y = 3\n")  # a callee's change deep in a package
    seen.add(digest())
    (root / "sim" / "c.py").write_text("")  # a new file
    seen.add(digest())
    (root / "sim" / "c.py").rename(root / "sim" / "d.py")  # a renamed one
    seen.add(digest())
    (root / "sim" / "d.py").unlink()
    (root / "strategies" / "sub" / "b.py").write_text("y = 2\n")  # back as it was: the first folder again
    assert digest() == first
    assert len(seen) == 4
    source_digest.cache_clear()


def test_the_folder_goes_inside_the_users_numba_folder_else_the_users_cache(monkeypatch: pytest.MonkeyPatch,
                                                                            tmp_path: Path) -> None:
    name = PREFIX + source_digest()[: compile_cache.DIGEST_CHARS]
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_folder() == tmp_path / "mine" / name
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "mine" / (PREFIX + "0123")))  # a parent process's
    assert cache_folder() == tmp_path / "mine" / name
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_folder() == tmp_path / "xdg" / "bakers-dozen" / name


def test_only_the_most_recently_used_folders_are_kept(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    old = []
    for i in range(compile_cache.KEEP + 3):
        folder = tmp_path / f"{PREFIX}{i:04d}"
        folder.mkdir()
        os.utime(folder, (1000 + i, 1000 + i))
        old.append(folder)
    (tmp_path / "someone-elses").mkdir()
    monkeypatch.delitem(sys.modules, "numba", raising=False)  # as in a process that has not loaded it yet
    ours = compile_cache.use_project_cache()
    assert ours.is_dir() and os.environ["NUMBA_CACHE_DIR"] == str(ours)
    kept = sorted(p.name for p in tmp_path.iterdir())
    assert kept == sorted([ours.name, "someone-elses"] + [p.name for p in old[-(compile_cache.KEEP - 1):]])


def _call(root: Path, xdg: Path, numba_first: bool) -> subprocess.CompletedProcess:
    first = "import numba; " if numba_first else ""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(root), XDG_CACHE_HOME=str(xdg))
    return subprocess.run([sys.executable, "-c", f"{first}import sim, caller; print(caller.call())"], cwd=root,
                          env=env, capture_output=True, text=True, timeout=300, check=True)


def test_a_changed_callee_in_another_file_is_compiled_again(tmp_path: Path) -> None:
    root = _tree(tmp_path / "tree")
    (root / "caller.py").write_text(CALLER)
    callee = root / "sim" / "zz_probe.py"
    for numba_first in (True, False):
        callee.write_text(CALLEE.format(value=1))
        assert _call(root, tmp_path / f"xdg{numba_first}", numba_first).stdout.split() == ["10"]
    callee.write_text(CALLEE.format(value=2))  # the caller's file is untouched
    stale = _call(root, tmp_path / "xdgTrue", numba_first=True)
    assert stale.stdout.split() == ["10"]  # numba's own folder: the old callee (what this module prevents)
    assert "numba was imported before bakers-dozen's packages" in stale.stderr
    fresh = _call(root, tmp_path / "xdgFalse", numba_first=False)
    assert fresh.stdout.split() == ["20"] and "Warning" not in fresh.stderr
    assert len(list((tmp_path / "xdgFalse" / "bakers-dozen").glob(PREFIX + "*"))) == 2  # one per source version
