"""Helpers of the Dask tests: strategies that hold a worker on one deal (so that a test can break the run there) or
say where they play.

Workers load it as ``tests.dask_helpers:HoldAt`` (the strategy loader finds the module from the current
directory, the repository root when pytest runs).
"""

from __future__ import annotations

import os
import threading
import time
from typing import ClassVar

from sim.rng import CounterRNG
from sim.rules import Rules
from strategies.base import CompiledPolicy, DealInfo, Param
from strategies.greedy import GreedyStrategy


class HoldAt(GreedyStrategy):
    """Plays like greedy (Python tier only), but on deal ``deal`` creates the file ``marker`` and then waits until
    the file ``release`` exists (at most ``seconds``, so that a test that fails leaves no worker busy for long)."""

    name: ClassVar[str] = "hold-at"
    version: ClassVar[str] = "1"
    PARAMETERS = {
        "deal": Param(int, 1, "deal number on which to wait"),
        "marker": Param(str, "", "file created when the wait begins"),
        "release": Param(str, "", "file whose existence ends the wait"),
        "seconds": Param(float, 60.0, "longest wait"),
    }

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        assert self.deal is not None
        if self.deal.number == self.params["deal"] and not os.path.exists(self.params["release"]):
            with open(self.params["marker"], "w"):
                pass
            end = time.monotonic() + self.params["seconds"]
            while not os.path.exists(self.params["release"]) and time.monotonic() < end:
                time.sleep(0.05)
        return super().choose(view, moves)

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return None


class SayWhere(GreedyStrategy):
    """Plays like greedy (Python tier only), and appends the process and thread it plays each deal in to ``log``."""

    name: ClassVar[str] = "say-where"
    version: ClassVar[str] = "1"
    PARAMETERS = {"log": Param(str, "", "file that gets a line 'PID THREAD' per deal")}

    def reset(self, deal: DealInfo, rng: CounterRNG) -> None:
        super().reset(deal, rng)
        with open(self.params["log"], "a") as fh:
            fh.write(f"{os.getpid()} {threading.get_ident()}\n")

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return None
