"""Components of reversible moves: the layered prover's unit when it stores one key for many positions.

Definitions (all under the variant's building rule, `sim.engine.builds_on`):

- a tableau card is a *run card* when it lies on a card it could legally be
  built on (any-suit: one rank higher; other-suit: one rank higher of another
  suit; and so on);
- the *configuration* of a position is its foundations plus every pile with
  its top run cards taken off (its *base*);
- an *inner move* (`is_inner`) is a move of an exposed run card c (lying on
  b) onto the exposed card t of another, non-empty pile;
- a *component* is a class of positions connected by inner moves.

No safe move home follows an inner move, so an inner move from a position in
the safe-moves normal form (`strategies.solver.safe`, where the prover works)
leads to one in it: the foundations do not change and the only card newly
exposed is b; b is never safe while c, which builds on b, is on the tableau
(b safe needs every card that builds on it and ranks one lower home, and with
a same-suit rule c is the card below b in its suit, so b cannot go home at
all). `tests/test_components.py` checks it on every inner move it replays.

Why members of a component have the same value (won or lost). An inner move
from X to Y is reversible inside the prover's graph: in Y, c is exposed on t
and b is exposed again (c left it), c still builds on b (the rule is a fixed
relation between two cards), b's pile is not empty (b is in it), and c's pile
holds at least c and t, so the move c back onto b is legal, is not a move
into an empty pile (the only target the prover's first-empty-pile rule
filters) and is not a lone card's move (the lone-card filter). It is inner
again: c lies on t, on which it builds, so it is a run card. So every inner
move has an inner move back, and positions of one component reach each
other: if one is winnable, all are; if one is lost (a dead one, say:
`strategies.solver.dead` never fires on a winnable position), all are. Inner
moves keep the configuration: c was in its pile's top run and is again in the
other's (t is exposed, so either t is a run card and c extends the run, or t
ends the base and c begins a run), and b's pile loses only a run card. They
also keep the foundations, and with the configuration the cards in bases, so
a component lies in one layer (and stage) of the layered prover.

Where it holds. The argument uses only that building is a fixed relation
between two cards, that only exposed cards move, one at a time, and that
moves are the prover's (in-suit foundations, no worrying back:
`strategies.solver.layers.layered_rules`; the normal form there plays no card
back from home). Kings never lie on a card they build on (nothing ranks above
a king), so a king is never a run card; moves into empty piles (any
`empty_fill`: the run card becomes a base card) and moves of base cards change
the configuration and are never inner; every move that is not inner is an
*exit*. Variants the prover refuses (worrying back, alternate-colour
foundations) are excluded here too. Face-down cards do not matter: the prover
sees every card.

How the prover uses it (`strategies.solver.layers`): a position that arrives
is stored in its layer under its component's *canonical key*, the least exact
key (`strategies.solver.codec`) of its members, found by a breadth-first
search over inner moves (`component`) capped at ``cap`` members. Expanding a
stored component enumerates it again and expands the exits of every member;
a dead member makes the whole component lost (none of its exits is expanded).
A component over the cap is not stored whole: the arriving position is
stored on its own, flagged `SINGLE`, and expanded with every move, inner ones
included, as without components; so is every later arrival in a
configuration one of whose components passed the cap (a set of hashed
configurations, `ComponentWork`), which saves enumerating ``cap`` members
again and again in configurations where the run cards can be arranged in
astronomically many ways. A bounded cache from member keys to canonical keys
saves enumerating a component again on each arrival.

Why the prover stays sound (the argument of `strategies.solver.layers`,
adapted). Call a position *covered* when it is stored single or is a member
of a component stored whole; every stored key is expanded before the proof
ends. Suppose the root is winnable and the prover ends without meeting a won
position. Among the covered winnable positions (the root is covered, whole or
single) take x with the shortest winning line d(x). The prover's move filters
keep the first move of some shortest line, to a child y with d(y) < d(x). If
x is in a component stored whole and the move is inner, y is in the same
component, covered, against the choice of x. Otherwise the move is expanded
(an exit of a member of a whole component, or any move of a single), and y is
covered once it arrives (same layer: at once; later layer: through the
seeds), again against the choice of x. So the root is lost when the prover
says so. The argument holds whichever positions are stored single, so the
cap, the hashed set of big configurations and the cache (whose overwritten
entries cost only a new enumeration) decide only how much work is done, never
a verdict; the keys themselves are exact: no hashing decides whether a
position was seen. A component stored whole is never over the cap when it is
expanded again (the enumeration is the same), which the prover checks.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    P_BUILD,
    P_MOVEBUF,
    P_PILES,
    P_SIZE,
    builds_on,
    fheight_at,
    gen_moves,
    move_from,
    move_to,
    pile_base,
)
from sim.rng import nb_mix64
from strategies.solver.bases import base_length
from strategies.solver.codec import CARDS_PER_WORD, KEY_WORDS, code_on, decode, set_code

SINGLE_WORD = KEY_WORDS - 1
SINGLE = np.uint64(1) << np.uint64(63)
"""The flag, in the last word of a key the layer stores, of a position stored on its own (expanded with
every move) rather than as its component's canonical key; the codes of the cards use the word's low
bits only."""
assert 3 * (DECK_SIZE - CARDS_PER_WORD * SINGLE_WORD) < 63

# `ComponentWork.arrays` slots: the component being expanded (members, their index and stamps, the
# generation counter, a decoded position and its cards' neighbours), the cache, the counters, the same
# six for the component of an arriving position (sharing the generation counter), then work buffers
(CW_MEMBERS, CW_TABLE, CW_STAMP, CW_GEN, CW_ST, CW_ABOVE, CW_CACHE_KEYS, CW_CACHE_VALUES, CW_STATS,
 CW_AMEMBERS, CW_ATABLE, CW_ASTAMP, CW_AGEN, CW_AST, CW_AABOVE, CW_TMP, CW_CACHE_BIG, CW_BIG_CONFIGS,
 CW_SIZE) = range(19)

# `ComponentWork.stats` slots
(CS_MEMBERS, CS_COMPONENTS, CS_ENUMERATED, CS_VISITED, CS_CACHE_HITS, CS_OVERSIZE, CS_BIG_CONFIG, CS_DEAD,
 CS_RESUME, CS_SIZE) = range(10)
"""CS_MEMBERS: positions expanded (members of expanded components); CS_COMPONENTS: stored keys expanded;
CS_ENUMERATED: arrivals whose component was enumerated (cache misses); CS_VISITED: positions those
enumerations visited; CS_CACHE_HITS: arrivals answered by the cache; CS_OVERSIZE: enumerations that
passed the cap; CS_BIG_CONFIG: arrivals left single without an enumeration (a component of their
configuration passed the cap); CS_DEAD: components cut because a member is dead; CS_RESUME: the member the expansion
of the queue's head resumes at (internal: the expansion stopped there for room)."""


@nb.njit(cache=True, inline="always")
def is_inner(st: np.ndarray, prm: np.ndarray, m: np.int64) -> bool:
    """Whether legal move m of ``st`` is inner: an exposed run card onto another non-empty pile."""
    src = move_from(m)
    dst = move_to(m)
    if src >= FOUNDATION or dst >= FOUNDATION or st[dst] == 0:
        return False
    h = np.int64(st[src])
    if h < 2:
        return False
    base = pile_base(prm, src)
    return builds_on(np.int64(st[base + h - 1]), np.int64(st[base + h - 2]), prm[P_BUILD])


@nb.njit(cache=True, inline="always")
def inner_child(key: np.ndarray, row: np.int64, st: np.ndarray, prm: np.ndarray, rb: np.ndarray, m: np.int64,
                out: np.ndarray, orow: np.int64) -> bool:
    """Write into ``out[orow]`` the key of the child of inner move m of ``st`` (whose key is ``key[row]``):
    only the moved card's code changes. False when no code fits (a bug)."""
    src = move_from(m)
    dst = move_to(m)
    c = np.int64(st[pile_base(prm, src) + np.int64(st[src]) - 1])
    code = code_on(rb, c, np.int64(st[pile_base(prm, dst) + np.int64(st[dst]) - 1]))
    if code < 0:
        return False
    for w in range(KEY_WORDS):
        out[orow, w] = key[row, w]
    set_code(out, orow, c, code)
    return True


@nb.njit(cache=True, inline="always")
def key_hash(keys: np.ndarray, row: np.int64) -> np.uint64:
    """A 64-bit hash of ``keys[row]`` (slots only: every lookup compares the whole key)."""
    return nb_mix64(keys[row, 0] ^ nb_mix64(keys[row, 1] ^ nb_mix64(keys[row, 2])))


@nb.njit(cache=True, inline="always")
def _same(a: np.ndarray, i: np.int64, b: np.ndarray, j: np.int64) -> bool:
    return a[i, 0] == b[j, 0] and a[i, 1] == b[j, 1] and a[i, 2] == b[j, 2]


@nb.njit(cache=True, inline="always")
def _less(a: np.ndarray, i: np.int64, b: np.ndarray, j: np.int64) -> bool:
    for w in range(KEY_WORDS):
        if a[i, w] != b[j, w]:
            return a[i, w] < b[j, w]
    return False


@nb.njit(cache=True)
def component(key: np.ndarray, row: np.int64, prm: np.ndarray, rb: np.ndarray, members: np.ndarray,
              table: np.ndarray, stamp: np.ndarray, gen: np.ndarray, st: np.ndarray, above: np.ndarray,
              tmp: np.ndarray) -> np.int64:
    """The members of the component of the position ``key[row]``, breadth first from it, in
    ``members[:n]``; returns n, or -1 when the component has more than ``len(members) - 1`` members
    (``members`` then holds the first ones visited, all in the component).

    ``table`` and ``stamp`` (a power of two at least twice ``len(members)``) index the members; an
    entry counts only when its stamp is ``gen[0]``, which this call advances, so the table is never
    cleared. ``st``, ``above`` and ``tmp`` are scratch (a state, 52 slots, a move buffer)."""
    cap = members.shape[0] - 1
    gen[0] += 1
    g = gen[0]
    mask = np.uint64(table.shape[0] - 1)
    for w in range(KEY_WORDS):
        members[0, w] = key[row, w]
    slot = key_hash(members, 0) & mask
    table[slot] = 0
    stamp[slot] = g
    n = 1
    head = 0
    while head < n:
        decode(members, head, prm, rb, st, above)
        k = gen_moves(st, prm, tmp)
        for i in range(k):
            m = tmp[i]
            if not is_inner(st, prm, m):
                continue
            if n > cap:
                return -1
            inner_child(members, head, st, prm, rb, m, members, n)
            slot = key_hash(members, n) & mask
            new = True
            while stamp[slot] == g:
                if _same(members, table[slot], members, n):
                    new = False
                    break
                slot = (slot + np.uint64(1)) & mask
            if new:
                table[slot] = n
                stamp[slot] = g
                n += 1
        head += 1
    return n


@nb.njit(cache=True)
def least_member(members: np.ndarray, n: np.int64) -> np.int64:
    """The row of the least key (word by word) among ``members[:n]``: the canonical member."""
    best = 0
    for i in range(1, n):
        if _less(members, i, members, best):
            best = i
    return best


@nb.njit(cache=True)
def cache_get(ck: np.ndarray, cv: np.ndarray, big: np.ndarray, key: np.ndarray, row: np.int64, out: np.ndarray,
              orow: np.int64) -> np.int64:
    """Copy the cached canonical key of ``key[row]`` into ``out[orow]``; returns 0 when it is not cached,
    1 when it is, 2 when it is cached as a member of a component over the cap (its own canonical key)."""
    slot = np.int64(key_hash(key, row) & np.uint64(ck.shape[0] - 1))
    if not _same(ck, slot, key, row):
        return 0
    for w in range(KEY_WORDS):
        out[orow, w] = cv[slot, w]
    return 1 + np.int64(big[slot])


@nb.njit(cache=True, inline="always")
def cache_put(ck: np.ndarray, cv: np.ndarray, big: np.ndarray, key: np.ndarray, row: np.int64, canon: np.ndarray,
              crow: np.int64, oversize: bool) -> None:
    """Remember that ``key[row]``'s canonical key is ``canon[crow]`` and whether its component is over the
    cap (direct-mapped: overwrites)."""
    slot = np.int64(key_hash(key, row) & np.uint64(ck.shape[0] - 1))
    for w in range(KEY_WORDS):
        ck[slot, w] = key[row, w]
        cv[slot, w] = canon[crow, w]
    big[slot] = oversize


@nb.njit(cache=True)
def config_hash(st: np.ndarray, prm: np.ndarray) -> np.uint64:
    """A 64-bit hash of the configuration of ``st`` (foundations, and each pile's base: the pile without
    its top run), the same for every order of the piles."""
    P = prm[P_PILES]
    h = np.uint64(0)
    for s in range(4):
        h = h * np.uint64(14) + np.uint64(st[fheight_at(P, s)])
    total = nb_mix64(h)
    for p in range(P):
        n = np.int64(st[p])
        if n == 0:
            continue
        base = pile_base(prm, p)
        lin = np.uint64(0x9E3779B97F4A7C15)
        for i in range(base_length(st, prm, p, n)):
            lin = nb_mix64(lin ^ np.uint64(st[base + i] + 1))
        total += nb_mix64(lin)
    return total | np.uint64(1)


@nb.njit(cache=True)
def canonical(key: np.ndarray, row: np.int64, prm: np.ndarray, rb: np.ndarray, cw: tuple,
              out: np.ndarray, orow: np.int64) -> None:
    """Write into ``out[orow]`` the key under which the layer stores the position ``key[row]`` (its
    `SINGLE` bit clear on entry): the least key of its component, or its own key with the `SINGLE` bit
    when it stays a single position (its component passed the cap, or another component of its
    configuration did: `ComponentWork`'s big configurations). ``cw`` is `ComponentWork.arrays`; the
    arrival side (``amembers`` ...) is used, so an expansion's component (``members``) stays."""
    ck, cv, stats, big, bigc = cw[CW_CACHE_KEYS], cw[CW_CACHE_VALUES], cw[CW_STATS], cw[CW_CACHE_BIG], cw[CW_BIG_CONFIGS]
    hit = cache_get(ck, cv, big, key, row, out, orow)
    if hit > 0:
        stats[CS_CACHE_HITS] += 1
        if hit == 2:
            out[orow, SINGLE_WORD] |= SINGLE
        return
    am, atab, astamp, gen = cw[CW_AMEMBERS], cw[CW_ATABLE], cw[CW_ASTAMP], cw[CW_AGEN]
    st, above, tmp = cw[CW_AST], cw[CW_AABOVE], cw[CW_TMP]
    decode(key, row, prm, rb, st, above)
    ch = config_hash(st, prm)
    cslot = np.int64(ch & np.uint64(bigc.shape[0] - 1))
    n = -2
    if bigc[cslot] != ch:
        n = component(key, row, prm, rb, am, atab, astamp, gen, st, above, tmp)
        stats[CS_ENUMERATED] += 1
    if n < 0:
        if n == -1:
            stats[CS_OVERSIZE] += 1
            stats[CS_VISITED] += am.shape[0]
            bigc[cslot] = ch
            for i in range(am.shape[0]):
                cache_put(ck, cv, big, am, i, am, i, True)  # each its own key: the component is too big
        else:
            stats[CS_BIG_CONFIG] += 1
            cache_put(ck, cv, big, key, row, key, row, True)
        for w in range(KEY_WORDS):
            out[orow, w] = key[row, w]
        out[orow, SINGLE_WORD] |= SINGLE
        return
    stats[CS_VISITED] += n
    best = least_member(am, n)
    for i in range(n):
        cache_put(ck, cv, big, am, i, am, best, False)
    for w in range(KEY_WORDS):
        out[orow, w] = am[best, w]


class ComponentWork:
    """The prover's arrays for components: two member buffers with their indexes (the component being
    expanded and the one of an arriving position), the member -> canonical cache, counters.

    ``cap`` bounds a component's members (buffers of ``cap + 1`` keys, indexes of the next power of two
    at least twice that); ``cache_entries`` (rounded down to a power of two) bounds the cache, 49 bytes
    an entry, and the set of big configurations (hashes of configurations one of whose components
    passed the cap), 8 bytes an entry. The cache starts empty: an all-zero key marks a free slot (no stored position has that
    key: it is the won position, every card home, which ends the proof)."""

    def __init__(self, prm: np.ndarray, cap: int, cache_entries: int) -> None:
        if cap < 1:
            raise ValueError("a component cap needs at least one member")
        size = 1 << max(4, (2 * (cap + 1) - 1).bit_length())
        entries = 1 << max(4, int(cache_entries).bit_length() - 1)
        self.cap = cap
        self.members = np.zeros((cap + 1, KEY_WORDS), dtype=np.uint64)
        self.table = np.zeros(size, dtype=np.int64)
        self.stamp = np.zeros(size, dtype=np.int64)
        self.cache_keys = np.zeros((entries, KEY_WORDS), dtype=np.uint64)
        self.cache_values = np.zeros((entries, KEY_WORDS), dtype=np.uint64)
        self.cache_big = np.zeros(entries, dtype=np.bool_)
        self.big_configs = np.zeros(entries, dtype=np.uint64)
        self.stats = np.zeros(CS_SIZE, dtype=np.int64)
        self.amembers = np.zeros_like(self.members)
        self.atable = np.zeros_like(self.table)
        self.astamp = np.zeros_like(self.stamp)
        self.gen = np.zeros(1, dtype=np.int64)
        self.st = np.zeros(int(prm[P_SIZE]), dtype=np.int8)
        self.above = np.zeros(DECK_SIZE, dtype=np.int64)
        self.tmp = np.zeros(int(prm[P_MOVEBUF]), dtype=np.int64)
        self.ast = np.zeros_like(self.st)
        self.aabove = np.zeros_like(self.above)

    def arrays(self) -> tuple:
        """The arrays as `canonical` and the prover take them (``cw``), in the order of the ``CW_*`` slots."""
        cw = (self.members, self.table, self.stamp, self.gen, self.st, self.above, self.cache_keys,
              self.cache_values, self.stats, self.amembers, self.atable, self.astamp, self.gen, self.ast,
              self.aabove, self.tmp, self.cache_big, self.big_configs)
        assert len(cw) == CW_SIZE
        return cw

    @property
    def nbytes(self) -> int:
        """Bytes the arrays hold."""
        return sum(a.nbytes for a in (self.members, self.table, self.stamp, self.cache_keys, self.cache_values,
                                      self.cache_big, self.big_configs, self.amembers, self.atable, self.astamp))
