"""A key's records, as operations of `studies.store.Store` (`KeyRecords`): what the key stands for
(``_key.json``, written when a run registers the key) and each invocation of a run (``_manifests/``,
one file each: toolkit version, command line, start time, every run parameter and, once it finishes,
its summary).

A damaged ``_key.json`` or manifest is never silently taken for "no such run":
`studies.reading.read_store` warns (`DamagedFileWarning`) and takes a key's fields from its rows,
which carry them all; a run writes a damaged ``_key.json`` again (its key fields are
the folder's name) and moves damaged manifests aside, and says so in its summary.
"""

from __future__ import annotations

import json
import os
import time
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any

from studies import nofollow
from studies.files import CorruptChunkError, DamagedFileWarning, KeyInfoError, Unreadable, atomic_write_bytes, failure, small_json
from studies.rows import ChunkFile, RunKey, RunLabels, load_chunk_file

KEY_INFO = "_key.json"
MANIFESTS = "_manifests"
CORRUPT = "_corrupt"
LEGACY_NAMES = {"key.json": KEY_INFO, "manifests": MANIFESTS, "corrupt": CORRUPT}
"""A run folder's metadata in stores of format 1 and 2 (which Parquet readers took for data), and its names now."""
LEGACY = {new: old for old, new in LEGACY_NAMES.items()}
_TYPES = {"str": str, "int": int, "bool": bool}
_KEY_INFO_FIELDS: dict[str, type] = {"key": str, **{f.name: _TYPES[str(f.type)] for f in fields(RunKey)},
                                     **{f.name: _TYPES[str(f.type)] for f in fields(RunLabels) if f.name != "key"}}
"""The fields of a ``_key.json`` (`RunLabels.to_json`) and their types; each is also a column of every row."""


def _key_info_from_rows(chunks: Sequence[ChunkFile]) -> dict[str, Any] | None:
    """A key's ``_key.json`` fields as its first readable chunk's rows carry them, or None when none reads."""
    for chunk in chunks:
        try:
            row = load_chunk_file(chunk, list(_KEY_INFO_FIELDS)).slice(0, 1).to_pylist()[0]
        except CorruptChunkError:
            continue
        info = {name: row[name] for name in _KEY_INFO_FIELDS}
        if RunKey(**{f.name: info[f.name] for f in fields(RunKey)}).hash == chunk.key == info["key"]:
            return info
    return None


class KeyRecords:
    """The `studies.store.Store` operations on a key's records (see the module docs)."""

    def register(self, labels: RunLabels) -> str | None:
        """Make the key's folder and its ``_key.json``; call it while holding the key (`studies.store.Store.hold_key`).

        A ``_key.json`` that is damaged (`read_key_info`), or missing while chunk files are
        stored, is moved aside into ``_corrupt/`` and written again from ``labels``, whose key
        fields are those of the folder's name; the return value is a line saying so (None
        when nothing was wrong), for the run to report.
        """
        key = labels.key.hash
        try:
            nofollow.make_folder(self.path, self.key_dir(key))
            nofollow.make_folder(self.path, self.key_dir(key) / MANIFESTS)
        except OSError as exc:
            raise failure(f"cannot create the run folder {self.key_dir(key)}", exc) from None
        try:
            self.read_key_info(key)
            return None
        except KeyInfoError as exc:
            damage = exc
        there = self._present(damage.path)
        fresh = not there and not self.chunk_files(key)
        moved = self.move_aside(damage.path) if there else None
        atomic_write_bytes(self.path, self.key_dir(key) / KEY_INFO, json.dumps(labels.to_json(), indent=1, sort_keys=True).encode())
        if fresh:
            return None
        return f"{damage}; " + (f"moved aside to {moved} and " if moved else "") + "written again from this run"

    def write_manifest(self, key: str, manifest: dict[str, Any], path: Path | None = None) -> Path:
        """Record one invocation of a run (toolkit version, command line, start time, parameters);
        with ``path``, rewrite that manifest (atomically), e.g. to add the finished summary."""
        if path is None:
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(manifest.get("started_unix", time.time())))
            path = self.key_dir(key) / MANIFESTS / f"{stamp}-{os.getpid()}-{uuid.uuid4().hex[:6]}.json"
        atomic_write_bytes(self.path, path, json.dumps(manifest, indent=1, sort_keys=True, default=str).encode())
        return path

    def read_key_info(self, key: str) -> dict[str, Any]:
        """What ``key`` stands for, from its ``_key.json``, checked: every field of `RunLabels.to_json`
        with its type, and the run key those fields make is the folder's name. Raises `KeyInfoError`
        saying what is wrong."""
        path = self.key_info_path(key)
        try:
            info = small_json(self.path, path)
        except Unreadable as exc:
            raise KeyInfoError(path, str(exc)) from None
        if not isinstance(info, dict):
            raise KeyInfoError(path, f"it holds a JSON {type(info).__name__}, not an object")
        for name, kind in _KEY_INFO_FIELDS.items():
            value = info.get(name)
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                found = "missing" if name not in info else f"{value!r}"[:40]
                raise KeyInfoError(path, f"its field {name!r} is {found}; it must be a {kind.__name__}")
        made = RunKey(**{f.name: info[f.name] for f in fields(RunKey)}).hash
        if made != key:
            raise KeyInfoError(path, f"its fields make run key {made}, not {key}, the key of its folder "
                                     "(it describes another run)")
        if info["key"] != key:
            raise KeyInfoError(path, f"it names run key {info['key'][:40]!r}, not {key}, the key of its folder")
        return info

    def key_info_path(self, key: str) -> Path:
        """Where ``key``'s ``_key.json`` is: its ``key.json`` in a store of format 1 or 2 not yet upgraded."""
        path = self.key_dir(key) / KEY_INFO
        legacy = self.key_dir(key) / LEGACY[KEY_INFO]
        return legacy if not self._present(path) and self._present(legacy) else path

    def _present(self, path: Path) -> bool:
        """Whether anything (a link included, not followed) is at ``path`` in the store; False when that cannot be
        told (a link above it, a name too long), which the caller's next use of the path then reports."""
        try:
            return nofollow.exists(self.path, path)
        except OSError:
            return False

    def key_info(self, key: str) -> dict[str, Any]:
        """What ``key`` stands for: its ``_key.json`` or, when that is damaged, what the key's chunk files
        say (every row carries the same fields), with a `DamagedFileWarning`; just the key when neither
        can be read."""
        try:
            return self.read_key_info(key)
        except KeyInfoError as exc:
            damage = exc
        chunks = self.chunk_files(key)
        if not chunks and not self._present(damage.path):
            return {"key": key}  # a registration that stopped before _key.json was written: nothing is stored
        info = _key_info_from_rows(chunks)
        done = "its rows are read with what their own columns say" if info else "no chunk file of it can be read either"
        warnings.warn(DamagedFileWarning(f"{damage}; {done}; the next `bakers-dozen simulate` of that run writes it "
                                         "again"), stacklevel=3)
        return info or {"key": key}

    def read_manifests(self, key: str) -> tuple[list[dict[str, Any]], list[tuple[Path, str]]]:
        """The key's manifests that read as JSON objects, oldest first, and each that does not with a line
        saying what is wrong.

        A manifest only records how the run was invoked: a damaged one changes no row, only what a
        report can say about how to reproduce the run.
        """
        good: list[dict[str, Any]] = []
        bad: list[tuple[Path, str]] = []
        d = self.key_dir(key)
        found = []
        try:
            for folder in (d / MANIFESTS, d / LEGACY[MANIFESTS]):
                if nofollow.is_folder(self.path, folder):
                    found += [folder / e.name for e in os.scandir(folder) if e.name.endswith(".json")]
        except OSError as exc:
            raise failure(f"cannot list the manifests of run {key} in {self.path}", exc) from None
        for f in sorted(found, key=lambda f: f.name):
            if f.name.startswith("."):  # a writer's temporary file
                continue
            try:
                data = small_json(self.path, f)
            except Unreadable as exc:
                bad.append((f, f"{f} is damaged: {exc}"))
                continue
            if not isinstance(data, dict):
                bad.append((f, f"{f} is damaged: it holds a JSON {type(data).__name__}, not an object"))
            elif data.get("key", key) != key:
                bad.append((f, f"{f} is damaged: it is a manifest of run {str(data['key'])[:40]!r}, not of {key}"))
            else:
                good.append(data)
        return good, bad

    def runs(self) -> list[dict[str, Any]]:
        """What each key in the store stands for (the contents of its ``_key.json``), with its chunk count."""
        return [{**self.key_info(key), "chunks": len(self.chunk_files(key))} for key in self.keys()]

    def lost_deals(self, key: str, chunks: Sequence[ChunkFile], lo: int | None = None, hi: int | None = None,
                   ) -> list[tuple[int, int]]:
        """The deals in lo..hi that a finished run of ``key`` stored (its manifest says which) but that no file
        of ``chunks`` (the key's chunk files) covers, as (first, last) ranges: files deleted after the run."""
        stored = []
        for m in self.read_manifests(key)[0]:
            params = m.get("parameters")
            if not isinstance(params, dict) or "finished" not in m:
                continue
            spans = params.get("ranges") or [(params.get("first"), params.get("last"))]
            for span in spans if isinstance(spans, list) else []:
                first, last = span if isinstance(span, (list, tuple)) and len(span) == 2 else (None, None)
                if all(isinstance(x, int) and not isinstance(x, bool) for x in (first, last)):
                    stored.append((first if lo is None else max(first, lo), last if hi is None else min(last, hi)))
        covered = sorted((c.first, c.last) for c in chunks)
        lost: list[tuple[int, int]] = []
        for a, b in sorted(stored):
            for c, d in covered:
                if a > b:
                    break
                if d >= a and c <= b:
                    if c > a:
                        lost.append((a, c - 1))
                    a = max(a, d + 1)
            if a <= b:
                lost.append((a, b))
        merged: list[tuple[int, int]] = []
        for a, b in sorted(lost):
            if merged and a <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        return merged
