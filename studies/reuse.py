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
- Verification: a verifying run replays every stored win it reuses with the referee
  (`studies.store.check_win`), whatever the row's ``verified`` flag says (a flag in a file is as
  easy to write as a win), marks the wins that pass as verified, and does not reuse a chunk holding
  a win the referee rejects.

A chunk holding any row the run would not accept is played again. The other run settings cannot
change a row: the chunk size, the number of jobs and the backend decide only the file layout and
the speed, and a strategy's own limits (the solver's ``seconds`` and node budgets) are parameters,
part of its identity and so of the key.
"""

from __future__ import annotations

from dataclasses import dataclass

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
            other = len(table) - _count(pc.equal(pc.cast(table.column("tier"), pa.string()), self.tier))
            if other:
                return f"{other:,} row(s) played by another tier than {self.tier}"
        limited = len(table) - _count(self._limit_accepts(table))
        if limited:
            limit = "no deal time limit" if self.deal_timeout is None else f"a deal time limit of {self.deal_timeout:g} s"
            return f"{limited:,} row(s) that a deal time limit may have ended, played under another limit than this run's ({limit})"
        return None

    def _limit_accepts(self, table: pa.Table) -> pa.ChunkedArray:
        """Per row: whether this run's deal time limit accepts it."""
        term = pc.cast(table.column("termination"), pa.string())
        limit = table.column("deal_timeout")
        own_end = pc.invert(pc.fill_null(pc.is_in(term, value_set=pa.array(LIMITED)), False))
        no_limit = pc.and_(pc.is_null(limit), pc.fill_null(pc.not_equal(term, TIMEOUT), True))
        ok = pc.or_(own_end, no_limit)
        if self.deal_timeout is not None:
            ok = pc.or_(ok, pc.fill_null(pc.equal(limit, self.deal_timeout), False))
        return ok

    def rejected_win(self, table: pa.Table) -> str | None:
        """The first win of ``table`` (`WIN_COLUMNS`) that the referee rejects, as ``deal N: reason``; None when
        every win is a legal game that ends with every card home."""
        from studies.store import check_win

        wins = table.filter(pc.equal(pc.cast(table.column("outcome"), pa.string()), "won"))
        for row in wins.select(["deal", "seed", "source", "win_moves"]).to_pylist():
            if row["win_moves"] is None:
                return f"deal {row['deal']}: a win with no moves stored"
            verdict = check_win(self.rules, row)
            if not (verdict.legal and verdict.won):
                return f"deal {row['deal']}: {verdict.reason or f'{verdict.cards_home} cards home at the end'}"
        return None


def unverified_wins(table: pa.Table) -> int:
    """How many wins of ``table`` (`WIN_COLUMNS`) are not marked verified."""
    won = pc.equal(pc.cast(table.column("outcome"), pa.string()), "won")
    return _count(pc.and_(won, pc.invert(table.column("verified"))))


def mark_verified(table: pa.Table, start: int, length: int) -> pa.Table:
    """``table`` (every column of a chunk) with the wins of rows start..start+length-1 marked verified."""
    verified = table.column("verified").combine_chunks()
    won = pc.equal(pc.cast(table.column("outcome"), pa.string()), "won").combine_chunks()
    middle = pc.or_(verified.slice(start, length), won.slice(start, length))
    column = pa.chunked_array([verified.slice(0, start), middle, verified.slice(start + length)], pa.bool_())
    return table.set_column(table.schema.get_field_index("verified"), "verified", column)


def _count(flags: pa.ChunkedArray | pa.Array) -> int:
    """How many of ``flags`` are true (nulls count as false)."""
    return int(pc.sum(pc.cast(pc.fill_null(flags, False), pa.int64())).as_py() or 0)
