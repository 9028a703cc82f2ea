"""What a run accepts of the rows its key already holds: only rows it could have made itself.

The run key (`studies.rows.RunKey`: rules, strategy identity with its parameters, seeds, source)
fixes how every game is played, so a stored row is the row a new run would make, with three
exceptions, which `Wants` checks before a run reuses a stored chunk:

- The per-deal time limit (``deal_timeout``) can end a game early: as a timeout, or as an error of a
  strategy that its timer interrupted (`LIMITED`: it raised, or chose a move that is not legal). Such
  a row is accepted only by a run with the limit it was played under, or, when it records none, by
  any run unless it is a timeout (whose limit is then unknown: a chunk written before rows recorded
  their limit). Every other row (a win, a loss, a search that gave up) is the game's own end and is
  accepted under any limit: a limit only cuts games short. (A strategy that swallows the timer's
  interruption and then resigns is not told apart from one that resigns on its own; the arena stops
  one that plays on at its next move, as a timeout.)
- The tier, when the run names one: a plug-in's compiled policy and its Python ``choose`` may not
  agree, so ``--tier python`` does not accept rows played compiled, nor the reverse; ``auto``
  accepts either.
- Verification: a verifying run replays with the referee (`studies.reading.check_win`) every stored
  win it reuses that is not marked ``verified``, and every win of a chunk file whose marked wins no
  longer give the digest the file recorded when it was written (`studies.rows.verified_digest`: a
  file edited since); it marks the wins that pass as verified, and does not reuse a chunk holding a
  win the referee rejects. So a reused win counts only if the referee accepted it, in this run or
  in the one that wrote it.

A chunk holding any row the run would not accept is played again. The other run settings cannot
change a row: the chunk size, the number of jobs and the backend decide only the file layout and
the speed, and a strategy's own limits (the solver's ``seconds`` and node budgets) are parameters,
part of its identity and so of the key.

The run's side (`reuse_stored`, called once per deal range of a run): the stored chunks of the key
meeting the range are checked as they are read (a file that fails is moved aside,
`studies.store.Store.quarantine`, and its deals are played again), the ones `Wants` accepts are
counted, and the deals they cover are left out of the plan. Files that overlap (left by older toolkits
after a kill) are repaired where that is safe, and a forced run cuts the files that reach outside its
range to the deals outside, so that its swap (`studies.store.Store.finish_swap`) loses no deal.
`stored` and `saved_spans` tell from the files' names alone how much of a run the store holds: a run
that finds all of it readies nothing to play, and an interrupted one says how much is saved.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sim.engine import T_ILLEGAL, T_RAISED, T_TIMEOUT, TERMINATIONS, WON
from sim.rules import Rules
from studies.chunks import Tally, outcome_counts
from studies.files import CorruptChunkError, StoreError
from studies.rows import ChunkFile, load_chunk_file
from studies.store import Store

if TYPE_CHECKING:
    from studies.spec import RunSummary

TIMEOUT = TERMINATIONS[T_TIMEOUT]
LIMITED = (TIMEOUT, TERMINATIONS[T_RAISED], TERMINATIONS[T_ILLEGAL])
"""Terminations a deal time limit can cause: its own, and the errors of a strategy its timer interrupted."""
ACCEPT_COLUMNS = ("deal", "outcome", "cards_home", "termination", "deal_timeout", "tier")
"""What `Wants.refusal` reads of a chunk (with the counts the runner takes from it)."""
WIN_COLUMNS = ("deal", "seed", "source", "outcome", "win_moves", "verified")
"""What `Wants.rejected_win` reads of a chunk."""


@dataclass(frozen=True)
class Wants:
    """The settings of a run that decide which stored rows it accepts (see the module docs)."""

    rules: Rules
    deal_timeout: float | None
    tier: str
    verify: bool

    def refusal(self, table: pa.Table) -> str | None:
        """Why this run would not have made the rows of ``table`` (`ACCEPT_COLUMNS`), or None when it would."""
        if self.tier in ("python", "compiled"):
            other = len(table) - _count(_is_in(table.column("tier"), self.tier))
            if other:
                return f"{other:,} row(s) played by another tier than {self.tier}"
        limited = len(table) - _count(self._limit_accepts(table))
        if limited:
            limit = "none" if self.deal_timeout is None else f"{self.deal_timeout:g} s"
            return f"{limited:,} row(s) a deal time limit may have ended, made under another limit than this run's ({limit})"
        return None

    def _limit_accepts(self, table: pa.Table) -> pa.ChunkedArray:
        """Per row: whether this run's deal time limit accepts it."""
        term, limit = table.column("termination"), table.column("deal_timeout")
        own_end = pc.invert(_is_in(term, *LIMITED))
        no_limit = pc.and_(pc.is_null(limit), pc.invert(_is_in(term, TIMEOUT)))
        ok = pc.or_(own_end, no_limit)
        if self.deal_timeout is not None:
            same = pa.Array.from_buffers(pa.float64(), 1, [None, pa.py_buffer(np.array([self.deal_timeout]))])
            ok = pc.or_(ok, pc.is_in(limit, value_set=same))
        return ok

    def rejected_win(self, table: pa.Table) -> str | None:
        """The first win of ``table`` (`WIN_COLUMNS`, from a file `distrust` has passed) not marked verified that
        the referee rejects, as ``deal N: reason``; None when every such win is a legal game that ends with every
        card home."""
        from studies.reading import check_win

        wins = table.filter(pc.and_(_won(table), pc.invert(table.column("verified"))))
        for row in wins.select(["deal", "seed", "source", "win_moves"]).to_pylist():
            if row["win_moves"] is None:
                return f"deal {row['deal']}: a win with no moves stored"
            verdict = check_win(self.rules, row)
            if not (verdict.legal and verdict.won):
                return f"deal {row['deal']}: {verdict.reason or f'{verdict.cards_home} cards home at the end'}"
        return None


def trusted(table: pa.Table) -> bool:
    """Whether the wins that ``table`` (every row of a chunk file) marks verified are those it was written with."""
    from studies.rows import recorded_digest, verified_digest

    return recorded_digest(table) == verified_digest(table)


def distrust(table: pa.Table) -> pa.Table:
    """``table`` (every row of a chunk file) with its verified marks dropped unless the file's digest holds
    (`trusted`): what any rewrite of a file starts from, so that a rewrite never vouches for a win nobody checked."""
    if trusted(table):
        return table
    marks = table.column("verified")
    return table.set_column(table.schema.get_field_index("verified"), "verified", pc.and_(marks, pc.invert(marks)))


def unverified_wins(table: pa.Table) -> int:
    """How many wins of ``table`` (`WIN_COLUMNS`) are not marked verified."""
    return _count(pc.and_(_won(table), pc.invert(table.column("verified"))))


def mark_verified(table: pa.Table, start: int, length: int) -> pa.Table:
    """``table`` (every column of a chunk) with the wins of rows start..start+length-1 marked verified."""
    verified = table.column("verified").combine_chunks()
    won = _won(table).combine_chunks()
    middle = pc.or_(verified.slice(start, length), won.slice(start, length))
    column = pa.chunked_array([verified.slice(0, start), middle, verified.slice(start + length)], pa.bool_())
    return table.set_column(table.schema.get_field_index("verified"), "verified", column)


def _won(table: pa.Table) -> pa.ChunkedArray:
    return _is_in(table.column("outcome"), "won")


def _is_in(column: pa.ChunkedArray, *texts: str) -> pa.ChunkedArray:
    """Per row, whether the text of ``column`` (a category column) is one of ``texts`` (false for null).

    Arrow's kernels with no Python value turned into an Arrow one (`pa.array`, `pa.scalar` and a kernel's
    Python arguments import pandas on their first use: a quarter of a second of a run that only reads its rows
    back)."""
    from studies.rows import text_array

    return pc.is_in(pc.cast(column, pa.string()), value_set=text_array(texts))


def _count(flags: pa.ChunkedArray | pa.Array) -> int:
    """How many of ``flags`` are true (no nulls)."""
    return int(pc.sum(pc.cast(flags, pa.int64())).as_py() or 0)


# --- a run's stored chunks: counted, reused, repaired or moved aside ----------------------------------

def stored(store: str | os.PathLike[str] | Store, key: str, spans: Sequence[tuple[int, int]]) -> bool:
    """Whether chunk files of ``key`` cover every deal of ``spans``, by their names (a look, no side effect)."""
    st = store if isinstance(store, Store) else Store(store)
    try:
        return all(_saved(st, key, lo, hi) == hi - lo + 1 for lo, hi in spans)
    except StoreError:  # a folder that cannot be listed: `studies.runner.run` opens the store and says what is wrong
        return False


COUNT_COLUMNS = ACCEPT_COLUMNS
"""What reusing a stored chunk reads of it (`outcome_counts`, and what `studies.reuse.Wants.refusal` checks): a quarter of
the time of reading every column, the moves of the wins above all (a verifying run reads them only of chunks that
hold wins); the file's metadata, name, row count and deal numbers are checked all the same."""


def _load_or_quarantine(st: Store, c: ChunkFile, summary: RunSummary, columns: Sequence[str] | None = None
                        ) -> pa.Table | None:
    """The rows of a stored chunk file (only ``columns``, when given), or None when it fails its checks (then it
    is moved aside and noted)."""
    try:
        return load_chunk_file(c, columns)
    except CorruptChunkError:
        summary.corrupt.append(str(st.quarantine(c)))
        return None


def _keep_outside(st: Store, table: pa.Table, c: ChunkFile, lo: int, hi: int, run_id: str) -> None:
    """Write the rows of chunk ``c`` (``table``, all of them) outside lo..hi as files of their own, so that the
    files a run replaces lie inside lo..hi and each of its commits can drop the ones it overlaps."""
    table = distrust(table)
    for a, b in ((c.first, lo - 1), (hi + 1, c.last)):
        if a <= b:  # a checked file holds deals c.first..c.last in order: row i is deal c.first + i
            st.write_chunk(table.slice(a - c.first, b - a + 1), c.key, a, b, run_id)


def _accepts(st: Store, c: ChunkFile, used: pa.Table, a: int, b: int, lo: int, hi: int, wants: Wants,
             summary: RunSummary, run_id: str) -> bool:
    """Whether the run reuses deals a..b of chunk ``c`` (``used``: their `COUNT_COLUMNS`), as `studies.reuse`
    says. A verifying run replays their wins not yet verified with the referee and marks them (rewriting the file); a
    chunk holding a win the referee rejects is moved aside, with a line in the summary's ``damaged``. A chunk
    not reused is played again (its rows outside lo..hi are kept, in files of their own)."""
    why = wants.refusal(used)
    if why is None and wants.verify and outcome_counts(used)[0][WON]:
        loaded = _load_or_quarantine(st, c, summary)
        if loaded is None:
            return False
        whole = distrust(loaded)
        rejected = wants.rejected_win(whole.slice(a - c.first, b - a + 1))
        if rejected is None:
            if whole is not loaded or unverified_wins(whole.slice(a - c.first, b - a + 1)):
                st.write_chunk(mark_verified(whole, a - c.first, b - a + 1), c.key, c.first, c.last, run_id)
            return True
        moved = st.quarantine(c)
        _keep_outside(st, whole, c, lo, hi, run_id)
        summary.damaged.append(f"chunk file {c.path} holds a win the referee rejects ({rejected}); "
                               f"moved aside to {moved} and played again")
        return False
    if why is None:
        return True
    if c.first < lo or c.last > hi:
        whole = _load_or_quarantine(st, c, summary)
        if whole is None:
            return False
        _keep_outside(st, whole, c, lo, hi, run_id)
    summary.refused.append(f"deals {a:,}-{b:,}: the store holds {why}")
    return False


def reuse_stored(st: Store, key: str, lo: int, hi: int, force: bool, summary: RunSummary, run_id: str, wants: Wants
           ) -> tuple[Tally, list[tuple[int, int]]]:
    """Check the stored chunks of ``key`` meeting lo..hi; return their totals and the deals they cover.

    With ``force`` nothing is reused, and a stored file that reaches outside lo..hi is cut to the
    deals outside (rewritten from its rows, staged with the run's chunks), so that the run's swap
    (`studies.store.Store.finish_swap`) can drop every file it overlaps and lose no deal. Otherwise a
    chunk is reused only when ``wants`` accepts its rows (`_accepts`), and files that overlap (left by
    older toolkits after a kill) are repaired where that is safe: one whose deals are all in earlier
    files is removed, one that overlaps only earlier files is cut to its new deals.
    """
    tally = Tally()
    files = st.chunk_files(key, lo, hi)
    if force:
        for c in files:
            if lo <= c.first and c.last <= hi:
                continue
            table = _load_or_quarantine(st, c, summary)
            if table is not None:
                _keep_outside(st, table, c, lo, hi, run_id)
        return tally, []
    covered: list[tuple[int, int]] = []
    cursor, before = lo, 0  # before: the last deal of the files listed before this one
    for i, c in enumerate(files):
        if c.last <= before:  # every deal of it is in earlier files (an older toolkit's duplicate)
            c.path.unlink(missing_ok=True)
            continue
        b = min(c.last, hi)
        if b < cursor:
            continue
        table = _load_or_quarantine(st, c, summary, COUNT_COLUMNS)
        if table is None:
            continue
        # a checked file holds deals c.first..c.last in order (row i is deal c.first + i): cut it by slicing
        a = max(c.first, cursor)  # where it overlaps what earlier files cover, count only the new deals
        if a > c.first or b < c.last:
            table = table.slice(a - c.first, b - a + 1)
        if not _accepts(st, c, table, a, b, lo, hi, wants, summary, run_id):
            before, cursor = c.last, b + 1  # its deals a..b are played again
            continue
        if c.first <= before and all(n.first > c.last for n in files[i + 1:]):  # keep only its new deals
            whole = _load_or_quarantine(st, c, summary)
            if whole is None:
                continue
            st.write_chunk(distrust(whole).slice(before + 1 - c.first), key, before + 1, c.last, run_id)
        before = c.last
        counts, home = outcome_counts(table)
        tally.add(counts, home)
        covered.append((a, b))
        cursor = b + 1
        summary.chunks_reused += 1
    return tally, covered


def saved_spans(st: Store, key: str, spans: Sequence[tuple[int, int]]) -> int:
    """Deals of ``spans`` that chunk files of ``key`` hold (by their names)."""
    return sum(_saved(st, key, lo, hi) for lo, hi in spans)


def _saved(st: Store, key: str, lo: int, hi: int) -> int:
    """Deals of lo..hi that chunk files of ``key`` hold (by their names)."""
    cursor, saved = lo, 0
    for c in st.chunk_files(key, lo, hi):
        a, b = max(c.first, cursor), min(c.last, hi)
        if b >= a:
            saved += b - a + 1
            cursor = b + 1
    return saved
