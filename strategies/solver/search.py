"""The solver's search: depth-first over positions with a transposition table.

`solve` decides one position with every card known: WON (with the line of moves
that wins), LOST (every position reachable under the sound prunings has been
seen, none is won) or UNKNOWN (the node or time budget ran out, or a work
buffer was too small).

Each node is a position after the safe moves home (`strategies.solver.safe`).
A node is expanded once: its key (`strategies.solver.hash`, the same for every
order of the piles) goes into the transposition table the first time it is
reached, and later arrivals are cut. An expanded node is checked for a dead
position (`strategies.solver.dead`), unless the move into it provably kept
it alive (`strategies.solver.dead.stays_alive`: about four moves in five,
with the verdict the test would give), then its legal moves are generated,
filtered (moves that are never needed, below) and ordered
(`strategies.solver.order`). With `F_RELAX`, a node whose configuration (its
bases and foundations) the free-parking relaxation loses is cut as a dead one
is (`strategies.solver.relax_cut`, asked only where a move that is not inner
or a safe move home may have changed the configuration: `FR_CONFIG`).

Why LOST is a proof. Let d(x) be the length of the shortest winning line from a
winnable position x. Every expanded winnable node x has a generated child y
with d(y) < d(x): the first move of a shortest line is never filtered out
(below), safe moves home do not make lines longer, and neither a dead test nor
a relaxed loss ever fires on a winnable position. That child is expanded (now or earlier: the table
holds only expanded nodes, and proofs of loss, which a winnable position never
has, below) unless a budget or buffer limit intervened, which makes the
verdict UNKNOWN. So if the root were winnable, descending d would reach a won
node, and the search would have reported it. The only unproven link is the
table: a position that passes for a stored one (its slot bits and 48 bits of
its independent check agree by chance, `strategies.solver.hash`) would be cut
unexpanded; that has a chance of about 3e-14 a lookup, so about 1e-6 for a
default-budget search and 1e-4 for a billion nodes.

Proofs kept between searches (`F_KEEP_LOST`). A search cut by its budget says
UNKNOWN, but much of what it saw is lost, and the next restart of the same
root (`same_root`) need not see it again. The search finds the strongly
connected components of the graph it expands (Tarjan's algorithm: each node's
depth-first index and low link, a stack of the nodes whose component is not
finished; `strategies.solver.table` keeps the index beside the node's entry
and never overwrites a node on the stack). A component is finished when the
search backs out of its first node; it is proven lost when nothing below it
is *tainted*: a child cut by a budget, the depth or a full buffer, or cut
because it was expanded in a finished component without a proof (a taint
passes from every node to its parent). Then every generated child of every
member is a member, a proven loss, or dead; if a member x were winnable, its
child y with d(y) < d(x) would be a member too (proofs and dead positions are
never winnable), and descending d inside the component would reach a won
node, which the search would have reported. So the members are marked lost
in the table, for every later search of the root. Within one search nothing
changes: a finished node is cut whether proven or not.

Move filters (the second can be switched off):

- into an empty pile, only the first empty pile is tried (the piles are
  interchangeable, so the other choices give the same position), and a card
  alone in its pile never moves into an empty one (same position again);
- lone cards (`F_LONE`, only where empty piles stay empty): a card alone in
  its pile never moves onto another pile. In such a variant the emptied pile is
  worthless, so the position before the move has every option the position
  after has (the card can still take the same cards where it lies, and the
  card it would cover stays free): a shortest winning line never makes the
  move (dropping it and replaying the rest with that card's pile in place of
  the covered card's gives a shorter line).

Speed: with in-suit foundations the key is kept incrementally (each pile's
linear key, `strategies.solver.hash`), and a tableau move that uncovers no safe
card has a child whose key is known before the move is played: a child
already in the table is skipped without playing it (the same nodes are
expanded in the same order either way). The search plays in its work's own
state array, and every array it passes to the helpers is a borrowed view
(`sim.borrow`): the caller owns them for the whole search, so numba need not
count references to them at each call.

The table (`strategies.solver.table`) stores 48 bits of check key and a
16-bit tag, so it is cleared lazily: a new search bumps the generation and old
entries read as empty, except the proofs of loss of the same root (when the
generations run out they start again, the root's proofs kept: a search does
not depend on what the table decided before it). A full
bucket overwrites a node that is not on Tarjan's stack: the search may then
expand a node twice, which costs time but keeps the proof valid (a node in the
table was expanded, whatever was overwritten). A bucket whose every slot is
on the stack taints the node that found it so.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.borrow import borrowed
from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    MAX_PILE_CAP,
    P_FILL,
    P_FOUND,
    P_MOVES,
    P_PILES,
    P_WORRY,
    apply_move,
    cards_home,
    clock,
    gen_moves,
    move_from,
    move_to,
    new_moves,
    pile_base,
    state_size,
    undo_move,
)
from sim.rng import nb_mix64, nb_xorshift64
from sim.rules import FILL_NONE, FOUND_SUIT
from strategies.solver.capacity import applies_to
from strategies.solver.census import C_DEAD, C_SKIPPED, C_TABLE_CUT, census_node
from strategies.solver.dead import is_dead, stays_alive
from strategies.solver.hash import CHECK_SALT, KEYS_PILE, position_key
from strategies.solver.order import move_score
from strategies.solver.relax_cut import config_lost, keeps_configuration, renumber_root
from strategies.solver.safe import (
    SAFE_ANY,
    SAFE_NEEDED,
    SAFE_WIDE,
    play_safe_moves,
    played_move,
    played_revealed,
    uncovers_safe,
)
from strategies.solver.table import (
    DONE,
    GEN_LIMIT,
    INDEX_LIMIT,
    LOST_TAG,
    T_ABSENT,
    T_LOST,
    absent_slot,
    renumber,
    table_slots,
    tt_find,
    tt_insert,
    tt_mark_lost,
)

# Verdicts of `solve` (and, with `S_TIMEOUT`, of `strategies.solver.strategy.decide`): `S_UNKNOWN`
# when a budget of nodes or states ran out, `S_TIMEOUT` when a wall-clock cap stopped the work first.
S_LOST, S_WON, S_UNKNOWN, S_TIMEOUT = 0, 1, 2, 3
VERDICTS = ("lost", "won", "unknown", "timeout")

# Switches (bits of `flags`).
F_SAFE = 1  # play safe moves home without search
F_DEAD = 2  # cut dead positions
F_ORDER = 4  # order moves by `move_score`
F_LONE = 8  # never move a lone card onto another pile (empty piles stay empty)
F_KEEP_LOST = 16  # later searches of the same position cut what earlier ones proved lost
F_RELAX = 32  # cut configurations the free-parking relaxation loses (`strategies.solver.relax_cut`)
F_SAFE_WIDE = 64  # with F_SAFE: the wide rule of safe moves home as well (`strategies.solver.safe`)
F_STREAM = 128  # every move home at once: a streamliner, whose wins are wins and whose losses prove nothing

# Frame fields.
(FR_MSTART, FR_MCOUNT, FR_MIDX, FR_ASTART, FR_ACOUNT, FR_MOVE, FR_REV, FR_INDEX, FR_LOW, FR_TAINT, FR_ALIVE,
 FR_CONFIG) = range(12)
"""FR_INDEX: the node's depth-first index (-1: the frame's position was cut, not expanded); FR_LOW: the
least index on Tarjan's stack reached from it (`NO_LOW`: none); FR_TAINT: 1 when something below it
was left unexplored (a budget, a buffer, or a position expanded without a proof); FR_ALIVE: 1 when the
move into the frame's position provably kept it from being dead (`strategies.solver.dead.stays_alive`:
the dead test is skipped); FR_CONFIG: 1 when the frame's configuration may differ from its parent's (the root,
a move that is not inner, or safe moves home: `strategies.solver.relax_cut`)."""
FRAME_FIELDS = 16
"""Slots of a frame: the twelve fields and four spare, so that a frame is 128 bytes, two cache lines."""

CLOCK_EVERY = 1 << 14

# `meta` slots.
M_GEN, M_ROOT, M_RELAX, M_RENUMBERED, META_SIZE = 0, 1, 2, 3, 4
"""M_GEN: the table's generation (entries of other generations read as empty); M_ROOT: the generation of
the first search of the position being decided (its proofs of loss carry it, `strategies.solver.table`, and so
do the relaxation's remembered verdicts); M_RELAX: the relaxation's states a configuration (`SolverWork`'s
``relax_states``); M_RENUMBERED: 1 once generations have started again, which cleared only the table a search
was given (a window of it, `strategies.sampling.solve.sample_work`, which clears the rest)."""

# The arrays of `SolverWork.arrays`, in order.
(W_KEYS, W_TT, W_TIDX, W_TSTACK, W_META, W_FRAMES, W_MBUF, W_ABUF, W_TMP, W_SCORES, W_DWORK, W_LINE, W_RMEMO,
 W_RTABLE, W_RWORK, W_STATE, W_SCRATCH) = range(17)

NO_LOW = np.int64(1) << 62
"""A frame's low link before anything on Tarjan's stack is reached from it."""


@nb.njit(cache=True, inline="always")
def _pile_lin(st, prm, keys, p):  # noqa: ANN001, ANN202 (numba)
    lin = np.uint64(0)
    base = pile_base(prm, p)
    for i in range(np.int64(st[p])):
        lin += keys[KEYS_PILE, np.int64(st[base + i]), i]
    return lin


@nb.njit(cache=True, inline="always")
def _rekey(st, prm, keys, lin, ksum, p):  # noqa: ANN001, ANN202 (numba)
    """Refresh pile p's part of the incremental key and check ``ksum`` (piles only; p may be a foundation: no-op)."""
    if p < FOUNDATION:
        new = _pile_lin(st, prm, keys, p)
        ksum[0] += nb_mix64(new) - nb_mix64(lin[p])
        ksum[1] += nb_mix64(new ^ CHECK_SALT) - nb_mix64(lin[p] ^ CHECK_SALT)
        lin[p] = new


@nb.njit(cache=True, inline="always")
def first_empty_pile(st, prm):  # noqa: ANN001, ANN202 (numba)
    """The first empty pile of st (-1: none)."""
    for p in range(prm[P_PILES]):
        if st[p] == 0:
            return p
    return -1


@nb.njit(cache=True, inline="always")
def never_needed(st, m, first_empty, lone_rule):  # noqa: ANN001, ANN202 (numba)
    """Whether move m is one of the moves a shortest winning line never makes (the filters above): into an empty
    pile other than ``first_empty``, a lone card into an empty pile, and with ``lone_rule`` a lone card onto
    another pile."""
    src = move_from(m)
    dst = move_to(m)
    if dst >= FOUNDATION:
        return False
    if st[dst] == 0:
        return dst != first_empty or (src < FOUNDATION and st[src] == 1)
    return lone_rule and src < FOUNDATION and st[src] == 1


@nb.njit(cache=True, inline="always")
def home_rule(flags: np.int64) -> np.int64:
    """Which moves home the searches play without search under ``flags`` (`strategies.solver.safe`'s rules)."""
    if (flags & F_STREAM) != 0:
        return np.int64(SAFE_ANY)
    return np.int64(SAFE_WIDE if (flags & F_SAFE_WIDE) != 0 else SAFE_NEEDED)


@nb.njit(cache=True)
def _ordered_moves(st, prm, flags, tmp, scores, mbuf, mtop, rng, noise):  # noqa: ANN001, ANN202 (numba)
    """Generate, filter and order the moves of st into mbuf[mtop:]; return how many (-1: no room)."""
    n = gen_moves(st, prm, tmp)
    first_empty = first_empty_pile(st, prm)
    lone_rule = (flags & F_LONE) != 0 and prm[P_FILL] == FILL_NONE
    k = 0
    for i in range(n):
        m = tmp[i]
        if never_needed(st, m, first_empty, lone_rule):
            continue
        if mtop + k >= mbuf.shape[0]:
            return -1
        sc = move_score(st, prm, m) if (flags & F_ORDER) != 0 else np.int64(0)
        if noise > 0:
            rng[0] = nb_xorshift64(rng[0])
            sc += np.int64(rng[0] % np.uint64(noise))
        # insertion by score, stable (ties keep engine order)
        j = k
        while j > 0 and scores[j - 1] < sc:
            scores[j] = scores[j - 1]
            mbuf[mtop + j] = mbuf[mtop + j - 1]
            j -= 1
        scores[j] = sc
        mbuf[mtop + j] = m
        k += 1
    return k


@nb.njit(cache=True)
def _undo_safe(st, prm, abuf, start, stop, keys, lin, ksum):  # noqa: ANN001, ANN202 (numba)
    for j in range(stop - 1, start - 1, -1):
        undo_move(st, prm, played_move(abuf[j]), played_revealed(abuf[j]))
        _rekey(st, prm, keys, lin, ksum, move_from(played_move(abuf[j])))


@nb.njit(cache=True, inline="always")
def _reach(frames, d, tidx, found):  # noqa: ANN001, ANN202 (numba)
    """Frame d reaches a position not expanded again (`tt_find`'s answer ``found``): one proven lost adds
    nothing, one on Tarjan's stack lowers its low link, any other (finished without a proof, or no
    room in the table) leaves something below frame d unexplored."""
    if found >= 0 and tidx[found] >= 0:
        frames[d, FR_LOW] = min(frames[d, FR_LOW], np.int64(tidx[found]))
    elif found != T_LOST:
        frames[d, FR_TAINT] = 1


@nb.njit(cache=True)
def _finish_component(tt, tidx, tstack, tsp, root_index, tainted, lost):  # noqa: ANN001, ANN202 (numba)
    """Pop the finished component whose first node has index ``root_index`` off Tarjan's stack: proven
    lost (tag ``lost``) unless ``tainted``, else `DONE`. Returns the new stack pointer."""
    while True:
        tsp -= 1
        slot = tstack[tsp]
        first = tidx[slot] == root_index
        tidx[slot] = DONE
        if not tainted:
            tt_mark_lost(tt, slot, lost)
        if first:
            return tsp


@nb.njit(cache=True)
def solve(st0, prm, work, max_nodes, max_seconds, flags, seed=0, noise=0, census=None, same_root=False):  # noqa: ANN001, ANN201 (numba)
    """Search the position ``st0`` (not modified). Returns (verdict, nodes, line length, seconds).

    ``work`` is `SolverWork.arrays`. On WON, its line array (``work[W_LINE]``)
    holds in ``[:length]`` the engine move codes that win from st0.
    ``seed`` and ``noise`` add a pseudo-random term in [0, noise) to each move's
    ordering score (restarts). With ``same_root`` (and `F_KEEP_LOST`) the search
    cuts the positions proven lost by the searches of st0 before it since the last
    search without ``same_root``. With ``census`` (`strategies.solver.census.Census.arrays`)
    it also counts what the search spends its nodes on (`census_node`); without one that
    code is compiled out.
    """
    t0 = clock()
    prm = borrowed(prm)
    keys, tt, tidx, tstack, meta = (borrowed(work[W_KEYS]), borrowed(work[W_TT]), borrowed(work[W_TIDX]),
                                    borrowed(work[W_TSTACK]), borrowed(work[W_META]))
    frames, mbuf, abuf, tmp, scores, dwork, line = (borrowed(work[W_FRAMES]), borrowed(work[W_MBUF]),
                                                    borrowed(work[W_ABUF]), borrowed(work[W_TMP]),
                                                    borrowed(work[W_SCORES]), borrowed(work[W_DWORK]),
                                                    borrowed(work[W_LINE]))
    rmemo, rtable, rwork = borrowed(work[W_RMEMO]), borrowed(work[W_RTABLE]), borrowed(work[W_RWORK])
    st = borrowed(work[W_STATE])[:st0.shape[0]]
    st[:] = st0
    P = prm[P_PILES]
    scratch = borrowed(work[W_SCRATCH])
    lin, ksum, rng = scratch[:P], scratch[P:P + 2], scratch[P + 2:P + 3]
    rng[0] = np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(0x632BE59BD9B4E019)
    suit_found = prm[P_FOUND] == FOUND_SUIT
    worrying = prm[P_WORRY] != 0
    use_safe = (flags & (F_SAFE | F_STREAM)) != 0 and suit_found
    rule = home_rule(flags)
    use_dead = (flags & F_DEAD) != 0 and suit_found and not worrying
    use_relax = (flags & F_RELAX) != 0 and meta[M_RELAX] > 0 and applies_to(prm)
    gen_i = meta[M_GEN] + 1
    keep = same_root and (flags & F_KEEP_LOST) != 0
    if gen_i > GEN_LIMIT:
        # generations start again, the root's proofs and relaxed verdicts kept as root 1's
        # (`strategies.solver.table`): the search does not depend on what the table decided before
        old = meta[M_ROOT] if keep else np.int64(0)
        renumber(tt, np.int64(LOST_TAG) | old if keep else np.int64(0), np.int64(LOST_TAG | 1))
        renumber_root(rmemo, rwork, old, np.int64(1))
        gen_i = 1
        meta[M_ROOT] = 1
        meta[M_RENUMBERED] = 1
    meta[M_GEN] = gen_i
    if not keep:
        meta[M_ROOT] = gen_i
    gen = np.uint64(gen_i)
    lost = np.uint64(LOST_TAG | meta[M_ROOT])
    # incremental key: per-pile linear keys (with in-suit foundations the piles determine the position)
    incremental = suit_found
    ksum[0] = ksum[1] = 0
    for p in range(P):
        lin[p] = _pile_lin(st, prm, keys, p)
        ksum[0] += nb_mix64(lin[p])
        ksum[1] += nb_mix64(lin[p] ^ CHECK_SALT)
    D = frames.shape[0]
    nodes = 0
    index = 0  # the next depth-first index
    tsp = 0  # Tarjan's stack pointer
    next_clock = CLOCK_EVERY
    d = 0
    frames[0, FR_ALIVE] = 0
    frames[0, FR_CONFIG] = 1
    mtop = np.int64(0)  # int64 from the start, not the constant 0: see `strategies.solver.strategy.decide`
    atop = np.int64(0)
    entering = True
    while True:
        if entering:
            entering = False
            frames[d, FR_INDEX] = -1
            frames[d, FR_LOW] = NO_LOW
            frames[d, FR_TAINT] = 0
            frames[d, FR_ASTART] = atop
            if use_safe:
                atop = play_safe_moves(st, prm, abuf, atop, worrying, rule)
                for a in range(frames[d, FR_ASTART], atop):
                    _rekey(st, prm, keys, lin, ksum, move_from(played_move(abuf[a])))
            frames[d, FR_ACOUNT] = atop - frames[d, FR_ASTART]
            if frames[d, FR_ACOUNT] > 0:
                frames[d, FR_CONFIG] = 1
            if cards_home(st, prm) == DECK_SIZE:
                k = 0
                for j in range(d + 1):
                    a0 = frames[j, FR_ASTART]
                    for a in range(a0, a0 + frames[j, FR_ACOUNT]):
                        if k < line.shape[0]:
                            line[k] = played_move(abuf[a])
                        k += 1
                    if j < d:
                        if k < line.shape[0]:
                            line[k] = frames[j, FR_MOVE]
                        k += 1
                return S_WON, nodes, k, clock() - t0
            if incremental:
                key, check = ksum[0], ksum[1]
            else:
                key, check = position_key(st, prm, keys)
            found = tt_find(tt, tidx, key, check, gen, lost)
            expand = found <= T_ABSENT
            if not expand:
                _reach(frames, d, tidx, found)
                if census is not None:
                    census[0][C_TABLE_CUT] += 1
            n = 0
            if expand:
                if index >= INDEX_LIMIT:
                    return S_UNKNOWN, nodes, 0, clock() - t0
                slot = absent_slot(found)
                tt_insert(tt, tidx, slot, check, gen, index)
                tstack[tsp] = slot
                tsp += 1
                frames[d, FR_INDEX] = index
                frames[d, FR_LOW] = index
                index += 1
                nodes += 1
                if nodes >= next_clock:
                    next_clock += CLOCK_EVERY
                    if clock() - t0 > max_seconds:
                        return S_UNKNOWN, nodes, 0, clock() - t0
                if nodes > max_nodes:
                    return S_UNKNOWN, nodes, 0, clock() - t0
                if use_dead and frames[d, FR_ALIVE] == 0 and is_dead(st, prm, dwork):
                    expand = False
                    if census is not None:
                        census[0][C_DEAD] += 1
                if (expand and use_relax and frames[d, FR_CONFIG] != 0
                        and config_lost(st, prm, rmemo, rtable, rwork, meta[M_RELAX], meta[M_ROOT])):
                    expand = False
                if census is not None and expand:
                    census_node(st, prm, keys, census)
            if expand:
                n = _ordered_moves(st, prm, flags, tmp, scores, mbuf, mtop, rng, noise)
                if n < 0:
                    frames[d, FR_TAINT] = 1
                    n = 0
            # a node with no moves (cut, dead or stuck) backs up at once through the code below
            frames[d, FR_MSTART] = mtop
            frames[d, FR_MCOUNT] = n
            frames[d, FR_MIDX] = 0
            mtop += n
        i = frames[d, FR_MIDX]
        if i < frames[d, FR_MCOUNT]:
            frames[d, FR_MIDX] = i + 1
            if d + 1 >= D:
                frames[d, FR_TAINT] = 1
                continue
            m = mbuf[frames[d, FR_MSTART] + i]
            src = move_from(m)
            dst = move_to(m)
            if incremental and src < FOUNDATION and dst < FOUNDATION:
                # a tableau move: unless it uncovers a safe card, the child's key is known
                # without playing it, and a child already in the table is skipped at once
                hs = np.int64(st[src])
                bs = pile_base(prm, src)
                c = np.int64(st[bs + hs - 1])
                if not (use_safe and uncovers_safe(st, prm, src, worrying, rule)):
                    ls = lin[src] - keys[KEYS_PILE, c, hs - 1]
                    ld = lin[dst] + keys[KEYS_PILE, c, np.int64(st[dst])]
                    child = ksum[0] - nb_mix64(lin[src]) + nb_mix64(ls) - nb_mix64(lin[dst]) + nb_mix64(ld)
                    child_check = (ksum[1] - nb_mix64(lin[src] ^ CHECK_SALT) + nb_mix64(ls ^ CHECK_SALT)
                                   - nb_mix64(lin[dst] ^ CHECK_SALT) + nb_mix64(ld ^ CHECK_SALT))
                    found = tt_find(tt, tidx, child, child_check, gen, lost)
                    if found >= T_LOST:
                        _reach(frames, d, tidx, found)
                        if census is not None:
                            census[0][C_SKIPPED] += 1
                        continue
            inner = use_relax and keeps_configuration(st, prm, m)
            frames[d, FR_MOVE] = m
            frames[d, FR_REV] = apply_move(st, prm, m)
            _rekey(st, prm, keys, lin, ksum, src)
            _rekey(st, prm, keys, lin, ksum, dst)
            d += 1
            frames[d, FR_ALIVE] = use_dead and stays_alive(st, prm, m)
            frames[d, FR_CONFIG] = not inner
            entering = True
            continue
        if frames[d, FR_INDEX] >= 0 and frames[d, FR_LOW] == frames[d, FR_INDEX]:
            tsp = _finish_component(tt, tidx, tstack, tsp, frames[d, FR_INDEX], frames[d, FR_TAINT] != 0, lost)
            frames[d, FR_LOW] = NO_LOW
        mtop = frames[d, FR_MSTART]
        _undo_safe(st, prm, abuf, frames[d, FR_ASTART], atop, keys, lin, ksum)
        atop = frames[d, FR_ASTART]
        if d == 0:
            break
        d -= 1
        frames[d, FR_LOW] = min(frames[d, FR_LOW], frames[d + 1, FR_LOW])
        frames[d, FR_TAINT] |= frames[d + 1, FR_TAINT]
        undo_move(st, prm, frames[d, FR_MOVE], frames[d, FR_REV])
        _rekey(st, prm, keys, lin, ksum, move_from(frames[d, FR_MOVE]))
        _rekey(st, prm, keys, lin, ksum, move_to(frames[d, FR_MOVE]))
    if frames[0, FR_TAINT] != 0:
        return S_UNKNOWN, nodes, 0, clock() - t0
    return S_LOST, nodes, 0, clock() - t0


class SolverWork:
    """The solver's memory, allocated once per strategy and rules: the table and work arrays.

    Sized for every position of the rules ``prm`` (any pile heights): the keys
    cover `MAX_PILE_CAP` heights, the move buffers hold `sim.engine.new_moves`.
    Along a path of at most ``max_depth`` moves the safe moves home number at
    most 52 plus one per path move (a move can take at most one card back from
    a foundation), so ``abuf`` never fills and a winning line fits ``line``.
    ``mbuf`` (48 ordered moves per level on average) may fill: the search then
    says unknown. ``state`` is where the search plays (a copy of its root, with
    room for the tallest piles), ``scratch`` its incremental key and random
    state: arrays the caller owns, so that the search can borrow them
    (`sim.borrow`).
    """

    def __init__(self, prm: np.ndarray, tt_mb: float, max_depth: int = 8192, relax_states: int = 0) -> None:
        from strategies.solver.dead import new_dead_work
        from strategies.solver.hash import make_keys
        from strategies.solver.relax_cut import new_relax_cut

        size = table_slots(tt_mb)
        self.prm = prm
        self.keys = make_keys(MAX_PILE_CAP)
        self.tt = np.zeros(size, dtype=np.uint64)
        self.tt.fill(0)  # touch every page now, not in the middle of a timed search
        self.tidx = np.zeros(size, dtype=np.int32)
        self.tstack = np.zeros(size, dtype=np.int32)  # a slot on Tarjan's stack is never overwritten
        self.meta = np.zeros(META_SIZE, dtype=np.int64)
        self.frames = np.zeros((max_depth, FRAME_FIELDS), dtype=np.int64)
        self.mbuf = np.zeros(max_depth * 48, dtype=np.int64)
        self.abuf = np.zeros(max_depth + DECK_SIZE, dtype=np.int64)
        self.tmp = new_moves(prm)
        self.scores = np.zeros(int(prm[P_MOVES]), dtype=np.int64)
        self.dwork = new_dead_work(int(prm[P_PILES]))
        self.line = np.zeros(2 * max_depth + DECK_SIZE, dtype=np.int64)  # the path plus its safe moves
        self.meta[M_RELAX] = relax_states
        self.rmemo, self.rtable, self.rwork = new_relax_cut(int(prm[P_PILES]), relax_states)
        self.state = np.zeros(state_size(int(prm[P_PILES]), MAX_PILE_CAP), dtype=np.int8)
        self.scratch = np.zeros(int(prm[P_PILES]) + 3, dtype=np.uint64)

    def arrays(self) -> tuple:
        """The arrays as `solve` takes them (``work``), in the order of the ``W_*`` names."""
        return (self.keys, self.tt, self.tidx, self.tstack, self.meta, self.frames, self.mbuf, self.abuf, self.tmp,
                self.scores, self.dwork, self.line, self.rmemo, self.rtable, self.rwork, self.state, self.scratch)

    @property
    def tt_bytes(self) -> int:
        """Bytes of the table with its bookkeeping (at most ``tt_mb`` MiB)."""
        return int(self.tt.nbytes + self.tidx.nbytes + self.tstack.nbytes)
