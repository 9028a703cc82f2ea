"""Helpers shared by the solver, prover and sampling tests: a small solver, random walks, late positions, the
face-down count, the face-down cards dealt again, and the check that the sampling player never reads them."""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from sim import engine as E
from sim.cards import KING, rank_of
from sim.game import Game
from sim.rules import Rules
from strategies import DealInfo, load_strategy
from strategies.play import play_compiled, play_python
from strategies.sampling import sampling_policy, scratch_size
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


def shuffle_hidden(rules: Rules, st: np.ndarray, seed: int, prm: np.ndarray | None = None) -> np.ndarray:
    """The same table (laid out by ``prm``, the deal's layout by default) with the face-down cards dealt
    differently (kings kept under the others)."""
    prm = E.rule_params(rules) if prm is None else prm
    P = rules.columns
    out = st.copy()
    hidden = [int(st[E.pile_base(prm, p) + i]) for p in range(P) for i in range(int(st[E.down_at(P, p)]))]
    random.Random(seed).shuffle(hidden)
    k = 0
    for p in range(P):
        d = int(st[E.down_at(P, p)])
        part = hidden[k : k + d]
        if rules.kings_to_bottom:
            part = [c for c in part if rank_of(c) == KING] + [c for c in part if rank_of(c) != KING]
        out[E.pile_base(prm, p) : E.pile_base(prm, p) + d] = part
        k += d
    return out


def play_blind_to_face_down(rules: Rules, strategy: Any, st: np.ndarray, steps: int, prm: np.ndarray | None = None) -> int:
    """Play the sampling ``strategy`` (loaded) from ``st`` (laid out by ``prm``, the deal's layout by default) while
    cards are face down, at most ``steps`` decisions, and assert at each that the choice, the random stream and the
    kept state (the scratch, less its clock) are the same with the face-down cards dealt two other ways: the player
    never reads a hidden card, also through what it kept from the decisions before. Plays on ``st``; returns the
    number of decisions checked."""
    prm = E.rule_params(rules) if prm is None else prm
    pp = strategy.compiled(rules).pparams
    moves = E.new_moves(prm)
    rng = np.array([7, 0], dtype=np.uint64)
    scratch = np.zeros(scratch_size(rules, strategy.params["samples"]), dtype=np.int64)
    decided = 0
    for step, n in enumerate(hidden_decisions(rules, prm, st, moves, steps)):
        outcomes = set()
        for variant in range(3):
            other = shuffle_hidden(rules, st, 100 * step + variant, prm) if variant else st
            r, sc = rng.copy(), scratch.copy()
            i = sampling_policy(other, prm, moves, n, pp, r, sc)
            sc[E.SCRATCH_MICROS] = 0  # the clock
            outcomes.add((int(i), r.tobytes(), sc.tobytes()))
        assert len(outcomes) == 1, (rules.name, step)
        i = sampling_policy(st, prm, moves, n, pp, rng, scratch)
        decided += 1
        if i < 0:
            break
        E.apply_move(st, prm, moves[i])
    return decided


def assert_tiers_play_alike(spec: str, rules_and_deals: Iterable[tuple[Rules, Iterable[int]]], runs: int = 1) -> None:
    """Each deal played by ``spec`` through the Python tier and ``runs`` times through the compiled tier (seed 3):
    the same outcome, moves and nodes every time (the tiers agree, and with ``runs`` > 1 play is deterministic)."""
    for rules, numbers in rules_and_deals:
        for number in numbers:
            info = DealInfo(rules, number, 0, "default")
            games = [play_python(load_strategy(spec), Game.from_deal(rules, number), info, strategy_seed=3)]
            games += [play_compiled(load_strategy(spec), Game.from_deal(rules, number), info, strategy_seed=3)
                      for _ in range(runs)]
            assert len({(g.outcome, tuple(g.moves), g.nodes) for g in games}) == 1, (spec, rules.name, number)
