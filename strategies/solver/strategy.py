"""`solver`: decide a deal with every card known (won / lost / unknown), and play the winning line.

The decision (`decide`) is a sequence of complete depth-first searches
(`strategies.solver.search`), each with the sound prunings of
`strategies.solver.safe`, `strategies.solver.dead` and the move filters, each
cut at a node budget that follows the Luby sequence (1, 1, 2, 1, 1, 2, 4, 1,
...) times ``restart_nodes``:

- the first search orders moves by the heuristic score
  (`strategies.solver.order`); every later one adds a pseudo-random term to
  the scores, seeded by the run's number: of size ``calm_noise`` (3,000) in
  the odd restarts, which keep much of the heuristic's order, and ``noise``
  (10,000) in the even ones, which order nearly every move but the moves home
  at random. A depth-first search that went wrong near the root stays lost in
  a huge subtree; a fresh ordering finds most winning lines in a few thousand
  nodes (restarts, in the manner of Gomes, Selman and Kautz's heavy-tailed
  search). Some hard wins are found only by the one kind of ordering, some
  only by the other, so the restarts take turns (a portfolio);
- every search is complete, so the first one to finish gives the verdict
  (Luby, Sinclair and Zuckerman's universal schedule);
- every search after the first cuts the positions the earlier ones proved
  lost (``keep_lost``, on by default: `strategies.solver.search`, "Proofs
  kept between searches"), so a loss bigger than any one search is proven by
  the restarts together, and the later restarts spend their nodes where no
  earlier one finished. On good-measure's deals 1-1,000 it decides 10 of the
  26 deals the restarts alone left unknown within the same 4,000,000 nodes:
  469, 675, 679 and 801 lost (each in 0.35-1.2 million nodes, about what the
  layered prover needs), 22, 65, 108, 306, 507 and 993 won
  (CHANGELOG.md, solver version 3).

From ``relax_after`` nodes of a deal on (100,000 by default), the searches
also cut every position whose configuration the same relaxation loses within
``relax_states`` states (10,000), remembered per configuration, with the
relaxed losses kept from one configuration to the next
(`strategies.solver.relax_cut`). Random walks of the hardest deals meet such
configurations far sooner than dead positions; the cut decides good-measure
806 and 937, which no search or prover here had decided, and bakers-dozen 2083
and good-measure 65 and 507 within the default budget (CHANGELOG.md, solver
version 6). Before ``relax_after`` it would only cost time: most deals are decided in a few thousand nodes.

A deal the searches have not decided within ``capacity_after`` nodes
(250,000 by default, about half a second) goes to the free-parking relaxation
(`strategies.solver.capacity`) within ``capacity_states`` states, once, where
it applies; its loss is a proof, and a relaxed win sends the deal back to the
searches. On by default with 5,000,000 states. Since its steps require a
moving card to be bare (solver version 4) it proves lost 9 of the 17
good-measure deals among 1-1,000 that the searches left unknown (71, 141,
183, 398, 449, 651, 677, 733, 815) and 2 of the 5 bakers-dozen deals among
1-10,000 (2647, 3253), and PySol's Baker's Dozen deal 417, which no search
has finished, in 19,184,531 states with ``capacity_states=20000000``
(CHANGELOG.md, solver version 4). Run at the start of
every deal it would only cost time, as the searches decide most deals in a
few thousand nodes; run only after them, each deal it proves lost would cost
the searches' whole budget first. A deal still unknown after the searches
then goes to the layered prover
(`strategies.solver.layers`) within ``prover_seconds`` and ``prover_mb``:
it proves losses whose positions overflow any transposition table (in-suit
foundations without worrying back; elsewhere the searches' verdict stands).
It is off by default (``prover_seconds=0``), a budget the user sets: most
deals the searches leave unknown fill their first layer with more than 10^7
positions, minutes to hours of the prover each, while 4 s of it decide 3 of
the 26 good-measure deals among 1-1,000 that the searches leave unknown (469,
675 and 801, lost) and none of bakers-dozen's five among 1-10,000, at 4 s
more on every deal still unknown (docs/performance.md, "The solver").

A deal still unknown after all that goes, with ``beam_width`` above 0 (off by
default), to a beam search for a win (`strategies.solver.beam`), within
``beam_nodes`` positions: it finds wins that no restart of the searches reaches
(bakers-dozen 38418, which a search of 30 million nodes, the relaxation with 20
million states and the prover in 2 GiB leave unknown: won in 90 moves after 5.4
million positions at width 20,000), and it claims nothing else. With the beam
off every verdict, node count and line is what it was before the beam existed,
so the version stays 11.

WON comes with the moves; LOST means a search (or the prover) ran out of
positions; UNKNOWN means the node budget for the whole deal ran out (``nodes``,
then the relaxation's ``capacity_states``); TIMEOUT (outcome unknown, termination
``timeout``) that a wall-clock cap stopped it first: ``seconds`` for the searches,
or the prover's ``prover_seconds``. With ``restart_nodes=0`` there is one search with the whole
budget. The budgets decide; the seconds are only a safety cap. Nothing depends
on the clock but a TIMEOUT, and nothing on the deals decided before (version
7), so every won, lost and unknown verdict, its nodes and its line are reproducible,
whatever chunk, worker, machine or load a deal falls to.

The default cap, 600 s, is far above what the default budget takes: good-measure
983, which no search of 4,000,000 nodes decides, spent 15 s in its searches at
a load average of 2 on this project's 2-core machine (261,000 nodes/s), and 172 s
niced at a load average of 17 (23,000 nodes/s), the slowest seen; the cap leaves
a margin of 3.5 over that. A deal's own compile is never timed
(`SolverStrategy.ready` compiles the search and the stages before the first
deal).

The solver reads face-down cards (``peeks``): on face-down variants its figures
are clairvoyant upper bounds, labelled so.

Memory: the transposition table takes ``tt_mb`` MiB with its bookkeeping for
the kept proofs (16 bytes a position, `strategies.solver.table`; rounded down
to a power of two), allocated once per strategy and variant and cleared
lazily. The default, 128 MiB, holds 8,388,608 positions, as many as the 64 MiB
of entries alone did before the proofs were kept; with half as many,
good-measure 65 and 108 stay unknown at the default budget.

Version 11: a deal's verdict is the solver's, whatever the machine. A winning
line is played to its end: the engine's no-progress guard, a rule for
strategies that wander, no longer counts its moves (`sim.engine.SCRATCH_PROVEN`);
before, a line with more than 1,000 moves between two cards home was stored
as lost (8 piles of 6 with the aces home and any card into a space: deals 49,
1480 and 1529, won in 2,595, 4,028 and 1,688 moves). The default ``seconds`` is
600 instead of 10, so that the node budget decides which deals stay unknown
(at 10 s most unknowns stopped on the clock, at a different node count on
every machine and load), and a deal stopped by the clock is a TIMEOUT, stored
with termination ``timeout`` instead of ``undecided``.
Version 10: the layered prover splits each foundation layer into stages by
the cards in bases (`strategies.solver.layers`), so it holds about a third of
the positions at once or fewer, and with ``prover_seconds`` above 0 a proof
may end within ``prover_mb`` where version 9's stopped for memory (the
verdicts it gives are exact either way). With the prover off, as by default,
every verdict, node count and line is version 9's.
Version 9: the odd restarts add a random term of ``calm_noise`` (3,000,
version 4's) instead of ``noise`` (10,000, version 5's). Version 4's
restarts win good-measure 108, 512 and 837, which version 5's never did
within the default budget, and version 5's win others; taking turns wins
108, 512 and 837 within the same budget and, with the proofs the restarts
share, decides the other deals sooner: good-measure 1-1,000 take 106.6 ms a
deal instead of 120.5 with 3 deals unknown instead of 5 (507, which version 8
won at 2.4 million nodes, among them), 1,001-2,000, which played no part in
the choice, 125.9 instead of 133.1 with the same 4 unknown, bakers-dozen
1-10,000 8.1 instead of 8.8 with the same one (CHANGELOG.md, solver version 9).
Version 8: in the free-parking relaxation (the stage and the cut) a base
top goes home, as well as parked, only when it can be bare, and is parked
only onto a holder that is free before the card under it becomes one
(`strategies.solver.capacity`). The stage then proves bakers-dozen 2492 lost
at the default settings, in 2,255,359 nodes and states (6.8 s), which no
search of 900 million positions had decided; bakers-dozen's deals 1-10,000
leave one deal unknown instead of two, good-measure's 1-1,000 the same five
(CHANGELOG.md, solver version 8).
Version 7: a deal is decided the same whatever the same solver decided
before it. Before, the table's generations ran out every 32,767 searches and
the whole table was cleared, with the kept proofs of a deal whose restarts
spanned that point; and the relaxation's memo placed a configuration by its
root's number. So a hard deal's nodes, and under a node budget its verdict,
depended on the deals solved before it in the same process (good-measure 859
with ``relax_after=0``: won in 45,048,306 nodes alone, in 2,540,675 after 983
and 512). Now the root's proofs are kept across that point
(`strategies.solver.table.renumber`) and the memo's slot depends on the
configuration alone.
Version 6: the relaxation's cut inside the searches (``relax_states``,
``relax_after``). Version 5: restarts in units of 250 nodes instead of 2,000, each after the
first with a random term of 10,000 instead of 3,000 (so nearly every move but
the moves home is ordered at random). Short, very different searches find the
hard wins sooner, and the proofs the restarts keep make them cheap: with the
default budget, good-measure's deals 1-1,000 take 188.9 CPU s instead of
231.6 (the wins 89.5 s instead of 142.5) and bakers-dozen's 1-3,000 39.4
instead of 57.2, the same deals lost and as many or fewer unknown; at the
default study's 200,000 nodes good-measure's unknowns fall from 70 to 50
(CHANGELOG.md, solver version 5). Version 4: the free-parking
relaxation parks a card only when it can be bare, takes its safe steps home
alone, runs after ``capacity_after`` nodes of search instead of after all of
them, and has 5,000,000 states instead of 2,000,000 (version 3: restarts keep
their proofs of loss; version 1 did not; version 2 ran the layered prover by
default).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

import numba as nb
import numpy as np

from sim.cards import KING, card
from sim.engine import (
    P_FOUND,
    P_SIZE,
    P_WORRY,
    POLICY_RESIGN,
    POLICY_TIMEOUT,
    POLICY_UNDECIDED,
    SCRATCH_MICROS,
    SCRATCH_NODES,
    SCRATCH_OWN,
    SCRATCH_PROVEN,
    clock,
    rule_params,
)
from sim.game import Game, View
from sim.notation import Move
from sim.position import Position
from sim.rules import FOUND_SUIT, Rules
from strategies.base import TIMED_OUT, UNDECIDED, CompiledPolicy, Param, Strategy, _Undecided
from strategies.solver.beam import beam_search
from strategies.solver.capacity import LOST, applies_to, free_parking_state
from strategies.solver.layers import layered_rules, prove
from strategies.solver.line import shorten_line
from strategies.solver.search import (
    F_DEAD,
    F_KEEP_LOST,
    F_LONE,
    F_ORDER,
    F_RELAX,
    F_SAFE,
    F_SAFE_WIDE,
    F_STREAM,
    S_LOST,
    S_TIMEOUT,
    S_UNKNOWN,
    S_WON,
    VERDICTS,
    W_KEYS,
    W_LINE,
    W_TMP,
    SolverWork,
    solve,
)

POLICY_CONFIG, POLICY_WORK = 0, 1
"""The policy's parameters (`pparams`), a tuple: its configuration (`config`) and its work
arrays (`SolverWork.arrays`)."""
# configuration (int64) slots
(PP_NODES, PP_MICROS, PP_FLAGS, PP_RESTART_NODES, PP_NOISE, PP_CALM_NOISE, PP_PROVER_MB, PP_PROVER_MICROS, PP_FINAL,
 PP_CAPACITY, PP_CAPACITY_AFTER, PP_RELAX_AFTER, PP_BEAM_WIDTH, PP_BEAM_NODES, PP_STREAM, PP_SIZE) = range(16)
# scratch slots after the engine's
SC_STATUS, SC_LEN, SC_POS, SCRATCH_SIZE = range(SCRATCH_OWN, SCRATCH_OWN + 4)
# SC_STATUS values
ST_FRESH, ST_WON, ST_LOST, ST_UNKNOWN, ST_TIMEOUT = 0, 1, 2, 3, 4


@nb.njit(cache=True)
def luby(i: np.int64) -> np.int64:
    """Term i (1, 2, ...) of the Luby sequence 1, 1, 2, 1, 1, 2, 4, 1, 1, 2, 1, 1, 2, 4, 8, ..."""
    while True:
        k = 1
        while (1 << k) - 1 < i:
            k += 1
        if i == (1 << k) - 1:
            return np.int64(1) << (k - 1)
        i -= (1 << (k - 1)) - 1


def capacity_for_solver(st: np.ndarray, prm: np.ndarray, states: int) -> tuple:
    """The free-parking relaxation (`strategies.solver.capacity`, compiled) as `decide` calls it: (verdict,
    states, seconds). Its loss is a proof; a relaxed win or a search past ``states`` leaves the deal unknown."""
    t0 = time.perf_counter()
    v, n = free_parking_state(st, prm, int(states))
    return (S_LOST if v == LOST else S_UNKNOWN), n, time.perf_counter() - t0


def prove_unknown(st: np.ndarray, prm: np.ndarray, flags: int, capacity_states: int, prover_mb: int,
                  prover_seconds: float) -> tuple:
    """The stages for a deal the searches leave unknown (in-suit foundations, no worrying back): the
    free-parking relaxation where it applies, then the layered prover. (verdict, positions, seconds).

    One call, so that `decide` leaves compiled code once (numba miscompiles two object-mode blocks
    in it)."""
    n, sec = 0, 0.0
    if capacity_states > 0 and applies_to(prm):
        v, n, sec = capacity_for_solver(st, prm, capacity_states)
        if v == S_LOST:
            return v, n, sec
    if prover_seconds > 0 and prover_mb > 0:
        v, pn, psec = prove_for_solver(st, prm, flags, prover_mb, prover_seconds)
        return v, n + pn, sec + psec
    return S_UNKNOWN, n, sec


def prove_for_solver(st: np.ndarray, prm: np.ndarray, flags: int, prover_mb: int, prover_seconds: float) -> tuple:
    """The layered prover (`strategies.solver.layers`) as `decide` calls it: (verdict, positions, seconds).

    A win the prover finds has no line to replay, so it reads as unknown; a proof its seconds cut
    short is a timeout (which deals that happens to depends on the machine)."""
    r = prove(st, prm, int(flags), float(prover_mb) * 2**20, float(prover_seconds))
    if r.verdict == S_LOST:
        return S_LOST, r.positions, r.seconds
    return (S_TIMEOUT if r.reason == "seconds" else S_UNKNOWN), r.positions, r.seconds


@nb.njit(cache=True)
def decide(st, prm, work, max_nodes, max_seconds, flags, restart_nodes, noise, calm_noise, prover_mb, prover_seconds,
           final_nodes, capacity_states, capacity_after, relax_after):  # noqa: ANN001, ANN201 (numba)
    """The restart schedule above on the work arrays ``work`` (`SolverWork.arrays`), then, for
    a deal it leaves unknown, the layered prover within ``prover_mb`` MiB and ``prover_seconds``
    (none when 0). The last ``final_nodes`` of the node budget go to one last search (the
    first search's order) instead of restarts. A deal still undecided after ``capacity_after``
    nodes of search (or after all of them) gets the free-parking relaxation within
    ``capacity_states`` states (none when 0), once; its time and states are not charged to the
    searches' budgets. Returns (verdict, nodes, line length, seconds); a won line is in
    ``work[W_LINE]`` as the search found it. An undecided deal is `S_UNKNOWN` when its node
    budget ran out and `S_TIMEOUT` when ``max_seconds`` (or the prover's seconds) stopped it
    first: a verdict the clock decided, which another machine or load may not repeat.

    Every argument is required, and callers pass int64 and float64 values (not constants), so
    that the solver (`decide_config`) and the sampling player share one compiled version of it
    and of the search: numba compiles a function again for each new set of argument types, an
    omitted default or a constant counting as a type of its own (the counters below start as
    int64 for the same reason: a variable that starts from a constant is first typed as that
    constant, and a call made with it compiled once more)."""
    used = np.int64(0)
    spent = 0.0
    k = np.int64(0)
    restarts_end = max_nodes - min(final_nodes, max_nodes) if restart_nodes > 0 else max_nodes
    stages = prm[P_FOUND] == FOUND_SUIT and prm[P_WORRY] == 0
    relax = stages and capacity_states > 0  # the relaxation is still to run
    prover = stages and prover_seconds > 0 and prover_mb > 0
    staged, staged_sec = 0, 0.0  # states and seconds of the stages
    while True:
        searching = used < max_nodes and spent < max_seconds
        if (relax and (used >= capacity_after or not searching)) or (prover and not searching):
            # one object-mode block for both stages (numba miscompiles two in this function)
            cap = capacity_states if relax else 0
            mb = prover_mb if prover and not searching else 0
            relax = False
            with nb.objmode(pv="int64", pn="int64", psec="float64"):
                pv, pn, psec = prove_unknown(st, prm, flags, cap, mb, prover_seconds)
            staged += pn
            staged_sec += psec
            if pv == S_LOST or not searching:
                if pv != S_LOST and used < max_nodes:  # the searches' seconds ran out first
                    pv = S_TIMEOUT
                return pv, used + staged, 0, spent + staged_sec
            continue
        if not searching:
            return (S_TIMEOUT if used < max_nodes else S_UNKNOWN), used + staged, 0, spent + staged_sec
        budget = max_nodes - used
        if restart_nodes > 0 and used < restarts_end:
            budget = min(restarts_end - used, restart_nodes * luby(k + 1))
        last = used >= restarts_end
        sflags = flags if used >= relax_after else flags & ~F_RELAX  # the cut only once the deal is not easy
        knoise = np.int64(0) if k == 0 or last else (calm_noise if k % 2 == 1 else noise)
        v, n, length, sec = solve(st, prm, work, budget, max_seconds - spent, sflags, np.int64(0) if last else k,
                                  knoise, same_root=k > 0)
        used += n
        spent += sec
        if v != S_UNKNOWN:
            return v, used + staged, length, spent + staged_sec
        k += 1


@nb.njit(cache=True)
def decide_config(st, prm, work, cfg):  # noqa: ANN001, ANN201 (numba)
    """`decide` with the solver's configuration ``cfg`` (`SolverStrategy.config`), after the streamliner
    where ``cfg`` asks for one, a won line shortened (`shorten_line`, its time counted in the seconds): (verdict,
    nodes, line length, seconds), the line in ``work[W_LINE]``.

    The streamliner is the restart schedule, without the stages, for at most `PP_STREAM` nodes of the node budget,
    playing every card home as soon as it can (`F_STREAM`). Its win is a win; anything else proves nothing, and
    `decide` starts afresh with the nodes left (its first search clears the table the streamliner filled)."""
    nodes, sec, v, length = np.int64(0), 0.0, S_UNKNOWN, np.int64(0)
    if cfg[PP_STREAM] > 0 and cfg[PP_NODES] > 1:
        v, nodes, length, sec = decide(st, prm, work, min(cfg[PP_STREAM], cfg[PP_NODES] - 1), cfg[PP_MICROS] / 1e6,
                                       cfg[PP_FLAGS] | F_STREAM, cfg[PP_RESTART_NODES], cfg[PP_NOISE],
                                       cfg[PP_CALM_NOISE], np.int64(0), 0.0, np.int64(0), np.int64(0),
                                       cfg[PP_CAPACITY_AFTER], cfg[PP_RELAX_AFTER])
    if v != S_WON:
        v, dnodes, length, dsec = decide(st, prm, work, cfg[PP_NODES] - nodes, max(cfg[PP_MICROS] / 1e6 - sec, 0.0),
                                         cfg[PP_FLAGS], cfg[PP_RESTART_NODES], cfg[PP_NOISE], cfg[PP_CALM_NOISE],
                                         cfg[PP_PROVER_MB], cfg[PP_PROVER_MICROS] / 1e6, cfg[PP_FINAL],
                                         cfg[PP_CAPACITY], cfg[PP_CAPACITY_AFTER], cfg[PP_RELAX_AFTER])
        nodes, sec = nodes + dnodes, sec + dsec
    line = work[W_LINE]
    if v == S_UNKNOWN and cfg[PP_BEAM_WIDTH] > 0:
        bv, bnodes, length, bsec = beam_search(st, prm, work[W_KEYS], line, cfg[PP_BEAM_WIDTH], cfg[PP_BEAM_NODES],
                                               max(cfg[PP_MICROS] / 1e6 - sec, 0.0), cfg[PP_FLAGS])
        v, nodes, sec = bv, nodes + bnodes, sec + bsec
    if v == S_WON and length <= line.shape[0]:
        t0 = clock()
        length = shorten_line(st, prm, work[W_KEYS], line, length, work[W_TMP])
        sec += clock() - t0
    return v, nodes, length, sec


@nb.njit(cache=True)
def solver_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled solver: search on the first call of a game, then follow the winning line, each of
    its moves marked as a proven line's (`sim.engine.SCRATCH_PROVEN`: the no-progress guard is for
    strategies that wander, not for a line that wins).

    Returns `POLICY_RESIGN` (proven lost), or when there is no line `POLICY_TIMEOUT` (the seconds
    cap stopped the search) or `POLICY_UNDECIDED` (the node budget ran out).
    """
    cfg, work = pparams[POLICY_CONFIG], pparams[POLICY_WORK]
    line = work[W_LINE]
    if scratch[SC_STATUS] == ST_FRESH:
        v, nodes, length, sec = decide_config(st, prm, work, cfg)
        scratch[SCRATCH_NODES] += nodes
        scratch[SCRATCH_MICROS] += np.int64(sec * 1e6)
        if v == S_WON and length <= line.shape[0]:
            scratch[SC_STATUS] = ST_WON
            scratch[SC_LEN] = length
            scratch[SC_POS] = 0
        elif v == S_LOST:
            scratch[SC_STATUS] = ST_LOST
        elif v == S_TIMEOUT:
            scratch[SC_STATUS] = ST_TIMEOUT
        else:
            scratch[SC_STATUS] = ST_UNKNOWN
    status = scratch[SC_STATUS]
    if status == ST_LOST:
        return POLICY_RESIGN
    if status == ST_TIMEOUT:
        return POLICY_TIMEOUT
    if status != ST_WON or scratch[SC_POS] >= scratch[SC_LEN]:
        return POLICY_UNDECIDED
    want = line[scratch[SC_POS]]
    scratch[SC_POS] += 1
    scratch[SCRATCH_PROVEN] = 1
    for i in range(n):
        if moves[i] == want:
            return i
    return n  # cannot happen: the line was found from this very position


def _flags(params: dict[str, Any]) -> int:
    flags = 0
    for name, bit in (("safe", F_SAFE), ("safe_wide", F_SAFE_WIDE), ("dead", F_DEAD), ("order", F_ORDER),
                      ("lone", F_LONE), ("keep_lost", F_KEEP_LOST)):
        if params[name]:
            flags |= bit
    if params["relax_states"] > 0:
        flags |= F_RELAX
    return flags


class SolverStrategy(Strategy):
    """Perfect-information search: plays a proven winning line, resigns a proven loss."""

    name: ClassVar[str] = "solver"
    version: ClassVar[str] = "11"
    description: ClassVar[str] = ("depth-first search with a transposition table, safe moves home, dead-position "
                                  "proofs and restarts; decides won / lost / unknown and plays the winning line")
    peeks: ClassVar[bool] = True
    PARAMETERS = {
        "nodes": Param(int, 4_000_000, "node budget per deal (all searches together)", minimum=1, maximum=10**12),
        "seconds": Param(float, 600.0, "safety cap in seconds per deal (all searches together), far above what "
                         "`nodes` takes: a deal it stops is stored as a timeout, not as unknown at budget",
                         minimum=0.0, maximum=1e6),
        "tt_mb": Param(float, 128.0, "transposition table size in MiB with its bookkeeping, 16 bytes a position "
                       "(bounds its memory)", minimum=0.01, maximum=16384.0),
        "depth": Param(int, 8192, "longest line the search follows (about 450 bytes a move); a longer one leaves the "
                       "verdict unknown", minimum=64, maximum=1_000_000),
        "restart_nodes": Param(int, 250, "unit of the Luby restart schedule in nodes (0: one search only)", minimum=0,
                               maximum=10**12),
        "noise": Param(int, 10_000, "size of the random term added to ordering scores in the even restarts (the "
                       "second, fourth, ...)", minimum=0, maximum=1_000_000_000),
        "calm_noise": Param(int, 3_000, "size of the random term in the odd restarts (the first after the "
                            "heuristic's own search, the third, ...): orders that keep more of the heuristic's",
                            minimum=0, maximum=1_000_000_000),
        "final": Param(float, 0.0, "share of the node budget for one last complete search after the restarts "
                       "(a proof of loss needs one search that sees every position)", minimum=0.0, maximum=1.0),
        "prover_seconds": Param(float, 0.0, "time for the layered prover on a deal the search leaves unknown "
                                "(0: none; in-suit foundations without worrying back only)", minimum=0.0,
                                maximum=1e6),
        "prover_mb": Param(int, 1024, "memory for the layered prover's positions in MiB", minimum=1,
                           maximum=1 << 20),
        "capacity_states": Param(int, 5_000_000, "states for the free-parking relaxation on a deal the searches "
                                 "have not decided within `capacity_after` nodes (0: none; any-suit building, "
                                 "empty piles stay empty; 3-5 us a state, so up to about 25 s a deal beyond "
                                 "`seconds`, which bounds the searches; a table of 16-32 bytes per state of the "
                                 "budget); its loss is a proof", minimum=0, maximum=10**9),
        "relax_states": Param(int, 10_000, "states of the free-parking relaxation for each new configuration the "
                              "searches meet, whose loss cuts it (0: none; at most 50 times as many a deal; a set of "
                              "about 48 bytes a state of that; strategies.solver.relax_cut)", minimum=0,
                              maximum=10**7),
        "relax_after": Param(int, 100_000, "nodes of search before the searches cut what the relaxation loses "
                             "(with `relax_states`)", minimum=0, maximum=10**12),
        "capacity_after": Param(int, 250_000, "nodes of search before the free-parking relaxation runs, once "
                                "(at least `nodes`: after the searches)", minimum=0, maximum=10**12),
        "beam_width": Param(int, 0, "positions kept at each depth by a beam search for a win, run on a deal the "
                            "searches and the stages leave unknown (0: none; it finds wins only: "
                            "strategies.solver.beam)", minimum=0, maximum=10_000_000),
        "beam_nodes": Param(int, 20_000_000, "positions the beam search may generate (with `beam_width`; a set "
                            "of 8-16 bytes a position of this)", minimum=1, maximum=10**10),
        "safe": Param(bool, True, "play safe moves home without search"),
        "streamline_nodes": Param(int, 0, "nodes (of the budget) of a first search that plays every card home as "
                                  "soon as it can: a streamliner, whose wins are wins and whose losses prove nothing "
                                  "(0: none)", minimum=0, maximum=10**10),
        "safe_wide": Param(bool, False, "with safe: also send a card home when every card that could be put on it "
                           "can go home at once and can never be covered (strategies.solver.safe)"),
        "dead": Param(bool, True, "cut dead positions (strategies.solver.dead)"),
        "order": Param(bool, True, "order moves by the heuristic score"),
        "lone": Param(bool, True, "never move a lone card onto another pile (empty piles stay empty)"),
        "keep_lost": Param(bool, True, "restarts keep the positions earlier searches of the deal proved lost "
                           "(strategies.solver.table)"),
    }

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._work: tuple[Rules, SolverWork] | None = None
        self._line: list[int] = []
        self._status = ST_FRESH
        self.verdict: str | None = None
        self.seconds = 0.0

    # --- the search -----------------------------------------------------------------
    def work(self, rules: Rules) -> SolverWork:
        """The table and work arrays for ``rules``: allocated on first use, and again when the rules change.
        Only the last rules' are kept: a strategy plays one rule set at a time, and a worker process that
        plays every variant in turn would otherwise hold a ``tt_mb`` table for each (loky retires a worker
        whose memory grows by 300 MB, as if it leaked)."""
        if self._work is None or self._work[0] != rules:
            self._work = None  # the old table goes before the new one is allocated
            self._work = (rules, SolverWork(rule_params(rules), self.params["tt_mb"], max_depth=self.params["depth"],
                                            relax_states=self.params["relax_states"]))
        return self._work[1]

    def policy_params(self, rules: Rules) -> tuple:
        """The compiled policy's parameters for ``rules`` (see `POLICY_CONFIG`)."""
        return (self.config(), self.work(rules).arrays())

    def config(self) -> np.ndarray:
        """The search's configuration as an int64 array (the ``PP_*`` slots)."""
        p = self.params
        cfg = np.zeros(PP_SIZE, dtype=np.int64)
        cfg[PP_NODES] = p["nodes"]
        cfg[PP_MICROS] = int(min(p["seconds"], 1e9) * 1e6)
        cfg[PP_FLAGS] = _flags(p)
        cfg[PP_RESTART_NODES] = p["restart_nodes"]
        cfg[PP_NOISE] = p["noise"]
        cfg[PP_CALM_NOISE] = p["calm_noise"]
        cfg[PP_PROVER_MB] = int(p["prover_mb"])
        cfg[PP_PROVER_MICROS] = int(min(p["prover_seconds"], 1e9) * 1e6)
        cfg[PP_FINAL] = int(p["nodes"] * p["final"])
        cfg[PP_CAPACITY] = p["capacity_states"]
        cfg[PP_CAPACITY_AFTER] = p["capacity_after"]
        cfg[PP_RELAX_AFTER] = p["relax_after"]
        cfg[PP_BEAM_WIDTH] = p["beam_width"]
        cfg[PP_BEAM_NODES] = p["beam_nodes"]
        cfg[PP_STREAM] = p["streamline_nodes"]
        return cfg

    def solve_state(self, rules: Rules, st: np.ndarray, prm: np.ndarray | None = None) -> tuple[str, int, list[int], float]:
        """Decide the engine state ``st``: (verdict, nodes, winning move codes, seconds).

        ``prm`` is the rule-parameter array ``st`` was made with (`sim.game.Game` sizes
        a typed layout's piles for it); by default that of a dealt game of ``rules``."""
        prm = rule_params(rules) if prm is None else prm
        if st.shape != (prm[P_SIZE],):
            raise RuntimeError(f"state of {st.shape} bytes for rules of {prm[P_SIZE]}: use the Game's own parameters")
        w = self.work(rules)
        v, nodes, length, sec = decide_config(st, prm, w.arrays(), self.config())
        line = w.line[:length].tolist() if v == S_WON and length <= w.line.shape[0] else []
        if v == S_WON and not line:
            v = S_UNKNOWN
        return VERDICTS[v], int(nodes), line, float(sec)

    def solve_position(self, rules: Rules, position: Position) -> tuple[str, int, list[int], float]:
        """`solve_state` for a `Position`."""
        game = Game(rules, position)
        return self.solve_state(rules, game.state_array(), game.rule_params)

    # --- Python tier ----------------------------------------------------------------
    def reset(self, deal: Any, rng: Any) -> None:
        super().reset(deal, rng)
        self._line = []
        self._status = ST_FRESH
        self.verdict = None
        self.seconds = 0.0

    def choose(self, view: View, moves: list[Move]) -> Move | None | _Undecided:
        if self._status == ST_FRESH:
            position = Position(view.piles, tuple(view.face_down(p) for p in range(view.n_piles)), view.foundations)
            start = time.perf_counter()
            verdict, nodes, line, _ = self.solve_position(view.rules, position)
            self.seconds += time.perf_counter() - start
            self.nodes += nodes
            self.verdict = verdict
            self._status = {"won": ST_WON, "lost": ST_LOST, "timeout": ST_TIMEOUT}.get(verdict, ST_UNKNOWN)
            self._line = line[::-1]
        self.on_proven_line = False
        if self._status == ST_LOST:
            return None
        if self._status == ST_TIMEOUT:
            return TIMED_OUT
        if self._status != ST_WON or not self._line:
            return UNDECIDED
        want = self._line.pop()
        for m in moves:
            if m.code == want:
                self.on_proven_line = True
                return m
        raise RuntimeError("the solver's line left the legal moves")  # cannot happen

    # --- compiled tier --------------------------------------------------------------
    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(solver_policy, self.policy_params(rules), SCRATCH_SIZE)

    def memory_use(self, rules: Rules) -> dict[str, int]:
        """The tables and work arrays the settings size, by setting (`strategies.solver.sizes`)."""
        from strategies.solver.sizes import solver_memory

        return solver_memory(self.params, rules)

    def ready(self, rules: Rules) -> None:
        """Compile (or load from numba's cache) everything a deal may run, before any deal's clock starts, so
        that no deal's seconds, nor the prover's time budget, pay for it: the search and the beam search
        (`decide_config` on deal 1 for one node and one position of the beam; in the compiled tier it is already
        loaded with the game loop), the free-parking
        relaxation, which `decide` calls from object mode on the deals its searches leave undecided (9-12 s
        on a fresh machine; on deal 1 for one state), and the layered prover when it is on (about a minute
        on a fresh machine; on a position of six cards, `_warm_position`)."""
        game = Game.from_deal(rules, 1)
        cfg = self.config()
        cfg[PP_NODES], cfg[PP_CAPACITY], cfg[PP_PROVER_MICROS], cfg[PP_BEAM_NODES] = 1, 0, 0, 1
        decide_config(game.state_array(), game.rule_params, self.work(rules).arrays(), cfg)
        if self.params["capacity_states"] > 0 and applies_to(game._prm):
            free_parking_state(game._st, game._prm, 1)
        if self.params["prover_seconds"] > 0 and self.params["prover_mb"] > 0 and layered_rules(game._prm):
            warm = Game(rules, _warm_position(rules))
            prove(warm.state_array(), warm.rule_params, _flags(self.params), float(self.params["prover_mb"]) * 2**20,
                  60.0)


def _warm_position(rules: Rules) -> Position:
    """A position the layered prover wins in a few layers under every build (so that it runs its layer
    loop, where a dead or finished root would return at once): hearts and spades home, clubs and
    diamonds up to their tens; piles [JC, QD], [JD, QC], [KC], [KD] (shared round-robin when there are
    fewer than four). A queen must first go onto a king (QD onto KC, or QC onto KC building in suit)
    before a jack comes free."""
    clubs, diamonds = 0, 1
    dealt = [[card(KING - 2, clubs), card(KING - 1, diamonds)], [card(KING - 2, diamonds), card(KING - 1, clubs)],
             [card(KING, clubs)], [card(KING, diamonds)]]
    piles: list[list[int]] = [[] for _ in range(rules.columns)]
    for k, cards in enumerate(dealt):
        piles[k % rules.columns] += cards
    home = tuple(tuple(card(rank, suit) for rank in range(KING + 1 if suit > diamonds else KING - 2))
                 for suit in range(4))
    return Position(tuple(map(tuple, piles)), (0,) * rules.columns, home)
