"""One solve of a completion by the `sampling` player: a small budget, its own restart unit, a table window.

The player solves many completions of the hidden cards on a few hundred nodes each
(`strategies.sampling.strategy`, `strategies.sampling.plan`). Such a solve differs from the
solver's decision of a deal (`strategies.solver.strategy.decide`) in three ways, each
measured (CHANGELOG.md, sampling versions 7 and 8):

- it searches a window of the transposition table sized from its budget
  (`sample_work`), which stays in the processor's cache;
- its Luby restart unit is ``unit`` nodes (the ``sample_unit`` parameter; by
  default half the budget, so a solve is two searches, Luby's 1, 1:
  `restart_unit`): 10 samples of 200 nodes and 5 candidates won 245 of
  dick-1883 deals 2001-2800 with a half, 209 with one search of the whole
  budget and 193 with a third; an eighth, as up to version 7, leaves searches
  of 25 nodes, which rarely find a win;
- its winning line is not shortened (`strategies.solver.line`): the player uses
  the line only up to its first card turned up (a plan) or its first move, and
  the shortening took about a seventh of the time of solves this small
  (dick-1883 deals 2001-2800, version 7's `fast`: 188 won with 0.126 CPU s a
  deal without it, 185 with 0.150 s with it).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from strategies.solver.search import (
    F_RELAX,
    M_RENUMBERED,
    W_ABUF,
    W_DWORK,
    W_FRAMES,
    W_KEYS,
    W_LINE,
    W_MBUF,
    W_META,
    W_RMEMO,
    W_RTABLE,
    W_RWORK,
    W_SCORES,
    W_SCRATCH,
    W_STATE,
    W_TIDX,
    W_TMP,
    W_TSTACK,
    W_TT,
)
from strategies.solver.strategy import PP_CALM_NOISE, PP_FLAGS, PP_NOISE, PP_RESTART_NODES, decide

SAMPLE_TT_MIN = 1 << 10
"""Fewest slots of the table window of a completion's solve (`sample_work`)."""


@nb.njit(cache=True)
def sample_work(work, budget):  # noqa: ANN001, ANN201 (numba)
    """The solver's work arrays (`SolverWork.arrays`) with the transposition table cut to a window
    for one solve of a completion on ``budget`` nodes. A search adds at most one entry a node
    (restarts start a new generation), so a window of at least four slots a node stays at most a
    quarter full: the search meets the same positions in the table (bar eight neighbouring slots all
    taken, rare at a quarter full), and a small table stays in the processor's cache, where most
    probes of the whole table (tt_mb, sized for the solver's search once nothing is hidden) miss it
    (CHANGELOG.md, sampling version 7).

    Windows of several sizes share the table, and a search that starts the generations again clears
    only its own window (`strategies.solver.search`, `M_RENUMBERED`): entries of the old generations
    beyond it would read as the new ones' in a bigger window, so the whole table is cleared here first."""
    tt = work[W_TT]
    meta = work[W_META]
    if meta[M_RENUMBERED] != 0:
        tt[:] = 0
        meta[M_RENUMBERED] = 0
    size = min(SAMPLE_TT_MIN, tt.shape[0])
    while size < 4 * (budget + 1) and size < tt.shape[0]:
        size *= 2
    return (work[W_KEYS], tt[:size], work[W_TIDX][:size], work[W_TSTACK][:size], work[W_META], work[W_FRAMES],
            work[W_MBUF], work[W_ABUF], work[W_TMP], work[W_SCORES], work[W_DWORK], work[W_LINE], work[W_RMEMO],
            work[W_RTABLE], work[W_RWORK], work[W_STATE], work[W_SCRATCH])


@nb.njit(cache=True)
def restart_unit(cfg, budget, unit):  # noqa: ANN001, ANN201 (numba)
    """The Luby unit of a completion's solve on ``budget`` nodes: ``unit`` when above 0, else half the
    budget; never above the solver's ``restart_nodes`` or the budget, never below 1."""
    u = unit if unit > 0 else budget // 2
    return max(1, min(cfg[PP_RESTART_NODES], budget, u))


@nb.njit(cache=True)
def solve_completion(sample, prm, cfg, work, budget, unit):  # noqa: ANN001, ANN201 (numba)
    """Decide the completion ``sample`` (every card known) on ``budget`` nodes with restarts in units of
    ``unit`` (`restart_unit`) on the work arrays ``work`` (`sample_work`); returns the solver's
    (verdict, nodes, line length, seconds), its line unshortened in ``work[W_LINE]``."""
    none = np.int64(0)  # no prover, no final search, no relaxation: typed as the solver's own call types them
    return decide(sample, prm, work, budget, 1e9, cfg[PP_FLAGS] & ~F_RELAX, unit, cfg[PP_NOISE], cfg[PP_CALM_NOISE],
                  none, 0.0, none, none, none, none)
