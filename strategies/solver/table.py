"""The search's transposition table: one entry per expanded position, and the positions proven lost.

An entry is 48 bits of the position's check key (`strategies.solver.hash`; the
slot comes from the independent key) and a 16-bit tag:

- ``gen`` (1 to `GEN_LIMIT`): expanded by the search of that generation. Each
  search bumps the generation, so the entries of earlier searches read as
  empty and the table is cleared lazily;
- ``LOST_TAG | root``: proven lost while deciding the root whose first search
  had generation ``root``. These entries outlive the search that proved them:
  every later search of the same root (the restarts of
  `strategies.solver.strategy.decide`) cuts them at once, so the restarts add
  up their proofs of loss instead of each starting from nothing.

Beside each entry the table keeps the search's depth-first index of the
position (``tidx``), for Tarjan's strongly connected components: a position
is proven lost when its component is finished with nothing left unexplored
below it (`strategies.solver.search`). ``tidx`` is at least 0 while the
position is on Tarjan's stack and `DONE` once its component is finished
without a proof. A slot whose position is on the stack is never overwritten,
so that the component's members can be found again when it is finished.

When the generations run out (`GEN_LIMIT`), they start again from 1 (`renumber`): every entry is cleared
but the proofs of the root being decided, which are renamed root 1. So a deal is decided the same way
whatever generation its first search had, that is, whatever the same table decided before it (solver
version 7; before, the table was cleared whole there, and a deal whose searches spanned that point lost
its restarts' proofs half way: good-measure 806 took 2,096,665 nodes instead of 579,826 when it started
300 generations before the end).

A bucket is the 8 slots of one aligned block (one cache line of entries); a
position is looked for in every slot of its bucket, and goes into the first
free one (another generation's entry, or another root's proof), else over the
first entry not on the stack (a proof or a finished position: it will be
expanded again if met, which costs time, never soundness).
"""

from __future__ import annotations

import numba as nb
import numpy as np

GEN_BITS = 16
GEN_MASK = (1 << GEN_BITS) - 1
LOST_TAG = 1 << (GEN_BITS - 1)
"""The tag bit of an entry proven lost; the tag's other bits name the root (its first search's generation)."""
GEN_LIMIT = LOST_TAG - 1
"""The last generation before the table is cleared (generations and roots share the tag's low bits)."""
BUCKET = 8
"""Slots of a bucket: eight 8-byte entries, one 64-byte cache line."""
BYTES_PER_SLOT = 16
"""The entry (8 bytes), its depth-first index (4) and its place on Tarjan's stack (4)."""
INDEX_LIMIT = (1 << 31) - 1
"""Depth-first indices are 32-bit: a search stops as unknown before it expands this many nodes."""

DONE = -1
"""``tidx`` of a position whose component was finished without a proof of loss."""
T_LOST = -1
"""`tt_find`: the position is proven lost for this root."""
T_FULL = -2
"""`tt_find`: the position is absent and its bucket has no slot to spare (every one is on the stack)."""
T_ABSENT = -3
"""`tt_find`: this and below, the position is absent and may go into a slot (`absent_at`, `absent_slot`)."""


@nb.njit(cache=True, inline="always")
def absent_at(slot: np.int64) -> np.int64:
    """`tt_find`'s answer for a position that is absent and may go into ``slot``."""
    return T_ABSENT - slot


@nb.njit(cache=True, inline="always")
def absent_slot(found: np.int64) -> np.int64:
    """The slot an absent position may go into, from `tt_find`'s answer (at most `T_ABSENT`)."""
    return T_ABSENT - found


@nb.njit(cache=True, inline="always")
def tt_find(tt, tidx, key, check, gen, lost):  # noqa: ANN001, ANN201 (numba)
    """Look the position up: its slot (at least 0) if this search expanded it, `T_LOST` if proven lost
    for this root (tag ``lost``), else `absent_at` the slot it may take, or `T_FULL`."""
    start = key & np.uint64(tt.shape[0] - BUCKET)
    body = check & ~np.uint64(GEN_MASK)
    free = np.int64(-1)
    spare = np.int64(-1)
    for j in range(BUCKET):
        slot = np.int64(start) + j
        e = tt[slot]
        tag = e & np.uint64(GEN_MASK)
        if tag == gen:
            if (e & ~np.uint64(GEN_MASK)) == body:
                return slot
            if spare < 0 and tidx[slot] < 0:
                spare = slot
        elif tag == lost:
            if (e & ~np.uint64(GEN_MASK)) == body:
                return np.int64(T_LOST)
            if spare < 0:
                spare = slot
        elif free < 0:
            free = slot
    if free >= 0:
        return absent_at(free)
    if spare >= 0:
        return absent_at(spare)
    return np.int64(T_FULL)


@nb.njit(cache=True, inline="always")
def tt_insert(tt, tidx, slot, check, gen, index):  # noqa: ANN001, ANN201 (numba)
    """Store the position (``check``) in ``slot`` as expanded by this search with depth-first ``index``."""
    tt[slot] = (check & ~np.uint64(GEN_MASK)) | gen
    tidx[slot] = index


@nb.njit(cache=True, inline="always")
def tt_mark_lost(tt, slot, lost):  # noqa: ANN001, ANN201 (numba)
    """Turn the entry in ``slot`` into a proof of loss for the root of tag ``lost``."""
    tt[slot] = (tt[slot] & ~np.uint64(GEN_MASK)) | lost


@nb.njit(cache=True)
def renumber(tt, keep, to):  # noqa: ANN001, ANN201 (numba)
    """Clear every entry of ``tt`` but the proofs of loss tagged ``keep`` (none when 0), which are tagged
    ``to`` instead: generations start again from 1 with the current root's proofs kept."""
    mask = np.uint64(GEN_MASK)
    for i in range(tt.shape[0]):
        e = tt[i]
        tt[i] = (e & ~mask) | np.uint64(to) if keep != 0 and (e & mask) == np.uint64(keep) else np.uint64(0)


def table_slots(table_mb: float) -> int:
    """Slots of a table of at most ``table_mb`` MiB with its bookkeeping (`BYTES_PER_SLOT`): a power of two, at least 1,024."""
    slots = max(1 << 10, int(table_mb * (1 << 20)) // BYTES_PER_SLOT)
    return 1 << (slots.bit_length() - 1)
