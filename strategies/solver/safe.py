"""Safe moves home: foundation moves the solver plays at once, without searching alternatives.

Rule. With in-suit foundations, a card c of rank r may go home at once when
every card that could ever be placed on c is already home: without worrying
back these are the cards of rank r - 1 that build on c under the variant's rule;
with worrying back (cards may come back from home) all cards of rank below r.

Why it is sound (no winnable position becomes lost). Let X be a position where
c is exposed and safe, Y the position after c goes home, and take any winning
line from X. Delete from it every move of c and, with worrying back, every
move of a card of rank below r (all of them are home in X; call them "low").
Replay the rest from Y. By induction along the line, Y's piles are always X's
piles with c and the low cards taken out, and Y's foundations hold at least
X's cards. Each remaining move is then legal in Y:

- taking cards out of a pile never covers anything, so its card, exposed in
  X, is exposed in Y; so is a tableau destination t (t is not c, since only
  low cards can be put on c, and without worrying back they never leave home);
  an empty pile in X is empty in Y;
- a move home is legal because Y's foundations hold every card X's hold; a
  move back from a foundation (worrying back) takes a card of rank above r,
  which is on top of its foundation in Y as in X (c and the low cards of its
  suit lie below it);
- and the invariant carries on: a kept card moves the same way in both.

At the end all cards are home in X, hence in Y. The line from Y is no longer
than the one from X, so safe moves also keep the "shortest winning line"
arguments of the other rules valid.

Aces are always safe; twos are safe when the aces of the suits that could be
put on them are home; and so on. With alternate-colour foundations the rule is
not applied (which foundation an ace starts matters there).

The wide rule (`SAFE_WIDE`, the solver's ``safe_wide``; never with worrying back).
A card c of rank r may also go home at once when each card d of rank r - 1
that could be put on c and is not home (a) could go home at once, its card of
rank r - 2 being home, and (b) can never be covered: every card that could be
put on d (rank r - 2) is home. With building in any suit this is "rank at most
two above the lowest foundation"; twos are always safe.

Why it is sound. As above, with X, Y and a winning line from X; "removed"
cards are now c and the cards d that the line puts on c. Replay the line from
Y, with three changes: a move of c is dropped; a move that puts a d on c sends
d home instead (legal by (a): d's card of rank r - 2 is home in X, hence in
Y); and every later move of a d already sent home is dropped. Y's piles are
X's piles with the removed cards taken out, and each removed card lies on top
of its pile in X (c is covered only by cards d; d never, by (b)), so taking it
out exposes nothing a move of the line needs hidden and covers nothing it
needs exposed; a move onto c in X is a move of a d, and no move is onto a d.
Y's foundations hold X's cards and the removed ones, so every kept move home
stays legal, and the line from Y is no longer than the line from X.

Every move home (`SAFE_ANY`, the solver's ``streamline_nodes``) is not a safe
rule: a search that plays each card home as soon as it can may miss every win,
so it is only a streamliner, a first search for a quick win whose line the
referee replays like any other; a loss it finds proves nothing.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import nb_card, nb_rank_of, nb_suit_of
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_PILES,
    apply_move,
    builds_on,
    fheight_at,
    make_move,
    pile_base,
)

SAFE_NEEDED, SAFE_WIDE, SAFE_ANY = 0, 1, 2
"""Which cards go home without search: those whose every card that could be put on them is home (the rule
above); by the wide rule as well; every card that can go home (a streamliner, not safe)."""


@nb.njit(cache=True, inline="always")
def played(m: np.int64, revealed: np.int64) -> np.int64:
    """How `play_safe_moves` records move m and what `apply_move` returned for it, in one integer."""
    return m * 2 + revealed


@nb.njit(cache=True, inline="always")
def played_move(e: np.int64) -> np.int64:
    """The move of a record made by `played`."""
    return e // 2


@nb.njit(cache=True, inline="always")
def played_revealed(e: np.int64) -> np.int64:
    """Whether the move of a record made by `played` turned a card face up (1) or not (0)."""
    return e % 2


@nb.njit(cache=True, inline="always")
def is_safe_home(st: np.ndarray, prm: np.ndarray, c: np.int64, worrying: bool, rule: np.int64) -> bool:
    """Whether card c (which can go home now, in-suit foundations) goes home without search under ``rule``
    (`SAFE_NEEDED`, `SAFE_WIDE` or `SAFE_ANY`: the module's text)."""
    P = prm[P_PILES]
    build = prm[P_BUILD]
    r = nb_rank_of(c)
    s = nb_suit_of(c)
    if r == 0 or rule == SAFE_ANY:
        return True
    for s2 in range(4):
        if s2 == s:
            continue
        h2 = np.int64(st[fheight_at(P, s2)])
        if h2 >= r:
            continue  # s2's card of rank r-1 is home
        if worrying:
            return False
        d = nb_card(r - 1, s2)
        if not builds_on(d, c, build):
            continue
        if rule != SAFE_WIDE or h2 < r - 1:
            return False  # d could be put on c and could not go home at once
        for s3 in range(4):
            if np.int64(st[fheight_at(P, s3)]) < r - 1 and builds_on(nb_card(r - 2, s3), d, build):
                return False  # a card that could be put on d is not home
    return True


@nb.njit(cache=True, inline="always")
def uncovers_safe(st: np.ndarray, prm: np.ndarray, src: np.int64, worrying: bool, rule: np.int64) -> bool:
    """Whether moving the top card of pile ``src`` would uncover a card that goes home at once under ``rule``.

    A tableau move that uncovers no such card is *quiet*: no safe move follows it
    (the moved card was not safe where it lay and no foundation changed), so the
    searches know the child's key from the moved card alone, without playing it."""
    h = np.int64(st[src])
    if h < 2:
        return False
    u = np.int64(st[pile_base(prm, src) + h - 2])
    goes_home = np.int64(st[fheight_at(prm[P_PILES], nb_suit_of(u))]) == nb_rank_of(u)
    return goes_home and is_safe_home(st, prm, u, worrying, rule)


@nb.njit(cache=True)
def play_safe_moves(st: np.ndarray, prm: np.ndarray, buf: np.ndarray, top: np.int64, worrying: bool,
                    rule: np.int64) -> np.int64:
    """Play the moves home that ``rule`` allows without search until none is left; record each (`played`) in
    ``buf[top:]`` while it has room. Returns the new top of ``buf``."""
    P = prm[P_PILES]
    found = True
    while found:
        found = False
        for p in range(P):
            h = np.int64(st[p])
            if h == 0:
                continue
            c = np.int64(st[pile_base(prm, p) + h - 1])
            s = nb_suit_of(c)
            if np.int64(st[fheight_at(P, s)]) != nb_rank_of(c):
                continue
            if not is_safe_home(st, prm, c, worrying, rule):
                continue
            if top >= buf.shape[0]:
                return top
            m = make_move(p, FOUNDATION + s)
            rev = apply_move(st, prm, m)
            buf[top] = played(m, rev)
            top += 1
            found = True
    return top
