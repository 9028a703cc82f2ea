"""Helpers shared by the solver, prover and sampling tests: a small solver, random walks, late positions, the
face-down count."""

from __future__ import annotations

import random
from collections.abc import Iterator

import numpy as np

from sim import engine as E
from sim.game import Game
from sim.rules import Rules
from strategies.solver.strategy import SolverStrategy


def solver(**params) -> SolverStrategy:  # noqa: ANN003
    """A solver with a small table; the free-parking stage, its cut inside the searches and the layered prover
    off unless asked for (budgets here test the search)."""
    return SolverStrategy(**{"tt_mb": 8, "prover_seconds": 0.0, "capacity_states": 0, "relax_states": 0, **params})


def random_walk(g: Game, steps: int, rng: random.Random) -> list[np.ndarray]:
    """Play up to ``steps`` random legal moves in ``g`` (fewer if it gets stuck); the states after each."""
    out = []
    for _ in range(steps):
        codes = g.legal_codes()
        if len(codes) == 0:
            break
        g.play_code(int(rng.choice(codes.tolist())))
        out.append(g.state_array())
    return out


def late_positions(rules: Rules, deals: range, per_deal: int, seed: int = 1, wander: int = 6) -> list[np.ndarray]:
    """Small positions: a winning line followed part of the way (most cards home), then a few
    random moves (fewer than ``wander``), so that some stay winnable and some are lost. The lines come from
    fixed restart settings (solver version 4's), so the positions do not move with the solver's defaults."""
    rng = random.Random(seed)
    s = solver(nodes=300_000, restart_nodes=2000, noise=3000)
    out = []
    for d in deals:
        start = Game.from_deal(rules, d)
        verdict, _, line, _ = s.solve_state(rules, start.state_array())
        if verdict != "won":
            continue
        for _ in range(per_deal):
            g = Game.from_deal(rules, d)
            for code in line[: rng.randrange(len(line) // 2, len(line))]:
                g.play_code(code)
            random_walk(g, rng.randrange(wander), rng)
            out.append(g.state_array())
    return out


def face_down(rules: Rules, st: np.ndarray) -> int:
    """How many cards of the state ``st`` are face down."""
    return sum(int(st[E.down_at(rules.columns, p)]) for p in range(rules.columns))


def hidden_decisions(rules: Rules, prm: np.ndarray, st: np.ndarray, moves: np.ndarray, steps: int) -> Iterator[int]:
    """The decisions of a game from ``st`` while cards are face down and moves are left, at most ``steps``:
    yields the number of legal moves (in ``moves``) at each; the caller plays its move on ``st``."""
    for _ in range(steps):
        n = E.gen_moves(st, prm, moves)
        if n == 0 or face_down(rules, st) == 0:
            return
        yield n
