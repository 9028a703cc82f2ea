"""Writing an atlas: one variant's deal file and its summary row, under a lock, never losing a row by accident.

Two `atlas` commands may write one folder at once (two machines' ranges, two variants). The summary is one file that
each rewrites whole (read, merge the new row, write it back), so each write holds an exclusive ``flock`` on the folder
itself from that read to the last rename: the second command waits for the first and then merges into what the first
wrote, and no row is lost. A command that cannot get the lock within `LOCK_WAIT` seconds says so in one line (what it
solved stays in its store: the same command resumes).

A row is never replaced by one that knows less without being told: a row that leaves out deals the row there holds,
or ran fewer rungs of the ladder, replaces it only with ``force``; the message says what would be lost. The check
runs before any work (`check_out`) and again under the lock (another command may have written meanwhile).
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.errors import UserError, quoted
from sim.rules import Rules
from studies import atlas as files

DEFAULT_OUT = Path("bakers-dozen-atlas")
"""Where `atlas` writes without ``--out``: a folder of the user's, never the shipped atlas."""
LOCK_WAIT = 600.0
"""Seconds a write waits for another command's write to the same folder before giving up."""


class AtlasWriteError(UserError):
    """An atlas folder that cannot be written, or a row that would be replaced by one that knows less."""


@dataclass(frozen=True)
class Planned:
    """A row a command will write: its variant, numbering, deals first..last and how many rungs its ladder runs."""

    variant: str
    source: str
    first: int
    last: int
    rungs: int


def rungs_run(row: dict[str, Any]) -> int:
    """How many rungs of the ladder a summary row ran (its budgets name each)."""
    return len(str(row["budgets"]).split("; "))


def loss(old: dict[str, Any] | None, new: Planned) -> str:
    """What replacing the summary row ``old`` by the row ``new`` would lose ('' when nothing): deals of its range
    the new row leaves out, rungs it did not run."""
    if old is None:
        return ""
    lost = []
    below = range(old["first"], min(old["last"], new.first - 1) + 1)
    above = range(max(old["first"], new.last + 1), old["last"] + 1)
    if len(below) + len(above) > 0:
        spans = [f"{r.start:,}-{r.stop - 1:,}" for r in (below, above) if len(r)]
        lost.append(f"the verdicts of deals {' and '.join(spans)} ({len(below) + len(above):,} deals)")
    if new.rungs < rungs_run(old):
        lost.append(f"rungs {new.rungs}-{rungs_run(old) - 1} of its ladder")
    return " and ".join(lost)


def _refuse_loss(out: Path, old: dict[str, Any] | None, new: Planned) -> None:
    lost = loss(old, new)
    if lost and old is not None:
        raise AtlasWriteError(
            f"--out {quoted(str(out))}: {new.variant}'s row ({new.source} numbering) holds deals "
            f"{old['first']:,}-{old['last']:,} through rungs 0-{rungs_run(old) - 1}; this command's row "
            f"(deals {new.first:,}-{new.last:,}, rungs 0-{new.rungs - 1}) would lose {lost}: add --force to replace "
            "it, or write to another --out")


def _row_of(rows: list[dict[str, Any]], variant: str, source: str) -> dict[str, Any] | None:
    return next((r for r in rows if (r["variant"], r["source"]) == (variant, source)), None)


def check_out(out: Path, planned: list[Planned], force: bool = False) -> None:
    """Before any work: make the output folder ``out``, read its summary (damaged: one line) and refuse a row that
    would replace one knowing more (unless ``force``); or say in one line why not."""
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise AtlasWriteError(f"--out {quoted(str(out))}: cannot make the folder ({exc.strerror or exc})") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise AtlasWriteError(f"--out {quoted(str(out))}: the folder is not writable")
    rows = files.read_summary(out / files.SUMMARY)
    if not force:
        for new in planned:
            _refuse_loss(out, _row_of(rows, new.variant, new.source), new)


@contextmanager
def folder_lock(out: Path, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold an exclusive ``flock`` on the folder ``out`` within the block, waiting up to ``wait`` seconds for
    another command's write to end."""
    try:
        fd = os.open(out, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as exc:
        raise AtlasWriteError(f"--out {quoted(str(out))}: cannot open the folder ({exc.strerror or exc})") from None
    try:
        deadline = time.monotonic() + wait
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise AtlasWriteError(f"--out {quoted(str(out))}: another atlas command has been writing there for "
                                          f"{wait:.0f} s; nothing written (the same command resumes from its store)"
                                          ) from None
                time.sleep(0.05)
            except OSError as exc:
                raise AtlasWriteError(f"--out {quoted(str(out))}: cannot lock the folder ({exc.strerror or exc}); "
                                      "writing an atlas needs a file system with flock") from None
        yield
    finally:
        os.close(fd)


TEMP_PREFIX = ".atlas-partial-"
"""The names of files being written, beside the files they become."""


def write_atomically(path: Path, write: Callable[[Path], None]) -> None:
    """Call ``write`` on a temporary file beside ``path`` and rename it onto ``path`` when it succeeds (callers hold
    the folder's lock)."""
    tmp = path.with_name(f"{TEMP_PREFIX}{os.getpid()}-{path.name}")
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        raise AtlasWriteError(f"cannot write {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def write_variant(out: Path, rules: Rules, source: str, seed: int, rows: list[dict[str, Any]], budget_line: str,
                  solver_version: str, command: str, reused: str | None = None, force: bool = False,
                  checkpoint: bool = False) -> dict[str, Any] | None:
    """Write one variant's deal file (and, for PySolFC numbering, its not-winnable list) and merge its summary row
    into ``out``'s summary, all under the folder's lock; the row written. ``reused`` names the atlas its verdicts
    were taken from (`studies.atlas.reuse.provenance`). A ``checkpoint`` (a climb's row partway) that would replace
    a row knowing more is not written (None): the climb's later rows may know as much."""

    table = files.deal_table(rows)
    row = files.summary_row(table, variant=rules.name, fingerprint=rules.fingerprint, source=source,
                            seed=seed if source == "default" else 0, solver_version=solver_version,
                            budgets=budget_line, clairvoyant=bool(rules.face_down), command=command, reused=reused)
    with folder_lock(out):
        for left in out.glob(f"{TEMP_PREFIX}*"):  # a killed writer's: none is writing now, the lock is ours
            left.unlink(missing_ok=True)
        summary = files.read_summary(out / files.SUMMARY)
        if not force:
            planned = Planned(rules.name, source, row["first"], row["last"], rungs_run(row))
            if checkpoint and loss(_row_of(summary, rules.name, source), planned):
                return None
            _refuse_loss(out, _row_of(summary, rules.name, source), planned)
        write_atomically(out / files.deals_file(rules.name, source), lambda tmp: files.write_deals(table, tmp))
        if source == "pysol":
            write_atomically(out / files.not_winnable_file(rules.name),
                                  lambda tmp: files.write_not_winnable(table, tmp))
        merged = files.merge_summary(summary, row)
        write_atomically(out / files.SUMMARY, lambda tmp: files.write_summary(merged, tmp))
    return row
