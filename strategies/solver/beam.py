"""A beam search for wins that the depth-first restarts miss (the solver's ``beam_width``, off by default).

The restarts (`strategies.solver.strategy`) dive: each follows one line from the root as deep as its budget lets
it, and a winning line whose first moves look poor to the move order is found only by a restart that happens to
try them. A beam search goes the other way: it keeps, at every depth, the ``width`` best of all the positions one
move (and the safe moves home after it) beyond the positions kept at the depth before, by a score of the whole
position, so that lines that look poor early but lead somewhere stay in play beside each other. It decided
Baker's Dozen deal 38418, which no rung of the atlas's ladder (a search of 30 million nodes, the free-parking
relaxation with 20 million states, the layered prover in 2 GiB) had decided: won in 90 moves, at width 20,000,
after 5.4 million positions (docs/atlas.md).

It claims only wins: a position it drops may have been the only way on, so running out (every kept position's
moves lead to positions already seen or dead, or the ``max_nodes`` budget is spent) leaves the deal unknown, never
lost. Its line is replayed by the referee like every other. Positions already seen are told apart by their keys
(`strategies.solver.hash`) in a set that holds about ``max_nodes`` of them; a false match can only drop a
position. The order of equal scores is broken by a pseudo-random term seeded by the root's key, so a deal gets
the same verdict, nodes and line whatever was solved before it and wherever.

The score, higher kept first: 100 for each card home, less 10 for each card lying above a lower card of its own
suit (it must move before that card can go home) and, with in-suit foundations, 3 for each card lying above the
next card of a suit to go home.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, nb_rank_of, nb_suit_of
from sim.engine import (
    P_FILL,
    P_FOUND,
    P_MOVEBUF,
    P_MOVES,
    P_PILES,
    P_SIZE,
    P_WORRY,
    apply_move,
    cards_home,
    clock,
    fheight_at,
    gen_moves,
    pile_base,
)
from sim.rng import nb_mix64, nb_xorshift64
from sim.rules import FILL_NONE, FOUND_SUIT
from strategies.solver.dead import is_dead, new_dead_work
from strategies.solver.hash import position_key
from strategies.solver.safe import play_safe_moves, played_move
from strategies.solver.search import F_DEAD, F_LONE, F_SAFE, S_TIMEOUT, S_UNKNOWN, S_WON, first_empty_pile, home_rule, never_needed

W_HOME, W_BLOCKING, W_OVER_NEXT = 100, 10, 3
"""The score's weights: a card home, a card above a lower card of its suit, a card above a suit's next card."""
TIE_BITS = 10
"""Low bits of a candidate's sort key that hold the pseudo-random tie-break (the score is shifted above them)."""
MIN_SEEN_SLOTS = 1 << 16
SEEN_FILL = 0.7
"""The set of seen positions stops growing at this share of its slots (positions beyond it are not remembered)."""
CLOCK_EVERY = 1 << 10


@nb.njit(cache=True)
def seen_slots(max_nodes: np.int64) -> np.int64:
    """Slots of the set of seen positions for a budget of ``max_nodes`` positions: a power of two that holds them
    at `SEEN_FILL` (8 bytes a slot)."""
    slots = np.int64(MIN_SEEN_SLOTS)
    while slots * SEEN_FILL < max_nodes:
        slots *= 2
    return slots


def beam_bytes(width: int, max_nodes: int, prm: np.ndarray) -> int:
    """Bytes `beam_search` allocates at most for ``width`` and ``max_nodes`` under the rule parameters ``prm``: the
    seen set, the candidates of a depth (16 bytes each), two depths of positions and the kept positions' path
    (8 bytes each, at most one per position generated)."""
    candidates = width * int(prm[P_MOVES])
    return int(seen_slots.py_func(max_nodes)) * 8 + candidates * 16 + 2 * width * int(prm[P_SIZE]) + 8 * max_nodes


@nb.njit(cache=True)
def beam_score(st: np.ndarray, prm: np.ndarray) -> np.int64:
    """The score of the position ``st`` (module text)."""
    P = prm[P_PILES]
    suit_found = prm[P_FOUND] == FOUND_SUIT
    score = W_HOME * cards_home(st, prm)
    for p in range(P):
        h = np.int64(st[p])
        base = pile_base(prm, p)
        for i in range(h):
            c = np.int64(st[base + i])
            cr = nb_rank_of(c)
            cs = nb_suit_of(c)
            for j in range(i):
                u = np.int64(st[base + j])
                if nb_suit_of(u) == cs and nb_rank_of(u) < cr:
                    score -= W_BLOCKING
                    break
            if suit_found and np.int64(st[fheight_at(P, cs)]) == cr:
                score -= W_OVER_NEXT * (h - 1 - i)
    return score


@nb.njit(cache=True)
def _remember(seen: np.ndarray, key: np.uint64) -> bool:
    """Put ``key`` (never 0) in the open-addressed set ``seen``; False when it was there already."""
    mask = np.uint64(seen.shape[0] - 1)
    i = key & mask
    while True:
        v = seen[i]
        if v == key:
            return False
        if v == 0:
            seen[i] = key
            return True
        i = (i + np.uint64(1)) & mask


@nb.njit(cache=True)
def _advance(st: np.ndarray, prm: np.ndarray, m: np.int64, buf: np.ndarray, use_safe: bool, worrying: bool,
             rule: np.int64) -> np.int64:
    """Play m and then, with ``use_safe``, the moves home ``rule`` allows without search in ``st``; record every
    move in ``buf``; return how many."""
    apply_move(st, prm, m)
    buf[0] = m
    if not use_safe:
        return np.int64(1)
    n = play_safe_moves(st, prm, buf, np.int64(1), worrying, rule)
    for i in range(1, n):
        buf[i] = played_move(buf[i])
    return n


@nb.njit(cache=True)
def beam_search(st0, prm, keys, line, width, max_nodes, max_seconds, flags):  # noqa: ANN001, ANN201 (numba)
    """Look for a winning line from ``st0`` (not modified) with a beam of ``width`` positions, within ``max_nodes``
    positions generated and ``max_seconds``. Returns (verdict, nodes, line length, seconds): `S_WON` with the
    engine move codes that win in ``line[:length]``, else `S_UNKNOWN` (or `S_TIMEOUT` when the seconds ran out
    first). ``keys`` is the solver's key table; ``flags`` its switches (safe moves home, dead positions cut,
    lone cards kept in place, as the searches use them)."""
    t0 = clock()
    P = prm[P_PILES]
    suit_found = prm[P_FOUND] == FOUND_SUIT
    worrying = prm[P_WORRY] != 0
    use_safe = (flags & F_SAFE) != 0 and suit_found
    rule = home_rule(flags)
    use_dead = (flags & F_DEAD) != 0 and suit_found and not worrying
    lone_rule = (flags & F_LONE) != 0 and prm[P_FILL] == FILL_NONE
    size = prm[P_SIZE]
    moves = np.empty(prm[P_MOVEBUF], dtype=np.int64)
    step = np.empty(DECK_SIZE + 1, dtype=np.int64)
    dwork = new_dead_work(P)
    seen = np.zeros(seen_slots(max_nodes), dtype=np.uint64)
    seen_limit = np.int64(seen.shape[0] * SEEN_FILL)
    cap = width * prm[P_MOVES]
    c_parent = np.empty(cap, dtype=np.int32)
    c_move = np.empty(cap, dtype=np.int32)
    c_key = np.empty(cap, dtype=np.int64)
    cur = np.empty((width, size), dtype=np.int8)
    nxt = np.empty((width, size), dtype=np.int8)
    cur_entry = np.empty(width, dtype=np.int64)  # each kept position's entry in the path arrays
    nxt_entry = np.empty(width, dtype=np.int64)
    path_parent = np.empty(max(width, 1024), dtype=np.int64)  # entry of the position it came from (-1: root)
    path_move = np.empty(max(width, 1024), dtype=np.int64)  # the move (not the safe moves) that made it
    tmp = np.empty(size, dtype=np.int8)
    cur[0] = st0
    root_key, root_check = position_key(st0, prm, keys)
    rng = nb_mix64(root_key ^ root_check) | np.uint64(1)
    if use_safe:
        play_safe_moves(cur[0], prm, step, np.int64(0), worrying, rule)
    entries = np.int64(0)
    cur_entry[0] = -1
    n = np.int64(1)
    nodes = np.int64(0)
    filled = np.int64(0)
    while True:
        k = np.int64(0)
        for i in range(n):
            st = cur[i]
            nm = gen_moves(st, prm, moves)
            first_empty = first_empty_pile(st, prm)
            for j in range(nm):
                m = moves[j]
                if never_needed(st, m, first_empty, lone_rule):
                    continue
                tmp[:] = st
                _advance(tmp, prm, m, step, use_safe, worrying, rule)
                nodes += 1
                if cards_home(tmp, prm) == DECK_SIZE:
                    v, length = _won_line(st0, prm, line, path_parent, path_move, cur_entry[i], m, step, use_safe,
                                          worrying, rule)
                    return v, nodes, length, clock() - t0
                if nodes >= max_nodes:
                    return S_UNKNOWN, nodes, np.int64(0), clock() - t0
                if nodes % CLOCK_EVERY == 0 and clock() - t0 > max_seconds:
                    return S_TIMEOUT, nodes, np.int64(0), clock() - t0
                key, check = position_key(tmp, prm, keys)
                mark = key ^ (check << np.uint64(1)) | np.uint64(1)
                if filled < seen_limit:
                    if not _remember(seen, mark):
                        continue
                    filled += 1
                if use_dead and is_dead(tmp, prm, dwork):
                    continue
                if k >= cap:
                    continue
                rng = nb_xorshift64(rng)
                c_parent[k] = i
                c_move[k] = m
                c_key[k] = -((beam_score(tmp, prm) << TIE_BITS) + np.int64(rng >> np.uint64(64 - TIE_BITS)))
                k += 1
        if k == 0:
            return S_UNKNOWN, nodes, np.int64(0), clock() - t0
        order = np.argsort(c_key[:k], kind="mergesort")
        kept = min(k, width)
        if entries + kept > path_parent.shape[0]:
            grown = max(2 * path_parent.shape[0], entries + kept)
            path_parent = _grown(path_parent, grown)
            path_move = _grown(path_move, grown)
        for t in range(kept):
            c = order[t]
            nxt[t] = cur[c_parent[c]]
            _advance(nxt[t], prm, np.int64(c_move[c]), step, use_safe, worrying, rule)
            path_parent[entries] = cur_entry[c_parent[c]]
            path_move[entries] = c_move[c]
            nxt_entry[t] = entries
            entries += 1
        cur, nxt = nxt, cur
        cur_entry, nxt_entry = nxt_entry, cur_entry
        n = kept


@nb.njit(cache=True)
def _grown(a: np.ndarray, size: np.int64) -> np.ndarray:
    """``a`` copied into a longer array of ``size`` slots."""
    out = np.empty(size, dtype=a.dtype)
    out[:a.shape[0]] = a
    return out


@nb.njit(cache=True)
def _won_line(st0, prm, line, path_parent, path_move, entry, last, step, use_safe, worrying, rule):  # noqa: ANN001, ANN202 (numba)
    """Write the line that reaches the kept position ``entry`` and then plays ``last`` into ``line``, the safe moves
    home included: (`S_WON`, its length), or (`S_UNKNOWN`, 0) when ``line`` cannot hold it."""
    depth = np.int64(1)
    e = entry
    while e >= 0:
        depth += 1
        e = path_parent[e]
    chosen = np.empty(depth, dtype=np.int64)
    chosen[depth - 1] = last
    e = entry
    d = depth - 2
    while e >= 0:
        chosen[d] = path_move[e]
        d -= 1
        e = path_parent[e]
    st = st0.copy()
    length = np.int64(0)
    if use_safe:
        n = play_safe_moves(st, prm, step, np.int64(0), worrying, rule)
        for i in range(n):
            if length >= line.shape[0]:
                return S_UNKNOWN, np.int64(0)
            line[length] = played_move(step[i])
            length += 1
    for m in chosen:
        n = _advance(st, prm, m, step, use_safe, worrying, rule)
        for i in range(n):
            if length >= line.shape[0]:
                return S_UNKNOWN, np.int64(0)
            line[length] = step[i]
            length += 1
    return S_WON, length
