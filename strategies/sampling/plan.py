"""Plans: the `sampling` player's candidates, made honest up to the next card turned up (``plans=true``).

Sample-then-solve suffers strategy fusion: the solver of each completion plays
as if it knew the hidden cards. The move vote (`strategies.sampling.strategy`) scores a
move m by solving each completion after m, so a move that wins on completion A
by going on to turn up pile 3 and on completion B by turning up pile 7 scores
as a sure win, although the player must choose between 3 and 7 before it sees
either card. Extended perfect-information Monte Carlo (Arjonilla, Saffidine
and Cazenave, 2024) delays the solver's clairvoyance until the next reveal;
this module does it by voting on plans instead of moves.

A *plan* is the start of a completion's winning line up to and including its
first move that turns a card up. Why a plan is honest and playable on every
completion: before that move no card is turned up, so every move of the plan
takes an exposed card that the player sees (face up now, or moved there by the
plan) to a place the player sees (a face-up card, an empty pile, a
foundation); its legality depends only on those cards, and whether a move turns
a card up depends only on the pile's height and face-down count. So the plan
is legal on every completion consistent with the table (the real deal among
them), and it turns up its card at the same move on each.

At a decision where it would compare moves, with ``plans``:

1. as in the move vote, each completion is solved on ``sample_nodes`` nodes
   (or keeps its line, or stays proven lost); the plan of each winning line is
   its candidate, and completions with the same plan pool their votes;
2. when every winning completion has the same plan, it is played without a
   comparison; otherwise each candidate plan, most votes first (then the
   heuristic order of its first move, then the shorter plan), at most
   ``candidates`` of them, is scored on every completion: a completion whose
   winning line starts with the plan scores 2; one proven lost scores 0 (lost
   whatever is played); with ``shift``, one whose winning line, with the plan
   moved to the front (the plan, then the line without the first occurrence of
   each of the plan's moves), replays as a win scores 2 without a search;
   otherwise the plan is played on the completion and the position after its
   reveal solved on ``sample_nodes``: won 2, undecided 1, lost 0. A candidate
   is dropped as soon as it can no longer beat the best. The best plan has the
   highest total, then the shortest winning lines in all, then the most votes;
3. it plays the plan's first move and keeps the rest: at the following
   decisions it plays the plan's next move without sampling, until the plan's
   reveal has been played. The lines found for the chosen plan are kept with
   the completions (`strategies.sampling.keep`), so after the reveal each
   completion that won through the plan votes with the rest of its line.

The solver's clairvoyance is thereby delayed by one reveal: a candidate scores
a win on a completion only if that completion is won *after* the one sequence
of moves the player will in fact play, up to the card it will see next. The
moves in between cost no solver work at all (a plan's moves are decided at
once), which is where the nodes a deal go down.

``tiebreak`` and ``reveal`` order the move vote's ties; a plan always ends in a
reveal, so they have nothing to add here, and the strategy refuses them with
``plans``. For the same reason a plan never brings back a position seen before
(a card turned up stays up), so the move vote's guard against wandering in
circles (step 4 of `strategies.sampling.strategy`) has nothing to do here either. Only face-up cards, the
foundations and the completions are read.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from sim.engine import SCRATCH_MICROS, SCRATCH_NODES, apply_move
from strategies.greedy import greedy_policy
from strategies.sampling.keep import KEEP_LOST, KEEP_NONE, KEEP_WON, LINE_SLOTS, take_best
from strategies.sampling.solve import solve_completion
from strategies.solver.line import line_wins
from strategies.solver.order import move_score
from strategies.solver.search import S_LOST, S_WON, W_LINE

PLAN_SLOTS = 1 + LINE_SLOTS
"""Scratch slots of the plan in progress: its length, then the moves still to play."""


@nb.njit(cache=True)
def plan_of(sample, prm, line, length, out):  # noqa: ANN001, ANN201 (numba)
    """The plan of the winning line ``line[:length]`` on the completion ``sample`` (not changed): its moves
    up to and including the first that turns a card up, written into ``out``; returns its length, or 0 if
    the line turns no card up within ``out``'s slots."""
    s = sample.copy()
    for k in range(min(length, out.shape[0])):
        out[k] = line[k]
        if apply_move(s, prm, line[k]) != 0:
            return k + 1
    return 0


@nb.njit(cache=True)
def shift_plan(sample, prm, line, length, plan, plen, out, mbuf):  # noqa: ANN001, ANN201 (numba)
    """A winning line of the completion ``sample`` that starts with ``plan[:plen]``, made from its winning
    line ``line[:length]`` without a search: the plan, then the line without the first occurrence of each
    of the plan's moves. Writes it into ``out`` and returns its length, or -1 if it does not fit or does
    not win when replayed move by move (`line_wins`), so a line it returns is a real win."""
    if plen > out.shape[0]:
        return -1
    dropped = np.zeros(length, dtype=np.bool_)
    for a in range(plen):
        out[a] = plan[a]
        for b in range(length):
            if not dropped[b] and line[b] == plan[a]:
                dropped[b] = True
                break
    k = plen
    for b in range(length):
        if dropped[b]:
            continue
        if k >= out.shape[0]:
            return -1
        out[k] = line[b]
        k += 1
    if not line_wins(sample.copy(), prm, out, k, mbuf):
        return -1
    return k


@nb.njit(cache=True)
def _starts_with(line, length, plan, plen):  # noqa: ANN001, ANN202 (numba)
    if length < plen:
        return False
    for a in range(plen):
        if line[a] != plan[a]:
            return False
    return True


@nb.njit(cache=True)
def completion_plan(j, samples, status, lines, llen, prm, cfg, work, budget, unit, tmp):  # noqa: ANN001, ANN201 (numba)
    """Completion ``j``'s plan, written to ``tmp``, from its winning line: the one kept in ``lines`` (``status``
    `KEEP_WON`), or one solved now on ``budget`` nodes, which is kept when it fits and marks the completion
    `KEEP_LOST` when the solve proves it lost. Returns (the plan's length, 0 when the completion has no winning
    line; the winning line's length; nodes; seconds): the first stage of `by_plans` and of the bandit's rounds."""
    if status[j] == KEEP_LOST:
        return 0, 0, 0, 0.0
    if status[j] == KEEP_WON:
        return plan_of(samples[j], prm, lines[j], llen[j], tmp), llen[j], 0, 0.0
    v, used, length, sec = solve_completion(samples[j], prm, cfg, work, budget, unit)
    if v == S_LOST:
        status[j] = KEEP_LOST
    if v != S_WON or length == 0:
        return 0, 0, used, sec
    line = work[W_LINE]
    if length <= LINE_SLOTS:
        status[j] = KEEP_WON
        llen[j] = length
        lines[j, :length] = line[:length]
    return plan_of(samples[j], prm, line, length, tmp), length, used, sec


@nb.njit(cache=True)
def by_plans(st, prm, moves, n, cfg, work, budget, unit, candidates, shift, rng, scratch, samples, status, lines, llen,  # noqa: ANN001, ANN201 (numba)
             mbuf, plan_block):
    """Steps 1-3 of the module text on the completions ``samples`` with what is kept of each (``status``,
    ``lines``, ``llen``). Returns the move's index (greedy's when no completion is won); leaves in those
    arrays each completion's status after the move, and in ``plan_block`` (`PLAN_SLOTS`) the rest of the
    chosen plan. ``cfg``/``work`` are the solver's configuration and work arrays; ``budget``,
    ``candidates`` and ``shift`` the sampling parameters of those names, ``unit`` the restart unit of
    a completion's solve (`strategies.sampling.solve.restart_unit`)."""
    S = samples.shape[0]
    line = work[W_LINE]
    plans = np.empty((S, LINE_SLOTS), dtype=np.int64)  # the distinct plans
    plen = np.zeros(S, dtype=np.int64)
    votes = np.zeros(S, dtype=np.int64)
    pid = np.full(S, -1, dtype=np.int64)  # completion j's plan, or -1 (no winning line)
    wlen = np.zeros(S, dtype=np.int64)  # length of completion j's winning line
    tmp = np.empty(LINE_SLOTS, dtype=np.int64)
    nodes = 0
    seconds = 0.0
    D = 0
    # stage 1: each completion's winning line (kept, or solved now) and its plan
    for j in range(S):
        k, wlen[j], used, sec = completion_plan(j, samples, status, lines, llen, prm, cfg, work, budget, unit, tmp)
        nodes += used
        seconds += sec
        if k == 0:
            continue
        for d in range(D):
            if plen[d] == k and _starts_with(tmp, k, plans[d], k):
                pid[j] = d
                break
        if pid[j] < 0:
            plans[D, :k] = tmp[:k]
            plen[D] = k
            pid[j] = D
            D += 1
        votes[pid[j]] += 1
    scratch[SCRATCH_NODES] += nodes
    scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
    plan_block[0] = 0
    if D == 0:  # no completion won: no line to keep either
        return no_plan_won(st, prm, moves, n, cfg, rng, scratch, status, llen)
    order = candidate_order(st, prm, plans, plen, votes, D)
    # stage 2: each candidate plan on every completion; what each finds after the plan is kept for the best
    best, best_len, best_d = -1, 0, order[0]
    best_st = np.full(S, -1, dtype=np.int64)  # status after the plan's first move (-1: not evaluated)
    best_lens = np.zeros(S, dtype=np.int64)
    best_lines = np.empty((S, LINE_SLOTS), dtype=np.int64)
    cur_st = np.full(S, -1, dtype=np.int64)
    cur_len = np.zeros(S, dtype=np.int64)
    cur_lines = np.empty((S, LINE_SLOTS), dtype=np.int64)
    out = np.empty(LINE_SLOTS + 1, dtype=np.int64)
    s2 = np.empty(samples.shape[1], dtype=np.int8)
    nodes = 0
    seconds = 0.0
    for a in range(min(D, candidates) if D > 1 else 1):
        d = order[a]
        pl, k = plans[d], plen[d]
        score = 0
        total = 0
        cur_st[:] = -1
        for j in range(S):
            reach = score + 2 * (S - j)
            if D > 1 and (reach < best or (reach == best and total >= best_len)):
                score = -1
                break
            if status[j] == KEEP_LOST:
                continue
            if pid[j] == d:  # its own line starts with the plan
                score += 2
                total += wlen[j]
                if status[j] == KEEP_WON:
                    _keep_after_first(cur_st, cur_len, cur_lines, j, lines[j], llen[j])
                continue
            if shift and status[j] == KEEP_WON:
                w = shift_plan(samples[j], prm, lines[j], llen[j], pl, k, out, mbuf)
                if w >= 0:
                    score += 2
                    total += w
                    _keep_after_first(cur_st, cur_len, cur_lines, j, out, w)
                    continue
            if D == 1:  # nothing to compare: no search for the others
                continue
            s2[:] = samples[j]
            for b in range(k):
                apply_move(s2, prm, pl[b])
            v, used, length, sec = solve_completion(s2, prm, cfg, work, budget, unit)
            nodes += used
            seconds += sec
            if v == S_WON:
                score += 2
                total += k + length
                if k - 1 + length <= LINE_SLOTS:
                    cur_st[j] = KEEP_WON
                    cur_len[j] = k - 1 + length
                    cur_lines[j, : k - 1] = pl[1:k]
                    cur_lines[j, k - 1 : k - 1 + length] = line[:length]
            elif v != S_LOST:
                score += 1
                total += 1000
        if score > best or (score == best and total < best_len):
            best, best_len, best_d = score, total, d
            take_best(cur_st, cur_len, cur_lines, best_st, best_lens, best_lines)
    scratch[SCRATCH_NODES] += nodes
    scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
    pl, k = plans[best_d], plen[best_d]
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
        if best_st[j] == KEEP_WON:
            status[j] = KEEP_WON
            llen[j] = best_lens[j]
            lines[j, : llen[j]] = best_lines[j, : llen[j]]
    plan_block[0] = k - 1
    plan_block[1:k] = pl[1:k]
    return i


@nb.njit(cache=True)
def no_plan_won(st, prm, moves, n, cfg, rng, scratch, status, llen):  # noqa: ANN001, ANN201 (numba)
    """Greedy's move, when no completion has a winning line: every completion not proven lost keeps nothing."""
    for j in range(status.shape[0]):
        if status[j] != KEEP_LOST:
            status[j] = KEEP_NONE
            llen[j] = 0
    return greedy_policy(st, prm, moves, n, cfg, rng, scratch)


@nb.njit(cache=True)
def candidate_order(st, prm, plans, plen, votes, D):  # noqa: ANN001, ANN201 (numba)
    """The first ``D`` plans in the order they are tried: most votes, then the heuristic order of the first move
    (read blind), then the shorter plan; ties keep their order."""
    order = np.arange(D)
    okey = np.empty(D, dtype=np.int64)
    for d in range(D):
        okey[d] = move_score(st, prm, plans[d, 0], True)
    for a in range(1, D):
        d = order[a]
        b = a
        while b > 0 and _before(d, order[b - 1], votes, okey, plen):
            order[b] = order[b - 1]
            b -= 1
        order[b] = d
    return order


@nb.njit(cache=True)
def _before(d, e, votes, okey, plen):  # noqa: ANN001, ANN202 (numba)
    """Whether candidate plan d goes before e: more votes, then the better first move, then shorter."""
    if votes[d] != votes[e]:
        return votes[d] > votes[e]
    if okey[d] != okey[e]:
        return okey[d] > okey[e]
    return plen[d] < plen[e]


@nb.njit(cache=True)
def _keep_after_first(cur_st, cur_len, cur_lines, j, w, length):  # noqa: ANN001, ANN202 (numba)
    """Completion j is won by w[:length], which starts with the plan: keep its rest after the first move."""
    if length - 1 <= LINE_SLOTS:
        cur_st[j] = KEEP_WON
        cur_len[j] = length - 1
        cur_lines[j, : length - 1] = w[1:length]
