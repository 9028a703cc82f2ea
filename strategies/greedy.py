"""`greedy`: a card goes home whenever it can; otherwise a simple fixed rule.

The rule, in order, taking the first legal move in the engine's order that fits:

1. a move to a foundation;
2. a move of an exposed card that does not rest on a card it builds on (or
   rests on a face-down card) and is not alone in its pile: it can only get
   better placed;
3. a move of a well-placed card whose removal uncovers a card that goes home
   at once;
4. otherwise it resigns.

Each tableau move of rule 2 puts one more card on a base and rule 3 is always
followed by a move home, so greedy never loops. It never moves cards back from
the foundations and never reads face-down cards.

It is a one-step baseline, and it wins less than random play: on Baker's Dozen
deals 1-20,000 it wins 0.40% (81 deals) against 0.92% (185) for
``random:home_first=true``. It resigns as soon as no rule fits (18,679 of those
games, after 18 moves on average): it never moves a card that already rests on
a card it builds on unless that frees a card for home, yet digging out a buried
low card takes exactly such moves, and with building regardless of suit most
cards are soon well placed. Random play makes them by chance, wandering 928 moves
a game on average until the engine's no-progress guard ends it. `heuristic` is
the player that digs on purpose.
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.engine import FOUNDATION, P_BUILD, P_PILES, builds_on, down_at, home_slot, move_from, move_to, pile_base
from sim.game import HIDDEN_CARD, View
from sim.notation import Move
from sim.rules import Rules
from strategies.base import CompiledPolicy, Strategy


@nb.njit(cache=True)
def greedy_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled greedy; identical choices to `GreedyStrategy.choose`."""
    P = prm[P_PILES]
    for i in range(n):
        if move_to(moves[i]) >= FOUNDATION:
            return i
    for i in range(n):
        src = move_from(moves[i])
        if src >= FOUNDATION:
            continue
        h = np.int64(st[src])
        if h < 2:
            continue
        if st[down_at(P, src)] >= h - 1:
            return i
        base = pile_base(prm, src)
        if not builds_on(np.int64(st[base + h - 1]), np.int64(st[base + h - 2]), prm[P_BUILD]):
            return i
    for i in range(n):
        src = move_from(moves[i])
        if src >= FOUNDATION:
            continue
        h = np.int64(st[src])
        if h < 2 or st[down_at(P, src)] >= h - 1:
            continue
        if home_slot(st, prm, np.int64(st[pile_base(prm, src) + h - 2]), 0) >= 0:
            return i
    return -1


class GreedyStrategy(Strategy):
    """Home first, then moves that improve a misplaced card, then moves that free a card for home."""

    name: ClassVar[str] = "greedy"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "a card goes home whenever it can; otherwise the first move that places a misplaced card"

    def choose(self, view: View, moves: list[Move]) -> Move | None:
        for m in moves:
            if m.to_foundation:
                return m
        for m in moves:
            if not m.from_foundation and view.height(m.src) >= 2 and not view.card_rests_on_base(m.src):
                return m
        for m in moves:
            if m.from_foundation or view.height(m.src) < 2:
                continue
            below = view.card_at(m.src, view.height(m.src) - 2)
            if below != HIDDEN_CARD and view.home_slot(below) >= 0:
                return m
        return None

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(greedy_policy, np.zeros(1, dtype=np.int64))
