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

from sim.engine import FOUNDATION, P_BUILD, P_FOUND, P_PILES, builds_on, home_slot, pile_base
from sim.rng import nb_mix64

UNKNOWN_NEED = 6
"""How soon an unseen card is assumed to be needed (the middle of the ranks)."""
FAR = 1 << 20
"""Urgency of a pile that holds nothing needed."""

VISITED_OFFSET = 4
VISITED_SLOTS = 512
WORK_OFFSET = VISITED_OFFSET + VISITED_SLOTS
SCRATCH_WITH_VISITED = WORK_OFFSET + 7 * 52
"""Scratch layout of strategies that remember positions: slots 0-1 are the
engine's (nodes, microseconds), 2 counts stored hashes, 3 holds the hash of
the position the strategy's last move led to, then the hash table, then work
space for `pile_features` (known counts and the feature table)."""


@nb.njit(cache=True, inline="always")
def need(st: np.ndarray, prm: np.ndarray, c: np.int64) -> np.int64:
    """How many cards must still go home before card c can (0: it could go next)."""
    P = prm[P_PILES]
    if prm[P_FOUND] == 0:
        return max(c % 13 - np.int64(st[2 * P + c // 13]), 0)
    low = np.int64(13)
    for f in range(4):
        low = min(low, np.int64(st[2 * P + f]))
    return max(c % 13 - low, 0)


@nb.njit(cache=True, inline="always")
def fill_needs(st: np.ndarray, prm: np.ndarray, need_of: np.ndarray) -> None:
    """``need_of[c]`` = `need` of card c, for all 52 cards."""
    P = prm[P_PILES]
    for s in range(4):
        if prm[P_FOUND] == 0:
            done = np.int64(st[2 * P + s])
        else:
            done = np.int64(13)
            for f in range(4):
                done = min(done, np.int64(st[2 * P + f]))
        for r in range(13):
            need_of[s * 13 + r] = r - done if r > done else 0
    return


F_FULL, F_BELOW, F_MISPLACED, F_FREES_HOME, F_TOP_NEED = range(5)
"""Rows of the per-pile feature table filled by `pile_features`."""


@nb.njit(cache=True)
def pile_features(st: np.ndarray, prm: np.ndarray, known: np.ndarray, feat: np.ndarray, need_of: np.ndarray) -> None:
    """Fill ``feat`` (5 rows, a column per pile) with what the heuristics ask of
    each pile, in one pass:

    - ``F_FULL``: urgency of the pile's most urgent card. Urgency = need x 16 +
      cards above it (smaller is more urgent); unseen cards count as needed
      after `UNKNOWN_NEED` others. `FAR` when the pile is empty.
    - ``F_BELOW``: the same ignoring the exposed card.
    - ``F_MISPLACED``: 1 when the exposed card does not rest on a card it builds
      on (or rests on an unseen card).
    - ``F_FREES_HOME``: 1 when the card under the exposed one is seen and could go home now.
    - ``F_TOP_NEED``: need of the exposed card (13 for an empty pile).

    ``need_of`` (52 slots) receives `need` of every card.
    """
    P = prm[P_PILES]
    build = prm[P_BUILD]
    fill_needs(st, prm, need_of)
    suit_home = prm[P_FOUND] == 0  # then a tableau card with need 0 can go home now
    for p in range(P):
        h = np.int64(st[p])
        base = pile_base(prm, p)
        below = FAR
        k = known[p]
        if k > 0:  # the unseen card nearest the top is the most urgent unseen one
            below = UNKNOWN_NEED * 16 + (h - k)
        for i in range(k, h - 1):
            u = need_of[np.int64(st[base + i])] * 16 + (h - 1 - i)
            if u < below:
                below = u
        best = below
        if h > 0:
            best = min(below, need_of[np.int64(st[base + h - 1])] * 16)
        feat[F_FULL, p] = best
        feat[F_BELOW, p] = below
        feat[F_MISPLACED, p] = 0
        feat[F_FREES_HOME, p] = 0
        feat[F_TOP_NEED, p] = 13
        if h >= 1:
            feat[F_TOP_NEED, p] = need_of[np.int64(st[base + h - 1])]
        if h >= 2:
            if h - 2 < known[p]:
                feat[F_MISPLACED, p] = 1
            else:
                under = np.int64(st[base + h - 2])
                if not builds_on(np.int64(st[base + h - 1]), under, build):
                    feat[F_MISPLACED, p] = 1
                if (need_of[under] == 0) if suit_home else (home_slot(st, prm, under, 0) >= 0):
                    feat[F_FREES_HOME, p] = 1


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
        h += down_key(np.int64(st[P + p]))
    for f in range(4):
        for i in range(np.int64(st[2 * P + f])):
            h += home_key(np.int64(st[2 * P + 5 + f * 13 + i]))
    return h


@nb.njit(cache=True, inline="always")
def child_hash(st: np.ndarray, prm: np.ndarray, h: np.uint64, m: np.int64) -> np.uint64:
    """The hash after move m from a position with hash h (without playing it)."""
    P = prm[P_PILES]
    src, dst = m // 64, m % 64
    if src >= FOUNDATION:
        f = src - FOUNDATION
        c = np.int64(st[2 * P + 5 + f * 13 + st[2 * P + f] - 1])
        h -= home_key(c)
    else:
        hs = np.int64(st[src])
        c = np.int64(st[pile_base(prm, src) + hs - 1])
        h -= card_key(c, hs - 1)
        d = np.int64(st[P + src])
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
    if scratch[2] * 4 >= VISITED_SLOTS * 3:
        return False
    slot = np.int64(h % np.uint64(VISITED_SLOTS))
    key = np.int64(h | np.uint64(1))
    while scratch[VISITED_OFFSET + slot] != 0:
        if scratch[VISITED_OFFSET + slot] == key:
            return True
        slot = (slot + 1) % VISITED_SLOTS
    scratch[VISITED_OFFSET + slot] = key
    scratch[2] += 1
    return True
