"""Where the verbs' output goes: standard output and the files a user names, failing in one line.

A write can fail for reasons outside the toolkit: a full disk (``> /dev/full``), a
closed pipe (``| head -1``), a file system gone read-only. `Guarded` wraps an output
stream so that such a failure, whenever it happens (a write, a flush, the close after
the verb returned), is an `OutputWriteError` naming the output and the reason, which
the command line prints as one line with exit code 2, never a traceback or a silent
loss. A closed pipe stays a `BrokenPipeError`: the reader has all it wanted (``| head``), and the
command line ends quietly with success (`EXIT_BROKEN_PIPE`).

`OutputFile` is the click parameter type for a file the user names for output
(``-`` for standard output); it opens the file on the first write, so that a verb
refusing its input leaves an existing file as it was.
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

import click

from sim.errors import UserError
from sim.regular_files import open_regular

EXIT_BROKEN_PIPE = 0
"""A closed pipe: success, as ripgrep ends, not click's 1. The reader stopped reading by choice (``| head``),
and every verb has done its work before it prints (the study is stored, the report written, and a report verb
says where before its tables), so a script with ``set -o pipefail`` does not fail on it."""


class OutputWriteError(UserError):
    """Output that could not be written: a full disk, a device that takes nothing, an I/O error."""


class Guarded:
    """A text stream whose write, flush and close raise `OutputWriteError` (or `BrokenPipeError`) naming ``name``."""

    def __init__(self, name: str, stream: IO[str] | None = None, open_: Any = None) -> None:
        self._name, self._stream, self._open = name, stream, open_

    def _target(self) -> IO[str]:
        if self._stream is None:
            self._stream = self._guard(self._open)
        return self._stream

    def _guard(self, action: Any, *args: Any) -> Any:
        try:
            return action(*args)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputWriteError(f"cannot write {self._name}: {exc.strerror or exc}") from None

    def write(self, text: str) -> int:
        return int(self._guard(self._target().write, text))

    def writelines(self, lines: Any) -> None:
        self._guard(self._target().writelines, lines)

    def flush(self) -> None:
        if self._stream is not None:
            self._guard(self._stream.flush)

    def close(self) -> None:
        if self._stream is not None:
            self._guard(self._stream.close)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._target(), attribute)


class OutputFile(click.ParamType):
    """A file to write text to (``-``: standard output), as a `Guarded` stream closed when the verb ends."""

    name = "filename"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, Guarded):
            return value
        if value == "-":
            return sys.stdout
        path = os.fsdecode(value)
        stream = Guarded(repr(path), open_=lambda: open_regular(path, "w", streams=True))  # closed with the context
        if ctx is not None:
            ctx.call_on_close(stream.close)  # its errors are the user's to see, unlike click.File's
        return stream


class InputFile(click.ParamType):
    """A text file to read (``-``: standard input), opened as `click.File` opens it but only when it is a regular
    file: a FIFO, a folder or a device is refused in one line, never waited on (`sim.regular_files`)."""

    name = "filename"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not isinstance(value, str | bytes | os.PathLike):
            return value  # already a stream (a default, or a test's)
        if value == "-":
            return sys.stdin
        path = os.fsdecode(value)
        try:
            stream = open_regular(path, "r", encoding="utf-8")
        except UserError as exc:
            self.fail(str(exc), param, ctx)
        except OSError as exc:
            self.fail(f"{path!r}: {exc.strerror or exc}", param, ctx)
        if ctx is not None:
            ctx.call_on_close(stream.close)
        return stream


def discard_stdout() -> None:
    """After standard output failed (a closed pipe, a full disk): point it at the null device, so that the
    interpreter's last flush of what is still buffered for it fails no more (Python's documented way to end
    quietly on SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.__stdout__.fileno() if sys.__stdout__ is not None else 1)
    except (OSError, ValueError):
        pass
