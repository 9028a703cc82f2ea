"""Compiled building blocks that the built-in strategies share: how soon a card is
needed at home, how urgently a pile must be dug out, whether a card rests on a
base, and a position hash with a per-game record of visited positions.

Everything reads only what a player sees: cards below ``known[p]`` in pile p
are treated as unknown, so a strategy that passes the face-down counts of the
position it was shown never uses hidden cards, even when it searches ahead
and uncovers some.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_FOUND,
    P_PILES,
    SCRATCH_OWN,
    builds_on,
    down_at,
    fheight_at,
    found_at,
    home_slot,
    move_from,
    move_to,
    pile_base,
)
from sim.rng import nb_mix64

UNKNOWN_NEED = 6
"""How soon an unseen card is assumed to be needed (the middle of the ranks)."""
FAR = 1 << 20
"""Urgency of a pile that holds nothing needed."""

SCRATCH_STORED, SCRATCH_LAST = SCRATCH_OWN, SCRATCH_OWN + 1
VISITED_OFFSET = SCRATCH_OWN + 2
VISITED_SLOTS = 512
NEEDS_OFFSET = VISITED_OFFSET + VISITED_SLOTS
NEEDS_STAMP = DECK_SIZE
"""Slot of the table of needs (after its 52 needs) that names the foundation it was filled for."""
SCRATCH_MOVED = NEEDS_OFFSET + NEEDS_STAMP + 1
PILES_OFFSET = SCRATCH_MOVED + 1
SCRATCH_WITH_VISITED = PILES_OFFSET + DECK_SIZE
"""Scratch layout of strategies that remember positions: the engine's slots
(`sim.engine.SCRATCH_NODES`, `SCRATCH_MICROS`), then ``SCRATCH_STORED`` counts
stored hashes and ``SCRATCH_LAST`` holds the hash of the position the
strategy's last move led to, then the hash table (``VISITED_SLOTS`` from
``VISITED_OFFSET``), then the table of needs (`fill_needs`, 52 slots and its stamp from
``NEEDS_OFFSET``) that `heuristic` and `lookahead` fill at each decision, then
``SCRATCH_MOVED`` (the move the strategy's last decision chose) and the per-pile
cache of `heuristic` (`pile_entry`, one slot per pile from ``PILES_OFFSET``; a game
has at most `DECK_SIZE` piles)."""


@nb.njit(cache=True, inline="always")
def needs_of(scratch: np.ndarray) -> np.ndarray:
    """The table of needs in a policy's scratch (see `SCRATCH_WITH_VISITED`)."""
    return scratch[NEEDS_OFFSET : NEEDS_OFFSET + NEEDS_STAMP + 1]


@nb.njit(cache=True, inline="always")
def needs_stamp(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """A number (never 0) naming all that the needs depend on: the four foundation heights
    and whether a card may go to any foundation."""
    P = prm[P_PILES]
    stamp = np.int64(1 if prm[P_FOUND] == 0 else 2)
    for f in range(4):
        stamp = stamp * 14 + np.int64(st[fheight_at(P, f)])
    return stamp


@nb.njit(cache=True, inline="always")
def fill_needs(st: np.ndarray, prm: np.ndarray, need_of: np.ndarray) -> bool:
    """``need_of[c]`` = how many cards must still go home before card c can (0: it could go next),
    for all 52 cards (``need_of``: `needs_of` the scratch); True when the table changed.

    Needs change only when a foundation does, so the table keeps the `needs_stamp` it was
    filled for and is refilled only when that changes (most moves stay in the tableau)."""
    stamp = needs_stamp(st, prm)
    if need_of[NEEDS_STAMP] == stamp:
        return False
    need_of[NEEDS_STAMP] = stamp
    P = prm[P_PILES]
    for s in range(4):
        if prm[P_FOUND] == 0:
            done = np.int64(st[fheight_at(P, s)])
        else:
            done = np.int64(13)
            for f in range(4):
                done = min(done, np.int64(st[fheight_at(P, f)]))
        for r in range(13):
            need_of[s * 13 + r] = r - done if r > done else 0
    return True


F_FULL, F_BELOW, F_MISPLACED, F_FREES_HOME, FEATURE_ROWS = range(5)
"""Rows of the per-pile feature table filled by `pile_features`, and how many there are."""

ENTRY_VALID, ENTRY_FREES_HOME, ENTRY_MISPLACED = 1, 2, 4
ENTRY_TOP_SHIFT, ENTRY_SUITS_SHIFT, ENTRY_BELOW_SHIFT = 3, 7, 11
ENTRY_TOP_MASK = 15
"""Bits of a packed pile entry (`pile_entry`): valid (so never 0), frees home, misplaced,
then the exposed card's need (4 bits from ``ENTRY_TOP_SHIFT``, at most 13), the suits
of the pile's seen cards (4 bits from ``ENTRY_SUITS_SHIFT``: the needs the entry read)
and the buried urgency (from ``ENTRY_BELOW_SHIFT``, at most `FAR`)."""


@nb.njit(cache=True)
def _goes_home_now(st: np.ndarray, prm: np.ndarray, c: np.int64) -> bool:
    """Whether card c could go home now (a call of its own: see `pile_entry`)."""
    return home_slot(st, prm, c, 0) >= 0


@nb.njit(cache=True)
def pile_entry(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, need_of: np.ndarray) -> np.int64:
    """What the strategies read of pile p, its k lowest cards being unseen and ``need_of``
    filled by `fill_needs`, packed into one number (`ENTRY_VALID` ...):

    - buried urgency (`entry_below`): the urgency of the most urgent card under the
      exposed one, urgency = need x 16 + cards above it (smaller is more urgent), unseen
      cards counting as needed after `UNKNOWN_NEED` others; `FAR` when no card lies under
      the exposed one.
    - the exposed card's need (`entry_top_need`), 13 for an empty pile.
    - misplaced (``ENTRY_MISPLACED``): the exposed card rests on a card it does not build
      on, or on an unseen card.
    - frees home (``ENTRY_FREES_HOME``): the card under the exposed one is seen and could
      go home now.

    Written out in one pass with a single exit and no inlined helper taking an array:
    numba then keeps no reference counting inside it (`heuristic` runs it for every pile
    a move changes).
    """
    h = np.int64(st[p])
    base = pile_base(prm, p)
    below = UNKNOWN_NEED * 16 + (h - k) if k > 0 else FAR  # the unseen card nearest the top is the most urgent unseen one
    suits = 0
    for i in range(k, h - 1):
        c = np.int64(st[base + i])
        below = min(below, need_of[c] * 16 + (h - 1 - i))
        suits |= 1 << (c // 13)
    top = np.int64(13)
    if h > 0:
        c = np.int64(st[base + h - 1])
        top = need_of[c]
        suits |= 1 << (c // 13)
    e = (below << ENTRY_BELOW_SHIFT) | (suits << ENTRY_SUITS_SHIFT) | (top << ENTRY_TOP_SHIFT) | ENTRY_VALID
    if h >= 2:
        if h - 2 < k:
            e |= ENTRY_MISPLACED
        else:
            under = np.int64(st[base + h - 2])
            if not builds_on(np.int64(st[base + h - 1]), under, prm[P_BUILD]):
                e |= ENTRY_MISPLACED
            # in-suit foundations: a tableau card with need 0 can go home now
            if need_of[under] == 0 if prm[P_FOUND] == 0 else _goes_home_now(st, prm, under):
                e |= ENTRY_FREES_HOME
    return e


@nb.njit(cache=True, inline="always")
def entry_below(e: np.int64) -> np.int64:
    """The buried urgency in a `pile_entry`."""
    return e >> ENTRY_BELOW_SHIFT


@nb.njit(cache=True, inline="always")
def entry_top_need(e: np.int64) -> np.int64:
    """The exposed card's need in a `pile_entry`."""
    return (e >> ENTRY_TOP_SHIFT) & ENTRY_TOP_MASK


@nb.njit(cache=True, inline="always")
def pile_urgency(st: np.ndarray, p: np.int64, below: np.int64, top: np.int64) -> np.int64:
    """Urgency of pile p's most urgent card from its buried urgency and its exposed
    card's need (`pile_entry`) (`F_FULL`; `FAR` when the pile is empty)."""
    return min(below, top * 16) if st[p] > 0 else below


@nb.njit(cache=True, inline="always")
def refresh_piles(scratch: np.ndarray, prm: np.ndarray, continuing: bool, refilled: bool) -> None:
    """Drop the cached pile entries (``PILES_OFFSET``) that may be stale, ``continuing``
    when the move in ``SCRATCH_MOVED`` is the only one played since they were made and
    ``refilled`` when the table of needs changed since: the piles that move changed, and
    when it went to or came from an in-suit foundation, the piles holding a seen card of
    that suit (only their needs changed); all of them otherwise."""
    P = prm[P_PILES]
    m = scratch[SCRATCH_MOVED]
    src, dst = move_from(m), move_to(m)
    everything = not continuing or (refilled and (src < FOUNDATION) == (dst < FOUNDATION))
    if continuing and prm[P_FOUND] != 0 and (src >= FOUNDATION or dst >= FOUNDATION):
        everything = True  # alternate-colour foundations: every need and home test may change
    if everything:
        for p in range(P):
            scratch[PILES_OFFSET + p] = 0
        return
    for place in (src, dst):
        if place < FOUNDATION:
            scratch[PILES_OFFSET + place] = 0
        else:
            suit = np.int64(1 << (place - FOUNDATION + ENTRY_SUITS_SHIFT))
            for p in range(P):
                if scratch[PILES_OFFSET + p] & suit:
                    scratch[PILES_OFFSET + p] = 0


@nb.njit(cache=True)
def pile_features(st: np.ndarray, prm: np.ndarray, known: np.ndarray, feat: np.ndarray, need_of: np.ndarray) -> None:
    """Fill ``feat`` (`FEATURE_ROWS` rows, a column per pile) with what `lookahead` asks of
    each pile (`pile_entry`), the lowest ``known[p]`` cards of pile p being unseen:
    ``F_FULL`` (`pile_urgency`), ``F_BELOW`` (buried urgency), ``F_MISPLACED`` and
    ``F_FREES_HOME`` (1 or 0). ``need_of`` (52 slots) receives the need of every card
    (`fill_needs`). `heuristic` reads the entries itself, only for the piles its moves
    read, and keeps them from one decision to the next.
    """
    fill_needs(st, prm, need_of)
    for p in range(prm[P_PILES]):
        e = pile_entry(st, prm, p, known[p], need_of)
        below = entry_below(e)
        feat[F_FULL, p] = pile_urgency(st, p, below, entry_top_need(e))
        feat[F_BELOW, p] = below
        feat[F_MISPLACED, p] = 1 if e & ENTRY_MISPLACED else 0
        feat[F_FREES_HOME, p] = 1 if e & ENTRY_FREES_HOME else 0


@nb.njit(cache=True, inline="always")
def card_key(c: np.int64, i: np.int64) -> np.uint64:
    """Hash contribution of card c at height i of some pile (piles are interchangeable)."""
    return nb_mix64(np.uint64((c + 2) * 128 + i + 1))


@nb.njit(cache=True, inline="always")
def home_key(c: np.int64) -> np.uint64:
    return nb_mix64(np.uint64(c + 100_000))


@nb.njit(cache=True, inline="always")
def down_key(d: np.int64) -> np.uint64:
    return nb_mix64(np.uint64(d + 200_000))


@nb.njit(cache=True, inline="always")
def position_hash(st: np.ndarray, prm: np.ndarray) -> np.uint64:
    """A 64-bit hash of the position, the same whatever the order of the piles."""
    P = prm[P_PILES]
    h = np.uint64(0)
    for p in range(P):
        base = pile_base(prm, p)
        for i in range(np.int64(st[p])):
            h += card_key(np.int64(st[base + i]), i)
        h += down_key(np.int64(st[down_at(P, p)]))
    for f in range(4):
        for i in range(np.int64(st[fheight_at(P, f)])):
            h += home_key(np.int64(st[found_at(P, f) + i]))
    return h


@nb.njit(cache=True, inline="always")
def child_hash(st: np.ndarray, prm: np.ndarray, h: np.uint64, m: np.int64) -> np.uint64:
    """The hash after move m from a position with hash h (without playing it)."""
    P = prm[P_PILES]
    src, dst = move_from(m), move_to(m)
    if src >= FOUNDATION:
        f = src - FOUNDATION
        c = np.int64(st[found_at(P, f) + st[fheight_at(P, f)] - 1])
        h -= home_key(c)
    else:
        hs = np.int64(st[src])
        c = np.int64(st[pile_base(prm, src) + hs - 1])
        h -= card_key(c, hs - 1)
        d = np.int64(st[down_at(P, src)])
        if hs - 1 > 0 and d == hs - 1:
            h += down_key(d - 1) - down_key(d)
    if dst >= FOUNDATION:
        h += home_key(c)
    else:
        h += card_key(c, np.int64(st[dst]))
    return h


@nb.njit(cache=True, inline="always")
def visited(scratch: np.ndarray, h: np.uint64) -> bool:
    """Whether hash h was recorded in this game's scratch table."""
    slot = np.int64(h % np.uint64(VISITED_SLOTS))
    key = np.int64(h | np.uint64(1))
    for _ in range(VISITED_SLOTS):
        v = scratch[VISITED_OFFSET + slot]
        if v == 0:
            return False
        if v == key:
            return True
        slot = (slot + 1) % VISITED_SLOTS
    return False


@nb.njit(cache=True, inline="always")
def remember(scratch: np.ndarray, h: np.uint64) -> bool:
    """Record hash h; False when the table is three-quarters full (the game is too long to track)."""
    if scratch[SCRATCH_STORED] * 4 >= VISITED_SLOTS * 3:
        return False
    slot = np.int64(h % np.uint64(VISITED_SLOTS))
    key = np.int64(h | np.uint64(1))
    while scratch[VISITED_OFFSET + slot] != 0:
        if scratch[VISITED_OFFSET + slot] == key:
            return True
        slot = (slot + 1) % VISITED_SLOTS
    scratch[VISITED_OFFSET + slot] = key
    scratch[SCRATCH_STORED] += 1
    return True
