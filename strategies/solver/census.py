"""What a search spends its nodes on: counts and distinct-position figures, for measuring reductions.

`strategies.solver.search.solve` takes an optional census (`Census.arrays`);
with one it calls `census_node` for every expanded position that is not dead,
and counts the dead cuts, the arrivals cut by the table and the children
skipped before they are played. Without one (the default) nothing is counted
and the compiled search is the same as before.

The figures answer "which reduction could pay": a reduction can save at most
the positions it merges, so the number of distinct positions under each
candidate equivalence, next to the number expanded, bounds its gain:

- *layer*: the foundation heights only (the layered prover's unit);
- *configuration*: every pile with its top run taken off (a run: the cards from
  the top down that each build on the card beneath, under the variant's rule;
  every card a move has put on a pile lies in one), plus the set of run cards.
  Positions of one configuration differ only in where the run cards sit;
- *configuration + exposed*: the same plus the set of exposed cards;
- *rank shape*: the piles with run cards replaced by their ranks (suits of
  moved cards forgotten);
- *suit classes*: positions equal up to a relabelling of the suits that the
  building rule does not see (`suit_permutations`): the classes an exact suit
  symmetry in the key would merge.

The distinct counts use 64-bit hashes in open-addressed sets of fixed size
(`Census`): a false merge has a chance of about n^2 / 2^65, negligible at the
sizes measured; a set more than half full stops taking keys and says so.
"""

from __future__ import annotations

import itertools

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, card, nb_card, nb_rank_of, nb_suit_of, rank_of, suit_of
from sim.engine import P_PILES, builds_on, fheight_at, pile_base
from sim.rng import nb_mix64
from strategies.solver.bases import base_length
from strategies.solver.codec import LAYER_BASE
from strategies.solver.hash import KEYS_FOUNDATION, KEYS_PILE

KEYS_OTHER = KEYS_FOUNDATION
"""The key table's row that keys run cards, rank shapes and exposed cards here: fixed random numbers independent
of the piles' row, so those parts never cancel the piles' keys in a sum."""
# `sets` rows: the candidate equivalences above, in order.
S_LAYER, S_CONFIG, S_EXPOSED, S_SHAPE, S_SUITS, SETS = range(6)
SET_NAMES = ("layers", "configurations", "configurations + exposed", "rank shapes", "suit classes")
# `counts` slots: scalar counters, the keys each set holds, then a histogram of cards home, then one of run cards.
C_EXPANDED, C_DEAD, C_TABLE_CUT, C_SKIPPED, C_FULL, C_FILLED = range(6)
C_HOME = C_FILLED + SETS
C_RUN = C_HOME + DECK_SIZE + 1
COUNTS_SIZE = C_RUN + DECK_SIZE + 1


def suit_permutations(build: int) -> np.ndarray:
    """The relabellings of suits (rows: new suit of suit 0..3) that keep ``builds_on`` for every pair of cards."""
    keep = []
    for perm in itertools.permutations(range(4)):
        if all(builds_on(c, t, build) == builds_on(card(rank_of(c), perm[suit_of(c)]), card(rank_of(t), perm[suit_of(t)]), build)
               for c in range(DECK_SIZE) for t in range(DECK_SIZE)):
            keep.append(perm)
    return np.array(keep, dtype=np.int64)


class Census:
    """The census arrays for one search: counters and histograms (`counts`), hashed sets (``2**set_bits`` each)."""

    def __init__(self, build: int, set_bits: int = 24) -> None:
        self.counts = np.zeros(COUNTS_SIZE, dtype=np.int64)
        self.sets = np.zeros((SETS, 1 << set_bits), dtype=np.uint64)
        self.perms = suit_permutations(build)

    def arrays(self) -> tuple:
        """The arrays as `solve` takes them (its ``census`` argument)."""
        return (self.counts, self.sets, self.perms)

    def distinct(self) -> dict[str, int]:
        """Distinct positions under each candidate equivalence (`SET_NAMES`)."""
        return {name: int(self.counts[C_FILLED + i]) for i, name in enumerate(SET_NAMES)}


@nb.njit(cache=True, inline="always")
def _add(counts: np.ndarray, sets: np.ndarray, which: np.int64, key: np.uint64) -> None:
    row = sets[which]
    mask = np.uint64(row.shape[0] - 1)
    key = key | np.uint64(1)  # 0 marks a free slot
    i = key & mask
    while True:
        e = row[i]
        if e == key:
            return
        if e == 0:
            break
        i = (i + np.uint64(1)) & mask
    if counts[C_FILLED + which] * 2 >= row.shape[0]:
        counts[C_FULL] = 1
        return
    row[i] = key
    counts[C_FILLED + which] += 1


@nb.njit(cache=True)
def census_node(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, census: tuple) -> None:
    """Count the expanded position ``st`` in ``census`` (`Census.arrays`); ``keys`` is the solver's key table."""
    counts, sets, perms = census
    P = prm[P_PILES]
    counts[C_EXPANDED] += 1
    layer = np.uint64(0)
    home = 0
    for s in range(4):
        h = np.int64(st[fheight_at(P, s)])
        home += h
        layer = layer * np.uint64(LAYER_BASE) + np.uint64(h)
    counts[C_HOME + home] += 1
    _add(counts, sets, S_LAYER, nb_mix64(layer))
    config = np.uint64(0)
    exposed = np.uint64(0)
    shape = np.uint64(0)
    runs = 0
    for p in range(P):
        h = np.int64(st[p])
        if h == 0:
            continue
        base = pile_base(prm, p)
        j = base_length(st, prm, p, h)
        lin = np.uint64(0)
        lin_shape = np.uint64(0)
        for i in range(h):
            c = np.int64(st[base + i])
            if i < j:
                lin += keys[KEYS_PILE, c, i]
                lin_shape += keys[KEYS_PILE, c, i]
            else:
                config += keys[KEYS_OTHER, c, 0]
                lin_shape += keys[KEYS_OTHER, nb_rank_of(c), i]
                runs += 1
        config += nb_mix64(lin)
        shape += nb_mix64(lin_shape)
        exposed += keys[KEYS_OTHER, np.int64(st[base + h - 1]), 1]
    counts[C_RUN + runs] += 1
    _add(counts, sets, S_CONFIG, nb_mix64(config ^ layer))
    _add(counts, sets, S_EXPOSED, nb_mix64(config ^ layer) ^ nb_mix64(exposed))
    _add(counts, sets, S_SHAPE, nb_mix64(shape ^ layer))
    best = np.uint64(0xFFFFFFFFFFFFFFFF)
    for k in range(perms.shape[0]):
        total = np.uint64(0)
        for p in range(P):
            lin = np.uint64(0)
            base = pile_base(prm, p)
            for i in range(np.int64(st[p])):
                c = np.int64(st[base + i])
                lin += keys[KEYS_PILE, nb_card(nb_rank_of(c), perms[k, nb_suit_of(c)]), i]
            total += nb_mix64(lin)
        for s in range(4):
            total += nb_mix64(np.uint64(perms[k, s] * 16 + np.int64(st[fheight_at(P, s)]) + 1))
        best = min(best, total)
    _add(counts, sets, S_SUITS, best)
