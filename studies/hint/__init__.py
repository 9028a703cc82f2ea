"""`hint`: the legal moves of the position in front of a player, ranked by their estimated chance of winning.

With every card face up the answer is exact (`studies.hint.exact`): the solver's
verdict on each move, and a winning line. With cards face down it is an honest
estimate (`studies.hint.halving`): each move's share of won completions of the
hidden cards, sampled or, when few cards are hidden, enumerated
(`studies.hint.completions`). The estimate never reads a face-down card: the
position is blanked (`sim.position.Position.blanked`) before anything else, so
two tables that differ only in their face-down cards get the same hint.

A completion solved after the move is decided by a solver that sees all its
cards, so the estimate is the chance that the position after the move can be
won by a player who from then on knew the cards: an upper bound on what play
without that knowledge wins, which ranks the moves (the method of the
`sampling` player, perfect-information Monte Carlo).
"""

from __future__ import annotations

import time

from sim.game import Game
from sim.position import Position
from sim.rules import Rules
from strategies.sampling.strategy import COMPLETION_SEARCH
from strategies.solver.strategy import SolverStrategy
from studies.hint.completions import Completions
from studies.hint.exact import exact_moves
from studies.hint.halving import Scorer, Tally, successive_halving
from studies.hint.result import ENUMERATED, EXACT, SAMPLED, Hint, MoveHint
from studies.stats import win_rate_interval

SAMPLES = 256
"""Most completions a move is scored on (the leaders of the successive halving get them all)."""
SAMPLE_NODES = 20_000
"""Node budget of the solve of one completion after one move."""
EXACT_NODES = 100_000
"""Node budget of the solver's decision of the position after one move, every card face up: Baker's Dozen deals
1-40 are decided move by move within 0.3 s each; bakers-dozen 2492, among the hardest of deals 1-10,000, is left
unknown in 3.8 CPU s (twice the budget takes 21 s, most of it in the relaxation's cut, which starts at 100,000)."""
SECONDS = 60.0
"""Safety cap on the whole hint, far above what the default budgets take: the budgets decide the answer."""
HINT_TT_MB = 64.0
"""The solver's transposition table in MiB (a completion's solve uses a window of it)."""


def hint_position(rules: Rules, position: Position, *, samples: int = SAMPLES, nodes: int | None = None,
                  seconds: float = SECONDS, seed: int = 0, tt_mb: float = HINT_TT_MB) -> Hint:
    """Rank the legal moves of ``position`` under ``rules`` (see the module text).

    ``samples`` bounds the completions a move is scored on; ``nodes`` is the node budget of each
    solve (`SAMPLE_NODES` for a completion, `EXACT_NODES` for a face-up position when None);
    ``seconds`` caps the whole hint; ``seed`` fixes the completions.
    """
    game = Game(rules, position.blanked())
    hidden = sum(position.face_down)
    budget = {"samples": samples, "seconds": seconds, "seed": seed}
    if hidden == 0:
        nodes = EXACT_NODES if nodes is None else nodes
        solver = SolverStrategy(nodes=nodes, tt_mb=tt_mb, capacity_states=nodes)
        solver.ready(rules)  # compiled before the clock starts, as for a deal
        start = time.perf_counter()
        moves, clock = exact_moves(game, solver, start + seconds)
        best = moves[0] if moves and moves[0].verdict == "won" else None
        line = (best.move, *best.line) if best is not None else ()
        return Hint(rules.name, EXACT, 0, tuple(moves), line, 0, sum(m.nodes for m in moves),
                    time.perf_counter() - start, clock, {**budget, "nodes": nodes})
    nodes = SAMPLE_NODES if nodes is None else nodes
    solver = SolverStrategy(tt_mb=tt_mb, **COMPLETION_SEARCH)
    st, prm = game.state_array(), game.rule_params
    scorer = Scorer(prm, solver.config(), solver.work(rules).arrays(), nodes)
    scorer.ready(st)
    legal = game.legal_moves()
    start = time.perf_counter()
    completions = Completions(st, prm, samples, seed)
    order, tallies, clock = successive_halving([m.code for m in legal], completions, scorer, start + seconds)
    numbered = rules.foundation != "suit"
    moves = tuple(_estimate(legal[i].text(numbered), tallies[i], completions) for i in order)
    return Hint(rules.name, ENUMERATED if completions.exact else SAMPLED, hidden, moves, (), completions.size,
                sum(t.nodes for t in tallies), time.perf_counter() - start, clock, {**budget, "nodes": nodes})


def _estimate(move: str, t: Tally, completions: Completions) -> MoveHint:
    """A move's row: its rate and 95% interval (Wilson's; on every enumerated completion, the exact range)."""
    if t.samples == 0:
        return MoveHint(move, wins=0, samples=0, undecided=0, nodes=t.nodes)
    rate = t.wins / t.samples
    if completions.exact and t.samples == completions.size:
        low, high = rate, (t.wins + t.undecided) / t.samples
    else:
        low, high = win_rate_interval(t.wins, t.samples)
    return MoveHint(move, wins=t.wins, samples=t.samples, undecided=t.undecided, rate=rate, low=low, high=high,
                    nodes=t.nodes)
