"""`lookahead`: tries each candidate move and plays the one that leads furthest.

It considers the same moves as `heuristic` (moves home, moves of misplaced
cards, moves that free a card for home, digging moves) and judges each one in
one of two ways (``mode``):

- ``rollout`` (default): play the heuristic on from the move until the game
  ends or a face-down card turns up, and score where it stops;
- ``search``: search ``depth`` moves ahead over the candidate moves and score
  the best position at the horizon.

Positions are scored with an evaluation that reads only seen cards:

    value = 100 x cards home
            - sum over cards that are covered: (cards above it) x (13 - need)
            - ``inversion_penalty`` x (pairs of one suit with the higher card above)
            + ``reveal_bonus`` x face-down cards turned up

where need is how many cards must go home before that card can, and an unseen
card counts as needed after 6 others. A move that turns a face-down card up
ends its line of search (what the card is cannot be known in advance), so the
search never uses hidden cards. A won position scores above everything.

It never returns to a position already seen in the game, and resigns when no
considered move leads to a position better than the current one, or once it
has seen `strategies.features.VISITED_LIMIT` (384) positions in one game,
where its memory of them is full (far beyond its longest game measured: 140
moves on five presets, tests/test_features.py).
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.cards import DECK_SIZE, nb_suit_of
from sim.engine import (
    FOUNDATION,
    P_FILL,
    P_MOVEBUF,
    P_PILES,
    SCRATCH_NODES,
    apply_move,
    cards_home,
    down_at,
    gen_moves,
    move_from,
    move_to,
    pile_base,
    undo_move,
)
from sim.rules import Rules
from strategies.base import CompiledPolicy, Param, PolicyStrategy
from strategies.features import (
    F_BELOW,
    F_FREES_HOME,
    F_FULL,
    F_MISPLACED,
    FAR,
    FEATURE_ROWS,
    SCRATCH_LAST,
    SCRATCH_STORED,
    SCRATCH_WITH_VISITED,
    UNKNOWN_NEED,
    VISITED_LIMIT,
    child_hash,
    fill_needs,
    needs_of,
    pile_features,
    position_hash,
    remember,
    visited,
)
from strategies.heuristic import HeuristicStrategy, heuristic_policy

WIN = 1 << 40

LP_DEPTH, LP_REVEAL_BONUS, LP_INVERSION_PENALTY, LP_ROLLOUT, LP_SIZE = range(5)
"""Slots of the policy's own parameter array (the first of its `pparams`; the second is the
heuristic's, for rollouts, with its ``position`` guard: a rollout hands it the game's memory of positions)."""


@nb.njit(cache=True)
def evaluate(st, prm, known, need_of, reveal_bonus, inversion_penalty):  # noqa: ANN001, ANN201 (numba)
    """The value of a position from what the player has seen (see the module docstring)."""
    P = prm[P_PILES]
    home = cards_home(st, prm)
    if home == DECK_SIZE:
        return WIN
    fill_needs(st, prm, need_of)
    v = 100 * home
    for p in range(P):
        h = np.int64(st[p])
        base = pile_base(prm, p)
        for i in range(h - 1):
            if i < known[p]:
                v -= (h - 1 - i) * (13 - UNKNOWN_NEED)
                continue
            c = np.int64(st[base + i])
            v -= (h - 1 - i) * (13 - need_of[c])
            for j in range(i + 1, h):  # a higher card of its own suit above it must leave first
                x = np.int64(st[base + j])
                if nb_suit_of(x) == nb_suit_of(c) and x > c:
                    v -= inversion_penalty
        v += reveal_bonus * (known[p] - min(known[p], np.int64(st[down_at(P, p)])))
    return v


@nb.njit(cache=True, inline="always")
def _considered(st, prm, m, feat):  # noqa: ANN001, ANN202 (numba)
    """The heuristic's candidate moves (with digging allowed)."""
    src, dst = move_from(m), move_to(m)
    if src >= FOUNDATION:
        return False
    if dst >= FOUNDATION or feat[F_MISPLACED, src] == 1 or feat[F_FREES_HOME, src] == 1:
        return True
    if st[src] < 2:
        return False
    if st[dst] == 0:
        return prm[P_FILL] != 0 and feat[F_BELOW, src] < FAR
    return feat[F_BELOW, src] < feat[F_FULL, dst]


@nb.njit(cache=True)
def search(st, prm, known, depth, bufs, feats, need_of, reveal_bonus, inversion_penalty, nodes):  # noqa: ANN001, ANN201 (numba)
    """The best value reachable within ``depth`` considered moves (the position's own value if none)."""
    nodes[0] += 1
    here = evaluate(st, prm, known, need_of, reveal_bonus, inversion_penalty)
    if depth == 0 or here == WIN:
        return here
    moves = bufs[depth]
    feat = feats[depth]
    n = gen_moves(st, prm, moves)
    pile_features(st, prm, known, feat, need_of)
    best = here
    for i in range(n):
        m = moves[i]
        if not _considered(st, prm, m, feat):
            continue
        revealed = apply_move(st, prm, m)
        if revealed:
            v = evaluate(st, prm, known, need_of, reveal_bonus, inversion_penalty)
        else:
            v = search(st, prm, known, depth - 1, bufs, feats, need_of, reveal_bonus, inversion_penalty, nodes)
        undo_move(st, prm, m, revealed)
        if v > best:
            best = v
    return best


@nb.njit(cache=True)
def rollout(st, prm, known, need_of, reveal_bonus, inversion_penalty, hparams, game_scratch, roll_scratch, moves, nodes):  # noqa: ANN001, ANN201
    """Play the heuristic from st until the game ends or a face-down card turns up; value of where it stops.

    Returns the evaluation there (`WIN` for a win); st is restored before returning. The heuristic
    plays on a copy of the game's memory of positions seen: it remembers one new position a move and
    resigns once that memory is full, so a rollout is at most `VISITED_LIMIT` moves long (its buffers'
    size) and never overfills the table.
    """
    roll_scratch[:] = game_scratch
    roll_scratch[SCRATCH_LAST] = position_hash(st, prm)  # where the heuristic starts: not the game's position
    played = np.empty(VISITED_LIMIT, dtype=np.int64)
    flags = np.empty(VISITED_LIMIT, dtype=np.int64)
    k = 0
    rng = np.zeros(2, dtype=np.uint64)
    while k < VISITED_LIMIT:
        n = gen_moves(st, prm, moves)
        if n == 0:
            break
        i = heuristic_policy(st, prm, moves, n, hparams, rng, roll_scratch)
        if i < 0:
            break
        nodes[0] += 1
        played[k] = moves[i]
        flags[k] = apply_move(st, prm, moves[i])
        k += 1
        if flags[k - 1] != 0 or cards_home(st, prm) == DECK_SIZE:
            break
    v = evaluate(st, prm, known, need_of, reveal_bonus, inversion_penalty)
    for j in range(k - 1, -1, -1):
        undo_move(st, prm, played[j], flags[j])
    return v


@nb.njit(cache=True)
def lookahead_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled lookahead; `LookaheadStrategy.choose` runs this same code on the view."""
    P = prm[P_PILES]
    lp, hparams = pparams
    depth, reveal_bonus, inversion_penalty = lp[LP_DEPTH], lp[LP_REVEAL_BONUS], lp[LP_INVERSION_PENALTY]
    use_rollouts = lp[LP_ROLLOUT] != 0
    known = np.empty(P, dtype=np.int64)
    for p in range(P):
        known[p] = st[down_at(P, p)]
    need_of = needs_of(scratch)
    bufs = np.empty((depth + 1, prm[P_MOVEBUF]), dtype=np.int64)
    feats = np.empty((depth + 1, FEATURE_ROWS, P), dtype=np.int64)
    here = np.uint64(scratch[SCRATCH_LAST]) if scratch[SCRATCH_STORED] > 0 else position_hash(st, prm)
    if not remember(scratch, here):
        return -1
    nodes = np.zeros(1, dtype=np.int64)
    feat = feats[0]
    pile_features(st, prm, known, feat, need_of)
    best, best_value, best_child = -1, np.int64(-WIN), np.uint64(0)
    work = st.copy()
    roll_scratch = np.empty_like(scratch) if use_rollouts else scratch[:0]
    for i in range(n):
        m = moves[i]
        if not _considered(work, prm, m, feat):
            continue
        child = child_hash(work, prm, here, m)
        if move_to(m) < FOUNDATION and visited(scratch, child):
            continue
        revealed = apply_move(work, prm, m)
        if revealed:
            v = evaluate(work, prm, known, need_of, reveal_bonus, inversion_penalty)
        elif use_rollouts:
            v = rollout(work, prm, known, need_of, reveal_bonus, inversion_penalty, hparams, scratch, roll_scratch, bufs[0], nodes)
        else:
            v = search(work, prm, known, depth - 1, bufs, feats, need_of, reveal_bonus, inversion_penalty, nodes)
        undo_move(work, prm, m, revealed)
        if v > best_value:
            best, best_value, best_child = i, v, child
    scratch[SCRATCH_NODES] += nodes[0] + 1
    if best >= 0:
        scratch[SCRATCH_LAST] = np.int64(best_child)
    return best


class LookaheadStrategy(PolicyStrategy):
    """Judges the heuristic's candidate moves by rollouts or a short search, never using hidden cards."""

    name: ClassVar[str] = "lookahead"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "heuristic rollouts (or a k-move search) from each candidate move; never uses hidden cards"
    PARAMETERS = {
        "depth": Param(int, 2, "moves searched ahead in search mode (1 = judge each move by the position it leads to)", minimum=1,
                       maximum=6),
        "reveal_bonus": Param(int, 20, "value of turning a face-down card up, in the units of the evaluation", minimum=0,
                              maximum=1_000_000),
        "inversion_penalty": Param(int, 10, "cost of a higher card of the same suit lying above a card", minimum=0,
                                   maximum=1_000_000),
        "mode": Param(str, "rollout", "rollout: play the heuristic on from each move (until a card turns up); "
                      "search: search depth moves ahead", choices=("rollout", "search")),
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        if self.params["depth"] > 6:
            from strategies.base import StrategyError

            raise StrategyError(f"strategy 'lookahead': depth={self.params['depth']} is too deep; allowed: 1..6")
        lp = np.zeros(LP_SIZE, dtype=np.int64)
        lp[LP_DEPTH] = self.params["depth"]
        lp[LP_REVEAL_BONUS] = self.params["reveal_bonus"]
        lp[LP_INVERSION_PENALTY] = self.params["inversion_penalty"]
        lp[LP_ROLLOUT] = int(self.params["mode"] == "rollout")
        self._pparams = (lp, HeuristicStrategy(guard="position")._pparams)

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(lookahead_policy, self._pparams, SCRATCH_WITH_VISITED)
