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

Each position gets two keys from the same linear pile keys: the *key*, which
picks the table slot, and the *check*, ``sum of mix64(linear key ^ CHECK_SALT)``,
an independent 64-bit value of which the table stores 48 bits. A different
position passes for a stored one only if the slot bits of its key and 48 bits
of its check agree by chance: about ``probes x 2**-48`` (3e-14) a lookup,
whatever the table size. With one 64-bit key split between slot and stored
bits, a table of 2**30 slots would keep only 34 bits of discrimination, and a
billion-node search would expect a false match.
"""

from __future__ import annotations

import functools

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import MAX_PILE_CAP, P_FOUND, P_PILES, fheight_at, found_at, pile_base
from sim.rng import mix64, nb_mix64
from sim.rules import FOUND_SUIT

KEY_SEED = 0x5EED_0F_BA_4E_25
"""Seed of the fixed key table (any value works; fixed so keys are reproducible)."""
CHECK_SALT = np.uint64(0xC4EC_5A17_93B1_D2E5)
"""Mixed into every linear key for the check (any value other than 0 works)."""
FOUNDATION_SALT = np.uint64(0xF00D)
"""Mixed into a foundation's linear key, so a foundation never hashes like a pile."""
KEYS_PILE, KEYS_FOUNDATION = range(2)
"""Rows of the key table (`make_keys`): the numbers of cards in piles, and of cards on foundations."""


@functools.lru_cache(maxsize=4)
def make_keys(cap: int) -> np.ndarray:
    """The key table ``K``: uint64 of shape (2, 52, cap); row `KEYS_PILE` for piles, `KEYS_FOUNDATION` for foundations.

    ``K[t, c, d]`` does not depend on ``cap`` (tables of two sizes agree where both have the entry).
    The table is shared between callers (cached): never write it."""
    if not 0 < cap <= MAX_PILE_CAP:
        raise RuntimeError(f"key table for piles of {cap} cards; the engine's piles hold 1..{MAX_PILE_CAP}")
    out = np.empty((2, DECK_SIZE, cap), dtype=np.uint64)
    for table in range(2):
        for c in range(DECK_SIZE):
            for d in range(cap):
                k = (table * DECK_SIZE + c) * MAX_PILE_CAP + d + 1
                out[table, c, d] = mix64((KEY_SEED + k * 0x9E3779B97F4A7C15) & ((1 << 64) - 1))
    return out


@nb.njit(cache=True)
def position_key(st: np.ndarray, prm: np.ndarray, keys: np.ndarray) -> tuple[np.uint64, np.uint64]:
    """The key and the check of the position in ``st`` (the same for every order of the piles)."""
    P = prm[P_PILES]
    total = np.uint64(0)
    check = np.uint64(0)
    for p in range(P):
        lin = np.uint64(0)
        base = pile_base(prm, p)
        for i in range(np.int64(st[p])):
            lin += keys[KEYS_PILE, np.int64(st[base + i]), i]
        total += nb_mix64(lin)
        check += nb_mix64(lin ^ CHECK_SALT)
    if prm[P_FOUND] != FOUND_SUIT:
        for f in range(4):
            lin = np.uint64(0)
            h = np.int64(st[fheight_at(P, f)])
            for i in range(h):
                lin += keys[KEYS_FOUNDATION, np.int64(st[found_at(P, f) + i]), i]
            total += nb_mix64(lin ^ FOUNDATION_SALT)
            check += nb_mix64(lin ^ FOUNDATION_SALT ^ CHECK_SALT)
    return total, check
