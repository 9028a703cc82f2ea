"""The solver's last complete search (``final``): a loss bigger than every restart is proven within
the same node budget, and verdicts never contradict the restarts alone."""

from __future__ import annotations

import pytest

from sim.position import parse_position
from sim.rules import find_variant
from tests.solver_helpers import late_positions, solver

GM = find_variant("good-measure")
LOST_3408 = """\
KH QC JD
6S 9C 8H 7S
9S 8S
-
TD QS 6C 7C JC TS 9D 8C
KD 8D QH JS TC
TH QD JH
KS 3S 4S 5S
KC
9H
home: AC 2C 3C 4C 5C / AD 2D 3D 4D 5D 6D 7D / AH 2H 3H 4H 5H 6H 7H / AS 2S
"""
"""A good-measure position (from `late_positions`) whose proof of loss takes one search 3,408 nodes."""


def test_a_loss_no_restart_can_prove_is_proven_by_the_last_search():
    position = parse_position(LOST_3408, GM)
    assert solver(restart_nodes=0, nodes=1_000_000).solve_position(GM, position)[:2] == ("lost", 3408)
    # 6,816 nodes of restarts of 100 x Luby: the biggest search has 1,600 nodes, too few on its own
    assert solver(restart_nodes=100, nodes=6816, keep_lost=False).solve_position(GM, position)[0] == "unknown"
    verdict, nodes, _, _ = solver(restart_nodes=100, nodes=6816, final=0.6, keep_lost=False).solve_position(GM, position)
    assert verdict == "lost" and nodes <= 6816


@pytest.mark.parametrize("rules", [GM, find_variant("bakers-dozen")], ids=lambda r: r.name)
def test_the_last_search_never_contradicts_the_restarts(rules):
    plain, with_final = solver(nodes=20_000), solver(nodes=20_000, final=0.5)
    for st in late_positions(rules, range(1, 8), 6, seed=3, wander=10):
        assert {plain.solve_state(rules, st)[0], with_final.solve_state(rules, st)[0]} != {"won", "lost"}
