"""A small plug-in strategy, in both tiers: home first, otherwise move the lowest exposed card.

Load it with ``bakers-dozen play --deal 1 --strategy examples.lowest_first:LowestFirst``
(run from the repository root, or install the module anywhere on the Python path).

`choose` is the Python tier: readable, a few thousand deals a second. The
compiled policy below makes exactly the same choices in machine code; the
runner uses it whenever `compiled` returns one.
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.cards import nb_rank_of, rank_of
from sim.engine import FOUNDATION, POLICY_RESIGN, SCRATCH_OWN, move_from, move_to, top_card
from sim.game import View
from sim.notation import Move
from sim.rules import Rules
from strategies.base import CompiledPolicy, Param, Strategy

MOVES_MADE = SCRATCH_OWN
"""The policy's one slot of per-game memory: the scratch before `SCRATCH_OWN` reports nodes and time."""


@nb.njit(cache=True)
def lowest_first_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Home first; else the first move (engine order) of the lowest-ranked card; resign after pparams[0] moves."""
    scratch[MOVES_MADE] += 1  # per-game memory, zeroed before each deal
    best, best_rank = -1, 99
    for i in range(n):
        m = moves[i]
        src, dst = move_from(m), move_to(m)
        if dst >= FOUNDATION:
            return i
        if src >= FOUNDATION:
            continue
        rank = nb_rank_of(top_card(st, prm, src))
        if rank < best_rank:
            best, best_rank = i, rank
    if scratch[MOVES_MADE] > pparams[0]:
        return POLICY_RESIGN
    return best


class LowestFirst(Strategy):
    """Plays a move home when it can; otherwise moves the lowest-ranked exposed card that can move."""

    name: ClassVar[str] = "lowest-first"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "example plug-in: home first, then the lowest card"
    PARAMETERS = {"max_moves": Param(int, 200, "resign after this many moves", minimum=1)}

    def reset(self, deal, rng) -> None:  # noqa: ANN001 (signature of Strategy.reset)
        super().reset(deal, rng)
        self.moves_made = 0

    def choose(self, view: View, moves: list[Move]) -> Move | None:
        self.moves_made += 1
        home = [m for m in moves if m.to_foundation]
        if home:
            return home[0]
        if self.moves_made > self.params["max_moves"]:
            return None
        return min((m for m in moves if not m.from_foundation), key=lambda m: rank_of(m.card), default=None)

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(lowest_first_policy, np.array([self.params["max_moves"]], dtype=np.int64), scratch_size=MOVES_MADE + 1)
