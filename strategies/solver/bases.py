"""A pile's *base*: the pile without its top run, and why the cards in bases never come back.

The *top run* of a pile is the cards from the top down that each build on the
card beneath them under the variant's rule; the *base* is the rest, from the
bottom card up to the first card (from the top) that does not build on the card
beneath it. The free-parking relaxation (`strategies.solver.capacity`), the
relaxation's cut (`strategies.solver.relax_cut`), the components of inner moves
(`strategies.solver.components`), the search census
(`strategies.solver.census`) and the layered prover's layers
(`strategies.solver.codec.layer_of`) all read positions through it.

Why the number of cards in bases never grows along a move, where no card but a
king enters an empty pile. A card c moved from pile a onto a card d builds on
d, so it joins the top run of d's pile and that base is unchanged. Pile a loses
its top card: if c built on the card under it, c was in the run and a's base
is unchanged; otherwise c was the base's top card, and the base loses c and
perhaps more (the cards left on top may now form a run). A king that enters an
empty pile is a base of one card there, but it left a base in its pile (a king
builds on nothing), so the total does not grow. A card going home leaves its
pile as above, and nothing else changes. Where any card may enter an empty
pile, a run card doing so makes a new base: the total can grow.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.engine import P_BUILD, P_PILES, builds_on, pile_base


@nb.njit(cache=True, inline="always")
def base_length(st: np.ndarray, prm: np.ndarray, p: np.int64, h: np.int64) -> np.int64:
    """Cards in the base of pile p's lowest ``h`` cards (``h`` = ``st[p]``: the pile as it is; one less: the
    pile once its top card has left)."""
    base = pile_base(prm, p)
    j = h - 1
    while j >= 1 and builds_on(np.int64(st[base + j]), np.int64(st[base + j - 1]), prm[P_BUILD]):
        j -= 1
    return j + 1


@nb.njit(cache=True)
def base_total(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """Cards in the bases of all piles."""
    total = np.int64(0)
    for p in range(prm[P_PILES]):
        total += base_length(st, prm, p, np.int64(st[p]))
    return total
