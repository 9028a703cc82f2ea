"""`random`: a uniformly random legal move, drawn from the RNG the runner hands in.

With ``home_first`` it plays a move to a foundation whenever one exists (the
first in the engine's order) and draws only otherwise.
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.engine import FOUNDATION, move_to
from sim.game import View
from sim.notation import Move
from sim.rng import nb_rng_below
from sim.rules import Rules
from strategies.base import CompiledPolicy, Param, Strategy

RP_HOME_FIRST = 0
"""The one slot of the policy's parameter array: whether a move home is played before drawing."""


@nb.njit(cache=True)
def random_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled random; draws exactly as `RandomStrategy.choose` does."""
    if pparams[RP_HOME_FIRST] != 0:
        for i in range(n):
            if move_to(moves[i]) >= FOUNDATION:
                return i
    return nb_rng_below(rng, n)


class RandomStrategy(Strategy):
    """A uniformly random legal move."""

    name: ClassVar[str] = "random"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "a uniformly random legal move"
    PARAMETERS = {"home_first": Param(bool, False, "play a move home whenever one exists instead of drawing")}

    def choose(self, view: View, moves: list[Move]) -> Move | None:
        if self.params["home_first"]:
            for m in moves:
                if m.to_foundation:
                    return m
        assert self.rng is not None, "reset() hands the strategy its RNG before play"
        return moves[self.rng.below(len(moves))]

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(random_policy, np.array([int(self.params["home_first"])], dtype=np.int64))
