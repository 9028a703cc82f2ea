"""The honest estimate: each legal move's chance of winning over completions of the hidden cards, by successive halving.

For a move and a completion (`studies.hint.completions`), the move is played on the
completion and the solver decides the result on a small node budget, as the
`sampling` player solves its completions (`strategies.sampling.solve`): won,
lost, or undecided within the budget (counted as not won). A move's estimate is
its wins over the completions it was scored on.

The budget is spent by successive halving (Karnin, Koren and Somekh, 2013):
every move is scored on the first `FIRST` completions; then the better half of
the moves (never fewer than `KEEP`) go on to twice as many, and so on until the
moves left have ``samples`` completions each (or every completion, when they
are enumerated). A move clearly behind is dropped after a few solves, and the
leaders are compared on many. Every move is scored on the same completions, in
the same order (common random numbers). Moves are ranked by the round they
reached, then by their rate (fewer undecided, then the engine's order, among
equals), so a move dropped early is never ranked above one that went on.

Nothing here reads a face-down card: the completions deal the hidden slots
themselves, and the state they start from is blanked.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from sim import engine as E
from sim.cards import DECK_SIZE
from strategies.sampling import draw_completion
from strategies.sampling.solve import restart_unit, sample_work, solve_completion
from strategies.solver.search import S_UNKNOWN, S_WON
from studies.hint.completions import Completions

FIRST = 16
"""Completions every legal move is scored on before any is dropped."""
KEEP = 2
"""Fewest moves kept at each halving: the best two are compared on every completion."""


@dataclass
class Tally:
    """What the completions said of one move: ``wins`` and ``undecided`` of ``samples``; ``round`` reached."""

    wins: int = 0
    undecided: int = 0
    samples: int = 0
    nodes: int = 0
    round: int = 0


class Scorer:
    """Decides a move on a completion: plays the engine move code on it and solves the result within
    ``budget`` nodes on the work arrays ``work`` (`strategies.solver.strategy.SolverStrategy.work`)."""

    def __init__(self, prm: np.ndarray, cfg: np.ndarray, work: tuple, budget: int) -> None:
        self.prm, self.cfg, self.budget = prm, cfg, budget
        self.work = sample_work(work, budget)
        self.unit = restart_unit(cfg, budget, 0)
        self._cache: dict[tuple[int, int], tuple[int, int]] = {}

    def ready(self, st: np.ndarray) -> None:
        """Compile (or load from numba's cache) what scoring runs, on the state ``st``, before any clock starts:
        a draw of its hidden cards and a solve of one node."""
        out = st.copy()
        draw_completion(st, self.prm, out, np.zeros(2, dtype=np.uint64), np.zeros(DECK_SIZE, dtype=np.int64))
        solve_completion(out, self.prm, self.cfg, self.work, 1, 1)

    def verdict(self, code: int, completions: Completions, j: int) -> tuple[int, int]:
        """(verdict, nodes) of the move ``code`` on completion ``j`` (an arrangement solved once per move)."""
        key = (code, completions.key(j))
        if key not in self._cache:
            st = completions.state(j).copy()
            E.apply_move(st, self.prm, code)
            if E.cards_home(st, self.prm) == DECK_SIZE:
                self._cache[key] = (S_WON, 0)
            else:
                v, nodes, _length, _sec = solve_completion(st, self.prm, self.cfg, self.work, self.budget, self.unit)
                self._cache[key] = (int(v), int(nodes))
        return self._cache[key]


def successive_halving(codes: list[int], completions: Completions, scorer: Scorer, deadline: float) -> tuple[list[int], list[Tally], bool]:
    """Score the moves ``codes`` on ``completions`` (see the module text) until their budget is spent, or the
    clock passes ``deadline`` (`time.perf_counter`). Returns the moves' indices best first, their tallies
    (in the order of ``codes``) and whether the clock stopped the work."""
    tallies = [Tally() for _ in codes]
    alive = list(range(len(codes)))
    target = min(FIRST, completions.size)
    rnd = 0
    while True:
        for i in alive:
            t = tallies[i]
            t.round = rnd
            while t.samples < target:
                if time.perf_counter() > deadline:
                    return _ranking(tallies), tallies, True
                v, nodes = scorer.verdict(codes[i], completions, t.samples)
                t.wins += v == S_WON
                t.undecided += v == S_UNKNOWN
                t.nodes += nodes
                t.samples += 1
        if target >= completions.size or len(alive) <= 1:
            return _ranking(tallies), tallies, False
        alive = sorted(alive, key=lambda i: _merit(tallies[i], i))[: max(KEEP, (len(alive) + 1) // 2)]
        target = min(2 * target, completions.size)
        rnd += 1


def _merit(t: Tally, i: int) -> tuple[int, float, int, int]:
    """Sort key, best first: the round reached, the win rate, fewer undecided, the engine's order."""
    return (-t.round, -t.wins / max(t.samples, 1), t.undecided, i)


def _ranking(tallies: list[Tally]) -> list[int]:
    return sorted(range(len(tallies)), key=lambda i: _merit(tallies[i], i))
