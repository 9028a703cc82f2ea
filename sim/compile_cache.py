"""Where numba keeps this project's compiled code: a folder named by a digest of the sources, so that no
process runs code compiled from other sources.

Numba's cache checks only the timestamp of the file a compiled function is
defined in; changes of functions it calls from other files are not seen (a
limit numba documents under "Cache invalidation"). So after an update that
changed `sim.engine` but not `strategies.solver.search`, the search would go
on running the engine it was first compiled with, and its figures would be
wrong. This module gives the packages whose code numba compiles (`sim` and
`strategies`) a cache folder of their own, set through ``NUMBA_CACHE_DIR``
(numba's documented setting) and named by a digest of every source file of
both packages: any change of any of them gives a new,
empty folder, and the code is compiled again from the sources as they are.
The price is one compilation per source version, on the first command after
an update or after each edit while developing (`bakers-dozen solve` of three
deals took 41 s wall, most of it compiling, against 2.5 s with the cache warm).

`use_project_cache` runs when `sim` is imported, before numba is (every
compiled module imports `sim` first), since numba places a function's cache
when the function is defined. The folder is ``bakers-dozen-<digest>`` inside
the folder the user gave ``NUMBA_CACHE_DIR``, else inside ``bakers-dozen`` in
the user's cache folder (``$XDG_CACHE_HOME`` or ``~/.cache``). Child
processes (the runner's workers) inherit the setting. The folders of the
`KEEP` most recently used source versions stay; older ones are removed.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import sys
import warnings
from pathlib import Path

PREFIX = "bakers-dozen-"
"""How the folder of one source version is named: this prefix and the digest's first `DIGEST_CHARS` characters."""
DIGEST_CHARS = 16
KEEP = 8
"""Folders of this many source versions are kept (the most recently used): worktrees and branches switched
back and forth reuse theirs, and each holds about 13 MB."""
PACKAGES = ("sim", "strategies")
"""The packages whose functions numba compiles and caches (siblings in the source tree)."""


def source_root() -> Path:
    """The folder holding the `PACKAGES`."""
    return Path(__file__).resolve().parent.parent


@functools.lru_cache(maxsize=4)
def source_digest(root: Path | None = None) -> str:
    """A digest of every ``.py`` file of the `PACKAGES` under ``root`` (default: this source tree), with their
    paths. (Numba's version is not in it: numba's own index already refuses code another version cached.)"""
    root = source_root() if root is None else root
    h = hashlib.sha256()
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            h.update(str(path.relative_to(root)).encode())
            h.update(b"\0")
            h.update(path.read_bytes())
            h.update(b"\0")
    return h.hexdigest()


def user_cache_base() -> Path:
    """Where the per-version folders go: the user's ``NUMBA_CACHE_DIR`` (when it is not already one of
    ours, inherited from a parent process), else ``bakers-dozen`` in the user's cache folder."""
    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        path = Path(given)
        return path.parent if path.name.startswith(PREFIX) else path
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "bakers-dozen"


def cache_folder() -> Path:
    """The numba cache folder of this source tree's sources."""
    return user_cache_base() / (PREFIX + source_digest()[:DIGEST_CHARS])


def use_project_cache() -> Path:
    """Point numba's cache at `cache_folder` for this process and its children; when that folder is new,
    remove the folders of all but the `KEEP` most recently used source versions. Returns the folder.

    When numba was imported before (a script that imports numba first), numba reads the setting too late
    for this process: a warning says so, as this process may then use code compiled from older sources."""
    folder = cache_folder()
    if os.environ.get("NUMBA_CACHE_DIR") != str(folder):
        os.environ["NUMBA_CACHE_DIR"] = str(folder)
        if "numba" in sys.modules:
            warnings.warn("numba was imported before bakers-dozen's packages, so this process keeps numba's "
                          "cache folder, where compiled code may predate the sources; import sim before numba",
                          RuntimeWarning, stacklevel=3)
    try:
        if folder.is_dir():
            os.utime(folder)  # marks it recently used
        else:  # a new source version: the only time there can be more than KEEP folders
            folder.mkdir(parents=True)
            _remove_old(folder.parent)
    except OSError:  # a folder that cannot be written: numba falls back to its own, as it would anyway
        pass
    return folder


def _remove_old(base: Path) -> None:
    """Remove the per-version folders in ``base`` beyond the `KEEP` most recently used."""
    folders = [p for p in base.iterdir() if p.is_dir() and p.name.startswith(PREFIX)]
    if len(folders) <= KEEP:
        return
    folders.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in folders[KEEP:]:
        shutil.rmtree(old, ignore_errors=True)
