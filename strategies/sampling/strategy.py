"""`sampling`: an honest player for face-down deals that imagines the hidden cards and solves them.

At each decision with cards still face down it:

1. plays a safe move home at once (`strategies.solver.safe`: its safety
   depends only on the foundations, which the player sees);
2. draws ``samples`` completions of the hidden cards: the cards it has not seen
   (neither face up on the tableau nor home), shuffled into the face-down
   slots with the strategy's random generator (`strategies.sampling.draw`). Where the variant moves kings
   to the bottom at the deal, each pile's hidden kings are put under its other
   hidden cards, and a completion that contradicts a face-up king resting on
   hidden cards (then all of them must be kings) is drawn again. Completions
   are consistent with everything on the table; they are not weighted by how
   the king step reorders deals, which is a close approximation. The
   completions are kept from one decision to the next with what their solves
   found (`strategies.sampling.keep`: a card that turns up is swapped into
   place, a fair conditional draw), and only those that no longer fit are
   drawn again;
3. solves every completion with the solver (`strategies.solver.strategy.decide`) on a
   budget of ``sample_nodes`` nodes (``late_nodes`` once at most ``late_hidden``
   cards are face down: version 12), except those kept with a winning line
   (its next move is their vote) or proven lost (lost whatever is played);
   the first moves of the winning lines are the candidates. When they are all the same move it plays it (there is
   nothing to compare). Otherwise each candidate, most votes first and at most
   ``candidates`` of them, is played on every completion and the result
   decided the same way: a win scores 2, an undecided result 1, a loss 0. It
   plays the candidate with the highest total, that is the move that wins in
   the most samples; among equals, with ``reveal``, one that turns a card up
   (the samples' solver sees every card, so on its own it gives looking no
   value), then the one whose winning lines are shortest in all
   (``tiebreak=length``: play makes progress rather than shuffling cards
   between equally good places) or took the fewest nodes to find
   (``tiebreak=nodes``: the easier wins), then the one with more votes, then
   the earlier in the heuristic order (`strategies.solver.order`, reading
   face-up cards only). A candidate is dropped as soon as it can no longer
   beat the best so far. A completion proven lost scores 0 for every
   candidate without a solve; the winning lines (and proofs of loss) found
   after the move it plays are kept for the next decision. With ``shift``
   (version 4; off by default), a completion won by a line that starts with
   another move first tries that line with the candidate moved to the front
   (the candidate, then the line without its first occurrence of the
   candidate): moves in different piles often commute, so a plan that makes
   the candidate later, or never needs the cards it moves, often still wins.
   The shifted line is replayed move by move (every move legal where it is
   played, every card home at the end), so a win it gives is a real win on
   that completion, found without a search; only where it fails is the
   candidate solved. The same shift keeps a completion's line across a move
   it did not start with (a safe move home played in another order, or the
   candidate chosen over its own first move) instead of solving it again;
4. a candidate that would bring back a position already seen in this game
   (known from the face-up cards) is considered only if no other candidate
   scores: a player whose samples call many moves winning could otherwise
   wander in circles;
5. when no completion is won, it plays as `greedy` does.

With ``plans`` (version 5; on by default, and in the ``fast`` preset from version 6) steps 3
and 4 compare *plans* instead of first moves (`strategies.sampling.plan`): a
plan is a winning line's moves up to and including its first move that turns a
card up, which read only face-up cards and so are playable on every
completion; each candidate plan is scored across the completions by solving
the position after its reveal, the best plan's first move is played, and its
other moves follow at the next decisions without sampling. The solver's
clairvoyance is delayed to the next reveal (extended PIMC), and the decisions
inside a plan cost no solver work. On development deals (dick-1883
2001-2300) plans with version 4's default budget (8 samples) won 106 deals at
379,000 nodes a deal against its 108 at 888,000; version 5's default drew 10
samples of 1,500 nodes (115 won at 441,000 nodes, within a second a
deal: CHANGELOG.md, sampling version 5); version 8's draws 30 of 200 (below).

It never reads a face-down card: it reads only the face-up part of each pile
and the foundations, and overwrites the hidden slots with its own draws (new or
kept). Keeping the completions (version 3) made it stronger at the same
settings (CHANGELOG.md, sampling version 3), perhaps because a kept line is a plan it goes
on with, where fresh solves at every decision may drift between plans.

Once no card is face down (at once on face-up variants) the position is fully
known, and it plays as the `solver` does (its searches with ``nodes`` /
``seconds`` in all, then the winning line; a proven loss resigns), except that
an undecided search hands over to `greedy` rather than ending undecided.

Named settings (``preset``: `PRESETS`) trade strength for time; see
docs/performance.md for the measured curve (`benchmarks/honest.py`). Up to
version 7, ``plans=false,samples=8,sample_nodes=2000`` played as version 4's
default (and version 3's) did, move for move, and
``plans=false,samples=4,sample_nodes=500,candidates=2,shift=true`` as version
4's and 5's ``fast`` preset; version 8 no longer shortens the lines and
restarts its solves in other units, so no setting of it replays them. Version 6's ``fast`` (5 samples of 600 nodes, 3
candidates, plans) won 21.7% of dick-1883 deals 1-1,000 against that 18.1%, at
0.15 s a deal against 0.11 (CHANGELOG.md, sampling version 6).

Version 7 solves each completion in a window of the transposition table
sized from ``sample_nodes`` (`sample_work`) instead of the whole table: the
same play (the same wins and nodes as version 6 on dick-1883 deals 1-1,000
with ``fast`` and 1-100 with the default), 5-7% sooner (CHANGELOG.md, sampling version 7).

Version 8 no longer shortens the completions' winning lines
(`strategies.sampling.solve`), which took about a seventh of ``fast``'s time
and changed nothing measurable in its strength, and spends the time saved on
more, smaller solves of two searches each (``sample_unit``: half the
budget): its ``fast`` draws 10 samples of 200 nodes and compares 5 candidate
plans, its default 30 samples of 200 nodes and 8 candidates. On dick-1883
deals 1-1,000 ``fast`` won 27.4% (24.7-30.3%) at 0.147 s a deal, where
version 7's won 21.7% at 0.153-0.158 s measured in the same spell, and the
default **44.6% (41.5-47.7%) at 0.89 s** a deal, where version 7's (10
samples of 1,500 nodes, every candidate) won 37.7%, unshortened at 0.78 s
(CHANGELOG.md, sampling version 8).

Version 9 plays version 8's settings on the solver's version 3, whose restarts
keep the positions earlier searches proved lost (`strategies.solver.table`):
in a completion's two searches the second cuts what the first proved lost.
The play changes a little and its strength and time do not measurably:
``fast`` on dick-1883 deals 1-300 won 79 deals at 0.148 s a deal where
version 8 won 78 at 0.147 s, side by side; the default on deals 2001-2150
won 74 at 0.946 CPU s a deal where version 8 won 76 at 0.919 s, side by side,
and 43.8% of deals 1-1,000 (CHANGELOG.md, sampling version 9).

Version 10 plays version 9's settings on the solver's version 7: when the
table's generations run out (every 32,767 searches, a few games' worth here),
a completion's second search keeps what its first proved lost, and the next
table window is cleared whole, where before only the window the searches ran in
was cleared and a bigger window could read the old generations' entries as the
new ones' (`strategies.sampling.solve.sample_work`).

Version 11: once nothing is hidden, the solver's winning line is played to
the end. Before, the engine's no-progress guard (`sim.engine.NO_PROGRESS_LIMIT`)
counted its moves and cut a line that ran more than 1,000 moves between two
cards home, and the game was stored as lost; the line's moves are now marked
as proven (`sim.engine.SCRATCH_PROVEN`). The default ``seconds`` of that solve
is the solver's, 600 instead of 10, so that its node budget, not the machine's
load, decides when it hands over to `greedy`; otherwise the moves chosen are
version 10's.

Version 12 looks harder late in the game: once at most ``late_hidden`` (9)
cards are face down, each completion is solved on ``late_nodes`` (2,000)
nodes instead of ``sample_nodes`` (200). Dick's deal's losses are spread over
the whole game, but where fewer than ten cards were face down 12 of 17 fatal
moves were ones a one-move look on the player's own information would change
(`benchmarks/blunders.py`, docs/strategies-findings.md), while the player still looked
there as at the start. On development deals (dick-1883 2001-2600) it won 285
where version 11 won 274 (17 deals won only by it, 6 only by version 11), at
0.70 CPU s a deal against 0.65; a bigger late budget (10,000) or a wider late
window (14 cards, 5,000 nodes) won no more. ``fast`` keeps ``late_hidden=0``
(it won 182 of 2001-2600 with the late look and 181 without) and so plays as
version 11's, move for move; so does ``late_hidden=0`` with any other setting.

Version 13 adds the bandit over decisions (``bandit``, off by default, so
the default and ``fast`` play as version 12's, move for move:
`strategies.sampling.bandit`, issue 64): plans that are one decision reached in
two move orders are merged; the budget is spent by successive halving (the
better half of the candidates scored again, for ``rounds`` rounds, on
``round_samples`` fresh completions with twice the nodes each round, every
candidate on the same completions); with at most ``exact_hidden`` cards face
down every arrangement of them is a completion, weighted as the draw deals it;
with ``reveals`` every move that turns a card up is a candidate besides the
winning lines' plans. Measured on development deals (dick-1883 2001-2150,
default budget otherwise, side by side with version 12 in the same spell on a
loaded machine: version 12 won 77 at 0.957 CPU s a deal, 506,540 nodes):

- ``bandit=true,rounds=0`` (merging and exact enumeration of 3 cards only) won 76
  at 0.872 s: it played as version 12 on all but one deal (0 won only by it, 1
  only by version 12). Merged transpositions and the six arrangements of
  the last three cards change almost no choice: the plans already are the
  decisions;
- with ``exact_hidden=4`` (24 arrangements) it won 76 at 0.859 s (the same
  deals as ``rounds=0``);
- one round of halving on 15 fresh completions (``rounds=1,round_samples=15``)
  won 76 at 1.174 s, 726,517 nodes: it played otherwise in many deals (26 won
  only by it, 27 only by version 12) and gained nothing. The further
  completions choose another of the near-equal best plans, not a better one:
  what is left is the bias of the clairvoyant solve after the reveal (strategy
  fusion beyond the next card), not the noise of 30 samples;
- ``reveals=true`` won 66 at 1.090 s (15 deals won only by it, 26 only by
  version 12): a reveal no
  winning line starts with is rarely the better move, and scoring it by the
  clairvoyant solve makes it look better than it is.

So no setting of the bandit reaches the targets set for this player (dick-1883 default
>= 55%, strong >= 65%, fast >= 35%), and it stays off. At a larger budget
(60 samples of 400 nodes, late 5,000, 12 candidates) on deals 2001-2050 the
plan vote won 34 at 4.06 CPU s a deal (2,577,907 nodes) and the bandit with
two rounds and ``exact_hidden=4`` 32 at 10.29 s (6,912,678 nodes; 5 won only by
it, 7 only by the plan vote), where the default won 29. On deals 2051-2100
that larger plan vote won 28 where the default won 30, so 62 of 100 against
59 in all, within the noise.

More budget spent the same way does gain, slowly, on the budget curve's deals
1-200 (docs/strategies-findings.md, "The budget curve"): 90 samples of 700
nodes, late 8,000, 14 candidates won 59.0% of Dick's deals at 9.2 CPU s a deal
(53.0% at 60 x 400, 4.3 s) and 50.0% of Castles in Spain's at 5.3 s (43.0%).
That is the ``strong`` preset: the strongest measured setting inside 10 s a
deal.

Both tiers run the same compiled code on the same random stream, so they make
the same choices.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE
from sim.engine import (
    FOUNDATION,
    P_FOUND,
    P_MOVEBUF,
    P_PILES,
    P_SIZE,
    P_WORRY,
    POLICY_RESIGN,
    POLICY_TIMEOUT,
    POLICY_UNDECIDED,
    SCRATCH_MICROS,
    SCRATCH_NODES,
    SCRATCH_PROVEN,
    apply_move,
    down_at,
    move_from,
    move_to,
    rule_params,
    top_card,
)
from sim.game import Game, View
from sim.notation import Move
from sim.position import Position
from sim.rules import FOUND_SUIT, Rules
from strategies.base import UNDECIDED, CompiledPolicy, Param, Strategy, StrategyError, _Undecided
from strategies.greedy import greedy_policy
from strategies.sampling.bandit import EXACT_MAX, by_bandit, exact_layouts, visible_key
from strategies.sampling.draw import draw_completion
from strategies.sampling.keep import (
    KEEP_LOST,
    KEEP_NONE,
    KEEP_WON,
    LINE_SLOTS,
    keep_size,
    restore_kept,
    store_kept,
    take_best,
)
from strategies.sampling.plan import PLAN_SLOTS, by_plans, shift_plan
from strategies.sampling.solve import restart_unit, sample_work, solve_completion
from strategies.solver.order import move_score
from strategies.solver.safe import SAFE_NEEDED, is_safe_home
from strategies.solver.search import (
    S_LOST,
    S_WON,
    W_LINE,
)
from strategies.solver.strategy import (
    POLICY_CONFIG,
    POLICY_WORK,
    SCRATCH_SIZE,
    SolverStrategy,
    solver_policy,
)

POLICY_SAMPLING = POLICY_WORK + 1
"""The policy's parameters (`pparams`) are the solver's (`POLICY_CONFIG`, `POLICY_WORK`) and,
at ``POLICY_SAMPLING``, the sampling configuration (an int64 array of the ``SP_*`` slots)."""
(SP_SAMPLES, SP_SAMPLE_NODES, SP_CANDIDATES, SP_TIEBREAK, SP_REVEAL, SP_SHIFT, SP_PLANS, SP_UNIT, SP_LATE_HIDDEN,
 SP_LATE_NODES, SP_BANDIT, SP_ROUNDS, SP_ROUND_SAMPLES, SP_EXACT_HIDDEN, SP_REVEALS, SP_SIZE) = range(16)
TIEBREAKS = ("length", "nodes")
"""Values of the ``tiebreak`` parameter, by their code in ``SP_TIEBREAK``."""
TIE_NODES = TIEBREAKS.index("nodes")
SEEN_SLOTS = 1 << 13
"""Size of the per-game set of positions seen (in the policy's scratch, after the solver's slots): one
entry a decision of the move vote, far more than a game's decisions (its games last about 100 moves).
Were it ever full, a new position would be taken as not seen and not stored (`_seen`): the guard
against circling would weaken, nothing else."""
PLAN_BASE = SCRATCH_SIZE + SEEN_SLOTS
"""Start of the plan in progress (`strategies.sampling.plan`, `PLAN_SLOTS`) in the scratch."""
KEEP_BASE = PLAN_BASE + PLAN_SLOTS
"""Start of the completions kept from one decision to the next (`strategies.sampling.keep`) in the scratch."""


def scratch_size(rules: Rules, samples: int) -> int:
    """Scratch slots of a game of ``rules`` with ``samples`` completions kept."""
    return KEEP_BASE + keep_size(rules.columns, samples)


@nb.njit(cache=True)
def _seen(scratch, key, insert):  # noqa: ANN001, ANN201 (numba)
    """Whether key is in the per-game set (scratch[SCRATCH_SIZE:]); insert it if asked."""
    mask = SEEN_SLOTS - 1
    slot = key & mask
    for _ in range(SEEN_SLOTS):
        v = scratch[SCRATCH_SIZE + slot]
        if v == key:
            return True
        if v == 0:
            if insert:
                scratch[SCRATCH_SIZE + slot] = key
            return False
        slot = (slot + 1) & mask
    return False  # full: forget nothing new


@nb.njit(cache=True)
def _advance(status, lines, llen, m, samples, prm, shift, tline, mbuf):  # noqa: ANN001, ANN202 (numba)
    """The kept completions' status after move m: a won line that starts with m loses its first
    move; with ``shift``, another won line that still wins with m played first (`_shift_line`)
    goes on from there; any other won line is dropped (solve again); a lost completion stays lost."""
    for j in range(status.shape[0]):
        if status[j] != KEEP_WON:
            continue
        if llen[j] > 0 and lines[j, 0] == m:
            for k in range(1, llen[j]):
                lines[j, k - 1] = lines[j, k]
            llen[j] -= 1
            continue
        rest = _shift_line(samples[j], prm, lines[j], llen[j], m, tline, mbuf) if shift else -1
        if rest >= 0:
            llen[j] = rest
            lines[j, :rest] = tline[1 : rest + 1]
        else:
            status[j] = KEEP_NONE
            llen[j] = 0


@nb.njit(cache=True)
def _shift_line(sample, prm, line, length, m, out, mbuf):  # noqa: ANN001, ANN202 (numba)
    """A winning line of the completion ``sample`` that starts with move m, made from its winning
    line line[:length] without a search: the one-move plan m shifted to the front
    (`strategies.sampling.plan.shift_plan`: m, then the line without its first m). Writes it into out
    (`LINE_SLOTS` + 1 slots) and returns the length of its rest after m, or -1 if it does not fit or
    does not win when replayed move by move, so a line it returns is a real win on that completion."""
    k = shift_plan(sample, prm, line, length, np.full(1, m, dtype=np.int64), np.int64(1), out, mbuf)
    return k - 1 if k > 0 else -1


@nb.njit(cache=True)
def sampling_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled sampling player; see the module text."""
    P = prm[P_PILES]
    hidden = 0
    for p in range(P):
        hidden += np.int64(st[down_at(P, p)])
    cfg, work, scfg = pparams[POLICY_CONFIG], pparams[POLICY_WORK], pparams[POLICY_SAMPLING]
    if hidden == 0:
        i = solver_policy(st, prm, moves, n, (cfg, work), rng, scratch)
        if i == POLICY_UNDECIDED or i == POLICY_TIMEOUT:
            return greedy_policy(st, prm, moves, n, cfg, rng, scratch)
        return i
    S = scfg[SP_SAMPLES]
    samples = np.empty((S, prm[P_SIZE]), dtype=np.int8)  # sized for this position at each decision
    status = np.zeros(S, dtype=np.int64)
    llen = np.zeros(S, dtype=np.int64)
    lines = np.empty((S, LINE_SLOTS), dtype=np.int64)
    kept = np.zeros(S, dtype=np.bool_)
    pool = np.zeros(DECK_SIZE, dtype=np.int64)
    mbuf = np.empty(prm[P_MOVEBUF], dtype=np.int64)
    tline = np.empty(LINE_SLOTS + 1, dtype=np.int64)
    for j in range(S):
        samples[j, :] = st
    restore_kept(scratch, KEEP_BASE, prm, st, samples, status, lines, llen, kept, mbuf, pool)
    for j in range(S):
        if not kept[j]:
            samples[j, :] = st
            draw_completion(st, prm, samples[j], rng, pool)
    shift = scfg[SP_SHIFT] != 0
    plan = scratch[PLAN_BASE : PLAN_BASE + PLAN_SLOTS]
    if plan[0] > 0:  # a plan in progress (`strategies.sampling.plan`): its next move, without sampling
        i = -1
        for k in range(n):
            if moves[k] == plan[1]:
                i = k
        assert i >= 0  # a plan reads only what the player sees: it stays legal until its reveal
        plan[1 : plan[0]] = plan[2 : plan[0] + 1]
        plan[0] -= 1
        _advance(status, lines, llen, moves[i], samples, prm, shift, tline, mbuf)
        store_kept(scratch, KEEP_BASE, prm, st, samples, status, lines, llen)
        return i
    i = -1
    if n == 1:
        i = 0
    elif prm[P_FOUND] == FOUND_SUIT:
        for k in range(n):
            m = moves[k]
            if move_to(m) >= FOUNDATION and move_from(m) < FOUNDATION:
                c = top_card(st, prm, move_from(m))
                if is_safe_home(st, prm, c, prm[P_WORRY] != 0, SAFE_NEEDED):
                    i = k
                    break
    budget = scfg[SP_LATE_NODES] if hidden <= scfg[SP_LATE_HIDDEN] else scfg[SP_SAMPLE_NODES]
    if i >= 0:
        _advance(status, lines, llen, moves[i], samples, prm, shift, tline, mbuf)
    elif scfg[SP_BANDIT] != 0 and hidden <= scfg[SP_EXACT_HIDDEN]:  # every arrangement of the hidden cards
        lay, wts = exact_layouts(st, prm)
        L = lay.shape[0]
        est = np.zeros(L, dtype=np.int64)
        ell = np.zeros(L, dtype=np.int64)
        eln = np.empty((L, LINE_SLOTS), dtype=np.int64)
        i = by_bandit(st, prm, moves, n, cfg, work, budget, scfg[SP_UNIT], scfg[SP_CANDIDATES], shift, scfg[SP_ROUNDS],
                      scfg[SP_ROUND_SAMPLES], True, scfg[SP_REVEALS] != 0, rng, scratch, lay, wts, est, eln, ell, mbuf,
                      plan, pool)
        for j in range(S):  # the drawn completions are not used from here on (nothing more is hidden later)
            if status[j] != KEEP_LOST:
                status[j] = KEEP_NONE
                llen[j] = 0
    elif scfg[SP_BANDIT] != 0:
        i = by_bandit(st, prm, moves, n, cfg, work, budget, scfg[SP_UNIT], scfg[SP_CANDIDATES], shift, scfg[SP_ROUNDS],
                      scfg[SP_ROUND_SAMPLES], False, scfg[SP_REVEALS] != 0, rng, scratch, samples,
                      np.ones(S, dtype=np.int64), status, lines, llen, mbuf, plan, pool)
    elif scfg[SP_PLANS] != 0:
        i = by_plans(st, prm, moves, n, cfg, sample_work(work, budget), budget, restart_unit(cfg, budget, scfg[SP_UNIT]),
                     scfg[SP_CANDIDATES], shift, rng, scratch, samples, status, lines, llen, mbuf, plan)
    else:
        i = _by_samples(st, prm, moves, n, cfg, sample_work(work, budget), budget, scfg, rng, scratch, samples,
                        status, lines, llen, tline, mbuf)
    store_kept(scratch, KEEP_BASE, prm, st, samples, status, lines, llen)
    return i


@nb.njit(cache=True)
def _by_samples(st, prm, moves, n, cfg, work, budget, scfg, rng, scratch, samples, status, lines, llen, tline, mbuf):  # noqa: ANN001, ANN202 (numba)
    """Steps 3-5 of the module text on the completions ``samples``, given what is kept of each
    (``status``, ``lines``, ``llen``: won with a line from here, lost, or to be solved); returns the
    move's index and leaves in those arrays each completion's status after the move. ``cfg``,
    ``work`` and ``scfg`` are the solver's configuration, its work arrays for a completion's solve
    (`sample_work`) and the sampling configuration, ``budget`` the node budget of a completion's
    solve at this decision (``sample_nodes``, or ``late_nodes`` late in the game); ``tline`` and
    ``mbuf`` are work buffers (a line plus one, a move buffer)."""
    S = scfg[SP_SAMPLES]
    order = np.zeros(n, dtype=np.int64)
    okeys = np.zeros(n, dtype=np.int64)
    turns = np.zeros(n, dtype=np.int64)  # 1 where the move turns a card up
    for i in range(n):  # heuristic order (stable, best first)
        sc = move_score(st, prm, moves[i], True)
        k = i
        while k > 0 and okeys[k - 1] < sc:
            okeys[k] = okeys[k - 1]
            order[k] = order[k - 1]
            k -= 1
        okeys[k] = sc
        order[k] = i
    _seen(scratch, visible_key(st, prm), True)
    s2 = np.empty(prm[P_SIZE], dtype=np.int8)
    fresh = 0
    for a in range(n):  # moves to positions seen before go last, and count only if nothing else scores
        s2[:] = st
        r = apply_move(s2, prm, moves[order[a]])
        turns[order[a]] = r if scfg[SP_REVEAL] != 0 else 0
        if r == 0 and _seen(scratch, visible_key(s2, prm), False):
            okeys[a] = 1
        else:
            okeys[a] = 0
            order[fresh], order[a] = order[a], order[fresh]
            okeys[fresh], okeys[a] = okeys[a], okeys[fresh]
            fresh += 1
    # stage 1: the first moves of the completions' winning lines (kept, or solved now) are the candidates
    votes = np.zeros(n, dtype=np.int64)
    first = np.zeros(S, dtype=np.int64)  # index of sample j's winning first move, or -1
    flen = np.zeros(S, dtype=np.int64)  # length (or nodes) of the rest of that line
    nodes = 0
    seconds = 0.0
    line = work[W_LINE]
    unit = restart_unit(cfg, budget, scfg[SP_UNIT])
    by_nodes = scfg[SP_TIEBREAK] == TIE_NODES
    for j in range(S):
        first[j] = -1
        if status[j] == KEEP_WON:
            for i in range(n):
                if moves[i] == lines[j, 0]:
                    first[j] = i
            if first[j] >= 0:
                votes[first[j]] += 1
                flen[j] = 0 if by_nodes else llen[j] - 1
                continue
            status[j] = KEEP_NONE  # cannot happen: the line was legal on this table
        if status[j] == KEEP_LOST:
            continue
        v, used, length, sec = solve_completion(samples[j], prm, cfg, work, budget, unit)
        nodes += used
        seconds += sec
        if v == S_LOST:
            status[j] = KEEP_LOST
        if v == S_WON and length > 0:
            for i in range(n):
                if moves[i] == line[0]:
                    votes[i] += 1
                    first[j] = i
                    flen[j] = used if by_nodes else length - 1
                    break
            if length <= LINE_SLOTS:
                status[j] = KEEP_WON
                llen[j] = length
                lines[j, :length] = line[:length]
    # candidates: fresh positions first, then most votes (stable: heuristic order among equals), at most SP_CANDIDATES
    cands = 0
    for a in range(n):
        if votes[order[a]] > 0:
            cands += 1
    if cands == 0:
        scratch[SCRATCH_NODES] += nodes
        scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
        i = greedy_policy(st, prm, moves, n, cfg, rng, scratch)
        if i >= 0:
            _advance(status, lines, llen, moves[i], samples, prm, scfg[SP_SHIFT] != 0, tline, mbuf)
        return i
    for a in range(n):  # sort key: seen positions after fresh ones, then most votes first
        okeys[a] = okeys[a] * (S + 1) + (S - votes[order[a]])
    for a in range(1, n):  # insertion sort, stable: the heuristic order among equals
        i, key = order[a], okeys[a]
        k = a
        while k > 0 and okeys[k - 1] > key:
            order[k] = order[k - 1]
            okeys[k] = okeys[k - 1]
            k -= 1
        order[k] = i
        okeys[k] = key
    best = 0
    best_len = 0
    best_turn = 0
    best_i = -1
    if cands == 1:  # every winning completion starts the same way: nothing to compare
        for a in range(n):
            if votes[order[a]] > 0:
                best_i = order[a]
    # stage 2: each candidate on every completion: a win scores 2, undecided 1; ties go to the
    # shorter winning lines (progress) or the fewer nodes (the easier wins). What each solve finds
    # after the best candidate is kept for the next decision.
    cur_st = np.zeros(S, dtype=np.int64)  # status after the candidate, for completions solved here (-1: not)
    cur_len = np.zeros(S, dtype=np.int64)
    cur_lines = np.empty((S, LINE_SLOTS), dtype=np.int64)
    best_st = np.full(S, -1, dtype=np.int64)
    best_lens = np.zeros(S, dtype=np.int64)
    best_lines = np.empty((S, LINE_SLOTS), dtype=np.int64)
    tried = 0
    for round_ in range(2):
        if best_i >= 0:
            break
        for a in range(n):
            i = order[a]
            if votes[i] == 0 or (round_ == 0) != (okeys[a] <= S) or tried >= scfg[SP_CANDIDATES]:
                continue
            tried += 1
            score = 0
            total = 0
            cur_st[:] = -1
            for j in range(S):
                reach = score + 2 * (S - j)
                if reach < best or (reach == best and (turns[i] < best_turn or (turns[i] == best_turn and total >= best_len))):
                    score = -1
                    break
                if first[j] == i:
                    score += 2
                    total += flen[j]
                    continue
                if status[j] == KEEP_LOST:
                    cur_st[j] = KEEP_LOST
                    continue
                if scfg[SP_SHIFT] != 0 and first[j] >= 0 and status[j] == KEEP_WON:  # its line, the candidate first
                    rest = _shift_line(samples[j], prm, lines[j], llen[j], moves[i], tline, mbuf)
                    if rest >= 0:
                        score += 2
                        total += 0 if by_nodes else rest
                        cur_st[j] = KEEP_WON
                        cur_len[j] = rest
                        cur_lines[j, :rest] = tline[1 : rest + 1]
                        continue
                s2[:] = samples[j]
                apply_move(s2, prm, moves[i])
                v, used, length, sec = solve_completion(s2, prm, cfg, work, budget, unit)
                nodes += used
                seconds += sec
                cur_st[j] = KEEP_NONE
                if v == S_WON:
                    score += 2
                    total += used if by_nodes else length
                    if length <= LINE_SLOTS:
                        cur_st[j] = KEEP_WON
                        cur_len[j] = length
                        cur_lines[j, :length] = line[:length]
                elif v == S_LOST:
                    cur_st[j] = KEEP_LOST
                else:
                    score += 1
                    total += budget if by_nodes else 1000
            if score > best or (score == best and score > 0 and (turns[i] > best_turn or (turns[i] == best_turn and total < best_len))):
                best = score
                best_len = total
                best_turn = turns[i]
                best_i = i
                take_best(cur_st, cur_len, cur_lines, best_st, best_lens, best_lines)
    scratch[SCRATCH_NODES] += nodes
    scratch[SCRATCH_MICROS] += np.int64(seconds * 1e6)
    if best_i < 0:
        best_i = greedy_policy(st, prm, moves, n, cfg, rng, scratch)
        if best_i < 0:
            return best_i
        best_st[:] = -1
    _advance(status, lines, llen, moves[best_i], samples, prm, scfg[SP_SHIFT] != 0, tline, mbuf)
    for j in range(S):
        if best_st[j] >= 0:
            status[j] = best_st[j]
            llen[j] = best_lens[j] if best_st[j] == KEEP_WON else 0
            lines[j, : llen[j]] = best_lines[j, : llen[j]]
    return best_i


COMPLETION_SEARCH = {"restart_nodes": 2000, "noise": 3000, "calm_noise": 3000, "relax_states": 0}
"""The solver's settings as this player uses them (its completions' noise and restart cap, and its search once
nothing is hidden): the restarts of solver version 4, which this player's figures were measured with, and no
relaxation cut (solver version 6); solver version 5's shorter, noisier restarts and version 6's cut have not
been measured for it."""

PRESETS: dict[str, dict[str, Any]] = {
    "default": {},
    "fast": {"samples": 10, "candidates": 5, "late_hidden": 0},
    "strong": {"samples": 90, "sample_nodes": 700, "late_nodes": 8000, "candidates": 14},
}
"""Named settings (``sampling:preset=fast``): the parameters each sets, unless the spec gives them."""


def _preset_text(values: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in values.items()) or "the defaults"


class SamplingStrategy(Strategy):
    """Imagines the face-down cards several times, solves each, plays the move that wins most."""

    name: ClassVar[str] = "sampling"
    version: ClassVar[str] = "13"
    description: ClassVar[str] = ("draws completions of the face-down cards, solves them, and plays the move that wins "
                                  "in the most; plays as the solver once nothing is hidden")
    peeks: ClassVar[bool] = False
    uses: ClassVar[tuple[str, ...]] = ("solver",)  # each completion is decided by the solver's compiled search
    PARAMETERS = {
        "preset": Param(str, "default", "a named setting of the parameters below (each one given explicitly wins): "
                        + "; ".join(f"{k}: {_preset_text(v)}" for k, v in PRESETS.items()), choices=tuple(PRESETS)),
        "samples": Param(int, 30, "completions of the hidden cards drawn at each decision", minimum=1, maximum=10_000),
        "sample_nodes": Param(int, 200, "solver node budget per solve of a completion", minimum=1,
                              maximum=1_000_000_000),
        "sample_unit": Param(int, 0, "Luby restart unit in nodes of a completion's solve (0: half of sample_nodes)",
                             minimum=0, maximum=1_000_000_000),
        "late_hidden": Param(int, 9, "late in the game, with at most this many cards face down, solve each completion "
                             "on late_nodes instead of sample_nodes (0: never)", minimum=0, maximum=DECK_SIZE),
        "late_nodes": Param(int, 2000, "solver node budget per solve of a completion late in the game (late_hidden)",
                            minimum=1, maximum=1_000_000_000),
        "shift": Param(bool, False, "before solving a candidate on a completion won by a line that starts otherwise, "
                       "try that line with the candidate played first (replayed to check it still wins)"),
        "nodes": Param(int, 4_000_000, "node budget of the solver once nothing is hidden", minimum=1,
                       maximum=10**12),
        "seconds": Param(float, 600.0, "safety cap in seconds of the solver once nothing is hidden, far above "
                         "what `nodes` takes (the solver's own default)", minimum=0.0, maximum=1e6),
        "candidates": Param(int, 8, "most candidate moves compared on every completion (most votes first)",
                            minimum=1, maximum=1000),
        "tiebreak": Param(str, "length", "among moves winning equally often: the shorter winning lines (length) or the "
                          "fewer solver nodes (nodes)", choices=TIEBREAKS),
        "reveal": Param(bool, False, "among moves winning equally often, prefer one that turns a card up"),
        "plans": Param(bool, True, "compare plans (each winning line's moves up to its first card turned up) instead "
                       "of first moves, and play the chosen plan through to its reveal"),
        "bandit": Param(bool, False, "compare the plans as decisions by successive halving (version 13, "
                        "`strategies.sampling.bandit`): transpositions merged, the better half of the candidates "
                        "scored again on fresh completions with more nodes, the hidden cards enumerated when few"),
        "rounds": Param(int, 2, "with bandit: rounds of successive halving after the first comparison, each on "
                        "fresh completions with twice the nodes", minimum=0, maximum=20),
        "round_samples": Param(int, 0, "with bandit: fresh completions a later round draws (0: samples)", minimum=0,
                               maximum=10_000),
        "exact_hidden": Param(int, 3, f"with bandit: with at most this many cards face down, every arrangement of them "
                              f"is a completion instead of the draws (at most {EXACT_MAX}; 0: never)", minimum=0,
                              maximum=EXACT_MAX),
        "reveals": Param(bool, False, "with bandit: every move that turns a card up is a candidate too, after the "
                         "plans of the completions' winning lines"),
        "tt_mb": Param(float, 16.0, "transposition table size in MiB of the solver's search once nothing is hidden "
                       "(each completion's solve searches a window of it sized from sample_nodes)", minimum=0.01,
                       maximum=16384.0),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        p = self.params
        self._from_preset = {key for key in PRESETS[p["preset"]] if key not in params}
        for key in self._from_preset:
            p[key] = self.PARAMETERS[key].convert(self.name, key, PRESETS[p["preset"]][key])
        self._solver = SolverStrategy(nodes=p["nodes"], seconds=p["seconds"], tt_mb=p["tt_mb"], **COMPLETION_SEARCH)
        self._scfg = np.zeros(SP_SIZE, dtype=np.int64)
        self._scfg[SP_SAMPLES] = self.params["samples"]
        self._scfg[SP_SAMPLE_NODES] = self.params["sample_nodes"]
        self._scfg[SP_CANDIDATES] = self.params["candidates"]
        self._scfg[SP_TIEBREAK] = TIEBREAKS.index(self.params["tiebreak"])
        self._scfg[SP_REVEAL] = int(self.params["reveal"])
        self._scfg[SP_SHIFT] = int(self.params["shift"])
        self._scfg[SP_PLANS] = int(self.params["plans"])
        self._scfg[SP_UNIT] = self.params["sample_unit"]
        self._scfg[SP_LATE_HIDDEN] = self.params["late_hidden"]
        self._scfg[SP_LATE_NODES] = self.params["late_nodes"]
        self._scfg[SP_BANDIT] = int(self.params["bandit"])
        self._scfg[SP_ROUNDS] = self.params["rounds"]
        self._scfg[SP_ROUND_SAMPLES] = self.params["round_samples"]
        self._scfg[SP_EXACT_HIDDEN] = self.params["exact_hidden"]
        self._scfg[SP_REVEALS] = int(self.params["reveals"])
        if p["bandit"] and not p["plans"]:
            raise StrategyError("strategy 'sampling': bandit compares plans; give it with plans=true")
        if p["plans"] and (p["tiebreak"] != "length" or p["reveal"]):
            raise StrategyError("strategy 'sampling': tiebreak and reveal order the move vote's ties; "
                                "give them with plans=false")
        self._scratch = np.zeros(0, dtype=np.int64)  # sized for the rules at the first decision

    @property
    def label(self) -> str:
        """The name shown in tables: the preset's name stands for the values it sets, and a value given
        explicitly is shown wherever it differs from the preset's (``preset=fast,shift=False``)."""
        preset = PRESETS[self.params["preset"]]
        args = ",".join(f"{k}={v}" for k, v in self.params.items()
                        if k not in self._from_preset and v != preset.get(k, self.PARAMETERS[k].default))
        return self.name + (f":{args}" if args else "")

    def memory_use(self, rules: Rules) -> dict[str, int]:
        """The solver's tables (``tt_mb``; its other settings are this player's own) and, per decision, each
        completion's position and three kept lines with the game's scratch (``samples``); with ``bandit``, each
        candidate's kept lines on every completion."""
        use = self._solver.memory_use(rules)
        samples = self.params["samples"]
        position = int(rule_params(rules)[P_SIZE])
        use[f"samples={samples}"] = samples * (position + (3 * LINE_SLOTS + 8) * 8) + scratch_size(rules, samples) * 8
        if self.params["bandit"]:  # each candidate's kept lines on every completion, and a later round's draws
            cands, fresh = self.params["candidates"], self.params["round_samples"] or samples
            use[f"bandit candidates={cands}"] = cands * samples * (LINE_SLOTS + 4) * 8 + fresh * position
        return use

    def _pparams(self, rules: Rules) -> tuple:
        return (*self._solver.policy_params(rules), self._scfg)

    def reset(self, deal: Any, rng: Any) -> None:
        super().reset(deal, rng)
        self._scratch[:] = 0

    def choose(self, view: View, moves: list[Move]) -> Move | None | _Undecided:
        rules = view.rules
        unknown = sorted(view.unknown)
        piles = []
        for pile in view.piles:  # hidden slots get placeholders; the policy never reads them
            piles.append(tuple(unknown.pop(0) if c < 0 else c for c in pile))
        position = Position(tuple(piles), tuple(view.face_down(p) for p in range(view.n_piles)), view.foundations)
        game = Game(rules, position)
        codes = np.array([m.code for m in moves], dtype=np.int64)
        assert self.rng is not None, "reset() hands the strategy its RNG before play"
        rng = np.array([self.rng.key, self.rng.counter], dtype=np.uint64)
        if self._scratch.shape[0] != scratch_size(rules, self.params["samples"]):
            self._scratch = np.zeros(scratch_size(rules, self.params["samples"]), dtype=np.int64)
        before = int(self._scratch[SCRATCH_NODES])
        self._scratch[SCRATCH_PROVEN] = 0
        i = int(sampling_policy(game.state_array(), game.rule_params, codes, len(moves), self._pparams(rules), rng, self._scratch))
        self.rng.counter = int(rng[1])
        self.nodes += int(self._scratch[SCRATCH_NODES]) - before
        self.on_proven_line = bool(self._scratch[SCRATCH_PROVEN])
        if i == POLICY_RESIGN:
            return None
        if i == POLICY_UNDECIDED:
            return UNDECIDED
        assert 0 <= i < len(moves), i  # the compiled policy returns a move's index or one of the two above
        return moves[i]

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(sampling_policy, self._pparams(rules), scratch_size(rules, self.params["samples"]))
