"""Results on disk: Parquet, one row per deal played, written chunk by chunk: the store's folders, keys and locks.

A store is a directory that any number of runs share::

    STORE/
      _bakers-dozen-store.json            marker: format name and version
      <key>/                              one folder per run key (16 hex digits, `RunKey.hash`)
        _key.json                         what the key stands for (rules, strategy, seeds, source)
        _manifests/<start>-<pid>.json     one per invocation (a repeat that plays nothing is not
                                          recorded twice): toolkit version, command line,
                                          start time, every run parameter
        <key>_<first>_<last>.parquet      one per chunk: deals first..last (19 digits, zero-padded)
        _corrupt/                         damaged files moved aside: chunks that failed their checks,
                                          a _key.json or manifest a run found damaged
        .run.lock                         held (flock) by the one run playing this key; says who
        .commit.lock                      held for the instant a chunk file is put in place
        .tasks/                           which worker plays which chunk (for the runner's watchdog)
        .swap-<run>/                      a forced run's new chunks (``<chunk name>.staged``), put in
                                          place of the old ones in one step when all are written

The store is a plain Parquet dataset: every file that is not a chunk has a name
starting with ``_`` or ``.``, which Parquet readers skip (pyarrow's
``ignore_prefixes``, Spark, Hive), and only chunk files end in ``.parquet``. So
``pyarrow.dataset.dataset(STORE, format="parquet")`` and DuckDB's
``read_parquet('STORE/**/*.parquet')`` read every row with no options;
`studies.reading.read_store` adds the checks, the filters and the damage reports.

Stores of formats 1 and 2 named their metadata like data (``bakers-dozen-store.json``,
``key.json``, ``manifests/``, ``corrupt/``; `LEGACY_NAMES`). They are read as
they are, and opening one to write (`Store.open`) renames those files once, key by
key and the marker last, so that a crash part way leaves a store that reads and
upgrades again; older toolkits then refuse it rather than misread it.

A run key is (rules fingerprint, strategy identity ``name@version:params``, a plug-in's with its code
digest, ``name@version#digest:params`` (`strategies.code`), deal seed, deal source, strategy seed): the
things that decide every row. Results of different keys never share a file, so a figure is never made of rows from two
rule sets or two strategy versions (`studies.reading.read_store` refuses to mix them silently).

Each chunk file is written to a temporary name in the same folder, flushed to
disk, and renamed (`os.replace`), so a chunk file either holds the whole chunk
or does not exist.

One run at a time per key, and no writer outliving its run: a run takes
`Store.hold_key` (an exclusive ``flock`` on ``.run.lock``, which the kernel drops
when the process dies however it dies, so a resume after a crash is never
refused, and a second live run is refused with the holder's pid, host and
start). A chunk is put in place only inside the short ``.commit.lock`` section,
after checking that the run it belongs to still holds the key; a run that takes
the key passes through that section once before it lists the chunk files, so
no late write of a dead run can land after it planned. A commit also removes
the older files its deals overlap (a repair of files an older toolkit left overlapping; a forced run's
files replace the old ones all at once, below), so
no two chunk files ever cover the same deal.

A forced run (``--force``) writes its chunks into a staging folder and puts them in place of the old files
in one step (`studies.swap`). A chunk file's format, and the checks it passes when read, are `studies.rows`;
a key's ``_key.json`` and manifests are `studies.records`; the file writes, and the errors a store raises,
`studies.files`; reading rows back with filters, `studies.reading`.

A store holds no symbolic links (`studies.nofollow`): the folder the user names may be one, but
every folder and file below it is used only when it is no link, so a link planted there never makes
a run or a read touch anything outside the store. A linked folder or lock is refused with a one-line
`StoreError`; a linked chunk file is damaged (never read as data, moved aside by a run); a linked
``_key.json`` or manifest is damaged as below.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import re
import socket
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path

import pyarrow as pa

from studies import nofollow
from studies.files import (
    MAX_JSON_BYTES,
    TMP_PREFIX,
    KeyBusyError,
    RunGone,
    StoreError,
    StoreFullError,
    atomic_write_bytes,
    failure,
    fsync_dir,
    move_into,
    pid_alive,
    temp_path,
)
from studies.records import CORRUPT, KEY_INFO, LEGACY, LEGACY_NAMES, MANIFESTS, KeyRecords
from studies.rows import CHUNK_RE, CHUNK_VERSION, META_KEY, ChunkFile, chunk_name, load_chunk_file, verified_digest, write_parquet
from studies.swap import STAGED, SWAP_PREFIX, SWAP_READY, Swaps

FORMAT = "bakers-dozen-results"
FORMAT_VERSION = 4
READ_VERSIONS = (1, 2, 3, 4)
"""Store versions this toolkit reads; opening an older store to write upgrades it (its marker and, from
version 2 to 3, the names of its metadata), so that older toolkits refuse the store instead of misreading it
(version 4 stores hold chunks of format 3, which a version 3 toolkit would take for damaged and move aside)."""
MARKER = "_bakers-dozen-store.json"
RUN_LOCK = ".run.lock"
COMMIT_LOCK = ".commit.lock"
TASKS_DIR = ".tasks"
LEGACY_MARKER = "bakers-dozen-store.json"
KEY_RE = re.compile(r"^[0-9a-f]{16}$")


class Store(KeyRecords, Swaps):
    """A results directory (see the module docs). Cheap to pickle: it is just a path."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"Store({str(self.path)!r})"

    # opening -----------------------------------------------------------------------
    @classmethod
    def open(cls, path: str | os.PathLike[str], create: bool = True) -> Store:
        """Open (and with ``create`` make) a store; raise `StoreError` for anything else at ``path``, and for a path the
        file system refuses (a name too long, a folder that cannot be read)."""
        try:
            return cls._open(path, create)
        except OSError as exc:
            raise failure(f"cannot use {path} as a results store", exc) from None

    @classmethod
    def _open(cls, path: str | os.PathLike[str], create: bool) -> Store:
        store = cls(path)
        p = store.path
        if p.exists() and not p.is_dir():
            raise StoreError(f"store {p} is a file, not a directory; give a directory (new or empty, or an existing store)")
        marker = p / MARKER
        legacy = p / LEGACY_MARKER
        if marker.exists() or legacy.exists():
            version = store._check_marker(marker if marker.exists() else legacy)
            if create:
                store._check_writable()
                store._upgrade(version)
            return store
        if p.is_dir() and _looks_like_store(p):
            raise StoreError(f"{p} holds run folders of a results store but not its marker {MARKER}; "
                             f"if it is a bakers-dozen store whose marker was lost, {_marker_fix(marker)}")
        if not create:
            raise StoreError(f"{p} is not a bakers-dozen results store (it has no {MARKER})")
        if p.is_dir():
            others = sorted(x.name for x in p.iterdir() if not x.name.startswith("."))
            if others:
                shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
                raise StoreError(
                    f"{p} holds files that are not a bakers-dozen results store ({shown}); "
                    "give a new or empty directory, or an existing store"
                )
        try:
            p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"cannot create store directory {p}: {exc.strerror or exc}") from None
        store._check_writable()
        atomic_write_bytes(p, marker, json.dumps({"format": FORMAT, "version": FORMAT_VERSION}, indent=1).encode())
        return store

    def _check_marker(self, marker: Path) -> int:
        try:
            with nofollow.open_read(self.path, marker) as fh:
                info = json.loads(fh.read(MAX_JSON_BYTES + 1))
        except OSError as exc:
            raise failure(f"cannot read the marker of store {self.path}", exc) from None
        except (ValueError, RecursionError) as exc:
            reason = " ".join(str(exc).split())[:120]
            raise StoreError(f"{marker} is damaged ({reason}); if this is a bakers-dozen store, "
                             f"{_marker_fix(marker)}") from None
        if not isinstance(info, dict) or info.get("format") != FORMAT:
            raise StoreError(f"{self.path} holds a store of another format ({marker} says {repr(info)[:120]})")
        if info.get("version") not in READ_VERSIONS:
            raise StoreError(
                f"{self.path} is a results store of format version {info.get('version')!r}; "
                f"this toolkit reads versions {', '.join(map(str, READ_VERSIONS))}"
            )
        return int(info["version"])

    def _upgrade(self, version: int) -> None:
        """Give metadata of formats 1 and 2 the names Parquet readers skip (`LEGACY_NAMES`), then write this
        format's marker and remove the old one. Idempotent, so a crash part way is mended by the next open."""
        try:
            for key in self.keys():
                for old, new in LEGACY_NAMES.items():
                    move_into(self.path, self.key_dir(key) / old, self.key_dir(key) / new)
        except OSError as exc:
            raise failure(f"cannot upgrade store {self.path} to format version {FORMAT_VERSION}", exc) from None
        if version != FORMAT_VERSION or not (self.path / MARKER).exists():
            atomic_write_bytes(self.path, self.path / MARKER, json.dumps({"format": FORMAT, "version": FORMAT_VERSION}, indent=1).encode())
        try:
            nofollow.unlink(self.path, self.path / LEGACY_MARKER)
        except OSError as exc:
            raise failure(f"cannot remove the old marker of store {self.path}", exc) from None

    def _check_writable(self) -> None:
        probe = self.path / f"{TMP_PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            with nofollow.create(self.path, probe) as fh:
                try:
                    fh.write(b"ok")
                    fh.flush()
                finally:  # made but not written (a full disk): removed all the same, never left behind
                    nofollow.unlink(self.path, probe)
        except OSError as exc:
            raise failure(f"store directory {self.path} is not writable", exc) from None

    # keys, manifests --------------------------------------------------------------
    def key_dir(self, key: str) -> Path:
        return self.path / key

    def keys(self) -> list[str]:
        """The run keys that have a folder in the store."""
        try:
            if not self.path.is_dir():
                return []
            keys = []
            for x in os.scandir(self.path):
                if KEY_RE.match(x.name) and nofollow.is_folder(self.path, self.path / x.name):
                    keys.append(x.name)
            return sorted(keys)
        except OSError as exc:
            raise failure(f"cannot list the store {self.path}", exc) from None

    def tasks_dir(self, key: str, create: bool = False) -> Path:
        """The key's folder of notes on the chunks in play (``.tasks/``, for the runner's watchdog), made
        when ``create``."""
        d = self.key_dir(key) / TASKS_DIR
        try:
            if create:
                nofollow.make_folder(self.path, d)
            else:
                nofollow.is_folder(self.path, d)
        except OSError as exc:
            raise failure(f"cannot use {d}", exc) from None
        return d

    # chunk files -------------------------------------------------------------------
    def chunk_path(self, key: str, first: int, last: int, run_id: str = "") -> Path:
        """Where chunk first..last of ``key`` is written: in run ``run_id``'s staging folder while it has one
        (`begin_swap`), else in the key's folder."""
        staging = self._swap_dir(key, run_id) if run_id else None
        if staging is not None and self._present(staging):
            return staging / (chunk_name(key, first, last) + STAGED)
        return self.key_dir(key) / chunk_name(key, first, last)

    def chunk_files(self, key: str, lo: int | None = None, hi: int | None = None) -> list[ChunkFile]:
        """The chunk files of ``key`` (optionally only those meeting deals lo..hi), by first deal: those of its
        folder, and where a forced run's swap is committed but not yet complete (`finish_swap`), its staged
        files in place of the ones they replace."""
        d = self.key_dir(key)
        try:
            if not nofollow.is_folder(self.path, d):
                return []
            staged = [c for name in sorted(os.listdir(d)) if name.startswith(SWAP_PREFIX)
                      and nofollow.exists(self.path, d / name / SWAP_READY) for c in self._listed(d / name, key, STAGED)]
            found = self._listed(d, key)
        except OSError as exc:
            raise failure(f"cannot list the run folder {d}", exc) from None
        if staged:
            found = [c for c in found if not any(c.first <= s.last and s.first <= c.last for s in staged)] + staged
        found = [c for c in found if not ((lo is not None and c.last < lo) or (hi is not None and c.first > hi))]
        return sorted(found, key=lambda c: (c.first, c.last))

    def _listed(self, folder: Path, key: str, suffix: str = "") -> list[ChunkFile]:
        """The chunk files of ``key`` in ``folder`` (their names end in ``suffix``), in no order."""
        found = []
        for entry in os.scandir(folder):
            if not entry.name.endswith(suffix):
                continue
            m = CHUNK_RE.match(entry.name[: len(entry.name) - len(suffix)])
            if not m or m.group(1) != key:
                continue
            first, last = int(m.group(2)), int(m.group(3))
            if last >= first:
                found.append(ChunkFile(key, first, last, folder / entry.name))
        return found

    @contextlib.contextmanager
    def reading(self, key: str) -> Iterator[None]:
        """Within the block, ``key``'s chunk files stay as they are (the commit lock, held shared): no chunk is put
        in place and no swap happens (`finish_swap`). A store this process cannot lock (read-only, a key not yet
        committed to) is read as it is."""
        try:
            fd = nofollow.open_fd(self.path, self.key_dir(key) / COMMIT_LOCK, os.O_RDONLY)
        except OSError:
            yield
            return
        try:
            with contextlib.suppress(OSError):
                fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    def write_chunk(self, table: pa.Table, key: str, first: int, last: int, run_id: str = "") -> Path:
        """Write one chunk atomically (temporary file, fsync, rename); return its path.

        With ``run_id``, the chunk is put in place only while that run holds the key (`hold_key`),
        else `RunGone` is raised and nothing is left behind; older chunk files that cover any of
        first..last are removed in the same step, so no deal is ever in two files. A run with a staging
        folder (`begin_swap`) writes there instead, and its older files stay until `finish_swap`.
        """
        path = self.chunk_path(key, first, last, run_id)
        info = {"format": FORMAT, "version": CHUNK_VERSION, "key": key, "first": first, "last": last, "run": run_id,
                "verified": verified_digest(table)}
        table = table.replace_schema_metadata({META_KEY: json.dumps(info).encode()})
        tmp = temp_path(path)
        try:
            write_parquet(table, tmp, self.path)
            with self._commit_section(key):
                if run_id and not self._run_holds_key(key, run_id):
                    raise RunGone(f"run {run_id} no longer holds key {key}; chunk {first}..{last} not written")
                for older in self._listed(path.parent, key, STAGED if path.name.endswith(STAGED) else ""):
                    if older.path != path and older.first <= last and first <= older.last:
                        nofollow.unlink(self.path, older.path)
                nofollow.replace(self.path, tmp, path)
            fsync_dir(path.parent)
        except OSError as exc:
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise StoreFullError(f"disk full while writing chunk {path.name} in {path.parent} ({exc.strerror})") from None
            raise StoreError(f"cannot write chunk {path}: {exc.strerror or exc}") from None
        finally:
            with contextlib.suppress(OSError):
                nofollow.unlink(self.path, tmp)
        return path

    # one run per key ---------------------------------------------------------------
    def hold_key(self, key: str, run_id: str) -> KeyLock:
        """Take ``key`` for run ``run_id`` until `KeyLock.release` (or the process dies, however it dies).

        Raises `KeyBusyError` naming the holder when another live run has it. Before returning it
        waits for any chunk commit in progress, so every chunk an earlier run will ever write is
        in place when the caller lists the key's files, and completes or removes the swap of a forced
        run that died (`finish_swap`).
        """
        path = self.key_dir(key) / RUN_LOCK
        try:
            nofollow.make_folder(self.path, path.parent)
            fd = nofollow.open_fd(self.path, path, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise failure(f"cannot create the run lock {path}", exc) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe_holder(fd)
            os.close(fd)
            raise KeyBusyError(
                f"another run is playing key {key} in {self.path} ({holder}); "
                "wait for it to finish or stop it, then run the same command again") from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(f"cannot lock {path} ({exc.strerror or exc}); the store needs a file system with flock") from None
        who = {"run": run_id, "pid": os.getpid(), "host": socket.gethostname(),
               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        try:
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(who).encode(), 0)
            with self._commit_section(key):
                pass
            self._recover_swaps(key)
        except OSError as exc:
            os.close(fd)
            raise failure(f"cannot take key {key} in {self.path}", exc) from None
        return KeyLock(fd, path)

    @contextlib.contextmanager
    def _commit_section(self, key: str) -> Iterator[None]:
        """Exclusive, short: putting one chunk file in place (or waiting until nobody is)."""
        fd = nofollow.open_fd(self.path, self.key_dir(key) / COMMIT_LOCK, os.O_RDWR | os.O_CREAT)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _run_holds_key(self, key: str, run_id: str) -> bool:
        """Whether run ``run_id`` is alive and holds ``key`` (called inside the commit section)."""
        try:
            fd = nofollow.open_fd(self.path, self.key_dir(key) / RUN_LOCK, os.O_RDONLY)
        except OSError:  # gone, or replaced by a link: no run holds it
            return False
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return False  # nobody holds it exclusively: the run is gone
            except BlockingIOError:
                pass
            try:
                return json.loads(os.pread(fd, 4096, 0)).get("run") == run_id
            except ValueError:
                return False  # being rewritten by a new holder
        finally:
            os.close(fd)

    def load_chunk(self, chunk: ChunkFile, columns: Sequence[str] | None = None) -> pa.Table:
        """Read and check one chunk file; raise `studies.files.CorruptChunkError` if it is not exactly what its name says."""
        return load_chunk_file(chunk, columns)

    def quarantine(self, chunk: ChunkFile) -> Path:
        """Move a bad chunk file aside (into ``_corrupt/``) so it is never read as data."""
        return self.move_aside(chunk.path)

    @staticmethod
    def move_aside(path: Path) -> Path:
        """Move a damaged file of a key (chunk, _key.json, manifest) into the ``_corrupt/`` folder beside it,
        under a new name that does not end in ``.parquet``, so that it is never read again, by this toolkit or
        by a Parquet reader; return where."""
        d = path.parent / CORRUPT
        target = d / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
        root = path.parents[2] if path.parent.name in (MANIFESTS, LEGACY[MANIFESTS]) else path.parents[1]
        try:
            nofollow.make_folder(root, d)
            nofollow.replace(root, path, target)
        except FileNotFoundError:  # someone else moved it first
            pass
        except OSError as exc:
            raise failure(f"cannot move the damaged file {path} aside into {d}", exc) from None
        return target

    def clean_temp(self, key: str, older_than: float = 3600.0) -> int:
        """Delete temporary files left by writers that died (their process is gone, or they are old)."""
        d = self.key_dir(key)
        try:
            if not nofollow.is_folder(self.path, d):
                return 0
        except OSError as exc:
            raise failure(f"cannot clean the run folder {d}", exc) from None
        host = socket.gethostname()
        removed = 0
        now = time.time()
        for entry in os.scandir(d):
            if not entry.name.startswith(TMP_PREFIX):
                continue
            parts = entry.name[len(TMP_PREFIX) :].split("@", 3)
            stale = False
            try:
                stale = now - entry.stat(follow_symlinks=False).st_mtime > older_than
                if not stale and len(parts) == 4 and parts[2] == host:
                    stale = not pid_alive(int(parts[0]))
            except (OSError, ValueError):
                continue
            if stale:
                with contextlib.suppress(OSError):
                    nofollow.unlink(self.path, d / entry.name)
                    removed += 1
        return removed


class KeyLock:
    """A run's hold on its key (`Store.hold_key`); `release` gives it up."""

    def __init__(self, fd: int, path: Path) -> None:
        self._fd: int | None = fd
        self.path = path

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _describe_holder(fd: int) -> str:
    """Who holds a run lock, as the lock file (open as ``fd``) says: pid, host and start."""
    try:
        who = json.loads(os.pread(fd, 4096, 0))
        return f"pid {who['pid']} on host {who['host']}, started {who['started']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not yet written its name"


def _marker_fix(marker: Path) -> str:
    """How to give a store back a lost or damaged marker."""
    text = json.dumps({"format": FORMAT, "version": FORMAT_VERSION})
    return f"write {text} into {marker} (every chunk file is still checked when it is read)"


def _looks_like_store(p: Path) -> bool:
    """Whether directory ``p`` holds run-key folders as a store does (one whose marker was lost)."""
    try:
        return any(x.is_dir() and KEY_RE.match(x.name)
                   and any((x / name).exists() for name in (KEY_INFO, MANIFESTS, *LEGACY_NAMES)) for x in p.iterdir())
    except OSError:  # a directory that cannot be listed: the caller's own checks say so
        return False
