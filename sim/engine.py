"""The compiled core: one game state as a flat int8 array, legal moves, apply/undo,
face-down bookkeeping, dealing, and whole-game loops for compiled policies.

Everything here is numba-compiled and works on plain arrays so that millions of
games run in machine code. `sim.game.Game` is the Python face of the same state.

State layout for P piles of capacity C (``prm[P_SIZE]`` bytes; the offsets are
named once here: `down_at`, `fheight_at`, `home_at`, `found_at` (of the pile count,
which hot loops hold in a local) and `pile_base`):

=============  =========  ===========================================
offset         length     meaning
=============  =========  ===========================================
0              P          pile heights
P              P          face-down count at the bottom of each pile
2P             4          foundation heights
2P+4           1          cards home in all
2P+5           52         foundation piles, 13 slots each
2P+57          P*C        piles, C slots each, bottom first
=============  =========  ===========================================

Bounds. A pile only ever holds a prefix of its starting cards with a run built
down by one rank on top of it (at most 12 cards on a non-empty prefix, 13 on an
empty pile), so C = max(tallest starting pile, 1) + `RUN_ROOM` (12) holds any game
(`pile_capacity`). At most P*(4 + P - 1) + 4*P moves are legal at once (each
exposed card to any of four foundations or P - 1 other piles, plus each
foundation top onto any pile): `max_moves`; a move buffer has `prm[P_MOVEBUF]`
slots, the moves first and `gen_moves`'s scratch after them. A game is at most
`MAX_GAME_LENGTH` moves long (the no-progress guard, and the bound on the moves
of a proven line it does not count).

A move is the integer ``src * PLACES + dst`` (`make_move`; `move_from` and
`move_to` read it back): piles are 0..P-1 and foundation slot f is
``FOUNDATION + f``. With in-suit foundations slot f holds suit f. The card
moved is always the exposed card of ``src``.

Legal moves are generated in a fixed order (pile by pile: its moves home, then
onto piles 0..P-1; then moves back from the foundations when worrying back is
allowed). Compiled and Python strategies index into that order.
"""

from __future__ import annotations

import functools
import time
from typing import NamedTuple

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, KING, nb_rank_of, nb_suit_of
from sim.notation import FOUNDATION
from sim.rng import nb_below, nb_strategy_key, nb_stream_key
from sim.rules import (
    BUILD_ALTERNATE_COLOUR,
    BUILD_ANY_SUIT,
    BUILD_OTHER_SUIT,
    BUILDS,
    EMPTY_FILLS,
    FILL_KINGS,
    FILL_NONE,
    FOUND_SUIT,
    FOUNDATIONS,
    Rules,
)

# Outcome codes, shared by every tier and the store.
LOST, WON, UNKNOWN, ERROR = 0, 1, 2, 3
OUTCOMES = ("lost", "won", "unknown", "error")

# Why a game ended, finer than its outcome (a `termination` per game record and store row).
T_WON, T_NO_MOVES, T_NO_PROGRESS, T_RESIGNED, T_UNDECIDED, T_TIMEOUT, T_ILLEGAL, T_RAISED = range(8)
TERMINATIONS = ("won", "no_moves", "no_progress", "resigned", "undecided", "timeout", "illegal", "raised")
"""won: every card home; no_moves: no legal move left; no_progress: the `NO_PROGRESS_LIMIT`
guard; resigned: the strategy resigned; undecided: the strategy gave up without a verdict
(a search out of budget); timeout: the per-deal time limit ran out; illegal: the strategy
chose a move that is not legal; raised: the strategy raised an exception."""
TERMINATION_OUTCOME = (WON, LOST, LOST, LOST, UNKNOWN, UNKNOWN, ERROR, ERROR)
"""The outcome each termination counts as."""
TERMINATION_OUTCOME_CODES = np.array(TERMINATION_OUTCOME, dtype=np.int64)
"""`TERMINATION_OUTCOME` as an array, for compiled code."""

# Indices into the rule-parameter array.
(P_PILES, P_CAP, P_BUILD, P_FILL, P_FOUND, P_WORRY, P_KTB, P_FDOWN, P_CPC, P_SIZE, P_MOVES,
 P_MOVEBUF) = range(12)
"""P_SIZE: bytes of a state (a whole number of 8-byte words); P_MOVES: most legal moves at once;
P_MOVEBUF: slots of a move buffer."""

EMPTY_BUCKET = KING + 1
"""`gen_moves` sorts piles into buckets by the rank of their top card (0..KING); empty piles go here."""
RANK_BUCKETS = EMPTY_BUCKET + 1
"""Buckets of `gen_moves` (a head slot each in the scratch after the moves)."""

POLICY_RESIGN, POLICY_UNDECIDED, POLICY_TIMEOUT = -1, -2, -3
"""What a compiled policy returns instead of a move's index to resign (termination ``resigned``), to
give up without a verdict (``undecided``: a search ran out of its budget), or to give up because a
wall-clock cap stopped its search first (``timeout``: which deals that happens to depends on the
machine and its load); see `play_game`."""

NO_PROGRESS_LIMIT = 1000
"""A game ends as lost after this many moves with no new card home and no card
turned face up: the loop guard for strategies that shuffle cards forever. Moves
of a proven winning line (`SCRATCH_PROVEN`) do not count: a line that wins is
no wandering, however long it runs between two cards home."""

MAX_PROVEN_LINE = 1 << 21
"""Most moves of a game the no-progress guard leaves uncounted as a proven line's
(`SCRATCH_PROVEN`): a bound on how far a policy's claim can carry a game, above the
longest line the solver can find (`strategies.solver.search.SolverWork`: twice its
deepest search plus the deck)."""

PLACES = 64
"""Place numbers (piles 0..51, foundations ``FOUNDATION`` + 0..3) are below this; a move code is
``src * PLACES + dst``."""
FOUNDATION_SLOTS = 13
"""Slots of each foundation pile in the state (ace to king)."""
RUN_ROOM = KING
"""Most cards a run built on a pile can add (down from a king, by one rank: the module text's bounds)."""
MAX_PILE_CAP = DECK_SIZE + RUN_ROOM
"""The largest pile capacity any layout needs (`pile_capacity` of a 52-card pile)."""
MAX_GAME_LENGTH = MAX_PROVEN_LINE + (2 * DECK_SIZE + 1) * (NO_PROGRESS_LIMIT + 1)
"""No game is longer. Each move that makes progress (`progress_mark` beats its
best) either brings the best's count of cards home to a new height (at most 52
times) or turns a face-down card up (at most 52 times), and at most
`NO_PROGRESS_LIMIT` counted moves pass between two of them; at most
`MAX_PROVEN_LINE` moves are not counted."""


class Offsets(NamedTuple):
    """Where each part of a state with ``piles`` piles starts (the table above), for Python code."""

    down: int
    fheight: int
    home: int
    found: int
    piles: int

    @staticmethod
    def height(p: int) -> int:
        """Index of pile p's card count (the counts open the state)."""
        return p

    def foundation(self, f: int) -> int:
        """Index of the bottom slot of foundation f (`found_at` for Python code)."""
        return self.found + f * FOUNDATION_SLOTS

    def pile(self, p: int, cap: int) -> int:
        """Index of the bottom slot of pile p, piles holding ``cap`` cards (`pile_base` for Python code)."""
        return self.piles + p * cap


@functools.lru_cache(maxsize=64)
def offsets(piles: int) -> Offsets:
    """The state layout for ``piles`` piles (compiled code uses `down_at` ... `pile_base`)."""
    found = 2 * piles + 5
    return Offsets(piles, 2 * piles, 2 * piles + 4, found, found + 4 * FOUNDATION_SLOTS)


def pile_capacity(tallest: int) -> int:
    """Slots a pile needs so that a game from piles of at most ``tallest`` cards never overflows it."""
    return max(tallest, 1) + RUN_ROOM


def max_moves(piles: int) -> int:
    """The most moves legal at once with ``piles`` piles (see the module text)."""
    return piles * (4 + piles - 1) + 4 * piles


def rule_params(rules: Rules, tallest: int = 0) -> np.ndarray:
    """The rules as the int64 parameter array the compiled functions read (shared; never mutate it).

    Piles get room for starting piles of ``max(tallest, rules.cards_per_column)``
    cards: dealt games pass nothing, a typed layout its tallest pile (one no
    taller than a deal's gets the very array of dealt games).
    """
    return _rule_params(rules, max(tallest, rules.cards_per_column))


def state_size(piles: int, cap: int) -> int:
    """Bytes of a state with ``piles`` piles of room ``cap``: whole 8-byte words, since `play_game` copies by word."""
    return -(-(offsets(piles).piles + piles * cap) // 8) * 8


@functools.lru_cache(maxsize=64)
def _rule_params(rules: Rules, tallest: int) -> np.ndarray:
    piles = rules.columns
    cap = pile_capacity(tallest)
    moves = max_moves(piles)
    return np.array(
        [
            piles,
            cap,
            BUILDS.index(rules.build),
            EMPTY_FILLS.index(rules.empty_fill),
            FOUNDATIONS.index(rules.foundation),
            int(rules.worrying_back),
            int(rules.kings_to_bottom),
            rules.face_down,
            rules.cards_per_column,
            state_size(piles, cap),
            moves,
            moves + RANK_BUCKETS + 2 * piles,  # gen_moves's scratch: the bucket heads, then P links and P tops
        ],
        dtype=np.int64,
    )


def new_state(prm: np.ndarray) -> np.ndarray:
    """An all-empty state array for the rules ``prm``."""
    return np.zeros(prm[P_SIZE], dtype=np.int8)


def new_moves(prm: np.ndarray) -> np.ndarray:
    """A move buffer for `gen_moves` under the rules ``prm``."""
    return np.empty(prm[P_MOVEBUF], dtype=np.int64)


@nb.njit(cache=True, inline="always")
def down_at(P: np.int64, p: np.int64) -> np.int64:
    """Index of pile p's face-down count (P piles)."""
    return P + p


@nb.njit(cache=True, inline="always")
def fheight_at(P: np.int64, f: np.int64) -> np.int64:
    """Index of foundation f's height (P piles)."""
    return 2 * P + f


@nb.njit(cache=True, inline="always")
def home_at(P: np.int64) -> np.int64:
    """Index of the count of cards home (P piles)."""
    return 2 * P + 4


@nb.njit(cache=True, inline="always")
def found_at(P: np.int64, f: np.int64) -> np.int64:
    """Index of the bottom slot of foundation f (P piles)."""
    return 2 * P + 5 + f * FOUNDATION_SLOTS


@nb.njit(cache=True, inline="always")
def pile_base(prm: np.ndarray, p: np.int64) -> np.int64:
    """Index of the bottom slot of pile p."""
    return found_at(prm[P_PILES], 4) + p * prm[P_CAP]


@nb.njit(cache=True, inline="always")
def make_move(src: np.int64, dst: np.int64) -> np.int64:
    """The code of the move from place ``src`` to place ``dst`` (the same as `sim.notation.Move.code`)."""
    return src * PLACES + dst


@nb.njit(cache=True, inline="always")
def move_from(m: np.int64) -> np.int64:
    """The source place of move code m."""
    return m // PLACES


@nb.njit(cache=True, inline="always")
def move_to(m: np.int64) -> np.int64:
    """The destination place of move code m."""
    return m % PLACES


@nb.njit(cache=True, inline="always")
def is_king(c: np.int64) -> bool:
    """Whether card c is a king (the card that may enter an empty pile, or goes to the bottom at the deal)."""
    return nb_rank_of(c) == KING


@nb.njit(cache=True)
def clock() -> float:
    """Seconds on the performance counter, callable from compiled code (time budgets and limits)."""
    with nb.objmode(t="float64"):
        t = time.perf_counter()
    return t


@nb.njit(cache=True, inline="always")
def top_card(st: np.ndarray, prm: np.ndarray, p: np.int64) -> np.int64:
    """The exposed card of pile p, or -1 when it is empty."""
    h = np.int64(st[p])
    if h == 0:
        return -1
    return np.int64(st[pile_base(prm, p) + h - 1])


@nb.njit(cache=True, inline="always")
def foundation_top(st: np.ndarray, prm: np.ndarray, f: np.int64) -> np.int64:
    """The top card of foundation slot f, or -1 when it is empty."""
    P = prm[P_PILES]
    h = np.int64(st[fheight_at(P, f)])
    if h == 0:
        return -1
    return np.int64(st[found_at(P, f) + h - 1])


@nb.njit(cache=True, inline="always")
def cards_home(st: np.ndarray, prm: np.ndarray) -> np.int64:
    return np.int64(st[home_at(prm[P_PILES])])


@nb.njit(cache=True, inline="always")
def _red(c: np.int64) -> bool:
    s = nb_suit_of(c)
    return s == 1 or s == 2


@nb.njit(cache=True, inline="always")
def builds_on(c: np.int64, t: np.int64, build: np.int64) -> bool:
    """Whether card c may be placed on tableau card t under build rule ``build``."""
    if nb_rank_of(c) + 1 != nb_rank_of(t):
        return False
    if build == BUILD_ANY_SUIT:
        return True
    if build == BUILD_OTHER_SUIT:
        return nb_suit_of(c) != nb_suit_of(t)
    if build == BUILD_ALTERNATE_COLOUR:
        return _red(c) != _red(t)
    return nb_suit_of(c) == nb_suit_of(t)


@nb.njit(cache=True, inline="always")
def may_enter_empty(c: np.int64, fill: np.int64) -> bool:
    if fill == FILL_NONE:
        return False
    if fill == FILL_KINGS:
        return is_king(c)
    return True


@nb.njit(cache=True, inline="always")
def home_slot(st: np.ndarray, prm: np.ndarray, c: np.int64, start: np.int64) -> np.int64:
    """The first foundation slot >= start that accepts card c, or -1.

    With in-suit foundations only the card's own suit slot can accept it. With
    alternate-colour foundations an ace goes to the first empty slot only (the
    empty slots are interchangeable), any other card onto a slot whose top is
    one rank lower and of the other colour.
    """
    P = prm[P_PILES]
    r = nb_rank_of(c)
    if prm[P_FOUND] == FOUND_SUIT:
        s = nb_suit_of(c)
        if s >= start and st[fheight_at(P, s)] == r:
            return s
        return -1
    for f in range(start, 4):
        h = np.int64(st[fheight_at(P, f)])
        if h == 0:
            if r == 0:
                for g in range(f):
                    if st[fheight_at(P, g)] == 0:
                        return -1
                return f
        else:
            t = np.int64(st[found_at(P, f) + h - 1])
            if nb_rank_of(t) + 1 == r and _red(t) != _red(c):
                return f
    return -1


@nb.njit(cache=True)
def gen_moves(st: np.ndarray, prm: np.ndarray, out: np.ndarray) -> np.int64:
    """Write every legal move into ``out`` in the engine's fixed order; return how many.

    ``out`` needs ``prm[P_MOVEBUF]`` slots (`new_moves`): the moves take at most
    ``prm[P_MOVES]``, and the slots after those serve as scratch for buckets of
    piles by the rank of their exposed card, so that each card only looks at the
    piles it could go onto.
    """
    P = prm[P_PILES]
    build = prm[P_BUILD]
    fill = prm[P_FILL]
    head = prm[P_MOVES]  # head[b]: first pile in bucket b (the rank of its top card; EMPTY_BUCKET: empty)
    nxt = head + RANK_BUCKETS  # nxt[p]: next pile in the same bucket, ascending; -1 ends
    tops = nxt + P  # tops[p]: exposed card or -1
    for r in range(RANK_BUCKETS):
        out[head + r] = -1
    for p in range(P - 1, -1, -1):
        t = top_card(st, prm, p)
        out[tops + p] = t
        b = EMPTY_BUCKET if t < 0 else nb_rank_of(t)
        out[nxt + p] = out[head + b]
        out[head + b] = p
    n = 0
    for src in range(P):
        c = out[tops + src]
        if c < 0:
            continue
        f = home_slot(st, prm, c, 0)
        while f >= 0:
            out[n] = make_move(src, FOUNDATION + f)
            n += 1
            f = home_slot(st, prm, c, f + 1)
        n = _tableau_targets(out, n, src, c, src, build, fill, head, nxt, tops)
    if prm[P_WORRY] != 0:
        for f in range(4):
            c = foundation_top(st, prm, f)
            if c >= 0:
                n = _tableau_targets(out, n, FOUNDATION + f, c, -1, build, fill, head, nxt, tops)
    return n


@nb.njit(cache=True, inline="always")
def _tableau_targets(out, n, place, c, src, build, fill, head, nxt, tops):  # noqa: ANN001, ANN202 (numba)
    """Append the moves of card c from ``place`` onto piles (ascending): bases of rank c+1 merged with
    empty piles (``src``: the pile c lies on, -1 for a foundation)."""
    a = -1 if is_king(c) else out[head + nb_rank_of(c) + 1]
    e = out[head + EMPTY_BUCKET] if may_enter_empty(c, fill) else -1
    while a >= 0 or e >= 0:
        if e < 0 or (a >= 0 and a < e):
            dst = a
            a = out[nxt + a]
            if dst == src or not builds_on(c, out[tops + dst], build):
                continue
        else:
            dst = e
            e = out[nxt + e]
            if dst == src:
                continue
        out[n] = make_move(place, dst)
        n += 1
    return n


@nb.njit(cache=True)
def gen_move_triples(st: np.ndarray, prm: np.ndarray, buf: np.ndarray, triples: np.ndarray) -> np.int64:
    """`gen_moves`, also writing (card, src, dst) of each move into ``triples`` (n x 3)."""
    n = gen_moves(st, prm, buf)
    for i in range(n):
        m = buf[i]
        triples[i, 0] = moved_card(st, prm, m)
        triples[i, 1] = move_from(m)
        triples[i, 2] = move_to(m)
    return n


@nb.njit(cache=True)
def moved_card(st: np.ndarray, prm: np.ndarray, m: np.int64) -> np.int64:
    """The card that move m would move (the exposed card of its source)."""
    src = move_from(m)
    if src >= FOUNDATION:
        return foundation_top(st, prm, src - FOUNDATION)
    return top_card(st, prm, src)


@nb.njit(cache=True, inline="always")
def _pop(st: np.ndarray, prm: np.ndarray, place: np.int64) -> np.int64:
    """Take the top card off a pile or foundation (face-down counts untouched)."""
    P = prm[P_PILES]
    if place >= FOUNDATION:
        f = place - FOUNDATION
        h = np.int64(st[fheight_at(P, f)]) - 1
        st[fheight_at(P, f)] = h
        st[home_at(P)] -= 1
        return np.int64(st[found_at(P, f) + h])
    h = np.int64(st[place]) - 1
    st[place] = h
    return np.int64(st[pile_base(prm, place) + h])


@nb.njit(cache=True, inline="always")
def _push(st: np.ndarray, prm: np.ndarray, place: np.int64, c: np.int64) -> None:
    """Put card c on top of a pile or foundation."""
    P = prm[P_PILES]
    if place >= FOUNDATION:
        f = place - FOUNDATION
        h = np.int64(st[fheight_at(P, f)])
        st[found_at(P, f) + h] = c
        st[fheight_at(P, f)] = h + 1
        st[home_at(P)] += 1
    else:
        h = np.int64(st[place])
        st[pile_base(prm, place) + h] = c
        st[place] = h + 1


@nb.njit(cache=True)
def apply_move(st: np.ndarray, prm: np.ndarray, m: np.int64) -> np.int64:
    """Play legal move m; return 1 if it turned a face-down card face up, else 0."""
    P = prm[P_PILES]
    src = move_from(m)
    c = _pop(st, prm, src)
    revealed = 0
    if src < FOUNDATION:
        h = np.int64(st[src])
        if h > 0 and st[down_at(P, src)] == h:
            st[down_at(P, src)] = h - 1
            revealed = 1
    _push(st, prm, move_to(m), c)
    return revealed


@nb.njit(cache=True)
def play_if_legal(st: np.ndarray, prm: np.ndarray, buf: np.ndarray, m: np.int64) -> np.int64:
    """Play move m only if it is one of `gen_moves`'s in st (``buf``: a `new_moves` buffer); return
    ``2 * card + revealed`` (the card moved, and what `apply_move` returns), or -1 with st untouched
    when m is not legal: `apply_move` trusts its move, and one that is not legal would pop an empty
    pile or push past a pile's room, writing outside the state."""
    n = gen_moves(st, prm, buf)
    for i in range(n):
        if buf[i] == m:
            c = moved_card(st, prm, m)
            return 2 * c + apply_move(st, prm, m)
    return -1


@nb.njit(cache=True)
def undo_move(st: np.ndarray, prm: np.ndarray, m: np.int64, revealed: np.int64) -> None:
    """Take back move m, given what `apply_move` returned for it."""
    src = move_from(m)
    c = _pop(st, prm, move_to(m))
    if revealed != 0:
        st[down_at(prm[P_PILES], src)] = st[src]
    _push(st, prm, src, c)


@nb.njit(cache=True, inline="always")
def put_pile(cards: np.ndarray, start: np.int64, n: np.int64, out: np.ndarray, base: np.int64, kings_first: bool) -> None:
    """Write ``cards[start:start + n]`` into ``out[base:base + n]``, bottom up; with ``kings_first``
    the kings go under the other cards, each group in its given order (kings to the bottom at the deal)."""
    if not kings_first:
        for i in range(n):
            out[base + i] = cards[start + i]
        return
    j = base
    for i in range(n):
        if is_king(cards[start + i]):
            out[j] = cards[start + i]
            j += 1
    for i in range(n):
        if not is_king(cards[start + i]):
            out[j] = cards[start + i]
            j += 1


@nb.njit(cache=True)
def deal_state(st: np.ndarray, prm: np.ndarray, deck: np.ndarray, home: np.ndarray) -> None:
    """Fill st with the deal of the shuffled ``deck`` (round-robin, kings to the
    bottom when the rules say so, face-down counts) and the cards ``home``, put home
    in their order. The one dealer: `play_deals` and `sim.deals.arrange` both deal with it."""
    P = prm[P_PILES]
    st[:] = 0
    for k in range(deck.shape[0]):
        p = k % P
        h = np.int64(st[p])
        st[pile_base(prm, p) + h] = deck[k]
        st[p] = h + 1
    for p in range(P):
        h = np.int64(st[p])
        base = pile_base(prm, p)
        if prm[P_KTB] != 0:
            put_pile(st[base : base + h].copy(), 0, h, st, base, True)
        st[down_at(P, p)] = min(prm[P_FDOWN], max(h - 1, 0))
    for i in range(home.shape[0]):
        c = home[i]
        _push(st, prm, FOUNDATION + (nb_suit_of(c) if prm[P_FOUND] == FOUND_SUIT else home_slot(st, prm, c, 0)), c)


@nb.njit(cache=True)
def shuffle_deck(seed: np.int64, number: np.int64, deck: np.ndarray) -> None:
    """Shuffle ``deck`` in place with the stream keyed by (seed, deal number):
    Fisher-Yates from the top (see `sim.deals`)."""
    key = nb_stream_key(seed, number)
    counter = np.int64(0)  # not the constant 0, which numba would compile `nb_below` for once more
    for i in range(deck.shape[0] - 1, 0, -1):
        j, counter = nb_below(key, counter, i + 1)
        deck[i], deck[j] = deck[j], deck[i]


@nb.njit(cache=True)
def progress_mark(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """Cards home plus face-down cards turned up: grows when a game makes progress."""
    P = prm[P_PILES]
    down = 0
    for p in range(P):
        down += st[down_at(P, p)]
    return cards_home(st, prm) * 64 - down


SCRATCH_NODES, SCRATCH_MICROS, SCRATCH_PROVEN, SCRATCH_OWN = 0, 1, 2, 3
"""Slots of a policy's scratch array that the batch loop reports per deal: search
nodes and microseconds spent (policies that search fill them; others leave 0).
``SCRATCH_PROVEN``: zeroed by `play_game` before each call of the policy, which
sets it (to 1) when the move it returns is one of a winning line it has proven
from a fully known position; the no-progress guard does not count such moves
(at most `MAX_PROVEN_LINE` a game, so a false claim cannot make a game endless,
and only the engine's own count of cards home makes a game won).
The policy's own slots start at ``SCRATCH_OWN``."""


def policy_buffers(prm: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What `play_game` hands a policy instead of its own arrays: a state, a rule-parameter
    array and a move buffer, refreshed from the engine's before every call."""
    return new_state(prm), prm.copy(), new_moves(prm)


@nb.njit
def play_game(st, prm, policy, pparams, rng, scratch, moves, seen, record, timeout):  # noqa: ANN001, ANN201 (numba)
    """Play one game from st with a compiled policy; return (termination, moves played).

    ``policy(st, prm, moves, n, pparams, rng, scratch) -> index`` picks one of
    the n legal moves in ``moves[:n]``. It returns `POLICY_RESIGN` (-1) to resign (termination
    ``resigned``), `POLICY_UNDECIDED` (-2) to give up undecided (``undecided``: a search ran out of
    budget), `POLICY_TIMEOUT` (-3) when a wall-clock cap stopped its search (``timeout``); any other
    index outside 0..n-1 ends the game as ``illegal``. A move the policy marks in
    ``scratch[SCRATCH_PROVEN]`` as one of a proven winning line is not counted by the no-progress
    guard (at most `MAX_PROVEN_LINE` of them).
    The policy is called on copies (``seen``, from `policy_buffers`: state,
    rule parameters and moves, refreshed before each call), and the engine
    plays the chosen move from its own arrays, so nothing a policy writes can
    change the game or its result. ``scratch`` is the policy's own int64
    memory for this game (zeroed before each deal). The moves played are
    written to ``record`` while it has room (`MAX_GAME_LENGTH` slots hold any
    game). With ``timeout`` > 0 the game ends as ``timeout`` once that many
    seconds have passed, checked between moves: a policy that never returns
    from one call cannot be stopped from inside the process (the runner kills
    such workers). Not cached here: numba specialises it per policy, and
    `strategies.loops` compiles a cached copy per policy from this source.
    """
    pst, pprm, pmoves = seen
    words, pwords = st.view(np.int64), pst.view(np.int64)
    deadline = clock() + timeout if timeout > 0 else 0.0
    n_played = 0
    best = progress_mark(st, prm)
    since = 0
    proven = 0  # moves played as a proven line's, which the guard does not count
    while True:
        if cards_home(st, prm) == DECK_SIZE:
            return T_WON, n_played
        n = gen_moves(st, prm, moves)
        if n == 0:
            return T_NO_MOVES, n_played
        if since >= NO_PROGRESS_LIMIT:
            return T_NO_PROGRESS, n_played
        if timeout > 0 and clock() > deadline:
            return T_TIMEOUT, n_played
        for k in range(words.shape[0]):  # explicit loops: slice assignment checks for overlap, a copy per move
            pwords[k] = words[k]
        for k in range(prm.shape[0]):
            pprm[k] = prm[k]
        for k in range(n):
            pmoves[k] = moves[k]
        scratch[SCRATCH_PROVEN] = 0
        i = policy(pst, pprm, pmoves, n, pparams, rng, scratch)
        if i == POLICY_RESIGN:
            return T_RESIGNED, n_played
        if i == POLICY_UNDECIDED:
            return T_UNDECIDED, n_played
        if i == POLICY_TIMEOUT:
            return T_TIMEOUT, n_played
        if i < 0 or i >= n:
            return T_ILLEGAL, n_played
        m = moves[i]
        apply_move(st, prm, m)
        if n_played < record.shape[0]:
            record[n_played] = m
        n_played += 1
        mark = progress_mark(st, prm)
        if mark > best:
            best = mark
            since = 0
        elif scratch[SCRATCH_PROVEN] != 0 and proven < MAX_PROVEN_LINE:
            proven += 1
        else:
            since += 1


@nb.njit
def play_deals(prm, seed, numbers, preset, base_deck, home, policy, pparams, scratch_size, strategy_seed,  # noqa: ANN001, ANN201
               timeout, out_outcome, out_term, out_home, out_moves, out_nodes, out_micros, win_moves, win_offsets):
    """Deal and play every deal in ``numbers`` with a compiled policy.

    Deal i is dealt from (seed, numbers[i]) by the default source, or, when
    ``preset`` has rows, taken from ``preset[i]`` (a full state array: other
    sources). Writes per deal the outcome, the termination (an index into
    `TERMINATIONS`), cards home, moves played, and the policy's reported nodes
    and microseconds; ``timeout`` > 0 limits each deal's seconds (see
    `play_game`). The move lists of won games are packed into ``win_moves``
    (int16) with ``win_offsets[i]`` / ``win_offsets[i+1]`` bounding deal i's
    list (empty for other deals); returns the index of the first deal whose
    win did not fit, or len(numbers) when all did, so a caller can grow the
    buffer (to at least ``win_offsets[i] + out_moves[i]``) and continue from there.
    Not cached here, like `play_game` (see `strategies.loops`).
    """
    st = np.zeros(prm[P_SIZE], dtype=np.int8)
    moves = np.empty(prm[P_MOVEBUF], dtype=np.int64)
    seen = (np.zeros(prm[P_SIZE], dtype=np.int8), prm.copy(), np.empty(prm[P_MOVEBUF], dtype=np.int64))
    record = np.empty(MAX_GAME_LENGTH, dtype=np.int64)
    deck = np.empty(base_deck.shape[0], dtype=np.int64)
    rng = np.zeros(2, dtype=np.uint64)
    scratch = np.zeros(max(scratch_size, SCRATCH_OWN), dtype=np.int64)
    used = win_offsets[0]
    for i in range(numbers.shape[0]):
        if preset.shape[0] > 0:
            st[:] = preset[i]
        else:
            deck[:] = base_deck
            shuffle_deck(seed, numbers[i], deck)
            deal_state(st, prm, deck, home)
        rng[0] = nb_strategy_key(strategy_seed, numbers[i])
        rng[1] = 0
        scratch[:] = 0
        term, n_played = play_game(st, prm, policy, pparams, rng, scratch, moves, seen, record, timeout)
        outcome = TERMINATION_OUTCOME_CODES[term]
        out_outcome[i] = outcome
        out_term[i] = term
        out_home[i] = cards_home(st, prm)
        out_moves[i] = n_played
        out_nodes[i] = scratch[SCRATCH_NODES]
        out_micros[i] = scratch[SCRATCH_MICROS]
        if outcome == WON:
            if used + n_played > win_moves.shape[0]:
                return i
            for k in range(n_played):
                win_moves[used + k] = record[k]
            used += n_played
        win_offsets[i + 1] = used
    return numbers.shape[0]
