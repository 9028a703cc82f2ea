"""Shortening the solver's winning lines.

A depth-first search returns the path it happened to follow, which can wander
(a card moved to one pile and later to another, when one move would do). The
line is shortened by shortcuts: from each position of the line, among all
legal moves, take the one that lands on the *latest* position of the line
(compared exactly, pile by pile, so that the rest of the line stays legal
move for move), and continue from there. One pass finds every shortcut
(`shorten_line` says why). The result is still a legal winning line from the
same start (every kept move is legal where it is played, and the line ends on
the same won position); it is only shorter.
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
    moved_card,
    pile_base,
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
def exact_key(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, lin: np.ndarray) -> np.uint64:
    """A 64-bit key of the position that, unlike `position_key`, depends on which pile holds what: a sum of one
    term a pile and a foundation (so `_key_change` can key a move from its two places alone). ``lin`` is filled with
    the piles' linear keys."""
    P = prm[P_PILES]
    total = np.uint64(0)
    for p in range(P):
        lin[p] = _pile_lin(st, prm, keys, p)
        total += nb_mix64(lin[p])
    for f in range(4):
        h = np.int64(st[fheight_at(P, f)])
        total += _foundation_term(h, np.int64(st[found_at(P, f) + h - 1]) if h > 0 else -1, f)
    return total


@nb.njit(cache=True, inline="always")
def _key_change(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, lin: np.ndarray, m: np.int64) -> np.uint64:
    """How `exact_key` changes (mod 2**64) when move ``m`` is played from ``st`` (not played here): the terms of its
    two places replaced, one card taken off the one and put on the other (``lin``: the piles' linear keys)."""
    P = prm[P_PILES]
    src, dst = move_from(m), move_to(m)
    k = np.uint64(0)
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
        k += nb_mix64(lin[dst] + keys[KEYS_PILE, card, np.int64(st[dst])]) - nb_mix64(lin[dst])
    return k


@nb.njit(cache=True, inline="always")
def _play_keyed(st: np.ndarray, prm: np.ndarray, keys: np.ndarray, lin: np.ndarray, m: np.int64) -> np.uint64:
    """Play move ``m`` on ``st``, bring the piles' linear keys ``lin`` up to date, and return how `exact_key`
    changed (`_key_change`)."""
    change = _key_change(st, prm, keys, lin, m)
    src, dst = move_from(m), move_to(m)
    card = moved_card(st, prm, m)
    if src < FOUNDATION:
        lin[src] -= keys[KEYS_PILE, card, np.int64(st[src]) - 1]
    if dst < FOUNDATION:
        lin[dst] += keys[KEYS_PILE, card, np.int64(st[dst])]
    apply_move(st, prm, m)
    return change


@nb.njit(cache=True, inline="always")
def _place(P: np.int64, place: np.int64) -> np.int64:
    """A pile's or a foundation's index among the ``P + 4`` places: the piles, then the foundations."""
    return place if place < FOUNDATION else P + place - FOUNDATION


@nb.njit(cache=True)
def _shortcut_pass(st0, prm, keys, line, length, tmp):  # noqa: ANN001, ANN202 (numba)
    """One pass of shortcuts over line[:length] (rewritten in place); returns the new length, or -1 (the line left
    as it was) when the new line would not be legal move by move or would not win, which only a 64-bit key
    collision could cause: every move it keeps is one of the legal moves where it is played, and it must end won.

    Each key is the one before it changed by the move played (`_key_change`), so a step costs its legal moves'
    probes, not a key of the whole position; and a move is probed only when the line has its card on its
    destination at some position after the best found so far (a position the move lands on has the card there), so
    most moves cost two array reads."""
    size = 1
    while size < 4 * (length + 1):
        size *= 2
    mask = np.uint64(size - 1)
    table_k = np.zeros(size, dtype=np.uint64)
    table_i = np.full(size, -1, dtype=np.int64)
    lin = np.empty(prm[P_PILES], dtype=np.uint64)
    P = prm[P_PILES]
    last_at = np.full((DECK_SIZE, P + 4), -1, dtype=np.int64)  # the latest index with a card on a place (`_place`)
    st = st0.copy()
    here = exact_key(st, prm, keys, lin)
    for i in range(length + 1):
        k = here | np.uint64(1)
        slot = k & mask
        while table_i[slot] >= 0 and table_k[slot] != k:
            slot = (slot + np.uint64(1)) & mask
        table_k[slot] = k
        table_i[slot] = i  # the latest index with this position
        if i < length:
            last_at[moved_card(st, prm, line[i]), _place(P, move_from(line[i]))] = i  # it lay there up to i
            here += _play_keyed(st, prm, keys, lin, line[i])
    for p in range(P):  # where each card lies at the end of the line
        for h in range(np.int64(st[p])):
            last_at[np.int64(st[pile_base(prm, p) + h]), p] = length
    for f in range(4):
        for h in range(np.int64(st[fheight_at(P, f)])):
            last_at[np.int64(st[found_at(P, f) + h]), P + f] = length
    st = st0.copy()
    here = exact_key(st, prm, keys, lin)
    out = np.empty(length, dtype=np.int64)
    n_out = 0
    i = 0
    while i < length:
        best_j = i + 1
        best_m = line[i]
        legal = False  # whether the line's own move is legal here
        n = gen_moves(st, prm, tmp)
        for a in range(n):
            m = tmp[a]
            legal = legal or m == line[i]
            if last_at[moved_card(st, prm, m), _place(P, move_to(m))] <= best_j:
                continue  # no position of the line after best_j has that card there: this move lands on none
            k = (here + _key_change(st, prm, keys, lin, m)) | np.uint64(1)
            slot = k & mask
            while table_i[slot] >= 0:
                if table_k[slot] == k:
                    if table_i[slot] > best_j:
                        best_j = table_i[slot]
                        best_m = m
                    break
                slot = (slot + np.uint64(1)) & mask
        if best_j == i + 1 and not legal:
            return -1
        here += _play_keyed(st, prm, keys, lin, best_m)
        out[n_out] = best_m
        n_out += 1
        i = best_j
    if cards_home(st, prm) != DECK_SIZE:
        return -1
    line[:n_out] = out[:n_out]
    return n_out


@nb.njit(cache=True)
def shorten_line(st0: np.ndarray, prm: np.ndarray, keys: np.ndarray, line: np.ndarray, length: np.int64,
                 tmp: np.ndarray) -> np.int64:
    """Shorten the winning line ``line[:length]`` from ``st0`` in place; return its new length.

    One pass is the whole shortening: a second would find no shortcut. After the pass every position of the line
    but the first is the latest place the old line had it, in the old line's order, and the move out of each
    reaches the latest old position any of its moves reaches. A shortcut of a second pass, from position x to a
    position y later than x's successor, would be a move of x to a position later in the old line than that
    latest one. (Solver version 11 ran passes until one found no shortcut; the lines are the same.)

    Should the new line not be legal move by move or not win (only a 64-bit key collision could make it so), the
    original line is kept.
    """
    new = _shortcut_pass(st0, prm, keys, line, length, tmp)
    return length if new < 0 else new


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
