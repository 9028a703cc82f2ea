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

Most moves between piles cannot make a position dead (`stays_alive`), so
the search runs the test only after the others. Let X be a position that is
not dead and Y the position after a move of card c from pile a onto card t of
pile b (or into an empty pile b). Suppose that in Y, c can possibly leave at
once: its suit's next lower card is home, or some exposed card of Y other
than t (for instance the card u it left exposed in pile a) takes it under the
building rule. Run the fixed point on both, c first (the order of the rules
does not change a least fixed point). In X, c can leave at once (the move was
legal: t or the empty pile takes it); in Y too, by the supposition. After that
step the two states are the same: c possibly leaves and is a possible target,
pile a's frontier is at u (exposed), pile b's at t (exposed) or empty, every
other pile is untouched, and the foundations are X's. From the same state the
same rules reach the same fixed point, so Y is dead exactly when X is: not.

The safe moves home that follow (`strategies.solver.safe`) change nothing
either: a safe card x goes home at once in the fixed point (its next lower
card is home), and as a target it served only the cards that could be put on
it, all of which are home. A move home that is not safe can make a position
dead: the card that went home no longer counts as a target, and a card that
needed it may have no other (a 4C under a 3C, with the 5D that could take it
gone home and the 2C buried).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import KING, SUITS, nb_card, nb_rank_of, nb_suit_of
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_FILL,
    P_PILES,
    builds_on,
    fheight_at,
    may_enter_empty,
    move_to,
    pile_base,
    top_card,
)
from sim.rules import FILL_NONE

# The rows of `is_dead`'s ``work`` array (the sets of the fixed point, packed so that the test reads and
# clears a few words per position instead of a few per card):
# - DW_REACH, per suit: the lowest rank not (yet) in the "possibly home" set. The set is a run of ranks from
#   the foundation's height up (a card enters it only after its suit's next lower card), so one rank holds it;
# - DW_LEAVES, per suit: a bit per rank, set for the cards in the "possibly leaves" set;
# - DW_EXPOSED, per rank: a bit per suit, set for the cards that can possibly be exposed where they lie (at or
#   above their pile's frontier), the targets a card one rank lower may go onto;
# - DW_FRONT, per pile: its frontier.
DW_REACH, DW_LEAVES, DW_EXPOSED, DW_FRONT, DW_ROWS = range(5)
N_SUITS = len(SUITS)
N_RANKS = KING + 1


@nb.njit(cache=True)
def new_dead_work(piles: int) -> np.ndarray:
    """The int64 ``work`` array `is_dead` needs with ``piles`` piles (its ``DW_*`` rows)."""
    return np.zeros((DW_ROWS, max(N_RANKS, piles)), dtype=np.int64)


@nb.njit(cache=True, inline="always")
def _expose(st: np.ndarray, prm: np.ndarray, work: np.ndarray, p: np.int64) -> None:
    """Pile p's frontier card can now be exposed: mark it a possible target."""
    c = np.int64(st[pile_base(prm, p) + work[DW_FRONT, p]])
    work[DW_EXPOSED, nb_rank_of(c)] |= np.int64(1) << nb_suit_of(c)


@nb.njit(cache=True, inline="always")
def stays_alive(st: np.ndarray, prm: np.ndarray, m: np.int64) -> bool:
    """Whether legal move m, just played in ``st`` from a position that is not dead, provably leaves a
    position that is not dead, also after the safe moves home that follow (see the module's docstring:
    a move between piles whose card can possibly leave at once). Same rules as `is_dead`; false says
    nothing."""
    dst = move_to(m)
    if dst >= FOUNDATION:
        return False
    P = prm[P_PILES]
    c = np.int64(st[pile_base(prm, dst) + np.int64(st[dst]) - 1])
    if nb_rank_of(c) == np.int64(st[fheight_at(P, nb_suit_of(c))]):
        return True
    build = prm[P_BUILD]
    for q in range(P):
        if q != dst and st[q] > 0 and builds_on(c, top_card(st, prm, q), build):
            return True
    return False


@nb.njit(cache=True)
def is_dead(st: np.ndarray, prm: np.ndarray, work: np.ndarray) -> bool:
    """Whether the position in ``st`` is provably lost by the fixed point above.

    ``work`` is the int64 scratch of `new_dead_work`. Only valid for in-suit
    foundations without worrying back (the caller checks the rules).

    Implementation: the "possibly leaves" set is, in every pile, a run of cards
    from the top down (a card needs the cards above it first), so each pile keeps
    a frontier: the index of its topmost card not yet in the set. Repeated passes
    try to move each frontier down; a card that joins the set goes into the
    "possibly home" set as soon as its suit's next lower card is home or in it,
    and then pulls up the cards of its suit above it that were waiting for it.
    The position is not dead once every suit's run reaches the king.
    """
    P = prm[P_PILES]
    build = prm[P_BUILD]
    fill = prm[P_FILL]
    complete = 0  # suits whose every card is home or possibly home
    for s in range(N_SUITS):
        work[DW_REACH, s] = np.int64(st[fheight_at(P, s)])
        work[DW_LEAVES, s] = 0
        if work[DW_REACH, s] == N_RANKS:
            complete += 1
    if complete == N_SUITS:
        return False
    for r in range(N_RANKS):
        work[DW_EXPOSED, r] = 0
    emptyable = False
    for p in range(P):
        work[DW_FRONT, p] = np.int64(st[p]) - 1
        if st[p] == 0:
            emptyable = True
        else:
            _expose(st, prm, work, p)
    changed = True
    while changed:
        changed = False
        for p in range(P):
            base = pile_base(prm, p)
            while work[DW_FRONT, p] >= 0:
                c = np.int64(st[base + work[DW_FRONT, p]])
                r = nb_rank_of(c)
                s = nb_suit_of(c)
                pred_ok = r == work[DW_REACH, s]
                ok = pred_ok
                if not ok and r < KING:
                    targets = work[DW_EXPOSED, r + 1]
                    for ts in range(N_SUITS):
                        if (targets >> ts) & 1 and builds_on(c, nb_card(r + 1, ts), build):
                            ok = True
                            break
                if not ok and emptyable and may_enter_empty(c, fill):
                    ok = True
                if not ok:
                    break
                work[DW_LEAVES, s] |= np.int64(1) << r
                work[DW_FRONT, p] -= 1
                changed = True
                if work[DW_FRONT, p] >= 0:
                    _expose(st, prm, work, p)
                elif fill != FILL_NONE:
                    emptyable = True
                if pred_ok:
                    # c and then the waiting cards of its suit above it can go home
                    x = r + 1
                    while x < N_RANKS and (work[DW_LEAVES, s] >> x) & 1:
                        x += 1
                    work[DW_REACH, s] = x
                    if x == N_RANKS:
                        complete += 1
                        if complete == N_SUITS:
                            return False
    return True
