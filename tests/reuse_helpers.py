"""Plug-in strategies of the reuse tests (`tests/test_reuse.py`), loaded by worker processes as
``tests.reuse_helpers:ClassName`` (from the repository root, where pytest runs)."""

from __future__ import annotations

import time
from typing import ClassVar

from strategies.base import Param
from strategies.greedy import GreedyStrategy
from strategies.heuristic import HeuristicStrategy


class HeuristicPlug(HeuristicStrategy):
    """The built-in heuristic as a plug-in: verified by default, and it wins often enough for small tests."""

    name: ClassVar[str] = "heuristic-plug"
    version: ClassVar[str] = "1"


class TwoFaced(HeuristicStrategy):
    """A plug-in whose tiers disagree: compiled, the heuristic; in Python, it resigns at once."""

    name: ClassVar[str] = "two-faced"
    version: ClassVar[str] = "1"

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        return None


class SlowOnce(GreedyStrategy):
    """Greedy in Python, but on deal ``deal`` it first waits ``wait`` seconds; with ``catch`` an interruption
    of that wait (a deal time limit's timer) becomes an error of its own, as a strategy that catches
    everything may make of it."""

    name: ClassVar[str] = "slow-once"
    version: ClassVar[str] = "1"
    PARAMETERS = {
        "deal": Param(int, 6, "deal number on which to wait"),
        "wait": Param(float, 1.5, "seconds to wait"),
        "catch": Param(bool, False, "turn an interrupted wait into a RuntimeError"),
    }

    def reset(self, deal, rng) -> None:  # noqa: ANN001
        super().reset(deal, rng)
        self.waited = False

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        assert self.deal is not None
        if self.deal.number == self.params["deal"] and not self.waited:
            self.waited = True
            if not self.params["catch"]:
                time.sleep(self.params["wait"])
            else:
                try:
                    time.sleep(self.params["wait"])
                except BaseException:  # noqa: BLE001 - on purpose: what the timer's interruption becomes
                    raise RuntimeError("interrupted") from None
        return super().choose(view, moves)

    def compiled(self, rules):  # noqa: ANN001, ANN201
        return None
