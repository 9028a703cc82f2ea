"""The exact hint: with every card face up, the solver's verdict on the position after each legal move.

Each move is played and the position after it decided by the solver
(`strategies.solver.strategy.decide_config`) within ``nodes`` nodes: won, with
a winning line; lost, by a proof (a complete search, or the free-parking
relaxation, `strategies.solver.capacity`); unknown when the budget ran out, or
timeout when the clock did first. One solver's table and work arrays serve
every move, as in `strategies.analyse`. The relaxation gets as many states as
the searches get nodes, so that a hint's time is bounded by its budget (the
solver's default, 5,000,000 states, is up to half a minute a position).

Moves are ranked won first (shortest winning line first), then unknown, then
lost, each in the engine's order among equals.
"""

from __future__ import annotations

import time

from sim.game import Game
from strategies.solver.search import S_WON, VERDICTS
from strategies.solver.strategy import PP_MICROS, SolverStrategy, decide_config
from studies.hint.result import MoveHint

_ORDER = {"won": 0, "unknown": 1, "timeout": 1, "lost": 2}


def exact_moves(game: Game, solver: SolverStrategy, deadline: float) -> tuple[list[MoveHint], bool]:
    """Each legal move of ``game`` (every card face up) with the solver's verdict, best first, and whether the
    clock (``deadline``, `time.perf_counter`) stopped a search."""
    rules = game.rules
    numbered = rules.foundation != "suit"
    work = solver.work(rules)
    rows: list[tuple[tuple[int, int, int], MoveHint]] = []
    clock = False
    for i, move in enumerate(game.legal_moves()):
        child = game.clone()
        child.play_legal(move)
        if child.is_won:
            verdict, nodes, codes = "won", 0, []
        else:
            cfg = solver.config()
            cfg[PP_MICROS] = max(int((deadline - time.perf_counter()) * 1e6), 1)
            v, nodes, length, _sec = decide_config(child.state_array(), child.rule_params, work.arrays(), cfg)
            verdict = "unknown" if v == S_WON and length > work.line.shape[0] else VERDICTS[v]  # a line too long to keep
            codes = work.line[:length].tolist() if verdict == "won" else []
            clock |= verdict == "timeout"
        line = tuple(_line_text(child, codes, numbered))
        hint = MoveHint(move.text(numbered), verdict=verdict, line=line, nodes=int(nodes))
        rows.append(((_ORDER[verdict], len(line) if verdict == "won" else 0, i), hint))
    return [hint for _, hint in sorted(rows, key=lambda r: r[0])], clock


def _line_text(game: Game, codes: list[int], numbered: bool) -> list[str]:
    """The engine codes ``codes``, played from ``game`` (on a copy), in notation."""
    game = game.clone()
    start = len(game.history)
    for code in codes:
        game.play_code(code)
    return [m.text(numbered) for m in game.history[start:]]


