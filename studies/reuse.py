"""What a run accepts of the rows its key already holds: only rows it could have made itself.

The run key (`studies.store.RunKey`: rules, strategy identity with its parameters, seeds, source)
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
- Verification: a verifying run replays with the referee (`studies.store.check_win`) every stored
  win it reuses that is not marked ``verified``, and every win of a chunk file whose marked wins no
  longer give the digest the file recorded when it was written (`studies.store.verified_digest`: a
  file edited since); it marks the wins that pass as verified, and does not reuse a chunk holding a
  win the referee rejects. So a reused win counts only if the referee accepted it, in this run or
  in the one that wrote it.

A chunk holding any row the run would not accept is played again. The other run settings cannot
change a row: the chunk size, the number of jobs and the backend decide only the file layout and
the speed, and a strategy's own limits (the solver's ``seconds`` and node budgets) are parameters,
part of its identity and so of the key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from sim.engine import T_ILLEGAL, T_RAISED, T_TIMEOUT, TERMINATIONS
from sim.rules import Rules

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
        from studies.store import check_win

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
    from studies.store import recorded_digest, verified_digest

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
    from studies.store import text_array

    return pc.is_in(pc.cast(column, pa.string()), value_set=text_array(texts))


def _count(flags: pa.ChunkedArray | pa.Array) -> int:
    """How many of ``flags`` are true (no nulls)."""
    return int(pc.sum(pc.cast(flags, pa.int64())).as_py() or 0)
