"""Position keys for the solver's transposition table.

Every rule of the family treats the piles alike (nothing depends on a pile's
number), so two positions that differ only by the order of their piles are the
same position for the search. The key is built to be the same for every such
order without sorting anything:

- a pile's *linear* key is the sum (mod 2**64) of ``K[card, depth]`` over its
  cards, with ``K`` fixed random 64-bit numbers;
- the position key is the sum over piles of ``mix64(linear key)``.

The sum over piles is order-independent (canonical for pile permutations) and
the non-linear ``mix64`` keeps piles from trading cards in the sum (with a
plain sum over all cards, moving 5H from depth 2 of one pile to depth 2 of
another would not change the key).

With in-suit foundations the foundations are a function of the cards left on
the tableau (every card not on the tableau is home, in order), so they need no
key. With alternate-colour foundations each foundation is hashed like a pile
with its own numbers (the four foundations are interchangeable as well).
Face-down flags are not part of the key: the solver sees every card, and the
moves do not depend on them.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.engine import P_FOUND, P_PILES, pile_base
from sim.rng import mix64, nb_mix64

KEY_SEED = 0x5EED_0F_BA_4E_25
"""Seed of the fixed key table (any value works; fixed so keys are reproducible)."""


def make_keys(cap: int) -> np.ndarray:
    """The key table ``K``: uint64 of shape (2, 52, cap); row 0 for piles, row 1 for foundations."""
    out = np.empty((2, 52, cap), dtype=np.uint64)
    k = 0
    for table in range(2):
        for c in range(52):
            for d in range(cap):
                k += 1
                out[table, c, d] = mix64((KEY_SEED + k * 0x9E3779B97F4A7C15) & ((1 << 64) - 1))
    return out


@nb.njit(cache=True)
def position_key(st: np.ndarray, prm: np.ndarray, keys: np.ndarray) -> np.uint64:
    """The 64-bit key of the position in ``st`` (the same for every order of the piles)."""
    P = prm[P_PILES]
    total = np.uint64(0)
    for p in range(P):
        lin = np.uint64(0)
        base = pile_base(prm, p)
        for i in range(np.int64(st[p])):
            lin += keys[0, np.int64(st[base + i]), i]
        total += nb_mix64(lin)
    if prm[P_FOUND] != 0:
        for f in range(4):
            lin = np.uint64(0)
            h = np.int64(st[2 * P + f])
            for i in range(h):
                lin += keys[1, np.int64(st[2 * P + 5 + f * 13 + i]), i]
            total += nb_mix64(lin ^ np.uint64(0xF00D))
    return total
