"""Helpers of the runner and store tests: a row comparer, and strategies that misbehave on purpose.

Worker processes load the strategies as ``tests.runner_helpers:ClassName``
(the strategy loader finds the module from the current directory, the
repository root when pytest runs).
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from pathlib import Path
from typing import ClassVar

import numba as nb
import numpy as np
import pandas as pd
import pyarrow as pa

from sim.rng import strategy_key
from sim.rules import Rules
from strategies.base import CompiledPolicy, Param, Strategy
from strategies.greedy import GreedyStrategy
from studies import store as S

TIME_COLUMNS = ["micros", "micros_averaged"]


def ctrl_c_as_in_a_terminal() -> None:
    """In a child (``preexec_fn``): SIGINT delivered and handled by default, as a shell leaves it, whatever the
    test process inherited or blocked (a signal ignored or blocked there would be ignored or blocked in the child too)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def rows(df: pd.DataFrame) -> pd.DataFrame:
    """Stored rows ready for exact comparison: no time columns, sorted by key and deal, plain dtypes."""
    out = df.drop(columns=[c for c in TIME_COLUMNS if c in df]).sort_values(["key", "deal"]).reset_index(drop=True)
    for c in out.columns:
        if isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype(str)
    if "win_moves" in out:
        out["win_moves"] = out["win_moves"].map(lambda x: None if x is None else tuple(int(v) for v in x))
    return out


class DieOnce(GreedyStrategy):
    """Plays like greedy (Python tier only), but the first process to reach deal ``deal`` dies on the spot.

    The file ``marker`` records that the death happened, so the replayed chunk goes through.
    """

    name: ClassVar[str] = "die-once"
    version: ClassVar[str] = "1"
    PARAMETERS = {
        "marker": Param(str, "", "file created just before the process dies"),
        "deal": Param(int, 1, "deal number on which to die"),
    }

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        assert self.deal is not None
        if self.deal.number == self.params["deal"] and not os.path.exists(self.params["marker"]):
            with open(self.params["marker"], "w") as fh:
                fh.write(str(os.getpid()))
            os._exit(17)
        return super().choose(view, moves)

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return None


class Boom(GreedyStrategy):
    """Plays like greedy (Python tier only), but raises on every deal number divisible by 7."""

    name: ClassVar[str] = "boom"
    version: ClassVar[str] = "1"

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        assert self.deal is not None
        if self.deal.number % 7 == 0:
            raise RuntimeError(f"boom on deal {self.deal.number}")
        return super().choose(view, moves)

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return None


class GreedyV2(GreedyStrategy):
    """Greedy under a new version number: its results must not be pooled with version 1's."""

    name: ClassVar[str] = "greedy"  # its own, as a class without one is named after its module and class
    version: ClassVar[str] = "2"


class FillingStore(S.Store):
    """A store whose disk "fills up" for chunks from deal ``full_from`` on: half the file is written, then ENOSPC.

    A `Store` subclass, so it travels to the worker processes that write the chunks.
    """

    def __init__(self, path: str | os.PathLike[str], full_from: int) -> None:
        super().__init__(path)
        self.full_from = full_from

    def write_chunk(self, table: pa.Table, key: str, first: int, last: int, run_id: str = "") -> Path:
        if first < self.full_from:
            return super().write_chunk(table, key, first, last, run_id)
        real = S.write_parquet

        def half_then_full(table: pa.Table, path: Path, root: Path) -> None:
            with open(path, "wb") as fh:
                fh.write(b"PAR1")
            raise OSError(errno.ENOSPC, "No space left on device")

        S.write_parquet = half_then_full
        try:
            return super().write_chunk(table, key, first, last, run_id)
        finally:
            S.write_parquet = real


@nb.njit
def _first_move_or_loop(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Play the first legal move; on the deal whose strategy key is ``pparams[0]``, never return."""
    if rng[0] == pparams[0]:
        while True:
            scratch[1] += 1
    return 0


class LoopOn(Strategy):
    """Plays the first legal move (both tiers), but its compiled policy loops for ever on deal ``deal``
    (strategy seed 0): a policy that no limit inside its process can stop."""

    name: ClassVar[str] = "loop-on"
    version: ClassVar[str] = "1"
    PARAMETERS = {"deal": Param(int, 0, "deal number on which the compiled policy never returns (0: none)")}

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        return moves[0]

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        key = strategy_key(0, self.params["deal"]) if self.params["deal"] else 0
        return CompiledPolicy(_first_move_or_loop, np.array([key], dtype=np.uint64))


class Sleepy(GreedyStrategy):
    """Plays like greedy (Python tier only), but sleeps ``seconds`` before each move of deal ``deal``."""

    name: ClassVar[str] = "sleepy"
    version: ClassVar[str] = "1"
    PARAMETERS = {
        "deal": Param(int, 1, "deal number on which to sleep"),
        "seconds": Param(float, 1.0, "sleep before each move of that deal"),
    }

    def choose(self, view, moves):  # noqa: ANN001, ANN201
        assert self.deal is not None
        if self.deal.number == self.params["deal"]:
            time.sleep(self.params["seconds"])
        return super().choose(view, moves)

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return None


class ExitOnLoad(GreedyStrategy):
    """A plug-in whose constructor calls ``sys.exit``."""

    name: ClassVar[str] = "exit-on-load"

    def __init__(self, **params: object) -> None:
        sys.exit(3)


class BrokenCompiled(GreedyStrategy):
    """A plug-in whose ``compiled()`` raises."""

    name: ClassVar[str] = "broken-compiled"

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        raise RuntimeError("no compiler here")


@nb.njit
def _untypable(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    return undefined_name_xyz(n)  # noqa: F821 (the point: numba cannot type it)


class Uncompilable(GreedyStrategy):
    """A plug-in whose compiled policy numba cannot compile (its error shows only when a worker plays)."""

    name: ClassVar[str] = "uncompilable"

    def compiled(self, rules: Rules) -> CompiledPolicy | None:
        return CompiledPolicy(_untypable, np.zeros(1, dtype=np.int64))
