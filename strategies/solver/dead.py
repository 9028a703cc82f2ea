"""Dead positions: a proof that some card can never go home, found without search.

The test works out, for the position at hand, which cards could *possibly*
leave their place and which could *possibly* go home, under necessary
conditions only, and calls the position dead when some card on the tableau
cannot possibly go home. It applies to in-suit foundations without worrying
back (a card home stays home); the solver switches it off otherwise.

The conditions (for a card c on the tableau, "above" meaning the cards now
lying on c in its pile):

- c can possibly **leave** its place only if every card above it can possibly
  leave (they must go first), and one of:
  * c can possibly go home first: its suit's next lower card is home or can
    possibly go home;
  * a *target* t can possibly receive it: t is one rank higher and c builds on
    t under the variant's rule, t is not home, and every card above t can
    possibly leave (t is exposed, where it lies now or wherever it has moved
    to, only after they are gone);
  * the variant lets c enter an empty pile, and some pile is empty or could
    possibly be emptied (its bottom card can possibly leave).
- c can possibly **go home** only if it can possibly leave and its suit's next
  lower card is home or can possibly go home.

The sets are the least fixed point of these rules, computed by repetition from
empty sets. Why the test is sound: take any winning continuation and list its
events in time order (the first time each card leaves its place; the time each
card goes home). Every event's conditions above are met by events strictly
earlier in the list, so by induction along the list each event's card enters
the least fixed point. Hence if a card is missing from the "possibly home" set,
no winning continuation exists.

What this catches:

- the blocked king of Baker's Dozen (a king above a lower card of its own suit
  with no way into an empty pile): it cannot go home first (its lower card is
  under it), has no target, and so can never leave;
- any cycle of such needs, however long: a queen above a lower card of its suit
  whose only targets (kings) are each covered by a card that can only go home
  after that same lower card, and so on. The fixed point never enters a cycle
  whose every member waits for another.

What it ignores: that a target holds one card at a time, and the timing of
events beyond "before". It is a relaxation, never a search.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, KING, SUITS
from sim.engine import (
    P_BUILD,
    P_FILL,
    P_PILES,
    builds_on,
    fheight_at,
    is_king,
    may_enter_empty,
    nb_card,
    nb_rank_of,
    nb_suit_of,
    pile_base,
)
from sim.rules import FILL_NONE

# The ``work`` array of `is_dead`: per card, its pile (-1 home), its index in the pile and whether it
# can possibly leave / go home; per suit, the foundation height; per pile, its frontier.
DW_PILE_OF = 0
DW_INDEX = DW_PILE_OF + DECK_SIZE
DW_LEAVES = DW_INDEX + DECK_SIZE
DW_HOME = DW_LEAVES + DECK_SIZE
DW_HEIGHTS = DW_HOME + DECK_SIZE
N_SUITS = len(SUITS)
DW_FRONT = DW_HEIGHTS + N_SUITS


def dead_work_size(piles: int) -> int:
    """Slots of the ``work`` array `is_dead` needs with ``piles`` piles."""
    return DW_FRONT + piles


@nb.njit(cache=True)
def is_dead(st: np.ndarray, prm: np.ndarray, work: np.ndarray) -> bool:
    """Whether the position in ``st`` is provably lost by the fixed point above.

    ``work`` is int64 scratch of at least `dead_work_size` slots. Only valid for in-suit
    foundations without worrying back (the caller checks the rules).

    Implementation: the "possibly leaves" set is, in every pile, a run of cards
    from the top down (a card needs the cards above it first), so each pile keeps
    a frontier: the index of its topmost card not yet in the set. Repeated passes
    try to move each frontier down; a card that joins the set goes into the
    "possibly home" set as soon as its suit's next lower card is home or in it,
    and then pulls up the cards of its suit above it that were waiting for it.
    """
    P = prm[P_PILES]
    build = prm[P_BUILD]
    fill = prm[P_FILL]
    pile_of = work[DW_PILE_OF:DW_INDEX]
    idx_of = work[DW_INDEX:DW_LEAVES]
    pl = work[DW_LEAVES:DW_HOME]
    ph = work[DW_HOME:DW_HEIGHTS]
    hs = work[DW_HEIGHTS:DW_FRONT]
    front = work[DW_FRONT : DW_FRONT + P]
    for c in range(DECK_SIZE):
        pile_of[c] = -1
        pl[c] = 0
        ph[c] = 0
    for s in range(N_SUITS):
        hs[s] = np.int64(st[fheight_at(P, s)])
    n_cards = 0
    any_empty = False
    for p in range(P):
        h = np.int64(st[p])
        front[p] = h - 1
        if h == 0:
            any_empty = True
        base = pile_base(prm, p)
        for i in range(h):
            c = np.int64(st[base + i])
            pile_of[c] = p
            idx_of[c] = i
        n_cards += h
    if n_cards == 0:
        return False
    n_home = 0
    changed = True
    while changed:
        changed = False
        emptyable = any_empty
        if not emptyable and fill != FILL_NONE:
            for p in range(P):
                if st[p] > 0 and front[p] < 0:
                    emptyable = True
                    break
        for p in range(P):
            base = pile_base(prm, p)
            while front[p] >= 0:
                c = np.int64(st[base + front[p]])
                r = nb_rank_of(c)
                s = nb_suit_of(c)
                pred_ok = r == hs[s] or ph[nb_card(r - 1, s)] != 0
                ok = pred_ok
                if not ok and r < KING:
                    for ts in range(N_SUITS):
                        t = nb_card(r + 1, ts)
                        pt = pile_of[t]
                        if pt >= 0 and idx_of[t] >= front[pt] and builds_on(c, t, build):
                            ok = True
                            break
                if not ok and emptyable and may_enter_empty(c, fill):
                    ok = True
                if not ok:
                    break
                pl[c] = 1
                front[p] -= 1
                changed = True
                if pred_ok:
                    # c and then the waiting cards of its suit above it can go home
                    x = c
                    while True:
                        ph[x] = 1
                        n_home += 1
                        if is_king(x) or pl[x + 1] == 0 or ph[x + 1] != 0:
                            break
                        x += 1
        if n_home == n_cards:
            return False
    return n_home < n_cards
