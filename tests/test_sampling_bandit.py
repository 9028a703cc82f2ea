"""The sampling player's bandit over decisions (``bandit=true``, `strategies.sampling.bandit`): its exact
enumeration of few hidden cards, its merging of plans that are one decision, and that it never reads a
face-down card, is deterministic and plays the same on both tiers."""

from __future__ import annotations

from math import comb, factorial

import numpy as np
import pytest

from sim import engine as E
from sim.cards import KING, rank_of
from sim.game import Game
from sim.position import Position
from sim.rules import find_variant
from strategies import load_strategy
from strategies.base import StrategyError
from strategies.sampling.bandit import exact_layouts, plan_key, visible_key
from tests.solver_helpers import assert_tiers_play_alike, play_blind_to_face_down, shuffle_hidden

DICK = find_variant("dick-1883")
CASTLES = find_variant("castles-in-spain")
BANDIT = "sampling:samples=4,sample_nodes=300,candidates=4,bandit=true,rounds=2,round_samples=3,late_nodes=600"
"""Successive halving on a small budget, two later rounds on fresh completions."""
EXACT = BANDIT + ",exact_hidden=5"
"""The same with every arrangement of the hidden cards as completions once at most five are face down."""
REVEALS = EXACT + ",reveals=true"
"""The same with every move that turns a card up a candidate too."""


def _few_hidden(rules, number: int, downs: dict[int, int]) -> Game:
    """Deal ``number`` with only the piles in ``downs`` holding face-down cards (that many each), every other
    card face up where the deal put it (kings under the others where kings go to the bottom)."""
    start = Game.from_deal(rules, number).start
    counts = tuple(downs.get(p, 0) for p in range(rules.columns))
    return Game(rules, Position(start.piles, counts, start.foundations))


def _hidden_slots(rules, prm, st):
    return [(p, i) for p in range(rules.columns) for i in range(int(st[E.down_at(rules.columns, p)]))]


@pytest.mark.parametrize("rules", (DICK, CASTLES), ids=lambda r: r.name)
@pytest.mark.parametrize("downs", ({12: 3}, {0: 1, 5: 2}, {3: 2, 7: 2, 12: 1}))
def test_exact_layouts_are_every_arrangement_weighted_as_the_draw_deals_them(rules, downs):
    game = _few_hidden(rules, 7, downs)
    prm, st = game.rule_params, game.state_array()
    lay, wts = exact_layouts(st, prm)
    slots = _hidden_slots(rules, prm, st)
    hidden = sorted(int(st[E.pile_base(prm, p) + i]) for p, i in slots)
    assert len({row.tobytes() for row in lay}) == len(lay)  # distinct
    for row in lay:
        assert sorted(int(row[E.pile_base(prm, p) + i]) for p, i in slots) == hidden  # the unseen cards
        rest = np.ones(len(st), dtype=bool)
        for p, i in slots:
            rest[E.pile_base(prm, p) + i] = False
        assert (row[rest] == st[rest]).all()  # nothing else changed
    assert st.tobytes() in {row.tobytes() for row in lay}  # the real deal is one of them
    if not rules.kings_to_bottom:
        assert len(lay) == factorial(len(hidden)) and (wts == 1).all()
    else:
        # the draw deals the hidden kings of a pile under its others: a layout comes from C(d, kings) orders
        for row, w in zip(lay, wts, strict=True):
            expect = 1
            for p in downs:
                cards = [int(row[E.pile_base(prm, p) + i]) for i in range(downs[p])]
                kings = [rank_of(c) == KING for c in cards]
                assert kings == sorted(kings, reverse=True)
                expect *= comb(len(cards), sum(kings))
            assert w == expect
        assert wts.sum() <= factorial(len(hidden))
    # blind to the face-down cards: the same layouts in the same order whatever they are
    for seed in range(3):
        other = shuffle_hidden(rules, st, seed)
        lay2, wts2 = exact_layouts(other, prm)
        assert (lay2 == lay).all() and (wts2 == wts).all()


def test_three_cards_in_dicks_last_pile_are_six_orders():
    """Dick's deal with only the last pile's three cards face down: 6 orders of them, fewer layouts where some
    are kings (the kings lie under the others, each layout weighted by the orders the draw turns into it)."""
    prm = E.rule_params(DICK)
    seen = set()
    for number in range(1, 60):
        st = _few_hidden(DICK, number, {12: 3}).state_array()
        lay, wts = exact_layouts(st, prm)
        base = E.pile_base(prm, 12)
        kings = sum(rank_of(int(c)) == KING for c in st[base : base + 3])
        assert len(lay) == factorial(kings) * factorial(3 - kings) and wts.sum() == 6
        seen.add(len(lay))
    assert 6 in seen and len(seen) > 1


def test_a_face_up_king_on_face_down_cards_leaves_only_kings_under_it():
    kings = [c for c in range(52) if rank_of(c) == KING]
    others = [c for c in range(52) if rank_of(c) != KING]
    piles = (tuple(kings),) + tuple(tuple(others[4 * i : 4 * i + 4]) for i in range(12))
    prm = E.rule_params(DICK)
    # pile 0 shows a king over three face-down cards, pile 1 one face-down card: 4 cards hidden
    st = Game(DICK, Position(piles, (3, 1) + (0,) * 11, ((), (), (), ()))).state_array()
    lay, wts = exact_layouts(st, prm)
    base = E.pile_base(prm, 0)
    for row in lay:
        assert sorted(int(c) for c in row[base : base + 3]) == sorted(kings[:3])
    assert len(lay) == 6 and (wts == 1).all()  # the three kings in any order; pile 1 gets the non-king


def test_plans_in_two_move_orders_are_one_decision():
    """Two moves in different piles that commute, then the same reveal: the same key; another reveal: another."""
    rules = DICK
    prm = E.rule_params(rules)
    moves = E.new_moves(prm)
    for number in range(1, 200):
        st = _few_hidden(rules, number, {0: 2, 12: 3}).state_array()
        n = E.gen_moves(st, prm, moves)
        quiet = []
        for k in range(n):
            s2 = st.copy()
            if E.apply_move(s2, prm, moves[k]) == 0:
                quiet.append(int(moves[k]))
        for a in quiet:
            for b in quiet:
                if a >= b or E.move_from(a) in (E.move_from(b), E.move_to(b)) or E.move_to(a) in (
                        E.move_from(b), E.move_to(b)):
                    continue
                ab, ba = st.copy(), st.copy()
                E.apply_move(ab, prm, a)
                E.apply_move(ba, prm, b)
                if E.apply_move(ab, prm, b) != 0 or E.apply_move(ba, prm, a) != 0:
                    continue
                assert visible_key(ab, prm) == visible_key(ba, prm)
                m2 = E.new_moves(prm)
                n2 = E.gen_moves(ab, prm, m2)
                reveals = []
                for k in range(n2):
                    s3 = ab.copy()
                    if E.apply_move(s3, prm, m2[k]) != 0:
                        reveals.append(int(m2[k]))
                if not reveals:
                    continue
                r = reveals[0]
                k1 = plan_key(st, prm, np.array([a, b, r], dtype=np.int64), 3)
                k2 = plan_key(st, prm, np.array([b, a, r], dtype=np.int64), 3)
                assert k1 == k2
                if len(reveals) > 1:
                    assert plan_key(st, prm, np.array([a, b, reveals[1]], dtype=np.int64), 3) != k1
                return
    pytest.skip("no two commuting moves before a reveal in these deals")


@pytest.mark.parametrize("spec", (BANDIT, EXACT, REVEALS))
@pytest.mark.parametrize("rules", (DICK, CASTLES), ids=lambda r: r.name)
@pytest.mark.parametrize("table", (pytest.param("deal", marks=pytest.mark.slow), "few"))  # whole games from the deal: minutes
def test_bandit_decisions_and_kept_state_do_not_depend_on_the_face_down_cards(rules, spec, table):
    """Through a game, at every decision (the kept completions, the plan in progress, the exact arrangements
    late): the same choice, random stream and kept state whatever the face-down cards are."""
    s = load_strategy(spec)
    steps = 0
    for number in (1, 2):
        game = Game.from_deal(rules, number) if table == "deal" else _few_hidden(rules, number, {2: 2, 9: 3})
        steps += play_blind_to_face_down(rules, s, game.state_array(), 40)
    assert steps > 5


@pytest.mark.parametrize("spec", (BANDIT, EXACT, REVEALS))
def test_bandit_tiers_agree_and_it_is_deterministic(spec):
    assert_tiers_play_alike(spec, ((DICK, range(1, 4)), (CASTLES, range(1, 3))), runs=2)


def test_bandit_needs_plans():
    with pytest.raises(StrategyError, match="plans"):
        load_strategy("sampling:bandit=true,plans=false")


def test_the_bandits_candidate_lines_are_counted_in_its_memory():
    plain = sum(load_strategy("sampling:candidates=1000,samples=1000").memory_use(DICK).values())
    bandit = sum(load_strategy("sampling:candidates=1000,samples=1000,bandit=true").memory_use(DICK).values())
    assert bandit > plain + 1000 * 1000 * 320 * 8
