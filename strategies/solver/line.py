"""Shortening the solver's winning lines.

A depth-first search returns the path it happened to follow, which can wander
(a card moved to one pile and later to another, when one move would do). The
line is shortened by shortcuts: from each position of the line, among all
legal moves, take the one that lands on the *latest* position of the line
(compared exactly, pile by pile, so that the rest of the line stays legal
move for move), and continue from there. Passes repeat until a pass finds no
shortcut. The result is still a legal winning line from the same start (every
kept move is legal where it is played, and the line ends on the same won
position); it is only shorter.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    P_PILES,
    apply_move,
    cards_home,
    fheight_at,
    found_at,
    gen_moves,
    move_from,
    move_to,
    pile_base,
    undo_move,
)
from sim.rng import nb_mix64
from strategies.solver.hash import KEYS_PILE


@nb.njit(cache=True, inline="always")
def _pile_lin(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, p: np.int64) -> np.uint64:
    """Pile ``p``'s linear key (a sum of one key a card and height), before mixing."""
    lin = np.uint64(p + 1) * np.uint64(0x9E3779B97F4A7C15)
    base = pile_base(prm, p)
    for i in range(np.int64(st[p])):
        lin += keys[KEYS_PILE, np.int64(st[base + i]), i]
    return lin


@nb.njit(cache=True, inline="always")
def _foundation_term(h: np.int64, top: np.int64, f: np.int64) -> np.uint64:
    """Foundation ``f``'s share of `exact_key`, ``h`` cards high with ``top`` on top (-1: empty)."""
    return nb_mix64(np.uint64(h * 64 + top + 1) + np.uint64(f + 1) * np.uint64(0xD1B54A32D192ED03))


@nb.njit(cache=True)
def exact_key(st: np.ndarray, prm: np.ndarray, keys: np.ndarray) -> np.uint64:
    """A 64-bit key of the position that, unlike `position_key`, depends on which pile holds what: a sum of one
    term a pile and a foundation (so `_keys_after` can key a move from its two places alone)."""
    P = prm[P_PILES]
    total = np.uint64(0)
    for p in range(P):
        total += nb_mix64(_pile_lin(st, prm, keys, p))
    for f in range(4):
        h = np.int64(st[fheight_at(P, f)])
        total += _foundation_term(h, np.int64(st[found_at(P, f) + h - 1]) if h > 0 else -1, f)
    return total


@nb.njit(cache=True)
def _keys_after(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, moves: np.ndarray, n: np.int64, lin: np.ndarray,
                out: np.ndarray) -> None:
    """``out[a]``: the `exact_key` of the position after ``moves[a]`` (a < n) from ``st``, which is not changed.

    A move changes two places' terms, and a pile's term is the mix of a sum over its cards, so each key comes from
    the position's key with those two terms replaced, taking one card off or putting one on (``lin``: room for
    a linear key a pile): no move is played, no position keyed whole."""
    P = prm[P_PILES]
    here = np.uint64(0)
    for p in range(P):
        lin[p] = _pile_lin(st, prm, keys, p)
        here += nb_mix64(lin[p])
    for f in range(4):
        h = np.int64(st[fheight_at(P, f)])
        here += _foundation_term(h, np.int64(st[found_at(P, f) + h - 1]) if h > 0 else -1, f)
    for a in range(n):
        src, dst = move_from(moves[a]), move_to(moves[a])
        k = here
        if src >= FOUNDATION:
            f = src - FOUNDATION
            h = np.int64(st[fheight_at(P, f)])
            card = np.int64(st[found_at(P, f) + h - 1])
            below = np.int64(st[found_at(P, f) + h - 2]) if h > 1 else -1
            k += _foundation_term(h - 1, below, f) - _foundation_term(h, card, f)
        else:
            h = np.int64(st[src])
            card = np.int64(st[pile_base(prm, src) + h - 1])
            k += nb_mix64(lin[src] - keys[KEYS_PILE, card, h - 1]) - nb_mix64(lin[src])
        if dst >= FOUNDATION:
            f = dst - FOUNDATION
            h = np.int64(st[fheight_at(P, f)])
            top = np.int64(st[found_at(P, f) + h - 1]) if h > 0 else -1
            k += _foundation_term(h + 1, card, f) - _foundation_term(h, top, f)
        else:
            h = np.int64(st[dst])
            k += nb_mix64(lin[dst] + keys[KEYS_PILE, card, h]) - nb_mix64(lin[dst])
        out[a] = k


@nb.njit(cache=True)
def _shortcut_pass(st0, prm, keys, line, length, tmp):  # noqa: ANN001, ANN202 (numba)
    """One pass of shortcuts over line[:length] (rewritten in place); returns the new length."""
    size = 1
    while size < 4 * (length + 1):
        size *= 2
    mask = np.uint64(size - 1)
    table_k = np.zeros(size, dtype=np.uint64)
    table_i = np.full(size, -1, dtype=np.int64)
    st = st0.copy()
    revs = np.empty(length, dtype=np.int64)
    for i in range(length + 1):
        k = exact_key(st, prm, keys) | np.uint64(1)
        slot = k & mask
        while table_i[slot] >= 0 and table_k[slot] != k:
            slot = (slot + np.uint64(1)) & mask
        table_k[slot] = k
        table_i[slot] = i  # the latest index with this position
        if i < length:
            revs[i] = apply_move(st, prm, line[i])
    for i in range(length - 1, -1, -1):
        undo_move(st, prm, line[i], revs[i])
    out = np.empty(length, dtype=np.int64)
    lin = np.empty(prm[P_PILES], dtype=np.uint64)
    after = np.empty(tmp.shape[0], dtype=np.uint64)
    n_out = 0
    i = 0
    while i < length:
        best_j = i + 1
        best_m = line[i]
        n = gen_moves(st, prm, tmp)
        _keys_after(st, prm, keys, tmp, n, lin, after)
        for a in range(n):
            m = tmp[a]
            k = after[a] | np.uint64(1)
            slot = k & mask
            while table_i[slot] >= 0:
                if table_k[slot] == k:
                    if table_i[slot] > best_j:
                        best_j = table_i[slot]
                        best_m = m
                    break
                slot = (slot + np.uint64(1)) & mask
        apply_move(st, prm, best_m)
        out[n_out] = best_m
        n_out += 1
        i = best_j
    line[:n_out] = out[:n_out]
    return n_out


@nb.njit(cache=True)
def shorten_line(st0: np.ndarray, prm: np.ndarray, keys: np.ndarray, line: np.ndarray, length: np.int64,
                 tmp: np.ndarray) -> np.int64:
    """Shorten the winning line ``line[:length]`` from ``st0`` in place; return its new length.

    The result is replayed move by move against the legal moves; should it fail
    (only a 64-bit key collision could make it), the original line is restored.
    """
    original = line[:length].copy()
    n0 = length
    while True:
        new = _shortcut_pass(st0, prm, keys, line, length, tmp)
        if new >= length:
            break
        length = new
    if not line_wins(st0.copy(), prm, line, length, tmp):
        line[:n0] = original
        return n0
    return length


@nb.njit(cache=True)
def line_wins(st: np.ndarray, prm: np.ndarray, line: np.ndarray, length: np.int64, tmp: np.ndarray) -> bool:
    """Whether ``line[:length]``, played from ``st`` (changed in place), is legal move by move and wins.

    ``tmp`` is a move buffer (`sim.engine.new_moves`)."""
    for i in range(length):
        n = gen_moves(st, prm, tmp)
        legal = False
        for a in range(n):
            if tmp[a] == line[i]:
                legal = True
                break
        if not legal:
            return False
        apply_move(st, prm, line[i])
    return cards_home(st, prm) == DECK_SIZE
