"""Capacity proofs of loss: the "free parking" relaxation, where only the number of holders counts.

Applies to in-suit foundations without worrying back, any-suit building, and
empty piles that are never refilled (`applies`): Baker's Dozen and Good Measure.

Read a position X as *base* cards and *parked* cards: a pile's base is the
pile without its top run (the cards from the top down that each build on the
card beneath); the run cards are parked. From X on, a base card never moved
since X stays where it is, with only base cards under it, so each pile's base
shrinks from the top, one card at a time; every other tableau card (a run card
of X, or a card that has moved) lies directly on a card one rank higher, since
a card only ever goes onto a pile by building on its top card (no card enters
an empty pile). Call that card its *holder*: a base top or a parked card, and
a holder holds one card. Kings are never parked (no card is a rank higher).

So in every position reachable from X, for every rank r, the parked cards of
rank r are at most the base tops of rank r + 1 plus the parked cards of rank
r + 1 (*feasible*). The *configuration* (the base lengths and the foundation
heights; the parked cards are then every card neither in a base nor home)
changes only when a base top leaves (home, if its suit is next, or onto a
holder, then parked) or a card goes home (a base top or a parked card whose
suit is next); moves of parked cards between holders leave it unchanged. So
the configurations along any real line from X form a path of feasible
configurations in which each step is one of those three changes. The relaxed
game allows exactly those steps between feasible configurations (it lets the
parked cards be rearranged at will between steps); if no path reaches all
cards home, no real line does: X is lost. The states are exact (no hashing).

A card moves only when it is exposed, and onto a free holder (``exposed``,
on by default). When a base top c of rank r leaves (home, or parked), nothing
lies on c at that moment, so the parked cards of rank r - 1 lie on holders
other than c: they are at most the base tops and parked cards of rank r,
less one (c, a base top until it moves). The relaxed game moves c only then.
Feasibility after a step already says as much for a parked card going home
(it stops being a holder), but not for a base top: once parked, c is a holder
again, and in either case the card under c may become a base top of rank r,
so the count after the step cannot see that c had to be bare to move. When c
is parked, it goes onto an exposed holder of rank r + 1 that holds no other
card, and the card b under it is not that holder (c leaves b's pile; b lies
under c, so it is not yet a base top): the parked cards of rank r before the
step, plus c, are at most the holders of rank r + 1 before the step. The
count after the step cannot see that either when b has rank r + 1 (c built
on b in the base, under a card that did not), as b is a holder by then. Every
real line meets both conditions at each of its base tops' moves, so it is
still a path of the relaxed game and a relaxed loss is still a proof. The
first condition, on parking alone, is what turned the relaxation from a count
of holders into a proof of many of the losses the searches cannot finish:
without it good-measure 733, proved lost by the layered prover in 11.5
million positions, is a relaxed win after 83 states; with it a relaxed loss
after 9,875 (CHANGELOG.md, solver version 4). Applied to
the moves home as well, with the free holder (solver version 8), it proves
bakers-dozen 2492 lost in 1,999,104 states, where a search of 900 million
positions and the layered prover had not finished. The moves home decide it:
without the free holder the proof takes 2,083,740 states, and with the free
holder alone 2492 is a relaxed win after 12,066 (CHANGELOG.md, solver
version 8).

A relaxed win proves nothing. This is every argument that counts holders per
rank over time (Hall's condition per rank, as the cards must be parked while
bases are dug out), and nothing about the order of parked cards on each other.

Safe steps home (``safe``, on by default). Call a card c of rank r *safe* in
a configuration when its suit's foundation reaches r (c goes home next), c
is parked or a base top, and every card of rank r - 1 is home. Where some
card is safe, the search takes only the step that sends the first such card
home (suits in order) and no other step from that configuration. Why that
never turns a relaxed win into a loss: let a relaxed path from configuration
S win, and let m send the safe card c home. The path sends c home at some
step m'; move that step to the front. Every step between keeps its
legality: none of them is a step of c's suit home (c is that suit's next
card) nor a step of c's pile's base (c is parked, or the base top until m');
the foundations and bases are as before, except that c's pile may show its
next base card earlier, which only adds a holder. Feasibility holds too:
with c gone the parked cards of rank r are one fewer or the same, the
holders of rank r + 1 and above are the same or more, and the only count
that loses a holder is that of rank r - 1, whose parked cards are none
(every card of rank r - 1 is home and stays home). From m' on the two paths
are in the same configuration. The exposure conditions hold at each step
of a base top between as well: one of rank r leaving needs fewer parked
cards of rank r - 1 (none) than holders of rank r (at least itself); one of
rank r + 1 leaving needs as many parked cards of rank r as before or one
fewer; one of rank r parked needs a free holder of rank r + 1 for as many
parked cards of rank r as before or one fewer, among as many holders or more;
no base top of rank r - 1 is left to park; and for every other rank c's step
only adds holders. So S·m wins whenever S does, and a search that proves S·m lost has
proved S lost. This is the relaxed form of the
solver's safe moves home (`strategies.solver.safe`); it cuts the orders in
which the other steps interleave with these forced ones.

Two implementations of the same search: `free_parking`, compiled (numba), is
what the solver runs; `free_parking_reference`, plain Python sets and tuples,
is the independent reference it is tested against (same verdicts and state
counts, in the same depth-first order). The compiled one stores each
configuration exactly, packed into 64-bit words (a bit field per base length,
wide enough for the pile's base at X, and 4 bits per foundation height), in an
open-addressing set with linear probing sized from the state budget: the hash
only picks the slot, membership compares every word, so no two configurations
are ever merged.

Inside the solver's searches (`relaxed_loss`, called by
`strategies.solver.relax_cut`) the set outlives a call. The relaxed game has
no cycles (each step takes a card out of a base or home), so every
configuration a depth-first search finishes without a win is a relaxed loss,
whichever configuration the search started from: a later call skips it as
already seen. What a call leaves on its stack when it is capped or wins is
not proven, and is marked *open*: a later call that meets it searches it
again.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, KING, card, nb_card, nb_rank_of, nb_suit_of, rank_of, suit_of
from sim.engine import (
    P_BUILD,
    P_FILL,
    P_FOUND,
    P_PILES,
    P_WORRY,
    builds_on,
    fheight_at,
    is_king,
    pile_base,
    rule_params,
)
from sim.rng import nb_mix64
from sim.rules import BUILD_ANY_SUIT, FILL_NONE, FOUND_SUIT, Rules
from strategies.solver.bases import base_length

WON, LOST, CAPPED = "won", "lost", "capped"


def applies(rules: Rules) -> bool:
    """Whether the argument above holds under ``rules``."""
    return applies_to(rule_params(rules))


@nb.njit(cache=True)
def applies_to(prm: np.ndarray) -> bool:
    """`applies`, read from the engine's rule parameters ``prm`` (as the solver holds them)."""
    return prm[P_FOUND] == FOUND_SUIT and prm[P_WORRY] == 0 and prm[P_BUILD] == BUILD_ANY_SUIT and prm[P_FILL] == FILL_NONE


def split(piles: list[tuple[int, ...]], build: int) -> list[tuple[int, ...]]:
    """Each pile's base: the pile without its top run (``build``: the engine's building rule code)."""
    bases = []
    for pile in piles:
        j = len(pile) - 1
        while j >= 1 and builds_on(pile[j], pile[j - 1], build):
            j -= 1
        bases.append(tuple(pile[: j + 1]))
    return bases


HOME_BITS = 4
"""Bits of a foundation height (0..13) in a packed configuration."""

"""`sim.cards`'s accessors, compiled for the search below."""


def free_parking(bases: list[tuple[int, ...]], home: tuple[int, ...], cap: int, safe: bool = True,
                 exposed: bool = True) -> tuple[str, int]:
    """The relaxed game from (``bases``, foundation heights ``home``): (WON / LOST / CAPPED, states expanded).

    CAPPED: more than ``cap`` states, undecided. ``safe``: take only the safe step home where there is one;
    ``exposed``: move a base top only when it can be bare, and park it only onto a free holder (both above;
    off, for the with-and-without tests).
    Compiled; memory: a set of at most ``cap + 1`` packed configurations (one to a few 64-bit words each, at
    most half full)."""
    P = len(bases)
    if all(v == KING + 1 for v in home):
        return WON, 1
    width = max((len(b) for b in bases), default=0) + 1
    b = np.full((P, width), -1, dtype=np.int64)
    pile_of = np.full(DECK_SIZE, -1, dtype=np.int64)
    idx_of = np.zeros(DECK_SIZE, dtype=np.int64)
    for p, base in enumerate(bases):
        for i, c in enumerate(base):
            b[p, i], pile_of[c], idx_of[c] = c, p, i
    L0 = np.array([len(x) for x in bases], dtype=np.int64)
    word, shift, words = pack_fields(L0)
    space = 1  # configurations there are at all: a set never needs more room than that
    for x in bases:
        space *= len(x) + 1
    for v in home:
        space *= KING + 2 - v
    table = np.zeros((slots_for(min(cap, space)), words), dtype=np.uint64)
    v, n = _search(b, pile_of, idx_of, L0, np.array(home, dtype=np.int64), word, shift, np.int64(cap), table,
                   safe, exposed, False)
    return (LOST, WON, CAPPED)[v], int(n)


def slots_for(states: int) -> int:
    """Slots of a configuration set for ``states`` states: a power of two, at most half full."""
    return 1 << max(10, (2 * (states + 2)).bit_length())


@nb.njit(cache=True)
def pack_fields(L0):  # noqa: ANN001, ANN202 (numba)
    """Where the fields of a packed configuration lie for bases of lengths ``L0``: (word, shift, words).
    Pile p's base length (0..L0[p]), then the four foundation heights; bit 0 of word 0 marks a used
    slot, and a field never straddles two words."""
    P = L0.shape[0]
    word = np.zeros(P + 4, dtype=np.int64)
    shift = np.zeros(P + 4, dtype=np.int64)
    w, used = 0, 1
    for f in range(P + 4):
        n = HOME_BITS
        if f < P:
            n = 0
            while (1 << n) <= L0[f]:  # L0[f]'s bit length
                n += 1
        if used + n > 64:
            w, used = w + 1, 0
        word[f], shift[f] = w, used
        used += n
    return word, shift, w + 1


@nb.njit(cache=True)
def base_lengths(st: np.ndarray, prm: np.ndarray, L: np.ndarray) -> None:
    """Each pile's base length in the engine state ``st`` into ``L``: `split`, compiled."""
    for p in range(prm[P_PILES]):
        L[p] = base_length(st, prm, p, np.int64(st[p]))


@nb.njit(cache=True)
def relaxed_loss(st: np.ndarray, prm: np.ndarray, L0: np.ndarray, cap: np.int64, table: np.ndarray,
                 word: np.ndarray, shift: np.ndarray) -> tuple:
    """The relaxed game from the engine state ``st``, whose bases have lengths ``L0`` (`base_lengths`), within
    ``cap`` states: (lost, states). Lost is a proof that ``st`` is lost; won and capped say nothing.

    ``table`` is a kept set (`_search`) that outlives the call: every configuration a call finishes is a
    relaxed loss (the relaxed game has no cycles: each step takes a card out of a base or home), whatever
    position it was reached from, so later calls skip it; what a call leaves unfinished is marked open. Its
    configurations are packed with the fields ``word``, ``shift`` (`pack_fields`), the same for every call that
    shares it: the bases of every position it is asked about must be prefixes of the same piles (the
    positions the search reaches from one root, `strategies.solver.relax_cut`). Every argument of
    `free_parking` at its default (safe steps, bare cards)."""
    P = prm[P_PILES]
    width = np.int64(1)
    for p in range(P):
        width = max(width, L0[p])
    b = np.full((P, width), -1, dtype=np.int64)
    pile_of = np.full(DECK_SIZE, -1, dtype=np.int64)
    idx_of = np.zeros(DECK_SIZE, dtype=np.int64)
    for p in range(P):
        base = pile_base(prm, p)
        for i in range(L0[p]):
            c = np.int64(st[base + i])
            b[p, i], pile_of[c], idx_of[c] = c, p, i
    h0 = np.zeros(4, dtype=np.int64)
    for s in range(4):
        h0[s] = st[fheight_at(P, s)]
    if h0.sum() == 4 * (KING + 1):
        return False, 0  # won already (`_search` checks for a win only after a step)
    on = True
    v, n = _search(b, pile_of, idx_of, L0, h0, word, shift, cap, table, on, on, on)
    return v == 0, n


@nb.njit(cache=True)
def pack_configuration(L, h, word, shift, key) -> None:  # noqa: ANN001
    """Pack the configuration (L, h) into ``key`` with the fields ``word``, ``shift`` (`pack_fields`): bit 0 of
    word 0 set (a used slot), then the fields."""
    P = L.shape[0]
    key[:] = 0
    key[0] = 1
    for p in range(P):
        key[word[p]] |= np.uint64(L[p]) << np.uint64(shift[p])
    for s in range(4):
        key[word[P + s]] |= np.uint64(h[s]) << np.uint64(shift[P + s])


@nb.njit(cache=True)
def _bump(key, word, shift, f, up) -> None:  # noqa: ANN001
    """Field f of the packed configuration ``key`` one up (``up``) or down (fields never overflow: a base
    length only shrinks from its packed start, a foundation height stays within 0..13)."""
    if up:
        key[word[f]] += np.uint64(1) << np.uint64(shift[f])
    else:
        key[word[f]] -= np.uint64(1) << np.uint64(shift[f])


@nb.njit(cache=True, inline="always")
def key_hash(key, seed):  # noqa: ANN001, ANN201 (numba)
    """The hash of the packed configuration ``key`` from ``seed``: it only picks a slot, never decides a match."""
    x = seed
    for i in range(key.shape[0]):
        x = nb_mix64(x ^ key[i])
    return x


@nb.njit(cache=True, inline="always")
def holds(row, key) -> bool:  # noqa: ANN001
    """Whether the table row ``row`` begins with the packed configuration ``key``, word for word."""
    for k in range(key.shape[0]):
        if row[k] != key[k]:
            return False
    return True


@nb.njit(cache=True)
def _slot(table, key) -> np.uint64:  # noqa: ANN001
    """The slot of the packed configuration ``key`` in the open-addressing set ``table``, or the empty slot
    where it would go. The hash only picks the first slot: membership compares every word."""
    mask = np.uint64(table.shape[0] - 1)
    i = key_hash(key, np.uint64(0)) & mask
    while table[i, 0] != 0:
        if holds(table[i], key):
            return i
        i = (i + np.uint64(1)) & mask
    return i


@nb.njit(cache=True)
def _store(table, key, kept) -> bool:  # noqa: ANN001
    """Add ``key`` to the set ``table``; False if it is there already (with ``kept``: and not open; an open
    one is taken back into the search)."""
    i = _slot(table, key)
    if table[i, 0] != 0:
        if not kept or table[i, key.shape[0]] == 0:
            return False
        table[i, key.shape[0]] = 0
        return True
    table[i, :key.shape[0]] = key
    return True


@nb.njit(cache=True)
def _mark_open(table, key) -> None:  # noqa: ANN001
    """Mark ``key``, which is in the kept set ``table``, open: not proven lost."""
    table[_slot(table, key), key.shape[0]] = 1


@nb.njit(cache=True)
def _feasible(parked, holders) -> bool:  # noqa: ANN001
    """The holder count per rank: no parked king, and for every rank r the parked cards of rank r are at most
    the base tops and parked cards of rank r + 1."""
    if parked[KING] > 0:
        return False
    for r in range(KING):
        if parked[r] > holders[r + 1] + parked[r + 1]:
            return False
    return True


@nb.njit(cache=True)
def _step(L, h, parked, holders, key, word, shift, b, pile_of, idx_of, j, exposed) -> bool:  # noqa: ANN001
    """Play step j on the configuration (L, h) with its parked cards and base tops per rank and its packed
    form ``key`` (fields at ``word``, ``shift``), in place; False
    (and nothing changed) if it is not a step. In `free_parking_reference`'s order: j = 0..3, the parked card
    of suit j home; then pile p's base top home (j = 4 + 2p) or parked (j = 5 + 2p).

    The parked cards of rank r are the cards of rank r neither home nor in a base, so they change only when
    a parked card goes home (one fewer of its rank) or a base top is parked (one more); a base top going
    home leaves them as they are."""
    if j < 4:
        if h[j] > KING:
            return False
        c = nb_card(h[j], j)
        q = pile_of[c]
        if q >= 0 and idx_of[c] < L[q]:
            return False
        parked[h[j]] -= 1
        h[j] += 1
        _bump(key, word, shift, L.shape[0] + j, True)
        return True
    p = (j - 4) // 2
    if L[p] == 0:
        return False
    c = b[p, L[p] - 1]
    r = nb_rank_of(c)
    if exposed and r > 0 and parked[r - 1] >= holders[r] + parked[r]:
        return False  # c leaves bare: the holders of rank r but c must hold the parked cards of rank r - 1
    if j % 2 == 0:
        if h[nb_suit_of(c)] != r:
            return False
        h[nb_suit_of(c)] += 1
        _bump(key, word, shift, L.shape[0] + nb_suit_of(c), True)
    elif is_king(c) or (exposed and parked[r] >= holders[r + 1] + parked[r + 1]):
        return False  # a king is never parked; c needs a free holder, counted before the card under c is one
    else:
        parked[r] += 1
    L[p] -= 1
    _bump(key, word, shift, p, False)
    holders[r] -= 1
    if L[p] > 0:
        holders[nb_rank_of(b[p, L[p] - 1])] += 1
    return True


@nb.njit(cache=True)
def _unstep(L, h, parked, holders, key, word, shift, b, j) -> None:  # noqa: ANN001
    """Take back step j, played by `_step` on (L, h, parked, holders, key)."""
    if j < 4:
        h[j] -= 1
        parked[h[j]] += 1
        _bump(key, word, shift, L.shape[0] + j, False)
        return
    p = (j - 4) // 2
    if L[p] > 0:
        holders[nb_rank_of(b[p, L[p] - 1])] -= 1
    c = b[p, L[p]]
    r = nb_rank_of(c)
    L[p] += 1
    _bump(key, word, shift, p, True)
    holders[r] += 1
    if j % 2 == 0:
        h[nb_suit_of(c)] -= 1
        _bump(key, word, shift, L.shape[0] + nb_suit_of(c), False)
    else:
        parked[r] -= 1


@nb.njit(cache=True)
def _safe_step(L, h, pile_of, idx_of) -> np.int64:  # noqa: ANN001
    """The step that sends the first safe card home (suits in order; the module's text), or -1 if none is."""
    low = h.min()  # every card of rank r - 1 is home exactly when every foundation reaches r
    for s in range(4):
        r = h[s]
        if r > KING or r > low:
            continue
        c = nb_card(r, s)
        q = pile_of[c]
        if q < 0 or idx_of[c] >= L[q]:
            return s
        if idx_of[c] == L[q] - 1:
            return 4 + 2 * q
    return -1


@nb.njit(cache=True)
def _steps_from(L, h, pile_of, idx_of, steps, safe, level, next_step, last) -> None:  # noqa: ANN001
    """Set the steps a level tries: the safe step alone where there is one (and ``safe``), else all."""
    j = _safe_step(L, h, pile_of, idx_of) if safe else -1
    next_step[level], last[level] = (j, j + 1) if j >= 0 else (0, steps)


@nb.njit(cache=True)
def _search(b, pile_of, idx_of, L0, h0, word, shift, cap, table, safe, exposed, kept):  # noqa: ANN001, ANN202
    """`free_parking`'s depth-first search: (0 lost / 1 won / 2 capped, states). One configuration is played
    forward and taken back in place; the stack holds each level's next and last step and the step taken.
    Every step takes a card out of a base or home, so a path has at most sum(L0) + 52 - sum(h0) steps.

    With ``kept`` the set ``table`` outlives the call (`relaxed_loss`, the module's text): its last column
    marks a configuration *open*, and what the call leaves on its stack (capped or won) is marked so."""
    P = L0.shape[0]
    D = L0.sum() + DECK_SIZE - h0.sum() + 1
    L, h = L0.copy(), h0.copy()
    parked = np.zeros(KING + 1, dtype=np.int64)  # cards neither home nor in a base, per rank
    holders = np.zeros(KING + 2, dtype=np.int64)  # base tops per rank (a king's slot above: none)
    for c in range(DECK_SIZE):
        if nb_rank_of(c) >= h0[nb_suit_of(c)]:
            parked[nb_rank_of(c)] += 1
    for p in range(P):
        for i in range(L0[p]):
            parked[nb_rank_of(b[p, i])] -= 1
        if L0[p] > 0:
            holders[nb_rank_of(b[p, L0[p] - 1])] += 1
    next_step = np.zeros(D, dtype=np.int64)
    last = np.zeros(D, dtype=np.int64)
    taken = np.zeros(D, dtype=np.int64)
    key = np.zeros(table.shape[1] - 1 if kept else table.shape[1], dtype=np.uint64)
    pack_configuration(L, h, word, shift, key)
    if not _store(table, key, kept):
        return 0, 0  # kept: proven lost by an earlier call
    steps = 4 + 2 * P
    _steps_from(L, h, pile_of, idx_of, steps, safe, 0, next_step, last)
    d, n = 0, 1
    while True:
        if next_step[d] >= last[d]:
            if d == 0:
                return 0, n
            d -= 1
            _unstep(L, h, parked, holders, key, word, shift, b, taken[d])
            continue
        j = next_step[d]
        next_step[d] += 1
        if not _step(L, h, parked, holders, key, word, shift, b, pile_of, idx_of, j, exposed):
            continue
        if not _feasible(parked, holders) or not _store(table, key, kept):
            _unstep(L, h, parked, holders, key, word, shift, b, j)
            continue
        won = h.sum() == 4 * (KING + 1)
        if won or n >= cap:
            if kept:  # the stack is not proven lost: open it for later calls
                _mark_open(table, key)
                _unstep(L, h, parked, holders, key, word, shift, b, j)
                _mark_open(table, key)
                for e in range(d - 1, -1, -1):
                    _unstep(L, h, parked, holders, key, word, shift, b, taken[e])
                    _mark_open(table, key)
            return (1, n) if won else (2, n + 1)
        n += 1
        taken[d] = j
        d += 1
        _steps_from(L, h, pile_of, idx_of, steps, safe, d, next_step, last)


def free_parking_reference(bases: list[tuple[int, ...]], home: tuple[int, ...], cap: int, safe: bool = True,
                           exposed: bool = True) -> tuple[str, int]:
    """`free_parking` in plain Python (sets of tuples): the independent reference the compiled search is
    tested against, with the same verdicts and state counts."""
    P = len(bases)

    def counts(L: tuple[int, ...], h: tuple[int, ...]) -> tuple[list[int], list[int]]:
        """Parked cards and base tops per rank."""
        inbase = {bases[p][i] for p in range(P) for i in range(L[p])}
        parked = [0] * (KING + 1)
        holders = [0] * (KING + 2)
        for p in range(P):
            if L[p]:
                holders[rank_of(bases[p][L[p] - 1])] += 1
        for c in range(DECK_SIZE):
            if rank_of(c) >= h[suit_of(c)] and c not in inbase:
                parked[rank_of(c)] += 1
        return parked, holders

    def feasible(L: tuple[int, ...], h: tuple[int, ...]) -> bool:
        parked, holders = counts(L, h)
        return parked[KING] == 0 and all(parked[r] <= holders[r + 1] + parked[r + 1] for r in range(KING))

    def leaving_ranks(L: tuple[int, ...], h: tuple[int, ...]) -> tuple[list[bool], list[bool]]:
        """Per rank r, whether a base top of rank r can leave bare (the holders of rank r but it suffice for
        the parked cards of rank r - 1), and whether a holder of rank r + 1 is free for it (counted before
        the card under it becomes a base top)."""
        parked, holders = counts(L, h)
        bare = [not exposed or r == 0 or parked[r - 1] < holders[r] + parked[r] for r in range(KING + 1)]
        free = [not exposed or parked[r] < holders[r + 1] + parked[r + 1] for r in range(KING)]
        return bare, free

    def safe_child(L: tuple[int, ...], h: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
        for s in range(4):  # a card home next, parked or a base top, every card a rank lower home
            if h[s] > KING or any(v < h[s] for v in h):
                continue
            c = card(h[s], s)
            where = [p for p in range(P) if c in bases[p][: L[p]]]
            if where and bases[where[0]][L[where[0]] - 1] != c:
                continue  # under another base card
            L2 = L if not where else L[: where[0]] + (L[where[0]] - 1,) + L[where[0] + 1:]
            return L2, h[:s] + (h[s] + 1,) + h[s + 1:]
        return None

    def children(L: tuple[int, ...], h: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        forced = safe_child(L, h) if safe else None
        if forced is not None:
            return [x for x in (forced,) if feasible(*x)]
        inbase = {bases[p][i] for p in range(P) for i in range(L[p])}
        bare, free = leaving_ranks(L, h)
        out = []
        for s in range(4):  # a parked card home
            if h[s] <= KING and card(h[s], s) not in inbase:
                out.append((L, h[:s] + (h[s] + 1,) + h[s + 1:]))
        for p in range(P):  # a base top home, or parked
            if L[p]:
                b = bases[p][L[p] - 1]
                L2 = L[:p] + (L[p] - 1,) + L[p + 1:]
                s = suit_of(b)
                if not bare[rank_of(b)]:
                    continue
                if h[s] == rank_of(b):
                    out.append((L2, h[:s] + (h[s] + 1,) + h[s + 1:]))
                if not is_king(b) and free[rank_of(b)]:
                    out.append((L2, h))
        return [x for x in out if feasible(*x)]

    root = (tuple(len(b) for b in bases), tuple(home))
    if all(v == KING + 1 for v in home):
        return WON, 1
    seen = {root}
    stack = [iter(children(*root))]
    while stack:
        for x in stack[-1]:
            if x in seen:
                continue
            if all(v == KING + 1 for v in x[1]):
                return WON, len(seen)
            seen.add(x)
            if len(seen) > cap:
                return CAPPED, len(seen)
            stack.append(iter(children(*x)))
            break
        else:
            stack.pop()
    return LOST, len(seen)


def free_parking_state(st: np.ndarray, prm: np.ndarray, cap: int, safe: bool = True,
                       exposed: bool = True) -> tuple[str, int]:
    """`free_parking` from the engine state ``st`` (rule parameters ``prm``)."""
    return free_parking(*relaxation_input(st, prm), cap, safe, exposed)


def relaxation_input(st: np.ndarray, prm: np.ndarray) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """The relaxation's input for the engine state ``st``: each pile's base (`split`) and the foundation
    heights."""
    P = int(prm[P_PILES])
    piles = [tuple(int(st[pile_base(prm, p) + i]) for i in range(int(st[p]))) for p in range(P)]
    return split(piles, int(prm[P_BUILD])), tuple(int(st[fheight_at(P, s)]) for s in range(4))
