"""Reading a store's rows back: `read_store` (a DataFrame) and `read_table` (Arrow), with their filters, the
checks of every file they read and a `studies.files.DamagedFileWarning` for each damaged one; and the
move lists of stored wins, replayed by the referee (`decode_moves`, `check_win`).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import pyarrow as pa

from sim.deals import check_deal_range, make_deal
from sim.notation import Move
from sim.referee import Verdict, replay_codes
from sim.rules import Rules, preset_named
from studies.files import CorruptChunkError, DamagedFileWarning, StoreError
from studies.rows import COLUMNS, SCHEMA, load_chunk_file
from studies.store import KEY_RE, Store


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
                deals: tuple[int, int] | None, columns: Sequence[str] | None, allow_mixed: bool,
                max_rows: int = 0) -> pa.Table:
    """`read_table`, called by it and by `read_store` (its warnings name their caller's line); more than
    ``max_rows`` rows (0: no limit) are refused (`read_store`)."""
    wanted = None if columns is None else [c for c in COLUMNS if c in {"key", "deal", *columns}]
    tables = list(_scan(path, key=key, variant=variant, rules_fingerprint=rules_fingerprint, strategy=strategy,
                        strategy_identity=strategy_identity, seed=seed, source=source, deals=deals, columns=columns,
                        allow_mixed=allow_mixed, level=4, max_rows=max_rows))
    if not tables:
        return (SCHEMA if wanted is None else pa.schema([SCHEMA.field(c) for c in wanted])).empty_table()
    return pa.concat_tables(tables).unify_dictionaries()


def scan_store(
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
) -> Iterator[pa.Table]:
    """`read_table`'s rows one checked chunk file at a time (each an Arrow table of at most a chunk's deals), in
    key and deal order, with the same filters, checks and warnings: a pass over a store of any size in the memory
    of one chunk. `reports.digest` aggregates a report's figures this way."""
    yield from _scan(path, key=key, variant=variant, rules_fingerprint=rules_fingerprint, strategy=strategy,
                     strategy_identity=strategy_identity, seed=seed, source=source, deals=deals, columns=columns,
                     allow_mixed=allow_mixed, level=3)


READ_LIMIT = 20_000_000
"""The most rows `read_store` loads into a DataFrame unless told otherwise (about 2.4 GB)."""


def store_dataset(path: str | os.PathLike[str]) -> Any:
    """A pyarrow dataset over the chunk files of a store (every run's; the ``key`` column tells runs apart), to
    filter and aggregate out of core (``dataset.to_batches``, ``pyarrow.acero``, DuckDB). It reads the files as
    they are: without `read_store`'s checks of each file and its damage reports, and with a deal twice where two
    chunk files overlap (a run interrupted and resumed with another chunk size); `scan_store` has the checks."""
    import pyarrow.dataset as ds

    return ds.dataset([str(c.path) for c in store_files(path)], format="parquet")


def store_files(path: str | os.PathLike[str]) -> list[Any]:
    """The chunk files of every run of a store (`studies.rows.ChunkFile`), by key and first deal."""
    store = Store.open(path, create=False)
    return [c for k in store.keys() for c in store.chunk_files(k, None, None)]


def _scan(path: str | os.PathLike[str], *, key: str | None, variant: str | None, rules_fingerprint: str | None,
          strategy: str | None, strategy_identity: str | None, seed: int | None, source: str | None,
          deals: tuple[int, int] | None, columns: Sequence[str] | None, allow_mixed: bool, level: int,
          max_rows: int = 0) -> Iterator[pa.Table]:
    """The checked rows of the selected runs, a chunk file's at a time; ``level``: the stack level its warnings
    name (their caller's caller); more than ``max_rows`` rows (0: no limit) are refused before any is read."""
    if deals is not None:  # the command line's check of a range, with its messages
        pair = tuple(deals) if isinstance(deals, tuple | list) else ()
        deals = check_deal_range(*(pair if len(pair) == 2 else (None, None)), f"deals={deals!r}")
    store = Store.open(path, create=False)
    unknown = sorted(set(columns or ()) - set(COLUMNS))
    if unknown:
        raise StoreError(f"unknown column(s) {', '.join(unknown)}; the store's columns: {', '.join(COLUMNS)}")
    if key is not None and not (isinstance(key, str) and KEY_RE.match(key)):
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
    lo, hi = deals if deals is not None else (None, None)
    if max_rows:
        held = sum(min(c.last, c.last if hi is None else hi) - max(c.first, c.first if lo is None else lo) + 1
                   for k in infos for c in store.chunk_files(k, lo, hi))
        if held > max_rows:
            raise StoreError(
                f"the selection holds {held:,} rows, more than the {max_rows:,} read_store loads into a DataFrame "
                f"(about 120 bytes a row); select fewer (key=, deals=), summarise the store in bounded memory with "
                f"bakers_dozen.api.summarise({str(path)!r}), query it with bakers_dozen.api.store_relation (DuckDB) or "
                f"store_dataset (pyarrow), or pass max_rows=0 to load them all")
    for k in infos:  # keys in order, and each key's files by first deal: the rows come sorted
        with store.reading(k):  # a forced run's swap waits: the key's files are its old ones or its new
            chunks = store.chunk_files(k, lo, hi)
            lost = store.lost_deals(k, chunks, lo, hi)
            if lost:
                shown = ", ".join(f"{a}-{b}" for a, b in lost[:3]) + (", ..." if len(lost) > 3 else "")
                warnings.warn(DamagedFileWarning(
                    f"{sum(b - a + 1 for a, b in lost):,} deals of run {k} ({shown}) are in no chunk file of "
                    f"{store.key_dir(k)}, though a finished run recorded them there: their file was deleted or moved aside; the rows "
                    "leave them out (a run of the same command plays them again)"), stacklevel=level)
            done = None  # the last deal of the key taken so far: a deal stored twice (overlapping files) appears once
            for chunk in chunks:
                try:
                    table = load_chunk_file(chunk, wanted)
                except CorruptChunkError as exc:
                    warnings.warn(DamagedFileWarning(f"{exc}; its deals are left out (a run of the same command moves "
                                                     "it aside and plays them again)"), stacklevel=level)
                    continue
                a = max(chunk.first, chunk.first if lo is None else lo, chunk.first if done is None else done + 1)
                b = chunk.last if hi is None else min(chunk.last, hi)
                if a > b:
                    continue
                if (a, b) != (chunk.first, chunk.last):  # a checked file holds its deals in order: row i is first + i
                    table = table.slice(a - chunk.first, b - a + 1)
                done = b
                yield table if wanted is None else table.select(wanted)


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
    max_rows: int | None = None,
) -> Any:
    """The rows of a store as a pandas DataFrame, sorted by key and deal.

    A DataFrame of a store's rows takes about 120 bytes a row: a selection of more than ``max_rows`` rows
    (default `READ_LIMIT`, 20 million: about 2.4 GB) is refused before anything is loaded, with a
    `StoreError` that says how to query it instead: `reports.digest.digest_runs` (each run's figures in one
    pass, in bounded memory: ``bakers_dozen.api.summarise``), `store_dataset` (a pyarrow dataset over the
    store's files) or ``bakers_dozen.api.store_relation`` (a DuckDB relation); ``max_rows=0`` reads any number.

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
                       allow_mixed=allow_mixed, max_rows=READ_LIMIT if max_rows is None else max_rows).to_pandas()


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
