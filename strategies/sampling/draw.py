"""Completions of the face-down cards: the `sampling` player's guesses at the deal, consistent with the table.

A completion deals the cards the player has not seen (neither face up on the
tableau nor home) into the face-down slots, shuffled with the player's random
generator. Where the variant moves kings to the bottom at the deal, each pile's
hidden kings go under its other hidden cards, and a draw that contradicts a
face-up king resting on hidden cards (then all of them must be kings) is drawn
again. Only face-up cards and the foundations of the table are read.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import P_KTB, P_PILES, down_at, is_king, pile_base, put_pile
from sim.rng import nb_rng_below
from strategies.sampling.keep import cards_in_sight

REDRAWS = 50
"""Draws tried before the kings under face-up kings are dealt first (`draw_completion`)."""


@nb.njit(cache=True)
def _fill(st, prm, out, pool, ktb):  # noqa: ANN001, ANN201 (numba)
    """Deal pool[:] into the face-down slots of out, pile by pile (hidden kings first where kings
    go to the bottom at the deal); return whether the result fits every face-up king resting on
    face-down cards (all of them must then be kings)."""
    P = prm[P_PILES]
    k = 0
    ok = True
    for p in range(P):
        d = np.int64(st[down_at(P, p)])
        base = pile_base(prm, p)
        put_pile(pool, k, d, out, base, ktb)  # hidden kings first, each group in drawn order
        if ktb and d > 0 and is_king(np.int64(st[base + d])):
            for i in range(d):
                if not is_king(pool[k + i]):
                    ok = False
        k += d
    return ok


@nb.njit(cache=True)
def draw_completion(st, prm, out, rng, pool):  # noqa: ANN001, ANN201 (numba)
    """Write into ``out`` (a copy of st) a random completion of the face-down slots.

    Reads only face-up cards and the foundations of st. Where kings go to the
    bottom at the deal, a draw that puts a non-king under a face-up king resting
    on face-down cards is drawn again; after `REDRAWS` failures the unseen kings
    are dealt to such piles first and the rest shuffled into the other slots.
    """
    P = prm[P_PILES]
    seen = cards_in_sight(st, prm)
    u = 0
    for c in range(DECK_SIZE):
        if not seen[c]:
            pool[u] = c
            u += 1
    ktb = prm[P_KTB] != 0
    for _attempt in range(REDRAWS):
        for i in range(u - 1, 0, -1):
            j = nb_rng_below(rng, i + 1)
            pool[i], pool[j] = pool[j], pool[i]
        if _fill(st, prm, out, pool[:u], ktb):
            return
    # constructive: piles under a face-up king take unseen kings; the rest is shuffled in
    kings = 0
    for i in range(u):  # unseen kings to the front of the pool, in drawn order
        if is_king(pool[i]):
            pool[kings], pool[i] = pool[i], pool[kings]
            kings += 1
    order = np.empty(u, dtype=np.int64)
    taken = np.zeros(u, dtype=np.bool_)
    kk = 0
    for p in range(P):
        d = np.int64(st[down_at(P, p)])
        base = pile_base(prm, p)
        if d > 0 and is_king(np.int64(st[base + d])):
            for i in range(d):
                if kk < kings:
                    out[base + i] = pool[kk]
                    taken[kk] = True
                    kk += 1
    left = 0
    for i in range(u):
        if not taken[i]:
            order[left] = pool[i]
            left += 1
    for i in range(left - 1, 0, -1):
        j = nb_rng_below(rng, i + 1)
        order[i], order[j] = order[j], order[i]
    k = 0
    for p in range(P):
        d = np.int64(st[down_at(P, p)])
        base = pile_base(prm, p)
        if d > 0 and is_king(np.int64(st[base + d])):
            continue
        put_pile(order, k, d, out, base, ktb)
        k += d
