"""A tiny plug-in strategy: home first, otherwise move the lowest exposed card.

Load it with ``bakers-dozen play --deal 1 --strategy examples.lowest_first:LowestFirst``
(run from the repository root, or install the module anywhere on the Python path).
"""

from __future__ import annotations

from typing import ClassVar

from sim.game import View
from sim.notation import Move
from strategies.base import Param, Strategy


class LowestFirst(Strategy):
    """Plays a move home when it can; otherwise moves the lowest-ranked exposed card that can move."""

    name: ClassVar[str] = "lowest-first"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "example plug-in: home first, then the lowest card"
    PARAMETERS = {"max_moves": Param(int, 200, "resign after this many moves", minimum=1)}

    def choose(self, view: View, moves: list[Move]) -> Move | None:
        home = [m for m in moves if m.to_foundation]
        if home:
            return home[0]
        if 52 - view.cards_home > 0 and self._moves_played >= self.params["max_moves"]:
            return None
        self._moves_played += 1
        return min((m for m in moves if not m.from_foundation), key=lambda m: (m.card % 13, m.src, m.dst), default=None)

    def reset(self, deal, rng) -> None:  # noqa: ANN001 (signature of Strategy.reset)
        super().reset(deal, rng)
        self._moves_played = 0
