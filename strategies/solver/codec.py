"""Compact, canonical, decodable position keys for the layered prover (`strategies.solver.layers`).

The prover keeps every position of a layer in memory (or on disk), so a key
must give the position back, unlike the transposition table's hash keys
(`strategies.solver.hash`). With in-suit foundations a position is fixed by
where each card lies: home, or on the tableau with a known card (or nothing)
directly below it. The map "card -> what lies below it" gives the set of piles
(a pile is a chain from a bottom card up), whatever the order of the piles, so
it is canonical for pile permutations; the foundations are the cards home, in
order, suit by suit.

Relative to a fixed *root* position, each card has one of seven codes (3 bits):

- ``C_HOME``: on its foundation;
- ``C_ROOT``: on the card (or the bottom of a pile) it lay on in the root;
- ``C_BOTTOM``: at the bottom of a pile (and not so in the root);
- ``C_ON + s``: on the card of suit s one rank higher (and not so in the root).

Every position reachable from the root is covered: the card under a card c
changes only when c moves, and a moved card goes home, onto a card one rank
higher (every build rule of the family builds down by one rank) or into an
empty pile. When two codes fit (a card back on its root card), the first in the
list above is used, so the key is canonical. 52 cards x 3 bits fit three
64-bit words (`KEY_WORDS`): 21 cards in each of the first two, 10 in the last.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, nb_card, nb_rank_of, nb_suit_of
from sim.engine import (
    FOUNDATION_SLOTS,
    P_FILL,
    P_PILES,
    fheight_at,
    found_at,
    home_at,
    pile_base,
)
from sim.rules import FILL_ANY
from strategies.solver.bases import base_length, base_total

KEY_WORDS = 3
"""uint64 words of a key."""
C_HOME, C_ROOT, C_BOTTOM, C_ON = 0, 1, 2, 3
CARDS_PER_WORD = 21
NO_CARD = -1
"""`root_below`'s entry for a card at the bottom of a pile (the root has nothing below it)."""
NOT_THERE = -2
"""`root_below`'s entry for a card home in the root."""


@nb.njit(cache=True)
def root_below(st: np.ndarray, prm: np.ndarray) -> np.ndarray:
    """For each card, the card below it in ``st`` (`NO_CARD` at the bottom, `NOT_THERE` when home)."""
    out = np.full(DECK_SIZE, NOT_THERE, dtype=np.int64)
    for p in range(prm[P_PILES]):
        base = pile_base(prm, p)
        below = NO_CARD
        for i in range(np.int64(st[p])):
            c = np.int64(st[base + i])
            out[c] = below
            below = c
    return out


@nb.njit(cache=True, inline="always")
def _put(out: np.ndarray, row: np.int64, c: np.int64, code: np.int64) -> None:
    w = c // CARDS_PER_WORD
    out[row, w] |= np.uint64(code) << np.uint64(3 * (c % CARDS_PER_WORD))


@nb.njit(cache=True, inline="always")
def set_code(key: np.ndarray, row: np.int64, c: np.int64, code: np.int64) -> None:
    """Give card c the code ``code`` in key ``key[row]``."""
    w = c // CARDS_PER_WORD
    shift = np.uint64(3 * (c % CARDS_PER_WORD))
    key[row, w] = (key[row, w] & ~(np.uint64(7) << shift)) | (np.uint64(code) << shift)


@nb.njit(cache=True, inline="always")
def code_on(rb: np.ndarray, c: np.int64, below: np.int64) -> np.int64:
    """The code of tableau card c lying on ``below`` (`NO_CARD`: at the bottom); -1 when none fits."""
    if below == rb[c]:
        return C_ROOT
    if below == NO_CARD:
        return C_BOTTOM
    if nb_rank_of(below) == nb_rank_of(c) + 1:
        return C_ON + nb_suit_of(below)
    return -1


@nb.njit(cache=True, inline="always")
def card_code(key: np.ndarray, row: np.int64, c: np.int64) -> np.int64:
    """The code of card c in key ``key[row]``."""
    return np.int64((key[row, c // CARDS_PER_WORD] >> np.uint64(3 * (c % CARDS_PER_WORD))) & np.uint64(7))


@nb.njit(cache=True)
def encode(st: np.ndarray, prm: np.ndarray, rb: np.ndarray, out: np.ndarray, row: np.int64) -> bool:
    """Write the key of ``st`` (relative to the root whose `root_below` is ``rb``) into ``out[row]``.

    Returns False when some card lies on a card no code describes (``st`` is not
    reachable from the root under the family's rules); ``out[row]`` is then meaningless.
    """
    for w in range(KEY_WORDS):
        out[row, w] = np.uint64(0)
    for p in range(prm[P_PILES]):
        base = pile_base(prm, p)
        below = NO_CARD
        for i in range(np.int64(st[p])):
            c = np.int64(st[base + i])
            code = code_on(rb, c, below)
            if code < 0:
                return False
            _put(out, row, c, code)
            below = c
    return True


@nb.njit(cache=True)
def decode(key: np.ndarray, row: np.int64, prm: np.ndarray, rb: np.ndarray, st: np.ndarray, above: np.ndarray) -> None:
    """Rebuild in ``st`` (a state array of the rules ``prm``) the position of key ``key[row]``.

    Piles are laid out in the order of their bottom cards, empty piles last;
    no card is face down (the prover sees every card). ``above`` is int64
    scratch of 52 slots.
    """
    P = prm[P_PILES]
    st[:] = 0
    home = 0
    for s in range(4):
        h = 0
        for r in range(13):
            c = nb_card(r, s)
            if card_code(key, row, c) == C_HOME:
                st[found_at(P, s) + h] = c
                h += 1
        st[fheight_at(P, s)] = h
        home += h
    st[home_at(P)] = home
    for c in range(52):
        above[c] = NO_CARD
    for c in range(52):
        code = card_code(key, row, c)
        if code == C_HOME:
            continue
        if code == C_ROOT:
            b = rb[c]
        elif code == C_BOTTOM:
            b = NO_CARD
        else:
            b = nb_card(nb_rank_of(c) + 1, code - C_ON)
        if b >= 0:
            above[b] = c
    p = 0
    for c in range(52):
        code = card_code(key, row, c)
        if code == C_HOME or not (code == C_BOTTOM or (code == C_ROOT and rb[c] == NO_CARD)):
            continue
        base = pile_base(prm, p)
        h = 0
        x = c
        while x != NO_CARD:
            st[base + h] = x
            h += 1
            x = above[x]
        st[p] = h
        p += 1


LAYER_BASE = FOUNDATION_SLOTS + 1
"""A foundation holds 0..`FOUNDATION_SLOTS` cards: the digits of a layer's foundation number in this base."""
STAGES = 64
"""Stages of a layer (`layer_of`): one more than the most cards the bases can hold (`DECK_SIZE`)."""


@nb.njit(cache=True, inline="always")
def staged_rules(prm: np.ndarray) -> bool:
    """Whether the cards in bases (`strategies.solver.bases.base_total`) never grow along a move under the
    rules ``prm``: unless any card may enter an empty pile (`strategies.solver.bases` says why)."""
    return prm[P_FILL] != FILL_ANY


@nb.njit(cache=True)
def layer_of(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """The layer of a position: its foundation number (the heights h0..h3 as h0 + 14 h1 + 196 h2 + 2744 h3,
    the digits of base `LAYER_BASE`) times `STAGES`, plus its *stage*: `STAGES` - 1 less the cards in its
    bases (`strategies.solver.bases.base_total`), or 0 where those may grow (`staged_rules`).

    Along any move with in-suit foundations and no worrying back, the foundation heights never go down, and
    with them alike the stage never does: a layer with as many cards home is met only after it when its
    number is the larger."""
    P = prm[P_PILES]
    found = np.int64(0)
    for s in range(3, -1, -1):
        found = found * LAYER_BASE + np.int64(st[fheight_at(P, s)])
    stage = STAGES - 1 - base_total(st, prm) if staged_rules(prm) else 0
    return found * STAGES + stage


@nb.njit(cache=True, inline="always")
def quiet_layer(st: np.ndarray, prm: np.ndarray, layer: np.int64, src: np.int64, dst: np.int64) -> np.int64:
    """The layer (`layer_of`) after the tableau move from pile ``src`` to pile ``dst`` of ``st`` (in layer
    ``layer``), before any move home that follows it: only ``src``'s base and an empty ``dst`` change."""
    if not staged_rules(prm):
        return layer
    h = np.int64(st[src])
    rise = base_length(st, prm, src, h) - base_length(st, prm, src, h - 1) - (1 if st[dst] == 0 else 0)
    return layer + rise


def layer_name(layer: int) -> str:
    """A layer (`layer_of`) in words, for progress lines."""
    return f"layer {layer} ({layer_total(layer)} home, stage {layer % STAGES})"


def layer_total(layer: int) -> int:
    """Cards home in a layer (`layer_of`)."""
    found = layer // STAGES
    total = 0
    for _ in range(4):
        found, height = divmod(found, LAYER_BASE)
        total += height
    return total
