"""A results store's files, opened, made, moved and removed without ever following a symbolic link.

A store holds no symbolic links. The folder the user names may itself be one (they chose where it
leads), but below it every folder the store uses (a key's folder, ``_manifests``, ``_corrupt``,
``.tasks``, a staging folder) is checked with ``lstat``, component by component from the store's
folder down, and every file is opened with ``O_NOFOLLOW``; a link met anywhere is refused with an
`OSError` (``ELOOP``) whose text names it and says why, which the store turns into its one-line
`studies.files.StoreError`, or, for a file it only reads, into a damage report. So a link planted in a
store never makes the toolkit read, create, truncate, move or delete anything outside it.

Renaming and removing act on a name itself, never on what a link there leads to, so they need only the
folders above the name checked. The checks are made each time a path is used; a process that swaps a
folder for a link between the check and the use could still redirect that one use, but anyone who can do
that can already write the store's data.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import IO

from sim.regular_files import open_regular_fd

_NOFOLLOW = os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def link_error(path: Path) -> OSError:
    """The error for a symbolic link found at ``path`` inside a store."""
    return OSError(errno.ELOOP, f"{path} is a symbolic link, and a results store holds none (the toolkit never "
                                "follows one, so that nothing outside the store is read or written): remove it")


def check_folders(root: Path, path: Path) -> None:
    """Raise `OSError` when a folder between ``root`` (not included) and ``path`` (not included) is a symbolic
    link or not a folder; ``path`` must lie below ``root``."""
    here = root
    for part in path.relative_to(root).parts[:-1]:
        here = here / part
        mode = os.lstat(here).st_mode
        if stat.S_ISLNK(mode):
            raise link_error(here)
        if not stat.S_ISDIR(mode):
            raise NotADirectoryError(errno.ENOTDIR, f"{here} is not a folder", str(here))


def open_fd(root: Path, path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags)`` after `check_folders`, never through a link at ``path`` itself, and only onto a
    regular file (a FIFO, a folder or a device there is refused without blocking: `sim.regular_files`)."""
    check_folders(root, path)
    try:
        return open_regular_fd(path, flags | _NOFOLLOW, mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_error(path) from None
        raise


def open_read(root: Path, path: Path) -> IO[bytes]:
    """``path`` opened to read, as a binary file object (`open_fd`)."""
    return os.fdopen(open_fd(root, path, os.O_RDONLY), "rb")


def create(root: Path, path: Path) -> IO[bytes]:
    """A new file at ``path`` opened to write (refused when anything, a link included, is there already)."""
    return os.fdopen(open_fd(root, path, os.O_WRONLY | os.O_CREAT | os.O_EXCL), "wb")


def is_folder(root: Path, path: Path) -> bool:
    """Whether ``path`` is a folder (False when nothing is there); `OSError` for a link, there or above."""
    check_folders(root, path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return False
    if stat.S_ISLNK(mode):
        raise link_error(path)
    return stat.S_ISDIR(mode)


def exists(root: Path, path: Path) -> bool:
    """Whether anything is at ``path`` (a link counts: it is not looked through); checks the folders above."""
    check_folders(root, path)
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    return True


def make_folder(root: Path, path: Path) -> None:
    """Make the folder ``path`` unless it is one already (its parent must exist); `OSError` for a link."""
    check_folders(root, path)
    try:
        path.mkdir()
    except FileExistsError:
        if not is_folder(root, path):
            raise NotADirectoryError(errno.ENOTDIR, f"{path} is not a folder", str(path)) from None


def replace(root: Path, src: Path, dst: Path) -> None:
    """``os.replace(src, dst)``, both below ``root``, their folders checked (the names themselves are not followed)."""
    check_folders(root, src)
    check_folders(root, dst)
    os.replace(src, dst)


def unlink(root: Path, path: Path) -> None:
    """Remove the name ``path`` (a link is removed, not what it leads to); nothing there is no error."""
    check_folders(root, path)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
