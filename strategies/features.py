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
space (`heuristic` and `lookahead` keep their need tables there)."""


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


@nb.njit(cache=True, inline="always")
def buried_urgency(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, need_of: np.ndarray) -> np.int64:
    """Urgency of the most urgent card under pile p's exposed card (`F_BELOW`),
    the pile's k lowest cards being unseen and ``need_of`` filled by `fill_needs`.

    Urgency = need x 16 + cards above it (smaller is more urgent); unseen
    cards count as needed after `UNKNOWN_NEED` others. `FAR` when no card lies
    under the exposed one.
    """
    h = np.int64(st[p])
    base = pile_base(prm, p)
    below = FAR
    if k > 0:  # the unseen card nearest the top is the most urgent unseen one
        below = UNKNOWN_NEED * 16 + (h - k)
    for i in range(k, h - 1):
        below = min(below, need_of[np.int64(st[base + i])] * 16 + (h - 1 - i))
    return below


@nb.njit(cache=True, inline="always")
def top_need(st: np.ndarray, prm: np.ndarray, p: np.int64, need_of: np.ndarray) -> np.int64:
    """`need` of pile p's exposed card, 13 for an empty pile (`F_TOP_NEED`)."""
    h = np.int64(st[p])
    return need_of[np.int64(st[pile_base(prm, p) + h - 1])] if h > 0 else np.int64(13)


@nb.njit(cache=True, inline="always")
def pile_urgency(st: np.ndarray, p: np.int64, below: np.int64, top: np.int64) -> np.int64:
    """Urgency of pile p's most urgent card from its `buried_urgency` and
    `top_need` (`F_FULL`; `FAR` when the pile is empty)."""
    return min(below, top * 16) if st[p] > 0 else below


@nb.njit(cache=True, inline="always")
def misplaced(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64) -> bool:
    """Whether pile p's exposed card rests on a card it does not build on, or
    on an unseen card (the pile's k lowest cards are unseen) (`F_MISPLACED`)."""
    h = np.int64(st[p])
    if h < 2:
        return False
    if h - 2 < k:
        return True
    base = pile_base(prm, p)
    return not builds_on(np.int64(st[base + h - 1]), np.int64(st[base + h - 2]), prm[P_BUILD])


@nb.njit(cache=True, inline="always")
def frees_home(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, need_of: np.ndarray) -> bool:
    """Whether the card under pile p's exposed one is seen (the pile's k lowest
    cards are unseen) and could go home now (`F_FREES_HOME`)."""
    h = np.int64(st[p])
    if h < 2 or h - 2 < k:
        return False
    under = np.int64(st[pile_base(prm, p) + h - 2])
    if prm[P_FOUND] == 0:  # then a tableau card with need 0 can go home now
        return need_of[under] == 0
    return home_slot(st, prm, under, 0) >= 0


@nb.njit(cache=True, _nrt=False)
def pile_features(st: np.ndarray, prm: np.ndarray, known: np.ndarray, feat: np.ndarray, need_of: np.ndarray) -> None:
    """Fill ``feat`` (5 rows, a column per pile) with what the heuristics ask of
    each pile, the lowest ``known[p]`` cards of pile p being unseen:

    - ``F_FULL``: urgency of the pile's most urgent card (`pile_urgency`).
    - ``F_BELOW``: the same ignoring the exposed card (`buried_urgency`).
    - ``F_MISPLACED``: 1 when the exposed card does not rest on a card it builds
      on, or rests on an unseen card (`misplaced`).
    - ``F_FREES_HOME``: 1 when the card under the exposed one is seen and could
      go home now (`frees_home`).
    - ``F_TOP_NEED``: need of the exposed card, 13 for an empty pile (`top_need`).

    ``need_of`` (52 slots) receives `need` of every card. `heuristic` calls the
    per-pile functions itself, only for the piles its moves read. Compiled
    without reference counting (``_nrt=False``; it allocates nothing): numba
    would otherwise count references to the arrays of every inlined call.
    """
    fill_needs(st, prm, need_of)
    for p in range(prm[P_PILES]):
        below, top = buried_urgency(st, prm, p, known[p], need_of), top_need(st, prm, p, need_of)
        feat[F_FULL, p] = pile_urgency(st, p, below, top)
        feat[F_BELOW, p] = below
        feat[F_MISPLACED, p] = misplaced(st, prm, p, known[p])
        feat[F_FREES_HOME, p] = frees_home(st, prm, p, known[p], need_of)
        feat[F_TOP_NEED, p] = top


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
