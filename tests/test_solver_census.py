"""The search's census (`strategies.solver.census`): it changes nothing in the search, its counts add
up to the search's nodes, and its candidate equivalences are what they claim to be."""

from __future__ import annotations

import numpy as np
import pytest

from sim import engine as E
from sim.deals import make_deal
from sim.game import Game
from sim.position import Position
from sim.rules import find_variant
from strategies.solver.census import (
    C_DEAD,
    C_EXPANDED,
    C_HOME,
    C_RUN,
    S_CONFIG,
    S_EXPOSED,
    S_LAYER,
    S_SHAPE,
    S_SUITS,
    Census,
    census_node,
    suit_permutations,
)
from strategies.solver.hash import make_keys
from strategies.solver.search import F_DEAD, F_LONE, F_ORDER, F_SAFE, S_UNKNOWN, SolverWork, solve

FLAGS = F_SAFE | F_DEAD | F_ORDER | F_LONE


@pytest.mark.parametrize("variant", ["good-measure", "bakers-dozen", "other-suit", "kings-into-empty"])
def test_census_changes_nothing_and_adds_up(variant):
    rules = find_variant(variant)
    for deal in range(1, 9):
        game = Game(rules, make_deal(rules, deal).position)
        st, prm = game.state_array(), game.rule_params
        plain = solve(st, prm, SolverWork(prm, 4).arrays(), 20_000, 1e9, FLAGS)
        census = Census(int(prm[E.P_BUILD]), set_bits=16)
        counted = solve(st, prm, SolverWork(prm, 4).arrays(), 20_000, 1e9, FLAGS, 0, 0, census.arrays())
        assert counted[:3] == plain[:3]  # verdict, nodes, line length
        c = census.counts
        # every node is expanded or dead, except the one that ran past the budget
        assert c[C_EXPANDED] + c[C_DEAD] + (plain[0] == S_UNKNOWN) == plain[1]
        assert c[C_HOME:C_HOME + 53].sum() == c[C_EXPANDED] == c[C_RUN:C_RUN + 53].sum()
        d = census.distinct()
        assert 1 <= d["layers"] <= d["configurations"] <= d["configurations + exposed"] <= c[C_EXPANDED]
        assert d["suit classes"] <= c[C_EXPANDED] and d["rank shapes"] <= c[C_EXPANDED]


def _keys_of(rules, piles, home):
    pos = Position(tuple(tuple(p) for p in piles), (0,) * len(piles), tuple(tuple(range(s * 13, s * 13 + h)) for s, h in
                                                                        enumerate(home)))
    game = Game(rules, pos)
    st, prm = game.state_array(), game.rule_params
    census = Census(int(prm[E.P_BUILD]), set_bits=8)
    census_node(st, prm, make_keys(E.MAX_PILE_CAP), census.arrays())
    return {k: int(census.sets[k][np.nonzero(census.sets[k])[0][0]]) for k in (S_LAYER, S_CONFIG, S_EXPOSED, S_SHAPE,
                                                                                 S_SUITS)}


def test_candidate_equivalences():
    rules = find_variant("bakers-dozen")
    c = lambda s, r: s * 13 + r  # noqa: E731
    # 5C on 6D and 5H on 6S, against 5H on 6D and 5C on 6S: one configuration, one rank shape,
    # one exposed set
    a = [[c(0, 12), c(1, 5), c(0, 4)], [c(1, 12), c(3, 5), c(2, 4)]] + [[c(s, 12)] for s in (2, 3)]
    b = [[c(0, 12), c(1, 5), c(2, 4)], [c(1, 12), c(3, 5), c(0, 4)]] + [[c(s, 12)] for s in (2, 3)]
    rest = [[] for _ in range(9)]  # a hand-made position need not hold the whole deck
    home = (4, 4, 4, 4)
    ka, kb = _keys_of(rules, a + rest, home), _keys_of(rules, b + rest, home)
    assert ka[S_CONFIG] == kb[S_CONFIG] and ka[S_SHAPE] == kb[S_SHAPE] and ka[S_LAYER] == kb[S_LAYER]
    assert ka[S_EXPOSED] == kb[S_EXPOSED]  # the same fives are exposed
    assert ka[S_SUITS] != kb[S_SUITS]  # and no relabelling of suits maps one position on the other
    # the same position with clubs and hearts exchanged everywhere: one suit class, another configuration
    swap = {0: 2, 2: 0, 1: 1, 3: 3}
    a_swapped = [[c(swap[x // 13], x % 13) for x in p] for p in a + rest]
    ks = _keys_of(rules, a_swapped, home)
    assert ks[S_SUITS] == ka[S_SUITS] and ks[S_CONFIG] != ka[S_CONFIG]


def test_suit_permutations_keep_the_building_rule():
    assert len(suit_permutations(int(E.rule_params(find_variant("bakers-dozen"))[E.P_BUILD]))) == 24
    assert len(suit_permutations(int(E.rule_params(find_variant("other-suit"))[E.P_BUILD]))) == 24
    # alternate colours: only relabellings that keep each suit's colour, or swap the colours as a whole
    assert len(suit_permutations(int(E.rule_params(find_variant("castles-in-spain"))[E.P_BUILD]))) == 8
