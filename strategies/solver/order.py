"""Move ordering for the solver: try the moves most likely to lead to a win first.

Ordering never changes a verdict (the search tries every move that is not
pruned), only how soon a winning line turns up. Scores, higher first, with ties
kept in the engine's order:

- moves home first;
- a tableau move scores for each card below the moved card in its pile that
  it no longer blocks (a lower card of the moved card's suit: the moved card
  had to leave before that card could go home) and loses for each such card
  under its destination (a new same-suit inversion);
- it scores for uncovering cards needed soon: each card under the moved card,
  weighted by how close it is to going home (its rank minus its foundation's
  height) and how near the top it will be; most for a card that can go home at
  once;
- moving a card off a card it builds on (a well-placed card) costs a little,
  moving a card into an empty pile costs a little, emptying a pile that can be
  refilled gains;
- moves back from a foundation (worrying back) come last.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import nb_rank_of, nb_suit_of
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_FILL,
    P_PILES,
    builds_on,
    down_at,
    fheight_at,
    move_from,
    move_to,
    pile_base,
)


@nb.njit(cache=True)
def move_score(st: np.ndarray, prm: np.ndarray, m: np.int64, blind: bool = False) -> np.int64:
    """The ordering score of legal move m (higher is tried first).

    With ``blind`` it reads no face-down card (for players that do not peek).
    """
    P = prm[P_PILES]
    src = move_from(m)
    dst = move_to(m)
    if dst >= FOUNDATION:
        return 100000
    if src >= FOUNDATION:
        return -100000
    h = np.int64(st[src])
    base = pile_base(prm, src)
    c = np.int64(st[base + h - 1])
    cr = nb_rank_of(c)
    cs = nb_suit_of(c)
    score = np.int64(0)
    low = np.int64(st[down_at(P, src)]) if blind else 0
    for i in range(h - 2, low - 1, -1):
        u = np.int64(st[base + i])
        ur = nb_rank_of(u)
        us = nb_suit_of(u)
        gap = ur - np.int64(st[fheight_at(P, us)])
        k = h - 1 - i  # 1 for the card that becomes exposed
        if us == cs and ur < cr:
            score += 60
        if gap == 0 and k == 1:
            score += 400
        elif gap < 6:
            score += (6 - gap) * 24 // k
    if h >= 2 and h - 2 >= low and builds_on(c, np.int64(st[base + h - 2]), prm[P_BUILD]):
        score -= 30
    hd = np.int64(st[dst])
    if hd == 0:
        score -= 20
    else:
        bd = pile_base(prm, dst)
        for i in range(np.int64(st[down_at(P, dst)]) if blind else 0, hd):
            u = np.int64(st[bd + i])
            if nb_suit_of(u) == cs and nb_rank_of(u) < cr:
                score -= 60
    if h == 1 and prm[P_FILL] != 0:
        score += 50
    return score
