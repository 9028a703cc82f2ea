"""Completions the `sampling` player keeps from one decision to the next, with what their solves found.

After a move, every completion of the hidden cards that agrees with what has
turned up is still a fair guess at the deal, and a completion whose solve found
a winning line starting with the move just played still has the rest of that
line: it votes for the line's next move without a new solve. A completion
proven lost stays lost whatever is played. So the player keeps, in its per-game
scratch, each completion's face-down cards (pile by pile, packed in the order of
the piles: the layout of the state array may change between decisions, the
face-down counts saved beside them say where each pile's cards are) and its
status after the move it chose: won (with the rest of the line), lost, or
unknown (solve again). The block is sized from a bound, not from the deal's
shape: a table holds at most `DECK_SIZE` face-down cards however its piles are
laid out (a typed layout may put more cards face down in one pile than the deal
does).

At the next decision each kept completion is rebuilt on the table as it now
stands. A face-down card that has since turned up is checked against the
completion: where it put another card there, the two are swapped (the turned-up
card leaves the hidden slot the completion had put it in, and that slot takes
the completion's card). Why this is still a fair draw: let the completion be a
uniform random arrangement of the unseen cards over the H hidden slots, and c
the card that turned up in slot s. The swap maps an arrangement to one with c
in s; every arrangement with c in s is reached from exactly H arrangements (itself,
and for each other slot t the one that differs by c and the card of t having
traded places), so the repaired completion is uniform over the arrangements
with c in s: exactly the conditional draw. Where kings go to the bottom at the
deal, arrangements are not uniform to begin with (`strategies.sampling.strategy`'s
approximation); a repaired completion that breaks the king rule (a hidden king
over a hidden non-king, or a hidden non-king under a face-up king) is drawn
afresh instead. A completion changed by a swap keeps a won line only if the
line, replayed on it move by move, is still legal and still wins; otherwise it
is solved again. Anything that does not fit (a card set that differs from the
unseen cards) is drawn afresh.

Only face-up cards and the foundations of the real table are read; the hidden
slots of the state come from the kept completion or a new draw.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    P_KTB,
    P_PILES,
    down_at,
    fheight_at,
    found_at,
    is_king,
    pile_base,
)
from strategies.solver.line import line_wins

KEEP_NONE, KEEP_WON, KEEP_LOST = 0, 1, 2
"""A kept completion's status after the move played: to be solved, won (line kept), proven lost."""
LINE_SLOTS = 320
"""Longest winning line kept per completion (longer ones are solved again)."""
K_KEPT, K_HEAD = 0, 1
"""Slots of the kept block: whether completions are kept, then each pile's face-down count."""
KS_STATUS, KS_LEN, KS_HEAD = 0, 1, 2
"""Slots of one completion: status, line length, then its hidden cards (`DECK_SIZE` slots, each pile's
packed after the piles before it), then its line."""
KS_SIZE = KS_HEAD + DECK_SIZE + LINE_SLOTS
"""Slots of one completion."""


def keep_size(piles: int, samples: int) -> int:
    """Scratch slots the kept block needs for ``samples`` completions of ``piles`` piles."""
    return K_HEAD + piles + samples * KS_SIZE


@nb.njit(cache=True, inline="always")
def _slot(prm, base, j):  # noqa: ANN001, ANN202 (numba)
    return base + K_HEAD + prm[P_PILES] + j * KS_SIZE


@nb.njit(cache=True)
def store_kept(scratch, base, prm, st, samples, status, lines, llen):  # noqa: ANN001, ANN201 (numba)
    """Keep each completion's hidden cards (as laid out in st's face-down slots), status and line."""
    P = prm[P_PILES]
    scratch[base + K_KEPT] = 1
    for p in range(P):
        scratch[base + K_HEAD + p] = np.int64(st[down_at(P, p)])
    for j in range(samples.shape[0]):
        o = _slot(prm, base, j)
        won = status[j] == KEEP_WON and llen[j] <= LINE_SLOTS
        scratch[o + KS_STATUS] = status[j] if won or status[j] != KEEP_WON else KEEP_NONE
        scratch[o + KS_LEN] = llen[j] if won else 0
        k = o + KS_HEAD
        for p in range(P):
            pb = pile_base(prm, p)
            for i in range(np.int64(st[down_at(P, p)])):
                scratch[k] = np.int64(samples[j, pb + i])
                k += 1
        if won:
            h = o + KS_HEAD + DECK_SIZE
            for k in range(llen[j]):
                scratch[h + k] = lines[j, k]


@nb.njit(cache=True)
def take_best(cur_st, cur_len, cur_lines, best_st, best_lens, best_lines):  # noqa: ANN001, ANN201 (numba)
    """Make the candidate just scored the best so far: copy its completions' statuses, and the winning
    lines of those it won, as what the player keeps if it plays this candidate."""
    best_st[:] = cur_st
    for j in range(cur_st.shape[0]):
        if cur_st[j] == KEEP_WON:
            best_lens[j] = cur_len[j]
            best_lines[j, : cur_len[j]] = cur_lines[j, : cur_len[j]]


@nb.njit(cache=True)
def _fits_kings(s, st, prm):  # noqa: ANN001, ANN202 (numba)
    """Where kings go to the bottom: no hidden king over a hidden non-king, only kings under a face-up king."""
    if prm[P_KTB] == 0:
        return True
    P = prm[P_PILES]
    for p in range(P):
        d = np.int64(st[down_at(P, p)])
        b = pile_base(prm, p)
        under_king = d > 0 and is_king(np.int64(st[b + d]))
        seen_other = False
        for i in range(d):
            k = is_king(np.int64(s[b + i]))
            if (k and seen_other) or (under_king and not k):
                return False
            seen_other = seen_other or not k
    return True


@nb.njit(cache=True)
def cards_in_sight(st, prm):  # noqa: ANN001, ANN201 (numba)
    """Which cards a player sees on the table st: the face-up part of each pile and the foundations
    (True by card); every other card is face down somewhere, the cards a completion deals."""
    P = prm[P_PILES]
    seen = np.zeros(DECK_SIZE, dtype=np.bool_)
    for p in range(P):
        b = pile_base(prm, p)
        for i in range(np.int64(st[down_at(P, p)]), np.int64(st[p])):
            seen[np.int64(st[b + i])] = True
    for f in range(4):
        for i in range(np.int64(st[fheight_at(P, f)])):
            seen[np.int64(st[found_at(P, f) + i])] = True
    return seen


@nb.njit(cache=True)
def restore_kept(scratch, base, prm, st, samples, status, lines, llen, unseen, mbuf, tmp):  # noqa: ANN001, ANN201 (numba)
    """Rebuild the kept completions on the table st (see the module text).

    samples[j] must hold st with its hidden slots to fill. Writes each completion's hidden
    cards, status and line; returns for each j whether it could be kept (``unseen[j]`` is
    set False where it must be drawn afresh). ``unseen`` doubles as the per-sample result."""
    P = prm[P_PILES]
    seen = cards_in_sight(st, prm)
    start = np.zeros(P + 1, dtype=np.int64)  # pile p's kept cards: slots start[p] .. start[p + 1] - 1
    pile_of = np.zeros(DECK_SIZE, dtype=np.int64)  # slot -> its pile
    if scratch[base + K_KEPT] != 0:
        for p in range(P):
            start[p + 1] = start[p] + scratch[base + K_HEAD + p]
            pile_of[start[p] : start[p + 1]] = p
    where = np.empty(DECK_SIZE, dtype=np.int64)  # kept card -> its slot in the completion
    for j in range(samples.shape[0]):
        unseen[j] = False
        status[j] = KEEP_NONE
        llen[j] = 0
        if scratch[base + K_KEPT] == 0:
            continue
        o = _slot(prm, base, j)
        h = o + KS_HEAD
        where[:] = -1
        for t in range(start[P]):
            where[scratch[h + t]] = t
        changed = False
        ok = True
        for p in range(P):  # cards turned up since: swap into place where the completion had another card
            b = pile_base(prm, p)
            d = np.int64(st[down_at(P, p)])
            if d > start[p + 1] - start[p]:
                ok = False
                break
            for i in range(d, start[p + 1] - start[p]):
                c, x = np.int64(st[b + i]), scratch[h + start[p] + i]
                if c == x:
                    continue
                t = where[c]
                if t < 0 or t - start[pile_of[t]] >= np.int64(st[down_at(P, pile_of[t])]):
                    ok = False
                    break
                scratch[h + t] = x
                scratch[h + start[p] + i] = c
                where[x], where[c] = t, start[p] + i
                changed = True
            if not ok:
                break
        if not ok:
            continue
        for c in range(DECK_SIZE):  # the hidden cards must be exactly the unseen ones
            tmp[c] = 0
        count = 0
        for p in range(P):
            b = pile_base(prm, p)
            for i in range(np.int64(st[down_at(P, p)])):
                c = scratch[h + start[p] + i]
                if seen[c] or tmp[c] != 0:
                    ok = False
                tmp[c] = 1
                samples[j, b + i] = c
                count += 1
        if not ok or count + seen.sum() != DECK_SIZE or not _fits_kings(samples[j], st, prm):
            continue
        unseen[j] = True
        s = scratch[o + KS_STATUS]
        n = scratch[o + KS_LEN]
        if s == KEEP_LOST and not changed:
            status[j] = KEEP_LOST
        elif s == KEEP_WON and n > 0:
            for k in range(n):
                lines[j, k] = scratch[h + DECK_SIZE + k]
            keep = True
            if changed:
                s2 = samples[j].copy()
                keep = line_wins(s2, prm, lines[j], n, mbuf)
            if keep:
                status[j] = KEEP_WON
                llen[j] = n
    return unseen
