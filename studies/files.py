"""A store's files, written whole or not at all, and the errors a store raises.

Every file is written to a temporary name beside it that says who writes it (`temp_path`, which
`studies.store.Store.clean_temp` reads to remove what dead writers left), flushed to disk and renamed into
place (`atomic_write_bytes`); nothing below the store's folder is followed through a link
(`studies.nofollow`). A full disk is `StoreFullError`, anything else the file system refuses a one-line
`StoreError` (`failure`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import socket
import uuid
from pathlib import Path
from typing import Any, ClassVar

from sim.errors import UserError
from studies import nofollow

MAX_JSON_BYTES = 16 * 2**20
"""A _key.json or manifest larger than this is not one this toolkit wrote (they are a few KiB); it is not parsed."""
TMP_PREFIX = ".tmp-"


class StoreError(UserError):
    """A store directory that cannot be used as asked; the message says why and what to do."""


class StoreFullError(StoreError):
    """The disk filled up while a chunk was being written (nothing finished was lost)."""


class KeyBusyError(StoreError):
    """Another live run holds the run key (`Store.hold_key`)."""


class UnusableFileError(StoreError):
    """A store file that cannot be used as it stands; ``path`` and ``reason`` say which and why
    (kept as attributes, and through pickling, so a worker's finding reaches the main process whole)."""

    MESSAGE: ClassVar[str] = "{path} is not usable: {reason}"

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(self.MESSAGE.format(path=path, reason=reason))
        self.path = path
        self.reason = reason

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.path, self.reason))


class KeyInfoError(UnusableFileError):
    """A key's ``_key.json`` that is missing, unreadable, or does not describe the key its folder is named by."""

    MESSAGE = "{path} is damaged: {reason}"


class DamagedFileWarning(UserWarning):
    """A store file that could not be read as written; the message names it, says what was done instead
    and how to repair it. Readers warn rather than fail so that one damaged file never hides the rest."""


class RunGone(RuntimeError):
    """A worker's run no longer holds its key (killed, or replaced by a newer run): its chunk is not written."""


class CorruptChunkError(UnusableFileError):
    """A chunk file that is truncated, damaged, or does not hold what its name says."""

    MESSAGE = "chunk file {path} is not usable: {reason}"


def failure(what: str, exc: OSError) -> StoreError:
    """A store operation the file system refused: `StoreFullError` when the disk is full, else `StoreError`."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(f"disk full: {what} ({exc.strerror})")
    return StoreError(f"{what}: {exc.strerror or exc}")


class Unreadable(Exception):
    """A small JSON file of a store that cannot be read; the message says why."""


def small_json(root: Path, path: Path) -> Any:
    """The JSON value in ``path`` of store ``root``; `Unreadable` when it is missing, a link, too large, empty or
    not JSON."""
    try:
        with nofollow.open_read(root, path) as fh:
            data = fh.read(MAX_JSON_BYTES + 1)
    except FileNotFoundError:
        raise Unreadable("it is missing") from None
    except OSError as exc:
        raise Unreadable(f"it cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_JSON_BYTES:
        raise Unreadable(f"it is larger than {MAX_JSON_BYTES:,} bytes, which no file this toolkit writes is")
    if not data.strip():
        raise Unreadable("it is empty")
    try:
        return json.loads(data)
    except RecursionError:
        raise Unreadable("it is nested too deeply to be one this toolkit wrote") from None
    except ValueError as exc:  # not JSON, or not UTF-8 text
        raise Unreadable(f"it is not JSON ({' '.join(str(exc).split())[:120]})") from None


def temp_path(path: Path) -> Path:
    """A temporary name beside ``path`` that says who is writing it (pid, host), for `Store.clean_temp`; it ends
    in ``.tmp``, not ``.parquet``, so that a glob such as DuckDB's ``**/*.parquet`` never reads a half-written chunk."""
    return path.parent / f"{TMP_PREFIX}{os.getpid()}@{uuid.uuid4().hex[:8]}@{socket.gethostname()}@{path.name}.tmp"


def atomic_write_bytes(root: Path, path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in store ``root`` whole or not at all (a new temporary file, renamed)."""
    tmp = temp_path(path)
    try:
        with nofollow.create(root, tmp) as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        nofollow.replace(root, tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            nofollow.unlink(root, tmp)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            raise StoreFullError(f"disk full while writing {path} ({exc.strerror})") from None
        raise StoreError(f"cannot write {path}: {exc.strerror or exc}") from None
    fsync_dir(path.parent)


def move_into(root: Path, old: Path, new: Path) -> None:
    """Rename ``old`` (a file or a folder, if it exists) to ``new`` in store ``root``. When ``new`` exists too (an
    upgrade repeated after a crash, or raced by another), a folder's entries are moved into it and a file is
    dropped (a key's ``key.json`` says the same whoever wrote it). A link at either is refused (`studies.nofollow`)."""
    if not nofollow.exists(root, old):
        return
    folder = nofollow.is_folder(root, old)
    if not nofollow.exists(root, new):
        with contextlib.suppress(FileNotFoundError):
            os.rename(old, new)
        return
    if folder:
        if not nofollow.is_folder(root, new):
            raise NotADirectoryError(errno.ENOTDIR, f"{new} is not a folder", str(new))
        for entry in os.scandir(old):
            nofollow.replace(root, old / entry.name, new / entry.name)
        with contextlib.suppress(FileNotFoundError):
            old.rmdir()
    else:
        nofollow.unlink(root, old)


def fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` still runs; a zombie (killed, not yet reaped) counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True  # no /proc (not Linux): trust kill()
