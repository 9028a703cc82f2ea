"""Opening a file the toolkit reads or overwrites only when it is a regular file, without ever blocking.

A named pipe (FIFO) where a file is expected makes a plain ``open()`` wait forever for a writer or a
reader, and a device or a socket there is no file either. Every file the toolkit reads or overwrites (a
store's chunks, keys, manifests, marker and tuning journals, an atlas folder's summary and deal files,
report outputs, variant and layout files) is opened through `open_regular`: non-blocking, so that opening
a FIFO returns at once, then checked with ``fstat`` and refused with `NotRegularFileError`, one line that
names the path and what is there. A new file being created is regular by construction.
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
from pathlib import Path
from typing import IO

from sim.errors import UserError

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class NotRegularFileError(UserError):
    """A path the toolkit reads or overwrites that holds something other than a regular file."""


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file"


def refusal(path: str | os.PathLike[str], mode: int) -> NotRegularFileError:
    """The error for ``path`` holding what ``mode`` says instead of a regular file."""
    return NotRegularFileError(f"{os.fspath(path)} is {_kind(mode)}, not a regular file; the toolkit reads and writes "
                               "only regular files there: remove it or give another path")


def check_regular(path: str | os.PathLike[str]) -> None:
    """Refuse ``path`` when something other than a regular file is there (nothing there, or a link to a regular
    file, passes); `NotRegularFileError`. For a path a library opens itself, checked just before it does."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return  # missing or unreadable: the opener says so in its own words
    if not stat.S_ISREG(mode):
        raise refusal(path, mode)


def open_regular_fd(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o644,
                    streams: bool = False) -> int:
    """``os.open(path, flags)`` that never blocks on a FIFO and returns only a descriptor of a regular file.

    Opened with ``O_NONBLOCK`` (taken off again once the file is known to be regular); anything else there is
    refused with `NotRegularFileError`. With ``streams`` (a stream the user named to write to, such as
    ``--svg /dev/stdout``), a device or a FIFO that has a reader is accepted too; a FIFO with none is still refused,
    as it would wait forever. Other `OSError` (missing, no permission, a link under ``O_NOFOLLOW``) pass through.
    """
    try:
        fd = os.open(path, flags | os.O_NONBLOCK | _CLOEXEC, mode)
    except OSError as exc:
        # A FIFO opened to write with no reader (ENXIO), a folder opened to write (EISDIR): say what is there.
        if exc.errno in (errno.ENXIO, errno.EISDIR, errno.ENODEV, errno.EOPNOTSUPP):
            try:
                there = os.stat(path).st_mode
            except OSError:
                raise exc from None
            if not stat.S_ISREG(there):
                raise refusal(path, there) from None
        raise
    try:
        there = os.fstat(fd).st_mode
        stream = streams and (stat.S_ISCHR(there) or stat.S_ISFIFO(there))
        if not stat.S_ISREG(there) and not stream:
            raise refusal(path, there)
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_regular(path: str | os.PathLike[str], mode: str = "rb", encoding: str | None = None,
                 newline: str | None = None, streams: bool = False) -> IO:
    """``open(path, mode)`` through `open_regular_fd` (``streams`` as there): ``mode`` is ``r``, ``w``, ``a`` or
    ``x``, with ``b`` for binary (text otherwise, in ``encoding``, UTF-8 unless given)."""
    base = mode.replace("b", "").replace("t", "")
    flags = {"r": os.O_RDONLY, "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC, "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
             "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL}[base]
    fd = open_regular_fd(path, flags, streams=streams)
    if "b" in mode:
        return os.fdopen(fd, base + "b")
    return os.fdopen(fd, base, encoding=encoding or "utf-8", newline=newline)


def read_regular_bytes(path: str | os.PathLike[str], limit: int | None = None) -> bytes:
    """The bytes of regular file ``path`` (at most ``limit`` + 1 when a limit is given, for a size check)."""
    with open_regular(path, "rb") as fh:
        return fh.read() if limit is None else fh.read(limit + 1)


def write_regular_text(path: Path, text: str) -> None:
    """``path.write_text(text)`` (UTF-8) refusing a FIFO, a folder or a device at ``path``."""
    with open_regular(path, "w", encoding="utf-8") as fh:
        fh.write(text)
