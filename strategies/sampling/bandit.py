"""The bandit over decisions: the `sampling` player's comparison of plans by successive halving (``bandit=true``).

Version 12 (`strategies.sampling.plan`) scores up to ``candidates`` plans on
every completion with the same small solve, and plays the one that wins most.
Here the same budget is spent where the choice is made:

1. **Candidates are decisions.** A plan (a winning line's moves up to and
   including its first card turned up) is what the player decides between
   reveals. Two plans that reach the same table before their reveal (the same
   face-up cards in the same places, the same face-down counts and
   foundations: `visible_key`) and then turn up the same pile's card are one
   decision reached in two move orders: the table after them is the same on
   every completion. They are merged (their votes pooled; the shorter plan is
   played), so a decision that several winning lines reach in different orders
   is not split into weak candidates. A completion won through one order is
   won through the other (the line's rest after the reveal is kept behind the
   played plan).
2. **Successive halving over the candidates.** Every candidate is scored on
   the same completions (common random numbers): first on the decision's
   completions with their solve of ``sample_nodes`` (a completion whose own
   winning line starts with the plan scores 2 without a search; one proven lost
   scores 0), and the better half goes on (a candidate is dropped as soon as it
   cannot reach the half). Each of ``rounds`` further rounds draws
   ``round_samples`` fresh completions and solves each survivor after its plan
   on each of them with twice the previous round's node budget; the better half
   goes on again. The work of a round is about the same (half the candidates,
   twice the nodes each), and it goes to the few plans still in doubt. The best
   survivor by its total over all the completions it was scored on is played.
3. **Exact enumeration late.** With at most ``exact_hidden`` cards face down
   the completions are not drawn: every arrangement of the unseen cards into the
   face-down slots is one (`exact_layouts`; 3 cards: 6), weighted by how
   often the player's own draw (`strategies.sampling.draw.draw_completion`)
   gives it where kings go to the bottom at the deal, and arrangements that
   contradict a face-up king resting on face-down cards are left out. The later
   rounds then solve again, on a budget growing fourfold each round, only the
   arrangements a survivor left undecided.

With ``reveals`` every move that turns a card up now is a candidate too (a
one-move plan), after the plans the completions' winning lines make.

Measured (`strategies.sampling.strategy`, version 13): none of this wins more
than version 12's plan vote on the same budget. Merging and exact enumeration
change almost no choice; the later rounds change many choices and win no more
(the candidates that survive are near-equal under the clairvoyant solve that
scores them: what is left is that solve's bias, not the noise of the samples);
the extra reveals win fewer. It stays off by default.

Only face-up cards, the foundations, the face-down counts and the completions
are read.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    P_KTB,
    P_PILES,
    SCRATCH_MICROS,
    SCRATCH_NODES,
    apply_move,
    down_at,
    fheight_at,
    pile_base,
)
from sim.rng import nb_mix64
from strategies.sampling.draw import _fill, draw_completion
from strategies.sampling.keep import KEEP_LOST, KEEP_NONE, KEEP_WON, LINE_SLOTS, cards_in_sight
from strategies.sampling.plan import candidate_order, completion_plan, no_plan_won, shift_plan
from strategies.sampling.solve import restart_unit, sample_work, solve_completion
from strategies.solver.search import S_LOST, S_WON, W_LINE

EXACT_MAX = 5
"""Most face-down cards enumerated exactly (5! = 120 arrangements); ``exact_hidden`` is capped here."""


@nb.njit(cache=True)
def visible_key(st, prm):  # noqa: ANN001, ANN201 (numba)
    """A nonzero 63-bit key of what a player sees: face-up cards by pile and place, face-down counts, foundations."""
    P = prm[P_PILES]
    total = np.uint64(0)
    for p in range(P):
        d = np.int64(st[down_at(P, p)])
        lin = np.uint64(p + 1) * np.uint64(0x9E3779B97F4A7C15) + np.uint64(d) * np.uint64(0xBF58476D1CE4E5B9)
        base = pile_base(prm, p)
        for i in range(d, np.int64(st[p])):
            lin += nb_mix64(np.uint64(np.int64(st[base + i]) * 64 + i + 1))
        total += nb_mix64(lin)
    for f in range(4):
        total += nb_mix64(np.uint64(np.int64(st[fheight_at(P, f)]) + 16 * f + 7))
    return np.int64(total >> np.uint64(1)) | 1


@nb.njit(cache=True)
def exact_layouts(st, prm):  # noqa: ANN001, ANN201 (numba)
    """Every completion of the face-down slots of st (at most `EXACT_MAX` of them) with its weight: the number
    of orders of the unseen cards that `draw_completion`'s dealing (hidden kings under the other hidden cards
    where kings go to the bottom) turns into it; orders it would draw again (a non-king under a face-up king
    resting on face-down cards) count for none. Returns (layouts, weights), distinct layouts, in a fixed
    order (the orders of the unseen cards, lowest first). Reads only face-up cards and the foundations."""
    seen = cards_in_sight(st, prm)
    cards = np.zeros(DECK_SIZE, dtype=np.int64)
    u = 0
    for c in range(DECK_SIZE):
        if not seen[c]:
            cards[u] = c
            u += 1
    assert u <= EXACT_MAX
    fact = 1
    for k in range(2, u + 1):
        fact *= k
    lay = np.empty((fact, st.shape[0]), dtype=np.int8)
    wts = np.zeros(fact, dtype=np.int64)
    L = 0
    ktb = prm[P_KTB] != 0
    perm = np.empty(u, dtype=np.int64)
    left = np.empty(u, dtype=np.int64)
    out = st.copy()
    for idx in range(fact):
        left[:] = cards[:u]
        r = idx
        m = u
        for k in range(u):  # the idx-th order (factorial number system)
            f = 1
            for t in range(2, m):
                f *= t
            q = r // f
            r -= q * f
            perm[k] = left[q]
            for t in range(q, m - 1):
                left[t] = left[t + 1]
            m -= 1
        out[:] = st
        if not _fill(st, prm, out, perm, ktb):
            continue
        found = -1
        for a in range(L):
            same = True
            for t in range(st.shape[0]):
                if lay[a, t] != out[t]:
                    same = False
                    break
            if same:
                found = a
                break
        if found >= 0:
            wts[found] += 1
        else:
            lay[L, :] = out
            wts[L] = 1
            L += 1
    return lay[:L], wts[:L]


@nb.njit(cache=True)
def plan_key(sample, prm, pl, k):  # noqa: ANN001, ANN201 (numba)
    """The decision a plan pl[:k] makes: the table before its reveal (`visible_key`) and the revealing move."""
    s = sample.copy()
    for b in range(k - 1):
        apply_move(s, prm, pl[b])
    return np.int64(nb_mix64(np.uint64(visible_key(s, prm)) ^ nb_mix64(np.uint64(pl[k - 1] + 1))) >> np.uint64(1))


@nb.njit(cache=True)
def _better(c, e, score, total, rank):  # noqa: ANN001, ANN202 (numba)
    """Whether candidate c ranks above e: the higher score, then the shorter winning lines, then the earlier."""
    if score[c] != score[e]:
        return score[c] > score[e]
    if total[c] != total[e]:
        return total[c] < total[e]
    return rank[c] < rank[e]


@nb.njit(cache=True)
def _threshold(done, nd, keep, score):  # noqa: ANN001, ANN202 (numba)
    """The keep-th highest score among the candidates done[:nd] (by plan) of this round (-1 while fewer are done)."""
    if nd < keep:
        return -1
    tmp = np.sort(score[done[:nd]])
    return tmp[nd - keep]


@nb.njit(cache=True)
def _solve_after(sample, prm, pl, k, cfg, work, budget, unit, s2):  # noqa: ANN001, ANN202 (numba)
    s2[:] = sample
    for b in range(k):
        apply_move(s2, prm, pl[b])
    return solve_completion(s2, prm, cfg, sample_work(work, budget), budget, restart_unit(cfg, budget, unit))


@nb.njit(cache=True)
def by_bandit(st, prm, moves, n, cfg, work, budget, unit, candidates, shift, rounds, round_samples, exact, reveals, rng,  # noqa: ANN001, ANN201, C901, PLR0912, PLR0915 (numba)
              scratch, samples, weights, status, lines, llen, mbuf, plan_block, pool):
    """Steps 1-3 of the module text on the completions ``samples`` (weighted by ``weights``) with what is kept of
    each (``status``, ``lines``, ``llen``). Returns the move's index (greedy's when no completion is won); leaves
    in those arrays each completion's status after the move, and in ``plan_block`` the rest of the chosen plan.
    ``work`` is the solver's whole work arrays (each solve takes its window, `sample_work`); ``budget`` the node
    budget of the first comparison; ``exact``: the completions are every arrangement (`exact_layouts`), so the later
    rounds solve the undecided ones again instead of drawing new ones; ``reveals``: every move that turns a card up
    is a candidate too (a one-move plan), after those the completions' lines make."""
    S = samples.shape[0]
    line = work[W_LINE]
    plans = np.empty((S + n, LINE_SLOTS), dtype=np.int64)  # the decisions: the plans' and the reveals' own
    plen = np.zeros(S + n, dtype=np.int64)
    pkey = np.zeros(S + n, dtype=np.int64)
    votes = np.zeros(S + n, dtype=np.int64)
    pid = np.full(S, -1, dtype=np.int64)  # completion j's decision, or -1 (no winning line)
    jplen = np.zeros(S, dtype=np.int64)  # length of completion j's own plan (a transposition of its decision's)
    wlen = np.zeros(S, dtype=np.int64)
    tmp = np.empty(LINE_SLOTS, dtype=np.int64)
    nodes = 0
    seconds = 0.0
    D = 0
    uw = restart_unit(cfg, budget, unit)
    w0 = sample_work(work, budget)
    # stage 1: each completion's winning line (kept, or solved now), its plan and the decision it makes
    for j in range(S):
        k, wlen[j], used, sec = completion_plan(j, samples, status, lines, llen, prm, cfg, w0, budget, uw, tmp)
        nodes += used
        seconds += sec
        if k == 0:
            continue
        key = plan_key(samples[j], prm, tmp, k)
        for d in range(D):
            if pkey[d] == key:
                pid[j] = d
                break
        if pid[j] < 0:
            pid[j] = D
            pkey[D] = key
            plen[D] = 0
            D += 1
        d = pid[j]
        if plen[d] == 0 or k < plen[d]:  # the shorter order of the same decision is played
            plans[d, :k] = tmp[:k]
            plen[d] = k
        jplen[j] = k
        votes[d] += weights[j]
    plan_block[0] = 0
    if reveals and D > 0:  # every move that turns a card up now is a decision, won on a completion or not
        s2 = np.empty(samples.shape[1], dtype=np.int8)
        for a in range(n):
            s2[:] = samples[0]
            if apply_move(s2, prm, moves[a]) == 0:
                continue
            tmp[0] = moves[a]
            key = plan_key(samples[0], prm, tmp, 1)
            known = False
            for d in range(D):
                if pkey[d] == key:
                    known = True
            if not known:
                plans[D, 0] = moves[a]
                plen[D] = 1
                pkey[D] = key
                D += 1
    if D == 0:
        scratch[SCRATCH_NODES] += nodes
        scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
        return no_plan_won(st, prm, moves, n, cfg, rng, scratch, status, llen)
    order = candidate_order(st, prm, plans, plen, votes, D)
    C = min(D, candidates) if D > 1 else 1
    rank = np.empty(D, dtype=np.int64)
    for a in range(D):
        rank[order[a]] = a
    # round 0: the candidates on the decision's completions; each one's statuses after its first move are kept
    cst = np.full((C, S), -1, dtype=np.int64)
    clen = np.zeros((C, S), dtype=np.int64)
    clines = np.empty((C, S, LINE_SLOTS), dtype=np.int64)
    res = np.zeros((C, S), dtype=np.int64)  # 2 won, 1 undecided, 0 lost (exact: solved again while 1)
    score = np.zeros(D, dtype=np.int64)
    total = np.zeros(D, dtype=np.int64)
    alive = np.zeros(C, dtype=np.bool_)
    out = np.empty(LINE_SLOTS + 1, dtype=np.int64)
    s2 = np.empty(samples.shape[1], dtype=np.int8)
    wsum = 0
    for j in range(S):
        wsum += weights[j]
    keep = max(1, (C + 1) // 2) if rounds > 0 else 1
    done = np.empty(C, dtype=np.int64)
    nd = 0
    for a in range(C):
        d = order[a]
        pl, k = plans[d], plen[d]
        sc = 0
        tot = 0
        rest = wsum
        dropped = False
        for j in range(S):
            thr = _threshold(done, nd, keep, score)
            if C > 1 and sc + 2 * rest < thr:
                dropped = True
                break
            rest -= weights[j]
            w = weights[j]
            if status[j] == KEEP_LOST:
                cst[a, j] = KEEP_LOST
                continue
            if pid[j] == d:  # its own line makes this decision
                res[a, j] = 2
                sc += 2 * w
                tot += wlen[j] * w
                if status[j] == KEEP_WON:
                    kj = jplen[j]
                    m = k - 1 + llen[j] - kj
                    if m <= LINE_SLOTS:
                        cst[a, j] = KEEP_WON
                        clen[a, j] = m
                        clines[a, j, : k - 1] = pl[1:k]
                        clines[a, j, k - 1 : m] = lines[j, kj : llen[j]]
                continue
            if shift and status[j] == KEEP_WON:
                ln = shift_plan(samples[j], prm, lines[j], llen[j], pl, k, out, mbuf)
                if ln >= 0:
                    res[a, j] = 2
                    sc += 2 * w
                    tot += ln * w
                    if ln - 1 <= LINE_SLOTS:
                        cst[a, j] = KEEP_WON
                        clen[a, j] = ln - 1
                        clines[a, j, : ln - 1] = out[1:ln]
                    continue
            if C == 1:  # nothing to compare: no search for the others
                continue
            v, used, length, sec = _solve_after(samples[j], prm, pl, k, cfg, work, budget, unit, s2)
            nodes += used
            seconds += sec
            cst[a, j] = KEEP_NONE
            if v == S_WON:
                res[a, j] = 2
                sc += 2 * w
                tot += (k + length) * w
                if k - 1 + length <= LINE_SLOTS:
                    cst[a, j] = KEEP_WON
                    clen[a, j] = k - 1 + length
                    clines[a, j, : k - 1] = pl[1:k]
                    clines[a, j, k - 1 : k - 1 + length] = line[:length]
            elif v == S_LOST:
                cst[a, j] = KEEP_LOST
            else:
                res[a, j] = 1
                sc += w
                tot += 1000 * w
        if dropped:
            continue
        score[d] = sc
        total[d] = tot
        alive[a] = True
        done[nd] = d
        nd += 1
    _halve(alive, order, keep, score, total, rank)
    # later rounds: the survivors on fresh completions (or the undecided arrangements) with more nodes each
    R = round_samples if round_samples > 0 else S
    fresh = np.empty((R, samples.shape[1]), dtype=np.int8)
    b = budget
    for r in range(rounds):
        live = 0
        for a in range(C):
            if alive[a]:
                live += 1
        if live <= 1:
            break
        keep = max(1, (live + 1) // 2) if r + 1 < rounds else 1
        if exact:
            b *= 4
            for a in range(C):
                if not alive[a]:
                    continue
                d = order[a]
                for j in range(S):
                    if res[a, j] != 1:
                        continue
                    v, used, length, sec = _solve_after(samples[j], prm, plans[d], plen[d], cfg, work, b, unit, s2)
                    nodes += used
                    seconds += sec
                    if v == S_WON:
                        res[a, j] = 2
                        score[d] += weights[j]
                        total[d] += (plen[d] + length - 1000) * weights[j]
                    elif v == S_LOST:
                        res[a, j] = 0
                        score[d] -= weights[j]
                        total[d] -= 1000 * weights[j]
        else:
            b *= 2
            for j in range(R):
                fresh[j, :] = st
                draw_completion(st, prm, fresh[j], rng, pool)
            nd = 0
            for a in range(C):
                if not alive[a]:
                    continue
                d = order[a]
                sc = 0
                tot = 0
                dropped = False
                for j in range(R):
                    thr = _threshold(done, nd, keep, score)
                    if live > 1 and score[d] + sc + 2 * (R - j) < thr:
                        dropped = True
                        break
                    v, used, length, sec = _solve_after(fresh[j], prm, plans[d], plen[d], cfg, work, b, unit, s2)
                    nodes += used
                    seconds += sec
                    if v == S_WON:
                        sc += 2
                        tot += plen[d] + length
                    elif v != S_LOST:
                        sc += 1
                        tot += 1000
                if dropped:
                    alive[a] = False
                    continue
                score[d] += sc
                total[d] += tot
                done[nd] = d
                nd += 1
        _halve(alive, order, keep, score, total, rank)
    scratch[SCRATCH_NODES] += nodes
    scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
    best = -1
    for a in range(C):
        if alive[a] and (best < 0 or _better(order[a], order[best], score, total, rank)):
            best = a
    d = order[best]
    pl, k = plans[d], plen[d]
    i = -1
    for a in range(n):
        if moves[a] == pl[0]:
            i = a
    assert i >= 0  # a plan reads only what the player sees: its first move is legal here
    for j in range(S):
        if status[j] == KEEP_LOST:
            continue
        status[j] = KEEP_NONE
        llen[j] = 0
        if cst[best, j] == KEEP_WON:
            status[j] = KEEP_WON
            llen[j] = clen[best, j]
            lines[j, : llen[j]] = clines[best, j, : llen[j]]
        elif cst[best, j] == KEEP_LOST:
            status[j] = KEEP_LOST
    plan_block[0] = k - 1
    plan_block[1:k] = pl[1:k]
    return i


@nb.njit(cache=True)
def _halve(alive, order, keep, score, total, rank):  # noqa: ANN001, ANN202 (numba)
    """Keep alive only the ``keep`` best of the candidates alive (by `_better`)."""
    C = alive.shape[0]
    for a in range(C):
        if not alive[a]:
            continue
        above = 0
        for e in range(C):
            if e != a and alive[e] and _better(order[e], order[a], score, total, rank):
                above += 1
        if above >= keep:
            alive[a] = False
