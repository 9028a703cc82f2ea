"""Results on disk: Parquet, one row per deal played, written chunk by chunk.

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
`read_store` adds the checks, the filters and the damage reports.

Stores of formats 1 and 2 named their metadata like data (``bakers-dozen-store.json``,
``key.json``, ``manifests/``, ``corrupt/``; `LEGACY_NAMES`). They are read as
they are, and opening one to write (`Store.open`) renames those files once, key by
key and the marker last, so that a crash part way leaves a store that reads and
upgrades again; older toolkits then refuse it rather than misread it.

A run key is (rules fingerprint, strategy identity ``name@version:params``, deal
seed, deal source, strategy seed): the things that decide every row. Results of
different keys never share a file, so a figure is never made of rows from two
rule sets or two strategy versions (`read_store` refuses to mix them silently).

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

A forced run (``--force``) replays deals the store holds. It writes its chunks into a staging
folder of the key (`Store.begin_swap`) and puts them in place of the old files only when all are
written (`Store.finish_swap`), so that a reader sees the old rows or the new, never a hole: readers
list and read a key's files holding the commit lock shared (`Store.reading`), and the swap happens
inside the commit section. The swap is committed by a note in the staging folder; from then on
readers take the staged files in place of those they replace (`Store.chunk_files`), and a crash part
way is completed by the next run of the key (`Store.hold_key`), while a run that stops before the note
leaves the old files as they were and its staging folder is removed.

Files are checked when read: the Parquet footer and page
checksums, the key and deal range recorded in the file's metadata against its
name, the row count and the deal numbers. A file that fails is never read as
data (`CorruptChunkError`); the runner moves it aside and plays its deals again.

A store holds no symbolic links (`studies.nofollow`): the folder the user names may be one, but
every folder and file below it is used only when it is no link, so a link planted there never makes
a run or a read touch anything outside the store. A linked folder or lock is refused with a one-line
`StoreError`; a linked chunk file is damaged (never read as data, moved aside by a run); a linked
``_key.json`` or manifest is damaged as below.

A damaged ``_key.json`` or manifest is never silently taken for "no such run":
`read_store` warns (`DamagedFileWarning`) and takes a key's fields from its rows,
which carry them all; a run writes a damaged ``_key.json`` again (its key fields are
the folder's name) and moves damaged manifests aside, and says so in its summary.

Columns (one row per deal):

=================  ===========================  ===============================================
column             type                         meaning
=================  ===========================  ===============================================
deal               int64                        deal number
seed               int64                        deal seed
source             category                     deal numbering (``default`` or ``pysol``)
variant            category                     name of the rules when the chunk was played
rules_fingerprint  category                     `sim.rules.Rules.fingerprint`
strategy           category                     strategy name
strategy_version   category                     strategy version
strategy_params    category                     parameters as JSON (sorted keys)
strategy_identity  category                     ``name@version:params`` (part of the key)
strategy_label     category                     name shown in tables (says ``(clairvoyant)`` where it saw
                                                face-down cards: `Strategy.label_for`)
clairvoyant        bool                         the strategy saw face-down cards (it peeks and the
                                                rules deal some; before 2026-12-01: it peeks)
strategy_seed      int64                        seed of the strategy's random generator
tier               category                     ``compiled`` or ``python``
outcome            category                     ``lost``, ``won``, ``unknown`` or ``error``
termination        category (null)              why the game ended, one of
                                                `sim.engine.TERMINATIONS` (``won``,
                                                ``no_moves``, ``timeout``, ...); null in
                                                chunks written before the column existed
                                                (chunk format 1): it is not derived, as
                                                ``lost`` does not say which of three it was
cards_home         int16                        cards on the foundations at the end
moves              int32                        moves played
nodes              int64                        search nodes (0 where no search ran)
micros             int64                        time spent on the deal, microseconds
micros_averaged    bool                         True: ``micros`` is the chunk's wall time shared
                                                out evenly (compiled policies that do not time
                                                themselves); False: measured for the deal
error              string (null)                what went wrong, for outcome ``error``, or
                                                why a deal was stopped (termination ``timeout``)
deal_timeout       float64 (null)               the run's per-deal time limit in seconds (null:
                                                none, or a chunk written before the column
                                                existed, chunk formats 1 and 2); a row the
                                                limit may have ended is reused only under the
                                                same limit (`studies.reuse`)
win_moves          list<int16> (null)           for wins: the engine move codes (src*64+dst);
                                                `decode_moves` turns them into `Move` values
verified           bool                         the referee replayed this row's win and
                                                accepted it (False for every other row, and
                                                in chunks of formats 1 and 2); the file's
                                                metadata records a digest of its verified
                                                wins (`verified_digest`)
key                category                     `RunKey.hash`
toolkit_version    category                     version of bakers-dozen that played the deal
=================  ===========================  ===============================================
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import shutil
import socket
import time
import uuid
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.deals import check_deal_range, make_deal
from sim.engine import OUTCOMES, TERMINATIONS
from sim.errors import UserError
from sim.notation import Move
from sim.referee import Verdict, replay_codes
from sim.rules import Rules, preset_named
from studies import nofollow

FORMAT = "bakers-dozen-results"
FORMAT_VERSION = 4
READ_VERSIONS = (1, 2, 3, 4)
"""Store versions this toolkit reads; opening an older store to write upgrades it (its marker and, from
version 2 to 3, the names of its metadata), so that older toolkits refuse the store instead of misreading it
(version 4 stores hold chunks of format 3, which a version 3 toolkit would take for damaged and move aside)."""
CHUNK_VERSION = 3
"""Chunk format: 3 has the ``deal_timeout`` and ``verified`` columns; 2 (read, no longer written) has neither;
1 (read) has no ``termination`` either. `load_chunk_file` gives older chunks the missing columns (`ABSENT`)."""
MARKER = "_bakers-dozen-store.json"
META_KEY = b"bakers_dozen"
COMPRESSION = "zstd"

_STR = pa.dictionary(pa.int8(), pa.string())
SCHEMA = pa.schema(
    [
        ("deal", pa.int64()),
        ("seed", pa.int64()),
        ("source", _STR),
        ("variant", _STR),
        ("rules_fingerprint", _STR),
        ("strategy", _STR),
        ("strategy_version", _STR),
        ("strategy_params", _STR),
        ("strategy_identity", _STR),
        ("strategy_label", _STR),
        ("clairvoyant", pa.bool_()),
        ("strategy_seed", pa.int64()),
        ("tier", _STR),
        ("outcome", _STR),
        ("termination", _STR),
        ("cards_home", pa.int16()),
        ("moves", pa.int32()),
        ("nodes", pa.int64()),
        ("micros", pa.int64()),
        ("micros_averaged", pa.bool_()),
        ("error", pa.string()),
        ("deal_timeout", pa.float64()),
        ("win_moves", pa.list_(pa.int16())),
        ("verified", pa.bool_()),
        ("key", _STR),
        ("toolkit_version", _STR),
    ]
)
COLUMNS = tuple(SCHEMA.names)
ABSENT: dict[str, Any] = {"termination": None, "deal_timeout": None, "verified": False}
"""What a column that older chunk formats lack reads as in them: unknown termination, no limit recorded, not verified."""
_CHUNK_SCHEMAS = {
    version: pa.schema([f for f in SCHEMA if f.name not in missing])
    for version, missing in {1: set(ABSENT), 2: {"deal_timeout", "verified"}, 3: set()}.items()
}
RUN_LOCK = ".run.lock"
COMMIT_LOCK = ".commit.lock"
TASKS_DIR = ".tasks"
KEY_INFO = "_key.json"
MANIFESTS = "_manifests"
CORRUPT = "_corrupt"
LEGACY_MARKER = "bakers-dozen-store.json"
LEGACY_NAMES = {"key.json": KEY_INFO, "manifests": MANIFESTS, "corrupt": CORRUPT}
"""A run folder's metadata in stores of format 1 and 2 (which Parquet readers took for data), and its names now."""
_LEGACY = {new: old for old, new in LEGACY_NAMES.items()}
MAX_JSON_BYTES = 16 * 2**20
"""A _key.json or manifest larger than this is not one this toolkit wrote (they are a few KiB); it is not parsed."""

_CHUNK_RE = re.compile(r"^([0-9a-f]{16})_(\d{19})_(\d{19})\.parquet$")
_KEY_RE = re.compile(r"^[0-9a-f]{16}$")
_TMP_PREFIX = ".tmp-"
SWAP_PREFIX = ".swap-"
STAGED = ".staged"
SWAP_READY = "_ready.json"
"""In a forced run's staging folder (`Store.begin_swap`): its chunks (names ending in `STAGED`) and, once all are
written, the note that commits their swap into place."""


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


@dataclass(frozen=True)
class RunKey:
    """What decides every row of a run; results are stored and reused under its `hash`."""

    rules_fingerprint: str
    strategy_identity: str
    seed: int
    source: str
    strategy_seed: int = 0

    @property
    def hash(self) -> str:
        payload = json.dumps(asdict(self), sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class RunLabels:
    """The columns that are the same for every row of a run: the key and how to read it."""

    key: RunKey
    variant: str
    strategy: str
    strategy_version: str
    strategy_params: str
    strategy_label: str
    clairvoyant: bool
    toolkit_version: str

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key.hash, **asdict(self.key), **{k: v for k, v in asdict(self).items() if k != "key"}}


_TYPES = {"str": str, "int": int, "bool": bool}
_KEY_INFO_FIELDS: dict[str, type] = {"key": str, **{f.name: _TYPES[str(f.type)] for f in fields(RunKey)},
                                     **{f.name: _TYPES[str(f.type)] for f in fields(RunLabels) if f.name != "key"}}
"""The fields of a ``_key.json`` (`RunLabels.to_json`) and their types; each is also a column of every row."""


@dataclass(frozen=True)
class ChunkFile:
    """A chunk file found in a store: deals ``first..last`` of run key ``key``."""

    key: str
    first: int
    last: int
    path: Path

    @property
    def count(self) -> int:
        return self.last - self.first + 1


def chunk_name(key: str, first: int, last: int) -> str:
    return f"{key}_{first:019d}_{last:019d}.parquet"


# --- building a chunk's table ---------------------------------------------------------

def _fixed(values: Any, dtype: type, type_: pa.DataType) -> pa.Array:
    """``values`` (no nulls) as an Arrow array of the fixed-width ``type_``, numpy ``dtype`` in memory.

    Made over the values' memory with `pa.Array.from_buffers` rather than by `pa.array`, which imports
    pandas on its first call (to check whether its input is a pandas object): a quarter of a second of
    every process that writes a chunk, and of a `solve` that answers in about one second."""
    data = np.ascontiguousarray(values, dtype=dtype)
    return pa.Array.from_buffers(type_, len(data), [None, pa.py_buffer(data)])


def _bools(values: Any) -> pa.Array:
    """A boolean numpy array (no nulls) as an Arrow one: bit-packed, least significant bit first (`_fixed`)."""
    flags = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), len(flags), [None, pa.py_buffer(np.packbits(flags, bitorder="little"))])


def _strings(texts: Sequence[str | None]) -> pa.Array:
    """Texts (None for null) as an Arrow string array (`_fixed`): UTF-8 bytes end to end, int32 offsets."""
    data = [b"" if t is None else t.encode() for t in texts]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum([len(b) for b in data], out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise StoreError(f"{offsets[-1]:,} bytes of text in one chunk; use smaller chunks")
    valid = None if None not in texts else pa.py_buffer(np.packbits([t is not None for t in texts], bitorder="little"))
    return pa.Array.from_buffers(pa.string(), len(data),
                                 [valid, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data))])


def text_array(texts: Sequence[str]) -> pa.Array:
    """Texts as an Arrow string array, made without pandas (`_strings`), e.g. the value set of `pc.is_in`."""
    return _strings(list(texts))


def _dictionary(codes: Any, words: Sequence[str]) -> pa.DictionaryArray:
    """int8 ``codes`` into ``words`` as an Arrow dictionary array (the store's category columns)."""
    return pa.DictionaryArray.from_arrays(_fixed(codes, np.int8, pa.int8()), _strings(words))


def _const(value: str, n: int) -> pa.DictionaryArray:
    return _dictionary(np.zeros(n, dtype=np.int8), [value])


def chunk_table(
    labels: RunLabels,
    tier: str,
    deals: np.ndarray,
    outcome: np.ndarray,
    termination: np.ndarray,
    cards_home: np.ndarray,
    moves: np.ndarray,
    nodes: np.ndarray,
    micros: np.ndarray,
    micros_averaged: bool,
    errors: dict[int, str],
    win_offsets: np.ndarray,
    win_moves: np.ndarray,
    *,
    verified: Any = False,
    deal_timeout: float | None = None,
) -> pa.Table:
    """One chunk's rows as an Arrow table of `SCHEMA`.

    ``termination`` holds codes into `sim.engine.TERMINATIONS`; ``errors`` maps row index to
    error text; ``win_moves[win_offsets[i]:win_offsets[i+1]]`` are row i's move codes (kept only for wins).
    ``verified`` (one flag, or one per row) says which wins the referee replayed and accepted (it is kept
    only for wins); ``deal_timeout`` is the run's per-deal time limit (None: none).
    """
    n = len(deals)
    key = labels.key
    outcome = np.asarray(outcome, dtype=np.int8)
    won = outcome == 1
    error_texts = _strings([errors.get(i) for i in range(n)]) if errors else pa.nulls(n, pa.string())
    offsets = np.asarray(win_offsets, dtype=np.int64)
    if offsets[-1] - offsets[0] >= 2**31:
        raise StoreError(f"a chunk of {n} deals holds more than 2**31 winning move codes; use smaller chunks")
    wins = pa.ListArray.from_arrays(
        _fixed(offsets - offsets[0], np.int32, pa.int32()),
        _fixed(np.asarray(win_moves)[offsets[0] : offsets[-1]], np.int16, pa.int16()),
        mask=_bools(~won),
    )
    arrays = [
        _fixed(deals, np.int64, pa.int64()),
        _fixed(np.full(n, key.seed), np.int64, pa.int64()),
        _const(key.source, n),
        _const(labels.variant, n),
        _const(key.rules_fingerprint, n),
        _const(labels.strategy, n),
        _const(labels.strategy_version, n),
        _const(labels.strategy_params, n),
        _const(key.strategy_identity, n),
        _const(labels.strategy_label, n),
        _bools(np.full(n, labels.clairvoyant)),
        _fixed(np.full(n, key.strategy_seed), np.int64, pa.int64()),
        _const(tier, n),
        _dictionary(outcome, OUTCOMES),
        _dictionary(termination, TERMINATIONS),
        _fixed(cards_home, np.int16, pa.int16()),
        _fixed(moves, np.int32, pa.int32()),
        _fixed(nodes, np.int64, pa.int64()),
        _fixed(micros, np.int64, pa.int64()),
        _bools(np.full(n, micros_averaged)),
        error_texts,
        _fixed(np.full(n, deal_timeout), np.float64, pa.float64()) if deal_timeout is not None else pa.nulls(n, pa.float64()),
        wins,
        _bools(won & np.broadcast_to(np.asarray(verified, dtype=bool), n)),
        _const(key.hash, n),
        _const(labels.toolkit_version, n),
    ]
    return pa.Table.from_arrays(arrays, schema=SCHEMA)


def verified_digest(table: pa.Table) -> str:
    """A digest of the wins that ``table`` (a whole chunk) marks verified: their deal, seed, source and moves.

    A chunk file records it when it is written (`Store.write_chunk`), so that a verifying run can trust the
    ``verified`` flags of a file whose marked wins still give it, and checks again the wins of one edited since
    (`studies.reuse`); it is a checksum against edits, not a signature."""
    import pyarrow.compute as pc

    if "verified" not in table.column_names:
        return ""
    won = pc.is_in(pc.cast(table.column("outcome"), pa.string()), value_set=text_array(["won"]))
    marked = table.filter(pc.and_(won, table.column("verified")))
    digest = hashlib.sha256()
    for row in marked.select(["deal", "seed", "source", "win_moves"]).to_pylist():
        digest.update(json.dumps([row["deal"], row["seed"], row["source"], row["win_moves"]]).encode())
    return digest.hexdigest()[:32]


def recorded_digest(table: pa.Table) -> str | None:
    """The `verified_digest` a chunk file recorded when it was written (``table``: rows read from it), or None."""
    try:
        return json.loads((table.schema.metadata or {})[META_KEY]).get("verified")
    except (KeyError, ValueError, AttributeError):
        return None


# --- the store directory ----------------------------------------------------------------

class Store:
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
            raise _failure(f"cannot use {path} as a results store", exc) from None

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
        _atomic_write_bytes(p, marker, json.dumps({"format": FORMAT, "version": FORMAT_VERSION}, indent=1).encode())
        return store

    def _check_marker(self, marker: Path) -> int:
        try:
            with nofollow.open_read(self.path, marker) as fh:
                info = json.loads(fh.read(MAX_JSON_BYTES + 1))
        except OSError as exc:
            raise _failure(f"cannot read the marker of store {self.path}", exc) from None
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
                    _move_into(self.path, self.key_dir(key) / old, self.key_dir(key) / new)
        except OSError as exc:
            raise _failure(f"cannot upgrade store {self.path} to format version {FORMAT_VERSION}", exc) from None
        if version != FORMAT_VERSION or not (self.path / MARKER).exists():
            _atomic_write_bytes(self.path, self.path / MARKER, json.dumps({"format": FORMAT, "version": FORMAT_VERSION}, indent=1).encode())
        try:
            nofollow.unlink(self.path, self.path / LEGACY_MARKER)
        except OSError as exc:
            raise _failure(f"cannot remove the old marker of store {self.path}", exc) from None

    def _check_writable(self) -> None:
        probe = self.path / f"{_TMP_PREFIX}probe-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            with nofollow.create(self.path, probe) as fh:
                fh.write(b"ok")
            nofollow.unlink(self.path, probe)
        except OSError as exc:
            raise StoreError(f"store directory {self.path} is not writable: {exc.strerror or exc}") from None

    # keys, manifests --------------------------------------------------------------
    def key_dir(self, key: str) -> Path:
        return self.path / key

    def register(self, labels: RunLabels) -> str | None:
        """Make the key's folder and its ``_key.json``; call it while holding the key (`hold_key`).

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
            raise _failure(f"cannot create the run folder {self.key_dir(key)}", exc) from None
        try:
            self.read_key_info(key)
            return None
        except KeyInfoError as exc:
            damage = exc
        there = self._present(damage.path)
        fresh = not there and not self.chunk_files(key)
        moved = self.move_aside(damage.path) if there else None
        _atomic_write_bytes(self.path, self.key_dir(key) / KEY_INFO, json.dumps(labels.to_json(), indent=1, sort_keys=True).encode())
        if fresh:
            return None
        return f"{damage}; " + (f"moved aside to {moved} and " if moved else "") + "written again from this run"

    def write_manifest(self, key: str, manifest: dict[str, Any], path: Path | None = None) -> Path:
        """Record one invocation of a run (toolkit version, command line, start time, parameters);
        with ``path``, rewrite that manifest (atomically), e.g. to add the finished summary."""
        if path is None:
            stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(manifest.get("started_unix", time.time())))
            path = self.key_dir(key) / MANIFESTS / f"{stamp}-{os.getpid()}-{uuid.uuid4().hex[:6]}.json"
        _atomic_write_bytes(self.path, path, json.dumps(manifest, indent=1, sort_keys=True, default=str).encode())
        return path

    def read_key_info(self, key: str) -> dict[str, Any]:
        """What ``key`` stands for, from its ``_key.json``, checked: every field of `RunLabels.to_json`
        with its type, and the run key those fields make is the folder's name. Raises `KeyInfoError`
        saying what is wrong."""
        path = self.key_info_path(key)
        try:
            info = _small_json(self.path, path)
        except _Unreadable as exc:
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
        legacy = self.key_dir(key) / _LEGACY[KEY_INFO]
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
            for folder in (d / MANIFESTS, d / _LEGACY[MANIFESTS]):
                if nofollow.is_folder(self.path, folder):
                    found += [folder / e.name for e in os.scandir(folder) if e.name.endswith(".json")]
        except OSError as exc:
            raise _failure(f"cannot list the manifests of run {key} in {self.path}", exc) from None
        for f in sorted(found, key=lambda f: f.name):
            if f.name.startswith("."):  # a writer's temporary file
                continue
            try:
                data = _small_json(self.path, f)
            except _Unreadable as exc:
                bad.append((f, f"{f} is damaged: {exc}"))
                continue
            if not isinstance(data, dict):
                bad.append((f, f"{f} is damaged: it holds a JSON {type(data).__name__}, not an object"))
            elif data.get("key", key) != key:
                bad.append((f, f"{f} is damaged: it is a manifest of run {str(data['key'])[:40]!r}, not of {key}"))
            else:
                good.append(data)
        return good, bad

    def keys(self) -> list[str]:
        """The run keys that have a folder in the store."""
        try:
            if not self.path.is_dir():
                return []
            keys = []
            for x in os.scandir(self.path):
                if _KEY_RE.match(x.name) and nofollow.is_folder(self.path, self.path / x.name):
                    keys.append(x.name)
            return sorted(keys)
        except OSError as exc:
            raise _failure(f"cannot list the store {self.path}", exc) from None

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
            raise _failure(f"cannot use {d}", exc) from None
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
            raise _failure(f"cannot list the run folder {d}", exc) from None
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
            m = _CHUNK_RE.match(entry.name[: len(entry.name) - len(suffix)])
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

    # a forced run's swap -------------------------------------------------------------
    def _swap_dir(self, key: str, run_id: str) -> Path:
        return self.key_dir(key) / f"{SWAP_PREFIX}{run_id}"

    def begin_swap(self, key: str, run_id: str) -> None:
        """Have run ``run_id``, which holds ``key``, write its chunks into a staging folder (`write_chunk`) until
        `finish_swap` puts them in place all at once: a forced run, whose new files would otherwise replace the
        old ones chunk by chunk while readers read."""
        try:
            nofollow.make_folder(self.path, self._swap_dir(key, run_id))
        except OSError as exc:
            raise _failure(f"cannot create a staging folder in {self.key_dir(key)}", exc) from None

    def finish_swap(self, key: str, run_id: str) -> None:
        """Put run ``run_id``'s staged chunks in place of the files they overlap, in the commit section (readers
        wait, `reading`). A note written first commits the swap: a crash after it is completed by the next run
        of the key (`hold_key`), and readers meanwhile take the staged files (`chunk_files`)."""
        folder = self._swap_dir(key, run_id)
        try:
            with self._commit_section(key):
                if not self._run_holds_key(key, run_id):
                    raise RunGone(f"run {run_id} no longer holds key {key}; its chunks were not put in place")
                _atomic_write_bytes(self.path, folder / SWAP_READY, json.dumps({"run": run_id}).encode())
                self._complete_swap(key, folder)
        except OSError as exc:
            raise _failure(f"cannot put the new chunks of run {run_id} in place in {self.key_dir(key)}", exc) from None

    def drop_swap(self, key: str, run_id: str) -> None:
        """Remove run ``run_id``'s staging folder unless its swap is committed: a run that stopped before all its
        chunks were written leaves the key's files as they were. Called while the run holds the key; a folder
        that cannot be removed is left for the next run of the key (`hold_key`)."""
        folder = self._swap_dir(key, run_id)
        with contextlib.suppress(OSError):
            if nofollow.is_folder(self.path, folder) and not nofollow.exists(self.path, folder / SWAP_READY):
                self._drop_folder(folder)

    def _complete_swap(self, key: str, folder: Path) -> None:
        """Remove the key's files that the staged files of ``folder`` overlap, then move those in and remove the
        folder. Every step can be repeated after a crash: a staged file still there replaces what it overlaps."""
        d = self.key_dir(key)
        staged = self._listed(folder, key, STAGED)
        for old in self._listed(d, key):
            if any(old.first <= s.last and s.first <= old.last for s in staged):
                nofollow.unlink(self.path, old.path)
        _fsync_dir(d)
        for s in staged:
            nofollow.replace(self.path, s.path, d / chunk_name(key, s.first, s.last))
        _fsync_dir(d)
        self._drop_folder(folder)

    def _drop_folder(self, folder: Path) -> None:
        """Remove a staging folder: its files (links are removed, not followed), its note last, then the folder."""
        names = sorted(os.listdir(folder), key=lambda name: name == SWAP_READY)
        for name in names:
            if nofollow.is_folder(self.path, folder / name):  # not one the toolkit makes; its links are not followed
                shutil.rmtree(folder / name)
            else:
                nofollow.unlink(self.path, folder / name)
        folder.rmdir()

    def _recover_swaps(self, key: str) -> None:
        """Complete the committed swaps of forced runs that died part way, and remove the staging folders of
        those that died before committing (called by the run that now holds the key)."""
        d = self.key_dir(key)
        for name in sorted(os.listdir(d)):
            if not name.startswith(SWAP_PREFIX):
                continue
            folder = d / name
            if not nofollow.is_folder(self.path, folder):
                nofollow.unlink(self.path, folder)
            elif nofollow.exists(self.path, folder / SWAP_READY):
                with self._commit_section(key):
                    self._complete_swap(key, folder)
            else:
                self._drop_folder(folder)

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
        tmp = _temp_path(path)
        try:
            _write_parquet(table, tmp, self.path)
            with self._commit_section(key):
                if run_id and not self._run_holds_key(key, run_id):
                    raise RunGone(f"run {run_id} no longer holds key {key}; chunk {first}..{last} not written")
                for older in self._listed(path.parent, key, STAGED if path.name.endswith(STAGED) else ""):
                    if older.path != path and older.first <= last and first <= older.last:
                        nofollow.unlink(self.path, older.path)
                nofollow.replace(self.path, tmp, path)
            _fsync_dir(path.parent)
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
            raise _failure(f"cannot create the run lock {path}", exc) from None
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
            raise _failure(f"cannot take key {key} in {self.path}", exc) from None
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
        """Read and check one chunk file; raise `CorruptChunkError` if it is not exactly what its name says."""
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
        root = path.parents[2] if path.parent.name in (MANIFESTS, _LEGACY[MANIFESTS]) else path.parents[1]
        try:
            nofollow.make_folder(root, d)
            nofollow.replace(root, path, target)
        except FileNotFoundError:  # someone else moved it first
            pass
        except OSError as exc:
            raise _failure(f"cannot move the damaged file {path} aside into {d}", exc) from None
        return target

    def clean_temp(self, key: str, older_than: float = 3600.0) -> int:
        """Delete temporary files left by writers that died (their process is gone, or they are old)."""
        d = self.key_dir(key)
        try:
            if not nofollow.is_folder(self.path, d):
                return 0
        except OSError as exc:
            raise _failure(f"cannot clean the run folder {d}", exc) from None
        host = socket.gethostname()
        removed = 0
        now = time.time()
        for entry in os.scandir(d):
            if not entry.name.startswith(_TMP_PREFIX):
                continue
            parts = entry.name[len(_TMP_PREFIX) :].split("@", 3)
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


class _ChunkCache:
    """Chunk tables read inside a `chunk_cache` block, each with all of ``columns`` (and ``deal`` and ``key``, which
    `read_store` always reads), by file identity."""

    def __init__(self, columns: Sequence[str]) -> None:
        self.columns = list(dict.fromkeys(["deal", "key", *columns]))
        self.tables: dict[tuple[str, int, int, int], pa.Table] = {}


_cache: _ChunkCache | None = None


@contextlib.contextmanager
def chunk_cache(columns: Sequence[str]) -> Iterator[None]:
    """Within the block, `load_chunk_file` reads each chunk file once: a read of some of ``columns`` reads them all
    (checked as always) and keeps the table, and later reads of that file take theirs from it. So a study's runs,
    which check every stored chunk before reusing it, and the report that then reads the same rows open each
    file once. A file is known by its path, size, modification time and inode, and every chunk is written whole
    under a new inode (`Store.write_chunk`), so a file replaced inside the block is read anew. The tables are
    dropped when the block ends."""
    global _cache
    outer, _cache = _cache, _ChunkCache(columns)
    try:
        yield
    finally:
        _cache = outer


def load_chunk_file(chunk: ChunkFile, columns: Sequence[str] | None = None) -> pa.Table:
    """Read and check one chunk file (see `Store.load_chunk`); inside a `chunk_cache` block, at most once.

    A chunk of an older format reads with the columns it lacks as `ABSENT` says (format 1: ``termination``
    null; formats 1 and 2: ``deal_timeout`` null, ``verified`` False).
    """
    cache = _cache
    if cache is None or columns is None or not set(columns) <= set(cache.columns):
        return _load_chunk_file(chunk, columns)
    try:
        st = os.stat(chunk.path, follow_symlinks=False)
    except OSError:
        return _load_chunk_file(chunk, columns)  # says what is wrong with it
    ident = (str(chunk.path), st.st_size, st.st_mtime_ns, st.st_ino)
    table = cache.tables.get(ident)
    if table is None:
        table = cache.tables[ident] = _load_chunk_file(chunk, cache.columns)
    return table.select(list(dict.fromkeys(["deal", *columns])))


def _load_chunk_file(chunk: ChunkFile, columns: Sequence[str] | None = None) -> pa.Table:
    """`load_chunk_file` without the cache."""
    cols = None if columns is None else list(dict.fromkeys(["deal", *columns]))
    fh = None
    try:
        fh = nofollow.open_read(_store_of(chunk), chunk.path)
        # read whole (a chunk is a few megabytes at most) into memory of pyarrow's own and parsed from there:
        # the tables read then hold no Python object (a file, or bytes) that pyarrow's C++ side would release
        # as the interpreter shuts down
        owned = pa.BufferOutputStream()
        owned.write(fh.read())
        pf = pq.ParquetFile(pa.BufferReader(owned.getvalue()), page_checksum_verification=True)
        raw = (pf.schema_arrow.metadata or {}).get(META_KEY)
        if raw is None:
            raise CorruptChunkError(chunk.path, "it carries no bakers-dozen metadata (not written by this toolkit)")
        info = json.loads(raw)
        if (info.get("key"), info.get("first"), info.get("last")) != (chunk.key, chunk.first, chunk.last):
            raise CorruptChunkError(
                chunk.path,
                f"its metadata says key {info.get('key')} deals {info.get('first')}..{info.get('last')}, "
                f"its name says key {chunk.key} deals {chunk.first}..{chunk.last}",
            )
        version = info.get("version")
        if version not in _CHUNK_SCHEMAS:
            raise CorruptChunkError(chunk.path, f"format version {version!r}; expected one of {', '.join(map(str, _CHUNK_SCHEMAS))}")
        schema = pf.schema_arrow.remove_metadata()
        if not schema.equals(_CHUNK_SCHEMAS[version]):
            raise CorruptChunkError(chunk.path, "its columns are not those of a bakers-dozen chunk")
        if pf.metadata.num_rows != chunk.count:
            raise CorruptChunkError(chunk.path, f"it has {pf.metadata.num_rows} rows for {chunk.count} deals")
        table = pf.read(columns=None if cols is None else [c for c in cols if c in schema.names])
        for name in [c for c in (COLUMNS if cols is None else cols) if c not in schema.names]:  # an older format
            field, value = SCHEMA.field(name), ABSENT[name]
            filled = pa.nulls(table.num_rows, field.type) if value is None else _bools(np.full(table.num_rows, value))
            table = table.add_column((COLUMNS if cols is None else cols).index(name), field, filled)
        if not _deals_from(table.column("deal"), chunk.first, chunk.count):
            raise CorruptChunkError(chunk.path, "its deal numbers are not the deals its name says")
    except CorruptChunkError:
        raise
    except (pa.ArrowException, OSError, ValueError, KeyError, TypeError) as exc:
        raise CorruptChunkError(chunk.path, f"{type(exc).__name__}: {exc}") from None
    finally:
        if fh is not None:
            fh.close()
    return table


def _store_of(chunk: ChunkFile) -> Path:
    """The store folder a chunk file lies in: the folder above its key's folder (the files inside are checked
    for links from there down, `studies.nofollow`)."""
    for folder in chunk.path.parents:
        if folder.name == chunk.key:
            return folder.parent
    return chunk.path.parent


def _deals_from(deals: pa.ChunkedArray, first: int, count: int) -> bool:
    """Whether ``deals`` are exactly first, first + 1, ..., first + count - 1, in that order.

    Checked with Arrow's kernels, not through numpy: pyarrow imports pandas on its first conversion to
    numpy (a quarter of a second), which a command that only reads stored rows need not pay."""
    import pyarrow.compute as pc

    if len(deals) != count or deals.null_count or deals[0].as_py() != first:
        return False
    if count == 1:
        return True
    steps = pc.min_max(pc.pairwise_diff_checked(deals.combine_chunks()))  # raises on overflow: not a chunk
    return steps["min"].as_py() == 1 and steps["max"].as_py() == 1


def _failure(what: str, exc: OSError) -> StoreError:
    """A store operation the file system refused: `StoreFullError` when the disk is full, else `StoreError`."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StoreFullError(f"disk full: {what} ({exc.strerror})")
    return StoreError(f"{what}: {exc.strerror or exc}")


def _marker_fix(marker: Path) -> str:
    """How to give a store back a lost or damaged marker."""
    text = json.dumps({"format": FORMAT, "version": FORMAT_VERSION})
    return f"write {text} into {marker} (every chunk file is still checked when it is read)"


def _looks_like_store(p: Path) -> bool:
    """Whether directory ``p`` holds run-key folders as a store does (one whose marker was lost)."""
    try:
        return any(x.is_dir() and _KEY_RE.match(x.name)
                   and any((x / name).exists() for name in (KEY_INFO, MANIFESTS, *LEGACY_NAMES)) for x in p.iterdir())
    except OSError:  # a directory that cannot be listed: the caller's own checks say so
        return False


class _Unreadable(Exception):
    """A small JSON file of a store that cannot be read; the message says why."""


def _small_json(root: Path, path: Path) -> Any:
    """The JSON value in ``path`` of store ``root``; `_Unreadable` when it is missing, a link, too large, empty or
    not JSON."""
    try:
        with nofollow.open_read(root, path) as fh:
            data = fh.read(MAX_JSON_BYTES + 1)
    except FileNotFoundError:
        raise _Unreadable("it is missing") from None
    except OSError as exc:
        raise _Unreadable(f"it cannot be read ({exc.strerror or exc})") from None
    if len(data) > MAX_JSON_BYTES:
        raise _Unreadable(f"it is larger than {MAX_JSON_BYTES:,} bytes, which no file this toolkit writes is")
    if not data.strip():
        raise _Unreadable("it is empty")
    try:
        return json.loads(data)
    except RecursionError:
        raise _Unreadable("it is nested too deeply to be one this toolkit wrote") from None
    except ValueError as exc:  # not JSON, or not UTF-8 text
        raise _Unreadable(f"it is not JSON ({' '.join(str(exc).split())[:120]})") from None


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


# --- reading ----------------------------------------------------------------------------

def read_table(
    path: str | os.PathLike[str],
    *,
    key: str | None = None,
    variant: str | None = None,
    rules_fingerprint: str | None = None,
    strategy: str | None = None,
    strategy_identity: str | None = None,
    seed: int | None = None,
    source: str | None = None,
    deals: tuple[int, int] | None = None,
    columns: Sequence[str] | None = None,
    allow_mixed: bool = False,
) -> pa.Table:
    """The rows of a store as an Arrow table, sorted by key and deal: `read_store`'s rows, filters, checks and
    warnings, without pandas (which pyarrow would import to make a DataFrame, a quarter of a second that a
    command printing a few rows need not pay)."""
    return _read_table(path, key=key, variant=variant, rules_fingerprint=rules_fingerprint, strategy=strategy,
                       strategy_identity=strategy_identity, seed=seed, source=source, deals=deals, columns=columns,
                       allow_mixed=allow_mixed)


def _read_table(path: str | os.PathLike[str], *, key: str | None, variant: str | None, rules_fingerprint: str | None,
                strategy: str | None, strategy_identity: str | None, seed: int | None, source: str | None,
                deals: tuple[int, int] | None, columns: Sequence[str] | None, allow_mixed: bool) -> pa.Table:
    """`read_table`, called by it and by `read_store` (its warnings name their caller's line)."""
    if deals is not None:  # the command line's check of a range, with its messages
        pair = tuple(deals) if isinstance(deals, tuple | list) else ()
        deals = check_deal_range(*(pair if len(pair) == 2 else (None, None)), f"deals={deals!r}")
    store = Store.open(path, create=False)
    unknown = sorted(set(columns or ()) - set(COLUMNS))
    if unknown:
        raise StoreError(f"unknown column(s) {', '.join(unknown)}; the store's columns: {', '.join(COLUMNS)}")
    if key is not None and not (isinstance(key, str) and _KEY_RE.match(key)):
        raise StoreError(f"key {str(key)[:40]!r} is not a run key; a run key is 16 hex digits (the `key` column)")
    wanted = None if columns is None else [c for c in COLUMNS if c in {"key", "deal", *columns}]
    infos = {k: store.key_info(k) for k in (store.keys() if key is None else [key])}
    checks = {"variant": variant, "rules_fingerprint": rules_fingerprint, "strategy": strategy,
              "strategy_identity": strategy_identity, "seed": seed, "source": source}
    preset = preset_named(variant) if isinstance(variant, str) else None
    if preset is not None:  # a preset's name means its rules, whatever name the rows were played under
        checks["variant"] = None
        infos = {k: info for k, info in infos.items() if info.get("rules_fingerprint") == preset.fingerprint}
    infos = {k: info for k, info in infos.items() if all(v is None or info.get(f) == v for f, v in checks.items())}
    if not allow_mixed and (variant is not None or strategy is not None):
        _refuse_mixed(list(infos.values()))
    tables = []
    lo, hi = deals if deals is not None else (None, None)
    for k in infos:  # keys in order, and each key's files by first deal: the rows come sorted
        with store.reading(k):  # a forced run's swap waits: the key's files are its old ones or its new
            chunks = store.chunk_files(k, lo, hi)
            lost = store.lost_deals(k, chunks, lo, hi)
            if lost:
                shown = ", ".join(f"{a}-{b}" for a, b in lost[:3]) + (", ..." if len(lost) > 3 else "")
                warnings.warn(DamagedFileWarning(
                    f"{sum(b - a + 1 for a, b in lost):,} deals of run {k} ({shown}) are in no chunk file of "
                    f"{store.key_dir(k)}, though a finished run recorded them there: their file was deleted or moved aside; the rows "
                    "leave them out (a run of the same command plays them again)"), stacklevel=3)
            done = None  # the last deal of the key taken so far: a deal stored twice (overlapping files) appears once
            for chunk in chunks:
                try:
                    table = load_chunk_file(chunk, wanted)
                except CorruptChunkError as exc:
                    warnings.warn(DamagedFileWarning(f"{exc}; its deals are left out (a run of the same command moves "
                                                     "it aside and plays them again)"), stacklevel=3)
                    continue
                a = max(chunk.first, chunk.first if lo is None else lo, chunk.first if done is None else done + 1)
                b = chunk.last if hi is None else min(chunk.last, hi)
                if a > b:
                    continue
                if (a, b) != (chunk.first, chunk.last):  # a checked file holds its deals in order: row i is first + i
                    table = table.slice(a - chunk.first, b - a + 1)
                done = b
                tables.append(table if wanted is None else table.select(wanted))
    if not tables:
        return (SCHEMA if wanted is None else pa.schema([SCHEMA.field(c) for c in wanted])).empty_table()
    return pa.concat_tables(tables).unify_dictionaries()


def read_store(
    path: str | os.PathLike[str],
    *,
    key: str | None = None,
    variant: str | None = None,
    rules_fingerprint: str | None = None,
    strategy: str | None = None,
    strategy_identity: str | None = None,
    seed: int | None = None,
    source: str | None = None,
    deals: tuple[int, int] | None = None,
    columns: Sequence[str] | None = None,
    allow_mixed: bool = False,
) -> Any:
    """The rows of a store as a pandas DataFrame, sorted by key and deal.

    Filters: ``key`` (a `RunKey.hash`), ``variant`` (a name; a preset's name or alias selects the
    preset's rules by fingerprint, whatever name their rows carry), ``rules_fingerprint``,
    ``strategy`` (name), ``strategy_identity``, ``seed``, ``source``, and ``deals``
    (first, last) inclusive. ``columns`` reads only those (``key`` and ``deal``
    are always read). A deal stored twice under one key (overlapping chunks) appears once.

    Damaged files are reported as a `DamagedFileWarning` each, never read as data and
    never hide a run: a chunk file that fails its checks is left out (its deals are
    missing); a damaged ``_key.json`` is replaced by what the key's rows say (the same
    fields), so the run's rows are still selected and returned; deals that a finished
    run's manifest records as stored but that no chunk file holds (a deleted file) are
    named. A damaged manifest holds no rows and only narrows that last check; reports,
    which read manifests for their commands, name it (`reports.build.latest_manifest`).

    Unless ``allow_mixed``, a selection that names a variant or a strategy but
    finds it under more than one rules fingerprint or strategy version raises
    `StoreError`: such rows must not be pooled into one figure.

    `read_table` gives the same rows as an Arrow table.
    """
    return _read_table(path, key=key, variant=variant, rules_fingerprint=rules_fingerprint, strategy=strategy,
                       strategy_identity=strategy_identity, seed=seed, source=source, deals=deals, columns=columns,
                       allow_mixed=allow_mixed).to_pandas()


def _refuse_mixed(infos: list[dict[str, Any]]) -> None:
    """Raise when one (variant, strategy) pair appears under several rules fingerprints or strategy versions."""
    groups: dict[tuple[Any, Any], list[dict[str, Any]]] = {}
    for info in infos:
        groups.setdefault((info.get("variant"), info.get("strategy")), []).append(info)
    for (v, s), group in groups.items():
        fps = sorted({str(i.get("rules_fingerprint")) for i in group})
        versions = sorted({str(i.get("strategy_version")) for i in group})
        if len(fps) > 1:
            raise StoreError(
                f"the store holds {v!r} / {s!r} under {len(fps)} rules fingerprints ({', '.join(fps)}); "
                "select one with rules_fingerprint= (or pass allow_mixed=True)"
            )
        if len(versions) > 1:
            raise StoreError(
                f"the store holds {v!r} / {s!r} from {len(versions)} strategy versions ({', '.join(versions)}); "
                "select one with strategy_identity= (or pass allow_mixed=True)"
            )


# --- win move lists ------------------------------------------------------------------

def decode_moves(rules: Rules, deal: int, seed: int, source: str, codes: Iterable[int]) -> list[Move]:
    """The stored engine codes of a win as `sim.notation.Move` values, read from the deal by the referee;
    raise `StoreError` when they are not a legal game (see `check_win`)."""
    verdict = _replay_win(rules, deal, seed, source, codes)
    if not verdict.legal:
        raise StoreError(f"the stored moves of deal {deal} are not a legal game: {verdict.reason}")
    return list(verdict.played)


def move_texts(rules: Rules, deal: int, seed: int, source: str, codes: Iterable[int]) -> list[str]:
    """The stored codes of a win as move notation (``"9H 3>7"``), ready for `verify`."""
    numbered = rules.foundation != "suit"
    return [m.text(numbered) for m in decode_moves(rules, deal, seed, source, codes)]


def check_win(rules: Rules, row: Any) -> Verdict:
    """Re-check one stored win (a DataFrame row, or a dict with its deal, seed, source and
    win_moves) with the independent referee; return its verdict."""
    return _replay_win(rules, int(row["deal"]), int(row["seed"]), str(row["source"]), row["win_moves"])


def _replay_win(rules: Rules, deal: int, seed: int, source: str, codes: Iterable[int]) -> Verdict:
    """The referee's verdict on engine move ``codes`` played from deal (``deal``, ``seed``, ``source``)."""
    return replay_codes(rules, make_deal(rules, int(deal), int(seed), source).position, codes)


# --- low-level file helpers --------------------------------------------------------

def _temp_path(path: Path) -> Path:
    """A temporary name beside ``path`` that says who is writing it (pid, host), for `Store.clean_temp`; it ends
    in ``.tmp``, not ``.parquet``, so that a glob such as DuckDB's ``**/*.parquet`` never reads a half-written chunk."""
    return path.parent / f"{_TMP_PREFIX}{os.getpid()}@{uuid.uuid4().hex[:8]}@{socket.gethostname()}@{path.name}.tmp"


_DICTIONARY_COLUMNS = [f.name for f in SCHEMA if pa.types.is_dictionary(f.type)] + ["cards_home", "moves"]


def _write_parquet(table: pa.Table, path: Path, root: Path) -> None:
    """Write ``table`` to the new file ``path`` of store ``root`` and force it to disk.

    Page checksums let a reader notice damaged pages; the deal numbers (consecutive)
    are delta-encoded and only low-cardinality columns get Parquet dictionaries,
    which makes the file small and the write cheap next to the play.
    """
    sink = pa.BufferOutputStream()  # written in memory, then to the file opened without following links
    pq.write_table(table, sink, compression=COMPRESSION, write_page_checksum=True,
                   use_dictionary=_DICTIONARY_COLUMNS, column_encoding={"deal": "DELTA_BINARY_PACKED"})
    with nofollow.create(root, path) as fh:
        fh.write(sink.getvalue())
        fh.flush()
        os.fsync(fh.fileno())


def _atomic_write_bytes(root: Path, path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` in store ``root`` whole or not at all (a new temporary file, renamed)."""
    tmp = _temp_path(path)
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
    _fsync_dir(path.parent)


def _move_into(root: Path, old: Path, new: Path) -> None:
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


def _fsync_dir(path: Path) -> None:
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
