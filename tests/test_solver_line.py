"""Shortening the solver's won lines: the key of each position one move away from the line, made from the two
places the move changes, is the key of the position that move gives, and the piles' linear keys follow the moves
played, in every preset and with worrying back; the shortened lines are solver version 11's."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from sim.deals import make_deal
from sim.engine import apply_move, gen_moves, new_moves
from sim.game import Game
from sim.rules import find_variant, variant_names
from strategies.solver.line import _key_change, _play_keyed, exact_key
from strategies.solver.search import W_KEYS
from strategies.solver.strategy import SolverStrategy

RULES = [find_variant(n) for n in variant_names()] + [find_variant("spanish-patience").replace(worrying_back=True)]


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name)
def test_the_key_after_a_move_is_the_key_of_the_position_it_gives(rules):
    keys = SolverStrategy().work(rules).arrays()[W_KEYS]
    rng = np.random.default_rng(7)
    checked = 0
    for deal in (1, 2, 3):
        game = Game(rules, make_deal(rules, deal).position)
        st, prm = game.state_array(), game.rule_params
        moves = new_moves(prm)
        lin = np.empty(prm[0], dtype=np.uint64)
        here = exact_key(st, prm, keys, lin)
        for _ in range(300):
            n = gen_moves(st, prm, moves)
            if n == 0:
                break
            for a in range(n):
                played = st.copy()
                apply_move(played, prm, moves[a])
                change = _key_change(st, prm, keys, lin, moves[a])
                assert (int(here) + int(change)) % 2**64 == exact_key(played, prm, keys, np.empty_like(lin))
                checked += 1
            m = moves[rng.integers(n)]
            here = (int(here) + int(_play_keyed(st, prm, keys, lin, m))) % 2**64
            kept = lin.copy()
            assert here == exact_key(st, prm, keys, lin) and np.array_equal(kept, lin)
    assert checked > 500


LINES = {
    "bakers-dozen": "e3a0cedfa817b8c53e2f4d5a6853fc8b9ec44d23dd22e6283315631e8301bd2c",
    "spanish-patience": "35432983cedd44a9f9f5bac3547e273186ae57d87e1f54077552f55c59a923e2",
}
"""SHA-256 of the solver's won lines (move codes) on deals 1-30, as solver version 11 shortened them before
candidates were keyed from their two places: the shortening must give every line exactly as before."""


@pytest.mark.parametrize("name", sorted(LINES))
def test_the_shortened_lines_are_the_ones_solver_version_11_gave(name):
    rules = find_variant(name)
    solver = SolverStrategy()
    h = hashlib.sha256()
    for deal in range(1, 31):
        game = Game(rules, make_deal(rules, deal).position)
        verdict, _, line, _ = solver.solve_state(rules, game.state_array(), game.rule_params)
        h.update(f"{deal}:{verdict}:{line};".encode())
    assert h.hexdigest() == LINES[name]
