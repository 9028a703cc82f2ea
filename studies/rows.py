"""One chunk's rows: the columns every row carries, how a chunk's table is built, and how a chunk file is
written as Parquet and read back checked.

Each chunk file holds deals first..last of one run key (`RunKey`), named by them (`chunk_name`), with the
key and range in its metadata too.

Files are checked when read: the Parquet footer and page
checksums, the key and deal range recorded in the file's metadata against its
name, the row count and the deal numbers. A file that fails is never read as
data (`CorruptChunkError`); the runner moves it aside and plays its deals again.

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
strategy_identity  category                     ``name@version:params``, ``name@version#digest:params`` for a plug-in (part of the key)
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
                                                `studies.reading.decode_moves` turns them into `sim.notation.Move` values
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
import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from sim.engine import OUTCOMES, TERMINATIONS
from studies import nofollow
from studies.files import CorruptChunkError, StoreError

CHUNK_VERSION = 3
"""Chunk format: 3 has the ``deal_timeout`` and ``verified`` columns; 2 (read, no longer written) has neither;
1 (read) has no ``termination`` either. `load_chunk_file` gives older chunks the missing columns (`ABSENT`)."""
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
CHUNK_RE = re.compile(r"^([0-9a-f]{16})_(\d{19})_(\d{19})\.parquet$")


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
    (`studies.reuse`); it is a checksum against edits, not a signature. What it hashes is each win's
    ``json.dumps([deal, seed, source, win_moves])``, one after the other (`_win_texts`)."""
    import pyarrow.compute as pc

    if "verified" not in table.column_names:
        return ""
    won = pc.is_in(pc.cast(table.column("outcome"), pa.string()), value_set=text_array(["won"]))
    marked = table.filter(pc.and_(won, table.column("verified"))).select(["deal", "seed", "source", "win_moves"])
    return hashlib.sha256("".join(_win_texts(marked)).encode()).hexdigest()[:32]


_CODE_TEXTS = np.array([str(code) for code in range(64 * 64)], dtype=object)
"""The decimal text of every engine move code (``src * 64 + dst``)."""


def _win_texts(marked: pa.Table) -> Iterator[str]:
    """Each row of ``marked`` (deal, seed, source, win_moves) as ``json.dumps`` writes the list of its four values.

    The move codes' texts are looked up for the whole chunk at once and joined a row at a time (resuming a run of a
    million deals digests every chunk it reuses, and `json.dumps` a row at a time took seconds). A chunk with a
    null or a code outside 0..4095 anywhere (a damaged or edited file) goes through `json.dumps` itself."""
    import pyarrow.compute as pc

    moves = marked.column("win_moves").combine_chunks()
    flat = moves.flatten()
    bounds = pc.min_max(flat).as_py()
    if (flat.null_count or moves.null_count or any(marked.column(c).null_count for c in ("deal", "seed", "source"))
            or flat.type != pa.int16() or (len(flat) and not 0 <= bounds["min"] <= bounds["max"] < len(_CODE_TEXTS))):
        for row in marked.to_pylist():
            yield json.dumps([row["deal"], row["seed"], row["source"], row["win_moves"]])
        return
    # the codes' buffer read as numpy's, not converted (pyarrow's conversion to numpy imports pandas)
    values = np.frombuffer(flat.buffers()[1], dtype=np.int16)[flat.offset:flat.offset + len(flat)] if len(flat) else []
    codes = _CODE_TEXTS[values].tolist()
    first = moves.offsets[0].as_py()
    offsets = [offset - first for offset in moves.offsets.to_pylist()]  # a sliced chunk's offsets start above 0
    sources: dict[str, str] = {}
    for i, (deal, seed, source) in enumerate(zip(marked.column("deal").to_pylist(), marked.column("seed").to_pylist(),
                                                 marked.column("source").to_pylist(), strict=True)):
        if source not in sources:
            sources[source] = json.dumps(source)
        yield f"[{deal}, {seed}, {sources[source]}, [{', '.join(codes[offsets[i]:offsets[i + 1]])}]]"


def recorded_digest(table: pa.Table) -> str | None:
    """The `verified_digest` a chunk file recorded when it was written (``table``: rows read from it), or None."""
    try:
        return json.loads((table.schema.metadata or {})[META_KEY]).get("verified")
    except (KeyError, ValueError, AttributeError):
        return None


class _ChunkCache:
    """Chunk tables read inside a `chunk_cache` block, each with all of ``columns`` (and ``deal`` and ``key``, which
    `studies.reading.read_store` always reads), by file identity."""

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


_DICTIONARY_COLUMNS = [f.name for f in SCHEMA if pa.types.is_dictionary(f.type)] + ["cards_home", "moves"]


def write_parquet(table: pa.Table, path: Path, root: Path) -> None:
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
