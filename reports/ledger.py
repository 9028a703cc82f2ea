"""What a report wrote into one of its folders, so that the next build reuses only that, byte for byte.

A rebuild reuses the previous report's charts, replay pages and loss analyses
when they were made from the same inputs, instead of drawing or analysing them
again. What it reuses goes into the new report as it is: a chart's SVG is
inlined into ``report.html``. So a file is reused only when the folder's ledger
(`LEDGER`, written by the build that made the files) records it, made from the
same inputs, and its bytes still have the SHA-256 recorded there; a file edited,
replaced or added since (by hand or by another program), or a folder without a
readable ledger, is made again. A tag inside a file proves nothing: an edit can
keep it. The bytes checked are the bytes copied, read once.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from reports.output import contained
from sim.regular_files import NotRegularFileError, open_regular_fd

LEDGER = ".ledger.json"
"""The ledger's file name in each folder it covers (``charts/``, ``replays/``)."""
MAX_LEDGER_BYTES = 16 * 2**20
"""A ledger larger than this is not one the report wrote (a few hundred bytes an entry): it is ignored."""


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (not through a symbolic link, never waiting on a FIFO), else
    None."""
    try:
        fd = open_regular_fd(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except (OSError, NotRegularFileError):
        return None
    with os.fdopen(fd, "rb") as f:
        data = f.read() if limit is None else f.read(limit + 1)
    return data if limit is None or len(data) <= limit else None


def _entries(folder: Path | None) -> dict[str, dict[str, Any]]:
    """The ledger of ``folder`` by file name ({"sha256", "inputs"}); empty when there is none or it is unreadable."""
    if folder is None:
        return {}
    data = _read_regular(folder / LEDGER, MAX_LEDGER_BYTES)
    try:
        files = json.loads(data)["files"] if data is not None else {}
    except (ValueError, TypeError, KeyError, RecursionError):
        return {}
    if not isinstance(files, dict):
        return {}
    return {name: e for name, e in files.items()
            if isinstance(e, dict) and isinstance(e.get("sha256"), str) and isinstance(e.get("inputs"), str)}


class Ledger:
    """The files one build writes into ``out_dir``, with the inputs each was made from, and those the previous
    build's ``earlier`` folder can give it (`take`). `seal` writes the ledger for the build after this one."""

    def __init__(self, out_dir: Path, earlier: Path | None) -> None:
        self.out_dir, self.earlier = out_dir, earlier
        self._earlier = _entries(earlier)
        self._made: dict[str, str] = {}

    def take(self, name: str, inputs: str) -> Path | None:
        """The previous build's ``name``, copied into ``out_dir``, when that build wrote it from ``inputs`` and its
        bytes are still the ones it wrote; else None (the caller makes it again and calls `wrote`)."""
        entry = self._earlier.get(name)
        if entry is None or entry["inputs"] != inputs or self.earlier is None:
            return None
        data = _read_regular(self.earlier / name)
        if data is None or _sha256(data) != entry["sha256"]:
            return None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        path = contained(self.out_dir, self.out_dir / name)
        path.write_bytes(data)
        self._made[name] = inputs
        return path

    def read(self, name: str, inputs: str) -> bytes | None:
        """The bytes `take` would copy, or None: for a file the build reads back rather than copies."""
        path = self.take(name, inputs)
        return path.read_bytes() if path is not None else None

    def wrote(self, name: str, inputs: str) -> None:
        """Record that this build writes ``name`` into ``out_dir`` from ``inputs`` (it may still be being written:
        `seal` reads it)."""
        self._made[name] = inputs

    def seal(self) -> None:
        """Write the ledger of ``out_dir``: each file recorded that exists there, its SHA-256 and its inputs."""
        files = {}
        for name, inputs in sorted(self._made.items()):
            data = _read_regular(self.out_dir / name)
            if data is not None:
                files[name] = {"sha256": _sha256(data), "inputs": inputs}
        if files:
            contained(self.out_dir, self.out_dir / LEDGER).write_text(json.dumps({"files": files}, indent=1),
                                                                      encoding="utf-8")
