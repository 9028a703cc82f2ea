"""Compiled building blocks that the built-in strategies share: how soon a card is
needed at home, how urgently a pile must be dug out, whether a card rests on a
base, and a position hash with a per-game record of visited positions.

Everything reads only what a player sees: cards below ``known[p]`` in pile p
are treated as unknown, so a strategy that passes the face-down counts of the
position it was shown never uses hidden cards, even when it searches ahead
and uncovers some.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, nb_card, nb_suit_of
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_FOUND,
    P_PILES,
    SCRATCH_OWN,
    builds_on,
    down_at,
    fheight_at,
    found_at,
    home_slot,
    move_from,
    move_to,
    pile_base,
)
from sim.rng import nb_mix64
from sim.rules import FOUND_SUIT

UNKNOWN_NEED = 6
"""How soon an unseen card is assumed to be needed (the middle of the ranks)."""
FAR = 1 << 20
"""Urgency of a pile that holds nothing needed."""

SCRATCH_STORED, SCRATCH_LAST = SCRATCH_OWN, SCRATCH_OWN + 1
VISITED_OFFSET = SCRATCH_OWN + 2
VISITED_SLOTS = 512
"""Slots of the per-game table of positions seen (`remember`, `visited`). It takes at most three
quarters of them, `VISITED_LIMIT` positions; a strategy that has seen that many in one game resigns
(`heuristic`, `lookahead`: a limit of their play, in their texts). `heuristic`'s cycle guard keeps moves
taken (`move_key`) there instead, and empties the table at each progress (`forget`). No game of theirs comes near it: the
longest of deals 1-1,000 (1-300 for `lookahead`) of five presets lasted 140 moves, and
tests/test_features.py checks that their games stay under half the limit."""
VISITED_LIMIT = VISITED_SLOTS * 3 // 4
"""Most positions the table of positions seen takes (three quarters of its slots)."""
NEEDS_OFFSET = VISITED_OFFSET + VISITED_SLOTS
NEEDS_STAMP = DECK_SIZE
"""Slot of the table of needs (after its 52 needs) that names the foundation it was filled for."""
SCRATCH_MOVED = NEEDS_OFFSET + NEEDS_STAMP + 1
PILES_OFFSET = SCRATCH_MOVED + 1
SCRATCH_PROGRESS = PILES_OFFSET + DECK_SIZE
SCRATCH_WITH_VISITED = SCRATCH_PROGRESS + 1
"""Scratch layout of strategies that remember positions: the engine's slots
(`sim.engine.SCRATCH_NODES`, `SCRATCH_MICROS`), then ``SCRATCH_STORED`` counts
stored hashes and ``SCRATCH_LAST`` holds the hash of the position the
strategy's last move led to, then the hash table (``VISITED_SLOTS`` from
``VISITED_OFFSET``), then the table of needs (`fill_needs`, 52 slots and its stamp from
``NEEDS_OFFSET``) that `heuristic` and `lookahead` fill at each decision, then
``SCRATCH_MOVED`` (the move the strategy's last decision chose) and the per-pile
cache of `heuristic` (`pile_entry`, one slot per pile from ``PILES_OFFSET``; a game
has at most `DECK_SIZE` piles), then ``SCRATCH_PROGRESS``, where `heuristic`'s cycle
guard keeps the progress the table of moves taken was started at (`PROGRESS_BIAS`
plus `sim.engine.progress_mark`; 0 before its first decision)."""
PROGRESS_BIAS = 1 << 16
"""Added to a progress mark in ``SCRATCH_PROGRESS``, so that a stored mark is never 0 (a mark is
at least minus the cards of a deal)."""


@nb.njit(cache=True, inline="always")
def needs_of(scratch: np.ndarray) -> np.ndarray:
    """The table of needs in a policy's scratch (see `SCRATCH_WITH_VISITED`)."""
    return scratch[NEEDS_OFFSET : NEEDS_OFFSET + NEEDS_STAMP + 1]


@nb.njit(cache=True)
def needs_stamp(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """A number (never 0) naming all that the needs depend on: the four foundation heights
    and whether a card may go to any foundation."""
    P = prm[P_PILES]
    stamp = np.int64(1 if prm[P_FOUND] == FOUND_SUIT else 2)
    for f in range(4):
        stamp = stamp * 14 + np.int64(st[fheight_at(P, f)])
    return stamp


@nb.njit(cache=True, inline="always")
def fill_needs(st: np.ndarray, prm: np.ndarray, need_of: np.ndarray) -> bool:
    """``need_of[c]`` = how many cards must still go home before card c can (0: it could go next),
    for all 52 cards (``need_of``: `needs_of` the scratch); True when the table changed.

    Needs change only when a foundation does, so the table keeps the `needs_stamp` it was
    filled for and is refilled only when that changes (most moves stay in the tableau)."""
    return fill_needs_at(st, prm, need_of, 0)


@nb.njit(cache=True)
def fill_needs_at(st: np.ndarray, prm: np.ndarray, buf: np.ndarray, at: np.int64) -> bool:
    """`fill_needs` for the table that starts at ``buf[at]``: a policy passes its scratch and
    ``NEEDS_OFFSET`` rather than a slice (each slice is an object numba counts references to).
    One exit and no helper that takes an array, so that numba's reference-count pruning
    removes every count in it."""
    P = prm[P_PILES]
    stamp = needs_stamp(st, prm)
    changed = buf[at + NEEDS_STAMP] != stamp
    if changed:
        buf[at + NEEDS_STAMP] = stamp
        lowest = np.int64(13)
        for f in range(4):
            lowest = min(lowest, np.int64(st[fheight_at(P, f)]))
        for s in range(4):
            done = np.int64(st[fheight_at(P, s)]) if prm[P_FOUND] == FOUND_SUIT else lowest
            for r in range(13):
                buf[at + nb_card(r, s)] = r - done if r > done else 0
    return changed


F_FULL, F_BELOW, F_MISPLACED, F_FREES_HOME, FEATURE_ROWS = range(5)
"""Rows of the per-pile feature table filled by `pile_features`, and how many there are."""

ENTRY_VALID, ENTRY_FREES_HOME, ENTRY_MISPLACED = 1, 2, 4
ENTRY_TOP_SHIFT, ENTRY_SUITS_SHIFT, ENTRY_BELOW_SHIFT = 3, 7, 11
ENTRY_TOP_MASK = 15
"""Bits of a packed pile entry (`pile_entry`): valid (so never 0), frees home, misplaced,
then the exposed card's need (4 bits from ``ENTRY_TOP_SHIFT``, at most 13), the suits
of the pile's seen cards (4 bits from ``ENTRY_SUITS_SHIFT``: the needs the entry read)
and the buried urgency (from ``ENTRY_BELOW_SHIFT``, at most `FAR`)."""


@nb.njit(cache=True)
def _goes_home_now(st: np.ndarray, prm: np.ndarray, c: np.int64) -> bool:
    """Whether card c could go home now (a call of its own: see `pile_entry`)."""
    return home_slot(st, prm, c, 0) >= 0


@nb.njit(cache=True, inline="always")
def pile_entry(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, need_of: np.ndarray) -> np.int64:
    """What the strategies read of pile p, its k lowest cards being unseen and ``need_of``
    filled by `fill_needs`, packed into one number (`ENTRY_VALID` ...):

    - buried urgency (`entry_below`): the urgency of the most urgent card under the
      exposed one, urgency = need x 16 + cards above it (smaller is more urgent), unseen
      cards counting as needed after `UNKNOWN_NEED` others; `FAR` when no card lies under
      the exposed one.
    - the exposed card's need (`entry_top_need`), 13 for an empty pile.
    - misplaced (``ENTRY_MISPLACED``): the exposed card rests on a card it does not build
      on, or on an unseen card.
    - frees home (``ENTRY_FREES_HOME``): the card under the exposed one is seen and could
      go home now.

    The same as `pile_entry_at` with the table at ``need_of[0]``.
    """
    return pile_entry_at(st, prm, p, k, need_of, 0)


@nb.njit(cache=True)
def pile_entry_at(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, buf: np.ndarray, at: np.int64) -> np.int64:
    """`pile_entry` with the table of needs from ``buf[at]`` (a policy's scratch and ``NEEDS_OFFSET``):
    `suit_entry_at`, then with alternate-colour foundations `alternate_frees_home`."""
    e = suit_entry_at(st, prm, p, k, buf, at)
    if prm[P_FOUND] != FOUND_SUIT:
        e = alternate_frees_home(st, prm, p, k, e)
    return e


@nb.njit(cache=True)
def suit_entry_at(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, buf: np.ndarray, at: np.int64) -> np.int64:
    """`pile_entry_at` less, with alternate-colour foundations, ``ENTRY_FREES_HOME``.

    Written out in one pass with a single exit, no call and no inlined helper taking an
    array: numba's pruning then removes every reference count in it (`heuristic` runs it
    for every pile a move changes). With in-suit foundations a tableau card with need 0
    can go home now, which is the whole of the home test."""
    h = np.int64(st[p])
    base = pile_base(prm, p)
    build, in_suit = prm[P_BUILD], prm[P_FOUND] == FOUND_SUIT
    below = UNKNOWN_NEED * 16 + (h - k) if k > 0 else FAR  # the unseen card nearest the top is the most urgent unseen one
    suits = 0
    for i in range(k, h - 1):
        c = np.int64(st[base + i])
        below = min(below, buf[at + c] * 16 + (h - 1 - i))
        suits |= 1 << nb_suit_of(c)
    top = np.int64(13)
    if h > 0:
        c = np.int64(st[base + h - 1])
        top = buf[at + c]
        suits |= 1 << nb_suit_of(c)
    e = (below << ENTRY_BELOW_SHIFT) | (suits << ENTRY_SUITS_SHIFT) | (top << ENTRY_TOP_SHIFT) | ENTRY_VALID
    # The last reads of st and buf come last, on every path: numba then drops its
    # references to them in one place, where the pruning can pair them with the entry's.
    seen = h >= 2 and h - 2 >= k  # the card under the exposed one is seen
    exposed, second = np.int64(st[base + max(h - 1, 0)]), np.int64(st[base + max(h - 2, 0)])
    under = second if seen else 0
    misplaced = h >= 2 and not (seen and builds_on(exposed, under, build))
    need_under = buf[at + under]
    if misplaced:
        e |= ENTRY_MISPLACED
    if seen and in_suit and need_under == 0:
        e |= ENTRY_FREES_HOME
    return e


@nb.njit(cache=True)
def alternate_frees_home(st: np.ndarray, prm: np.ndarray, p: np.int64, k: np.int64, e: np.int64) -> np.int64:
    """Entry e of pile p (k lowest cards unseen) with ``ENTRY_FREES_HOME`` set when the seen card
    under the exposed one could go home now (for alternate-colour foundations)."""
    h = np.int64(st[p])
    if h >= 2 and h - 2 >= k and _goes_home_now(st, prm, np.int64(st[pile_base(prm, p) + h - 2])):
        e |= ENTRY_FREES_HOME
    return e


@nb.njit(cache=True, inline="always")
def entry_below(e: np.int64) -> np.int64:
    """The buried urgency in a `pile_entry`."""
    return e >> ENTRY_BELOW_SHIFT


@nb.njit(cache=True, inline="always")
def entry_top_need(e: np.int64) -> np.int64:
    """The exposed card's need in a `pile_entry`."""
    return (e >> ENTRY_TOP_SHIFT) & ENTRY_TOP_MASK


@nb.njit(cache=True, inline="always")
def pile_urgency(st: np.ndarray, p: np.int64, below: np.int64, top: np.int64) -> np.int64:
    """Urgency of pile p's most urgent card from its buried urgency and its exposed
    card's need (`pile_entry`) (`F_FULL`; `FAR` when the pile is empty)."""
    return min(below, top * 16) if st[p] > 0 else below


@nb.njit(cache=True, inline="always")
def refresh_piles(scratch: np.ndarray, P: np.int64, in_suit: bool, continuing: bool, refilled: bool) -> None:
    """Drop the cached pile entries (``PILES_OFFSET``) of the P piles that may be stale,
    ``in_suit`` when cards go home by suit, ``continuing``
    when the move in ``SCRATCH_MOVED`` is the only one played since they were made and
    ``refilled`` when the table of needs changed since: the piles that move changed, and
    when it went to or came from an in-suit foundation, the piles holding a seen card of
    that suit (only their needs changed); all of them otherwise."""
    m = scratch[SCRATCH_MOVED]
    src, dst = move_from(m), move_to(m)
    everything = not continuing or (refilled and (src < FOUNDATION) == (dst < FOUNDATION))
    if continuing and not in_suit and (src >= FOUNDATION or dst >= FOUNDATION):
        everything = True  # alternate-colour foundations: every need and home test may change
    if everything:  # one exit, no early return: see `visited`
        for p in range(P):
            scratch[PILES_OFFSET + p] = 0
    else:
        for place in (src, dst):
            if place < FOUNDATION:
                scratch[PILES_OFFSET + place] = 0
            else:
                suit = np.int64(1 << (place - FOUNDATION + ENTRY_SUITS_SHIFT))
                for p in range(P):
                    if scratch[PILES_OFFSET + p] & suit:
                        scratch[PILES_OFFSET + p] = 0


@nb.njit(cache=True)
def pile_features(st: np.ndarray, prm: np.ndarray, known: np.ndarray, feat: np.ndarray, need_of: np.ndarray) -> None:
    """Fill ``feat`` (`FEATURE_ROWS` rows, a column per pile) with what `lookahead` asks of
    each pile (`pile_entry`), the lowest ``known[p]`` cards of pile p being unseen:
    ``F_FULL`` (`pile_urgency`), ``F_BELOW`` (buried urgency), ``F_MISPLACED`` and
    ``F_FREES_HOME`` (1 or 0). ``need_of`` (52 slots) receives the need of every card
    (`fill_needs`). `heuristic` reads the entries itself, only for the piles its moves
    read, and keeps them from one decision to the next.
    """
    fill_needs(st, prm, need_of)
    for p in range(prm[P_PILES]):
        e = pile_entry(st, prm, p, known[p], need_of)
        below = entry_below(e)
        feat[F_FULL, p] = pile_urgency(st, p, below, entry_top_need(e))
        feat[F_BELOW, p] = below
        feat[F_MISPLACED, p] = 1 if e & ENTRY_MISPLACED else 0
        feat[F_FREES_HOME, p] = 1 if e & ENTRY_FREES_HOME else 0


@nb.njit(cache=True, inline="always")
def card_key(c: np.int64, i: np.int64) -> np.uint64:
    """Hash contribution of card c at height i of some pile (piles are interchangeable)."""
    return nb_mix64(np.uint64((c + 2) * 128 + i + 1))


@nb.njit(cache=True, inline="always")
def home_key(c: np.int64) -> np.uint64:
    return nb_mix64(np.uint64(c + 100_000))


@nb.njit(cache=True, inline="always")
def down_key(d: np.int64) -> np.uint64:
    return nb_mix64(np.uint64(d + 200_000))


@nb.njit(cache=True, inline="always")
def position_hash(st: np.ndarray, prm: np.ndarray) -> np.uint64:
    """A 64-bit hash of the position, the same whatever the order of the piles."""
    P = prm[P_PILES]
    h = np.uint64(0)
    for p in range(P):
        base = pile_base(prm, p)
        for i in range(np.int64(st[p])):
            h += card_key(np.int64(st[base + i]), i)
        h += down_key(np.int64(st[down_at(P, p)]))
    for f in range(4):
        for i in range(np.int64(st[fheight_at(P, f)])):
            h += home_key(np.int64(st[found_at(P, f) + i]))
    return h


@nb.njit(cache=True, inline="always")
def placed_key(c: np.int64, p: np.int64, i: np.int64) -> np.uint64:
    """Hash contribution of card c at height i of pile p (`placed_hash`)."""
    return nb_mix64(np.uint64(((c + 2) * 64 + p) * 128 + i + 300_000))


@nb.njit(cache=True, inline="always")
def placed_down_key(p: np.int64, d: np.int64) -> np.uint64:
    return nb_mix64(np.uint64(p * 128 + d + 100_000_000))


@nb.njit(cache=True, inline="always")
def placed_hash(st: np.ndarray, prm: np.ndarray) -> np.uint64:
    """A 64-bit hash of the position that tells its piles apart: unlike `position_hash`, whose sum of
    (card, height) keys is the same when a card moves to another pile at its own height (a move the
    position guard then took for a return to the position it left), two positions of one game hash
    alike only when they are the same (piles keep their places in a game)."""
    P = prm[P_PILES]
    h = np.uint64(0)
    for p in range(P):
        base = pile_base(prm, p)
        for i in range(np.int64(st[p])):
            h += placed_key(np.int64(st[base + i]), p, i)
        h += placed_down_key(p, np.int64(st[down_at(P, p)]))
    for f in range(4):
        for i in range(np.int64(st[fheight_at(P, f)])):
            h += home_key(np.int64(st[found_at(P, f) + i]))
    return h


@nb.njit(cache=True, inline="always")
def placed_moved_hash(h: np.uint64, c: np.int64, src: np.int64, hs: np.int64, d: np.int64, dst: np.int64,
                      hd: np.int64) -> np.uint64:
    """The `placed_hash` after card c leaves pile ``src`` of ``hs`` cards, ``d`` of them face down, for
    pile ``dst`` of ``hd`` cards or (``dst`` >= `FOUNDATION`) a foundation."""
    h -= placed_key(c, src, hs - 1)
    if hs - 1 > 0 and d == hs - 1:
        h += placed_down_key(src, d - 1) - placed_down_key(src, d)
    if dst >= FOUNDATION:
        h += home_key(c)
    else:
        h += placed_key(c, dst, hd)
    return h


@nb.njit(cache=True, inline="always")
def child_hash(st: np.ndarray, prm: np.ndarray, h: np.uint64, m: np.int64) -> np.uint64:
    """The hash after move m from a position with hash h (without playing it)."""
    P = prm[P_PILES]
    src, dst = move_from(m), move_to(m)
    hs, d = np.int64(0), np.int64(0)
    if src >= FOUNDATION:
        f = src - FOUNDATION
        c = np.int64(st[found_at(P, f) + st[fheight_at(P, f)] - 1])
    else:
        hs = np.int64(st[src])
        c = np.int64(st[pile_base(prm, src) + hs - 1])
        d = np.int64(st[down_at(P, src)])
    to_home = dst >= FOUNDATION
    return moved_hash(h, c, src >= FOUNDATION, hs, d, to_home, 0 if to_home else np.int64(st[dst]))


@nb.njit(cache=True, inline="always")
def moved_hash(h: np.uint64, c: np.int64, from_home: bool, hs: np.int64, d: np.int64, to_home: bool,
               hd: np.int64) -> np.uint64:
    """`child_hash` from what it reads: card c leaves a foundation (``from_home``) or a pile of
    ``hs`` cards, ``d`` of them face down, for a foundation (``to_home``) or a pile of ``hd``
    cards. A policy that has these at hand calls it without handing over its arrays."""
    if from_home:
        h -= home_key(c)
    else:
        h -= card_key(c, hs - 1)
        if hs - 1 > 0 and d == hs - 1:
            h += down_key(d - 1) - down_key(d)
    if to_home:
        h += home_key(c)
    else:
        h += card_key(c, hd)
    return h


@nb.njit(cache=True, inline="always")
def visited(scratch: np.ndarray, h: np.uint64) -> bool:
    """Whether hash h was recorded in this game's scratch table.

    Written with one exit, like `remember`: numba then drops its reference to ``scratch``
    in one place, where its pruning can pair it with the one taken (a policy calls these
    once a decision or more)."""
    slot = np.int64(h % np.uint64(VISITED_SLOTS))
    key = np.int64(h | np.uint64(1))
    v = scratch[VISITED_OFFSET + slot]
    tries = 1
    while v != 0 and v != key and tries < VISITED_SLOTS:
        slot = (slot + 1) % VISITED_SLOTS
        v = scratch[VISITED_OFFSET + slot]
        tries += 1
    return v == key


@nb.njit(cache=True, inline="always")
def move_key(here: np.uint64, child: np.uint64) -> np.uint64:
    """Hash of the move from the position hashed ``here`` to the one hashed ``child``: what the cycle
    guard of `heuristic` records in the table of `visited` (moves taken, not positions)."""
    return nb_mix64(here ^ nb_mix64(child + np.uint64(0x9E3779B97F4A7C15)))


@nb.njit(cache=True, inline="always")
def forget(scratch: np.ndarray) -> None:
    """Empty the table of `visited` hashes (for a fresh stretch of play: see `heuristic`'s cycle guard)."""
    for slot in range(VISITED_SLOTS):
        scratch[VISITED_OFFSET + slot] = 0
    scratch[SCRATCH_STORED] = 0


@nb.njit(cache=True, inline="always")
def remember(scratch: np.ndarray, h: np.uint64) -> bool:
    """Record hash h; False when the table holds `VISITED_LIMIT` positions (the game is too long to track)."""
    stored = scratch[SCRATCH_STORED]
    room = stored < VISITED_LIMIT
    if room:
        slot = np.int64(h % np.uint64(VISITED_SLOTS))
        key = np.int64(h | np.uint64(1))
        while scratch[VISITED_OFFSET + slot] != 0 and scratch[VISITED_OFFSET + slot] != key:
            slot = (slot + 1) % VISITED_SLOTS
        if scratch[VISITED_OFFSET + slot] == 0:
            scratch[VISITED_OFFSET + slot] = key
            stored += 1
    scratch[SCRATCH_STORED] = stored  # the last use of scratch on every path (see `visited`)
    return room
