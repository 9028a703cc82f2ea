"""Deal numbering and layouts (sim.deals), and the compiled dealer that must agree with it."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chisquare

from sim import engine as E
from sim.cards import ACE, KING, card, card_str, parse_card, rank_of, suit_of
from sim.deals import (
    MAX_DEAL,
    MAX_SEED,
    PYSOL_MAX_DEAL,
    SOURCES,
    DealError,
    arrange,
    check_deal_number,
    check_strategy_seed,
    dealt_positions,
    deck_and_home,
    deck_order,
    make_deal,
    pysol_order,
)
from sim.game import Game
from sim.position import Position
from sim.rng import CounterRNG, stream_key
from sim.rules import VARIANTS, Rules, find_variant

ALL_RULES = [v.rules for v in VARIANTS]
RULE_IDS = [v.name for v in VARIANTS]
BD = find_variant("bakers-dozen")


def piles_text(position: Position) -> str:
    """PySol-style one-line form: piles bottom -> top, separated by ' / '."""
    return " / ".join(" ".join(card_str(c) for c in p) for p in position.piles)


def cards(text: str) -> tuple[int, ...]:
    return tuple(parse_card(w) for w in text.split())


# --- golden layouts of the default source ------------------------------------------------------
# Computed once from the code; a change here means every published deal number changed meaning.

GOLDEN_LAYOUTS = {
    ("bakers-dozen", 0, 1): (
        "5C 7C 7S TS\n"
        "KS QH AC 3H\n"
        "6C 4D TH 5S\n"
        "AH TC JS 7D\n"
        "8H 6D QS JC\n"
        "8C 2D 9C 9H\n"
        "3S 9S 5D JH\n"
        "AD TD 4S 2H\n"
        "KH 2S 7H AS\n"
        "4H JD 8S 3D\n"
        "KD 8D 5H 6H\n"
        "6S 4C 9D 3C\n"
        "KC QC 2C QD\n"
    ),
    ("bakers-dozen", 0, 2): (
        "9H QS 8S TC\n"
        "8H 5S 2H 9D\n"
        "8C 9S 3D 6H\n"
        "KC 4C 2S AS\n"
        "KD QD 2D 4S\n"
        "KH 6S 5D 4D\n"
        "3C 3S AH 7H\n"
        "8D JH 7S 5C\n"
        "TD JC TH AD\n"
        "TS 7D AC 6D\n"
        "5H QC JD JS\n"
        "QH 2C 6C 7C\n"
        "KS 9C 4H 3H\n"
    ),
    ("kings-into-empty", 0, 1): (
        "5C 7C 7S TS\n"
        "QH AC KS 3H\n"
        "6C 4D TH 5S\n"
        "AH TC JS 7D\n"
        "8H 6D QS JC\n"
        "8C 2D 9C 9H\n"
        "3S 9S 5D JH\n"
        "AD TD 4S 2H\n"
        "2S KH 7H AS\n"
        "4H JD 8S 3D\n"
        "KD 8D 5H 6H\n"
        "6S 4C 9D 3C\n"
        "KC QC 2C QD\n"
    ),
    ("kings-into-empty", 0, 2): (
        "9H QS 8S TC\n"
        "8H 5S 2H 9D\n"
        "8C 9S 3D 6H\n"
        "4C KC 2S AS\n"
        "QD 2D KD 4S\n"
        "KH 6S 5D 4D\n"
        "3C 3S AH 7H\n"
        "8D JH 7S 5C\n"
        "TD JC TH AD\n"
        "TS 7D AC 6D\n"
        "5H QC JD JS\n"
        "QH 2C 6C 7C\n"
        "9C 4H KS 3H\n"
    ),
    ("dick-1883", 0, 1): (
        "<5C> <7C> <7S> TS\n"
        "<KS> <QH> <AC> 3H\n"
        "<6C> <4D> <TH> 5S\n"
        "<AH> <TC> <JS> 7D\n"
        "<8H> <6D> <QS> JC\n"
        "<8C> <2D> <9C> 9H\n"
        "<3S> <9S> <5D> JH\n"
        "<AD> <TD> <4S> 2H\n"
        "<KH> <2S> <7H> AS\n"
        "<4H> <JD> <8S> 3D\n"
        "<KD> <8D> <5H> 6H\n"
        "<6S> <4C> <9D> 3C\n"
        "<KC> <QC> <2C> QD\n"
    ),
    ("dick-1883", 0, 2): (
        "<9H> <QS> <8S> TC\n"
        "<8H> <5S> <2H> 9D\n"
        "<8C> <9S> <3D> 6H\n"
        "<KC> <4C> <2S> AS\n"
        "<KD> <QD> <2D> 4S\n"
        "<KH> <6S> <5D> 4D\n"
        "<3C> <3S> <AH> 7H\n"
        "<8D> <JH> <7S> 5C\n"
        "<TD> <JC> <TH> AD\n"
        "<TS> <7D> <AC> 6D\n"
        "<5H> <QC> <JD> JS\n"
        "<QH> <2C> <6C> 7C\n"
        "<KS> <9C> <4H> 3H\n"
    ),
    ("spanish-patience", 0, 1): (
        "5C 7C 7S TS\n"
        "QH AC KS 3H\n"
        "6C 4D TH 5S\n"
        "AH TC JS 7D\n"
        "8H 6D QS JC\n"
        "8C 2D 9C 9H\n"
        "3S 9S 5D JH\n"
        "AD TD 4S 2H\n"
        "2S KH 7H AS\n"
        "4H JD 8S 3D\n"
        "KD 8D 5H 6H\n"
        "6S 4C 9D 3C\n"
        "KC QC 2C QD\n"
    ),
    ("spanish-patience", 0, 2): (
        "9H QS 8S TC\n"
        "8H 5S 2H 9D\n"
        "8C 9S 3D 6H\n"
        "4C KC 2S AS\n"
        "QD 2D KD 4S\n"
        "KH 6S 5D 4D\n"
        "3C 3S AH 7H\n"
        "8D JH 7S 5C\n"
        "TD JC TH AD\n"
        "TS 7D AC 6D\n"
        "5H QC JD JS\n"
        "QH 2C 6C 7C\n"
        "9C 4H KS 3H\n"
    ),
    ("castles-in-spain", 0, 1): (
        "<5C> <7C> <7S> TS\n"
        "<QH> <AC> <KS> 3H\n"
        "<6C> <4D> <TH> 5S\n"
        "<AH> <TC> <JS> 7D\n"
        "<8H> <6D> <QS> JC\n"
        "<8C> <2D> <9C> 9H\n"
        "<3S> <9S> <5D> JH\n"
        "<AD> <TD> <4S> 2H\n"
        "<2S> <KH> <7H> AS\n"
        "<4H> <JD> <8S> 3D\n"
        "<KD> <8D> <5H> 6H\n"
        "<6S> <4C> <9D> 3C\n"
        "<KC> <QC> <2C> QD\n"
    ),
    ("castles-in-spain", 0, 2): (
        "<9H> <QS> <8S> TC\n"
        "<8H> <5S> <2H> 9D\n"
        "<8C> <9S> <3D> 6H\n"
        "<4C> <KC> <2S> AS\n"
        "<QD> <2D> <KD> 4S\n"
        "<KH> <6S> <5D> 4D\n"
        "<3C> <3S> <AH> 7H\n"
        "<8D> <JH> <7S> 5C\n"
        "<TD> <JC> <TH> AD\n"
        "<TS> <7D> <AC> 6D\n"
        "<5H> <QC> <JD> JS\n"
        "<QH> <2C> <6C> 7C\n"
        "<9C> <4H> <KS> 3H\n"
    ),
    ("good-measure", 0, 1): (
        "5C 2S JD 6D 8D\n"
        "KH 7C 8H 4S QC\n"
        "7S 9D AH JS 9H\n"
        "6C 9S 3S 2H JH\n"
        "5D 4H 5H 6H 3H\n"
        "KC KS 7D TD AS\n"
        "QD 2D TH 3C 4D\n"
        "8C 3D TC TS 7H\n"
        "JC QH QS 8S 4C\n"
        "KD 6S 2C 9C 5S\n"
        "home: AC / AD\n"
    ),
    ("good-measure", 0, 2): (
        "9H 2S TS 2H AS\n"
        "4C QH QC 3S 4S\n"
        "3D 9C 3C TH 6D\n"
        "KC KH 5H 2C 8H\n"
        "JH 8D 8S QD 6C\n"
        "5C 9S 7S QS 2D\n"
        "KS 6H 3H 4D 7D\n"
        "8C 5D 9D TC JS\n"
        "KD 5S JD TD 7C\n"
        "AH JC 6S 7H 4H\n"
        "home: AC / AD\n"
    ),
    ("other-suit", 0, 1): (
        "5C 7C 7S TS\n"
        "KS QH AC 3H\n"
        "6C 4D TH 5S\n"
        "AH TC JS 7D\n"
        "8H 6D QS JC\n"
        "8C 2D 9C 9H\n"
        "3S 9S 5D JH\n"
        "AD TD 4S 2H\n"
        "KH 2S 7H AS\n"
        "4H JD 8S 3D\n"
        "KD 8D 5H 6H\n"
        "6S 4C 9D 3C\n"
        "KC QC 2C QD\n"
    ),
    ("other-suit", 0, 2): (
        "9H QS 8S TC\n"
        "8H 5S 2H 9D\n"
        "8C 9S 3D 6H\n"
        "KC 4C 2S AS\n"
        "KD QD 2D 4S\n"
        "KH 6S 5D 4D\n"
        "3C 3S AH 7H\n"
        "8D JH 7S 5C\n"
        "TD JC TH AD\n"
        "TS 7D AC 6D\n"
        "5H QC JD JS\n"
        "QH 2C 6C 7C\n"
        "KS 9C 4H 3H\n"
    ),
    ("bakers-dozen", 7, 1000): (
        "9C 2C 9S TH\n"
        "6D 8C JC 4D\n"
        "3H JH 3C 5C\n"
        "AH AS JS 5H\n"
        "QC JD 7H 2H\n"
        "9D 2D 8S QH\n"
        "KS 3S 8H 6C\n"
        "KH AD QD 5S\n"
        "QS 5D TD AC\n"
        "KD 4C 3D 8D\n"
        "TS 2S 7C 4H\n"
        "9H 6H 6S 7S\n"
        "KC 7D 4S TC\n"
    ),
}


@pytest.mark.parametrize(("name", "seed", "number"), list(GOLDEN_LAYOUTS))
def test_golden_layouts(name, seed, number):
    deal = make_deal(find_variant(name), number, seed)
    assert deal.position.to_text(reveal=True) == GOLDEN_LAYOUTS[(name, seed, number)]
    assert (deal.number, deal.seed, deal.source) == (number, seed, "default")
    assert deal.rules == find_variant(name)


def test_golden_layouts_cover_every_preset():
    assert {name for name, _, _ in GOLDEN_LAYOUTS} == set(RULE_IDS)


def _reference_shuffle(rules: Rules, number: int, seed: int) -> list[int]:
    """The documented algorithm, re-implemented on the Python CounterRNG."""
    home = set(rules.start_home_cards)
    deck = [c for c in range(52) if c not in home]
    rng = CounterRNG(stream_key(seed, number))
    for i in range(len(deck) - 1, 0, -1):
        j = rng.below(i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return deck


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_deck_order_is_the_documented_fisher_yates(rules):
    for seed, number in [(0, 1), (0, 2), (7, 1000), (3, 123456), (MAX_SEED, MAX_DEAL), (2**40, 2**50)]:
        assert deck_order(rules, number, seed).tolist() == _reference_shuffle(rules, number, seed)


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_layout_is_round_robin_of_the_deck_then_kings_down(rules):
    for number in range(1, 40):
        order = deck_order(rules, number).tolist()
        pos = make_deal(rules, number).position
        assert len(pos.piles) == rules.columns
        for p, pile in enumerate(pos.piles):
            dealt = order[p :: rules.columns]
            assert len(dealt) == rules.cards_per_column
            if rules.kings_to_bottom:
                expected = [c for c in dealt if rank_of(c) == KING] + [c for c in dealt if rank_of(c) != KING]
            else:
                expected = dealt
            assert list(pile) == expected


# --- PySol source ---------------------------------------------------------------------------------

PYSOL_24 = (
    "KD 8H AC AS / KC 3D 8C 2S / QD TD 7D 9S / 2H JH 6S QH / KH 3S 9D 2C / JD 3H TH 7S / 7C QS JC AH / "
    "8D 4D 6H 7H / 6D AD 3C 2D / KS TS 9C 5D / 4H TC 6C QC / 4S 5C 5S 5H / 8S 9H JS 4C"
)
PYSOL_10800 = (
    "KC 3S AC AD / JD 9H 6H JS / KS 8D 8S QH / 3D 6C TS 4C / 7H 4D 2C 7D / KH TD 4S 3C / 2S 3H JC 5C / "
    "AS 5S 6D 8C / 7C 4H TC 9S / 8H 9D QC 9C / 7S 5D 5H 2H / 2D QD QS TH / KD 6S AH JH"
)


@pytest.mark.parametrize(("number", "expected"), [(24, PYSOL_24), (10800, PYSOL_10800)])
def test_pysol_test_vectors(number, expected):
    deal = make_deal(BD, number, source="pysol")
    assert piles_text(deal.position) == expected
    assert deal.source == "pysol"
    assert deal.position.face_down == (0,) * 13


def test_pysol_deal_1_pile_4_swap_quirk():
    bd = make_deal(BD, 1, source="pysol").position
    kie = make_deal(find_variant("kings-into-empty"), 1, source="pysol").position
    assert bd.piles[3] == cards("KC TH AH 6S")  # PySolFC's swap, not a stable move
    assert kie.piles[3] == cards("6S TH AH KC")  # as dealt


def _pysol_swap_pile(pile: list[int]) -> list[int]:
    """PySolFC's king step on one pile: each king (bottom first) swaps with the lowest non-king below it."""
    pile = list(pile)
    for i in [i for i, c in enumerate(pile) if rank_of(c) == KING]:
        for j in range(i):
            if rank_of(pile[j]) != KING:
                pile[i], pile[j] = pile[j], pile[i]
                break
    return pile


def test_pysol_kings_into_empty_moves_no_king():
    kie_rules = find_variant("kings-into-empty")
    moved_somewhere = 0
    for number in range(1, 301):
        raw = make_deal(kie_rules, number, source="pysol").position
        swapped = make_deal(BD, number, source="pysol").position
        for p in range(13):
            assert list(swapped.piles[p]) == _pysol_swap_pile(list(raw.piles[p])), (number, p)
            moved_somewhere += raw.piles[p] != swapped.piles[p]
    assert moved_somewhere > 100  # the raw deal really has kings above other cards


def test_pysol_king_swap_leaves_nothing_for_the_dealers_king_step():
    """PySolFC's swap puts every pile's kings at its bottom, so the dealer deals its order as it stands."""
    for number in range(1, 301):
        order = pysol_order(number, BD)
        assert make_deal(BD, number, source="pysol").position.piles == tuple(tuple(order[p::13]) for p in range(13))


def test_pysol_deals_use_the_variant_face_down():
    pos = make_deal(find_variant("dick-1883"), 24, source="pysol").position
    assert piles_text(pos) == PYSOL_24
    assert pos.face_down == (3,) * 13


def test_pysol_refuses_other_shapes():
    with pytest.raises(DealError) as info:
        make_deal(Rules(name="wide", columns=8, cards_per_column=6, start_home=("AC", "AD", "AH", "AS")), 1,
                  source="pysol")
    msg = str(info.value)
    assert "13 piles of 4" in msg and "10 piles of 5" in msg and "'wide' has 8 x 6 with 4 cards starting home" in msg
    with pytest.raises(DealError, match="renames suits.*build alternate-colour.*allowed: build any-suit"):
        make_deal(Rules(name="gm-ac", columns=10, cards_per_column=5, start_home=("AC", "AD"),
                        build="alternate-colour", empty_fill="none"), 1, source="pysol")


def _pysolfc_good_measure(number: int) -> tuple[list[list[int]], list[int]]:
    """PySolFC's Good Measure deal as its code runs it, talon and all: the shuffled deck; its Baker's Dozen
    hook over 10 rows (each king, first dealt first, swaps with the first-dealt non-king of its row; then the
    list is reversed, so the talon's top, dealt first, is its end); the two aces nearest the talon's bottom
    moved under it; five rounds dealt from the top to rows 0-9; the two cards left (the aces) home."""
    deck = list(pysol_order(number, find_variant("kings-into-empty")))  # the shuffle alone: no king step
    for i in [i for i, c in enumerate(deck) if rank_of(c) == KING]:
        for j in range(i % 10, i, 10):
            if rank_of(deck[j]) != KING:
                deck[i], deck[j] = deck[j], deck[i]
                break
    talon = deck[::-1]
    aces = [c for c in talon if rank_of(c) == ACE][:2]
    talon = aces + [c for c in talon if c not in aces]
    rows: list[list[int]] = [[] for _ in range(10)]
    for _ in range(5):
        for row in rows:
            row.append(talon.pop())
    home = [talon.pop(), talon.pop()]
    assert not talon and all(rank_of(c) == ACE for c in home)
    return rows, home


GOOD_MEASURE = find_variant("good-measure")


def test_pysol_good_measure_is_pysolfcs_deal_with_its_home_aces_named_clubs_and_diamonds():
    kept_up = []
    for number in range(1, 401):
        rows, home = _pysolfc_good_measure(number)
        homed = sorted(suit_of(c) for c in home)
        others = sorted(set(range(4)) - set(homed))
        rename = dict(zip(homed + others, [0, 1, 2, 3], strict=True))  # clubs, diamonds, hearts, spades
        pos = make_deal(GOOD_MEASURE, number, source="pysol").position
        assert pos.piles == tuple(tuple(card(rank_of(c), rename[suit_of(c)]) for c in row) for row in rows), number
        assert pos.foundations == ((parse_card("AC"),), (parse_card("AD"),), (), ())
        if any(rank_of(c) == KING and any(rank_of(b) != KING for b in pile[:i])
               for pile in pos.piles for i, c in enumerate(pile)):
            kept_up.append(number)
    assert 1 <= len(kept_up) <= 20  # PySolFC's ace step leaves a king above another card in about 2% of deals
    assert kept_up == [2, 20, 67, 118, 155, 386]


def test_pysol_good_measure_renaming_keeps_every_verdict():
    """A variant homing hearts and spades renames the same PySolFC deal otherwise (and is dealt PySolFC's
    layout as it is where PySolFC homes those); the solver decides both namings alike, won and lost."""
    from strategies.solver.strategy import SolverStrategy

    hs = Rules(name="good-measure-hs", columns=10, cards_per_column=5, start_home=("AH", "AS"))
    literal = 0
    for number in range(1, 200):
        rows, home = _pysolfc_good_measure(number)
        if sorted(card_str(c) for c in home) == ["AH", "AS"]:
            assert make_deal(hs, number, source="pysol").position.piles == tuple(tuple(row) for row in rows)
            literal += 1
    assert literal > 20
    solver = SolverStrategy()
    verdicts = [(solver.solve_position(GOOD_MEASURE, make_deal(GOOD_MEASURE, n, source="pysol").position)[0],
                 solver.solve_position(hs, make_deal(hs, n, source="pysol").position)[0]) for n in (1, 2, 4, 12, 14, 20)]
    assert verdicts == [("lost",) * 2, ("won",) * 2, ("won",) * 2, ("lost",) * 2, ("lost",) * 2, ("lost",) * 2]


def test_pysol_large_numbers():
    pos = make_deal(BD, PYSOL_MAX_DEAL, source="pysol").position
    assert sorted(c for p in pos.piles for c in p) == list(range(52))


def test_default_source_is_not_pysol():
    assert make_deal(BD, 24).position != make_deal(BD, 24, source="pysol").position
    assert make_deal(BD, 1, source="default").position == make_deal(BD, 1).position


# --- kings to the bottom ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("pile", "expected"),
    [
        ("6S TH AH KC", "KC 6S TH AH"),
        ("KC 6S TH AH", "KC 6S TH AH"),
        ("2C KD 3C KH", "KD KH 2C 3C"),
        ("KH 2C KD 3C", "KH KD 2C 3C"),
        ("QS JS KS TS", "KS QS JS TS"),
        ("KS KH KD KC", "KS KH KD KC"),
        ("2C 3C 4C 5C", "2C 3C 4C 5C"),
        ("9D 8D 7D KD 6D", "KD 9D 8D 7D 6D"),
        ("", ""),
        ("KC", "KC"),
    ],
)
def test_kings_to_bottom_examples(pile, expected):
    """The dealer's king step (`sim.engine.put_pile` with kings first) on one pile."""
    before = np.array(cards(pile), dtype=np.int64)
    out = np.full(len(before) + 2, -1, dtype=np.int64)
    E.put_pile(before, 0, len(before), out, 1, True)
    assert out.tolist() == [-1, *cards(expected), -1]
    assert before.tolist() == list(cards(pile))  # not modified in place


def test_kings_to_bottom_is_stable_on_every_default_deal():
    for number in range(1, 201):
        order = deck_order(BD, number).tolist()
        pos = arrange(order, BD)
        for p, pile in enumerate(pos.piles):
            dealt = order[p::13]
            n_kings = sum(rank_of(c) == KING for c in dealt)
            assert all(rank_of(c) == KING for c in pile[:n_kings])
            assert not any(rank_of(c) == KING for c in pile[n_kings:])
            assert list(pile[:n_kings]) == [c for c in dealt if rank_of(c) == KING]
            assert list(pile[n_kings:]) == [c for c in dealt if rank_of(c) != KING]


def test_arrange_without_kings_to_bottom_keeps_the_deal():
    order = list(range(52))
    pos = arrange(order, find_variant("spanish-patience"))
    assert pos.piles[12] == (12, 25, 38, 51)  # KC 3H... as dealt
    pos = arrange(order, BD)
    assert pos.piles[12] == (12, 25, 38, 51)  # KC already at the bottom
    assert pos.piles[0] == (0, 13, 26, 39)
    rev = arrange(list(reversed(order)), BD)
    assert rev.piles[0] == cards("KS KH KD KC")  # all kings: nothing moves
    # pile 0 dealt 2C KD 3C KH (bottom to top); the other cards fill the other piles
    rest = [c for c in range(52) if c not in cards("2C KD 3C KH")]
    order = []
    for row, c in enumerate(cards("2C KD 3C KH")):
        order += [c] + rest[row * 12 : row * 12 + 12]
    assert arrange(order, BD).piles[0] == cards("KD KH 2C 3C")
    assert arrange(order, find_variant("kings-into-empty")).piles[0] == cards("2C KD 3C KH")


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_arrange_refuses_an_order_that_is_not_the_dealt_cards(rules):
    deck, home = deck_and_home(rules)
    good = deck.tolist()
    bad_orders = [good[:-1], [*good, good[0]], [*good[:-1], good[0]], [*good[:-1], 52], [*good[:-1], -1], []]
    if len(home):
        bad_orders.append([*good[:-1], int(home[0])])
    for bad in bad_orders:
        with pytest.raises(ValueError, match=f"deals its {len(good)} cards not starting home, each once"):
            arrange(bad, rules)
    assert arrange(np.array(good), rules) == arrange(good, rules)


# --- every deal is a deck ---------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_every_deal_is_the_deck_less_start_home(rules):
    home = set(rules.start_home_cards)
    expected = sorted(set(range(52)) - home)
    for number in range(1, 301):
        pos = make_deal(rules, number, seed=number % 5).position
        dealt = sorted(c for p in pos.piles for c in p)
        assert dealt == expected
        assert sorted(c for f in pos.foundations for c in f) == sorted(home)
        assert all(len(p) == rules.cards_per_column for p in pos.piles)
        assert pos.face_down == (rules.face_down,) * rules.columns


def test_good_measure_layout():
    rules = find_variant("good-measure")
    for number in (1, 2, 99):
        pos = make_deal(rules, number).position
        assert len(pos.piles) == 10
        assert all(len(p) == 5 for p in pos.piles)
        assert pos.foundations == ((parse_card("AC"),), (parse_card("AD"),), (), ())
        assert pos.cards_home == 2
        assert parse_card("AC") not in {c for p in pos.piles for c in p}


def test_dick_1883_face_down():
    for name in ("dick-1883", "castles-in-spain"):
        pos = make_deal(find_variant(name), 5).position
        assert pos.face_down == (3,) * 13
        assert "??" in pos.to_text() and "<" in pos.to_text(reveal=True)
        assert all(line.count("??") == 3 for line in pos.to_text().splitlines())


def test_face_down_deals_are_face_up_deals_turned_over():
    a = make_deal(find_variant("dick-1883"), 77, seed=3).position
    b = make_deal(BD, 77, seed=3).position
    assert a.piles == b.piles and a.foundations == b.foundations
    assert b.face_down == (0,) * 13


def test_variants_with_the_same_shape_share_the_shuffle():
    for number in (1, 50):
        ref = deck_order(BD, number).tolist()
        for rules in ALL_RULES:
            if not rules.start_home:
                assert deck_order(rules, number).tolist() == ref


def test_deals_are_distinct():
    texts = {make_deal(BD, n).position.to_text() for n in range(1, 1001)}
    assert len(texts) == 1000
    by_seed = {make_deal(BD, 1, seed=s).position.to_text() for s in range(200)}
    assert len(by_seed) == 200


def test_deals_do_not_depend_on_order_or_count():
    numbers = list(range(1, 61)) + [10**6, 2**40, MAX_DEAL]
    forward = {n: make_deal(BD, n, seed=11).position for n in numbers}
    backward = {n: make_deal(BD, n, seed=11).position for n in reversed(numbers)}
    assert forward == backward
    for n in (1, 30, 60, MAX_DEAL):
        assert make_deal(BD, n, seed=11).position == forward[n]
    # interleaving deals of other variants and seeds changes nothing
    for n in numbers[::7]:
        make_deal(find_variant("good-measure"), n, seed=2)
        assert make_deal(BD, n, seed=11).position == forward[n]


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_dealt_positions_are_make_deals_positions(rules):
    numbers = [*range(1, 41), 10**6, np.int64(77), MAX_DEAL]
    for seed in (0, 5):
        assert (list(dealt_positions(rules, numbers, seed)) == [make_deal(rules, n, seed).position for n in numbers]
                == [arrange(deck_order(rules, int(n), seed), rules) for n in numbers])
    if (rules.columns, rules.cards_per_column) in ((13, 4), (10, 5)):  # the shapes PySolFC deals
        assert (list(dealt_positions(rules, numbers[:12], source="pysol"))
                == [make_deal(rules, n, source="pysol").position for n in numbers[:12]])
    assert list(dealt_positions(rules, [])) == []


def test_deal_numbers_accept_numpy_integers():
    assert make_deal(BD, np.int64(5), seed=np.int32(2)).position == make_deal(BD, 5, seed=2).position
    d = make_deal(BD, np.uint16(7))
    assert type(d.number) is int and d.number == 7


def test_extreme_numbers_and_seeds():
    for number, seed in [(1, 0), (MAX_DEAL, 0), (1, MAX_SEED), (MAX_DEAL, MAX_SEED)]:
        pos = make_deal(BD, number, seed).position
        assert sorted(c for p in pos.piles for c in p) == list(range(52))


# --- the compiled dealer agrees with make_deal --------------------------------------------------


def _decode(st: np.ndarray, rules: Rules) -> Position:
    """Read a state array by the layout documented in sim/engine.py (the pile capacity and size from the engine's names)."""
    P = rules.columns
    prm = E.rule_params(rules)
    C = int(prm[E.P_CAP])
    assert C == rules.cards_per_column + 12  # a pile holds its dealt cards and a run of at most 12 on them
    heights = [int(h) for h in st[:P]]
    downs = tuple(int(d) for d in st[P : 2 * P])
    fh = [int(h) for h in st[2 * P : 2 * P + 4]]
    assert int(st[2 * P + 4]) == sum(fh)
    foundations = tuple(tuple(int(c) for c in st[2 * P + 5 + 13 * f : 2 * P + 5 + 13 * f + fh[f]]) for f in range(4))
    piles = tuple(tuple(int(c) for c in st[2 * P + 57 + p * C : 2 * P + 57 + p * C + heights[p]]) for p in range(P))
    assert len(st) == int(prm[E.P_SIZE]) and 2 * P + 57 + P * C <= len(st) < 2 * P + 57 + P * C + 8  # whole 8-byte words
    return Position(piles, downs, foundations)


def _engine_deal(rules: Rules, number: int, seed: int) -> np.ndarray:
    """A deal as `sim.engine.play_deals` makes it: shuffle the deck, then deal it."""
    prm = E.rule_params(rules)
    st = E.new_state(prm)
    deck, home = deck_and_home(rules)
    E.shuffle_deck(seed, number, deck)
    E.deal_state(st, prm, deck, home)
    return st


ENGINE_PAIRS = [(0, n) for n in range(1, 81)] + [(s, n) for s in (1, 7, 12345, 2**33, MAX_SEED) for n in (1, 2, 999, 10**9, MAX_DEAL)]


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_engine_dealing_matches_make_deal(rules):
    for seed, number in ENGINE_PAIRS:
        pos = make_deal(rules, number, seed).position
        st = _engine_deal(rules, number, seed)
        assert _decode(st, rules) == pos, (seed, number)
        assert np.array_equal(st, Game(rules, pos).state_array()), (seed, number)


def test_engine_dealing_matches_for_custom_rules():
    custom = [
        Rules(columns=26, cards_per_column=2, face_down=1, kings_to_bottom=True),
        Rules(columns=4, cards_per_column=13, face_down=12),
        Rules(columns=16, cards_per_column=3, start_home=("AC", "AD", "AH", "AS")),
        Rules(columns=12, cards_per_column=4, start_home=("2C", "AC", "3C", "4C")),
        Rules(columns=10, cards_per_column=5, start_home=("AH", "AS"), foundation="alternate-colour", worrying_back=True),
    ]
    for rules in custom:
        for number in (1, 2, 3, 4444):
            pos = make_deal(rules, number, 5).position
            st = _engine_deal(rules, number, 5)
            assert _decode(st, rules) == pos
            assert np.array_equal(st, Game(rules, pos).state_array())


# --- errors ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "fragments"),
    [
        ({"number": 0}, ["deal number 0", f"1..{MAX_DEAL}", "'default'"]),
        ({"number": -5}, ["deal number -5", f"1..{MAX_DEAL}"]),
        ({"number": MAX_DEAL + 1}, [f"deal number {MAX_DEAL + 1}", f"1..{MAX_DEAL}"]),
        ({"number": 2**64}, [f"1..{MAX_DEAL}"]),
        ({"number": 1.0}, ["deal number 1.0", "whole number", f"1..{MAX_DEAL}"]),
        ({"number": "7"}, ["deal number '7'", "whole number", f"1..{MAX_DEAL}"]),
        ({"number": None}, ["deal number None", f"1..{MAX_DEAL}"]),
        ({"number": True}, ["deal number True", f"1..{MAX_DEAL}"]),
        ({"number": 1, "seed": -1}, ["seed -1", f"0..{MAX_SEED}"]),
        ({"number": 1, "seed": MAX_SEED + 1}, [f"seed {MAX_SEED + 1}", f"0..{MAX_SEED}"]),
        ({"number": 1, "seed": 0.5}, ["seed 0.5", "whole number", f"0..{MAX_SEED}"]),
        ({"number": 1, "seed": False}, ["seed False", f"0..{MAX_SEED}"]),
        ({"number": 1, "source": "microsoft"}, ["unknown deal source 'microsoft'", "default, pysol"]),
        ({"number": 0, "source": "pysol"}, ["deal number 0", f"1..{PYSOL_MAX_DEAL}", "'pysol'"]),
        ({"number": PYSOL_MAX_DEAL + 1, "source": "pysol"}, [f"1..{PYSOL_MAX_DEAL}"]),
        ({"number": 5, "seed": 3, "source": "pysol"}, ["pysol", "no seed", "--seed 0"]),
    ],
)
def test_deal_errors(kwargs, fragments):
    batch = (kwargs["number"], kwargs.get("seed", 0), kwargs.get("source", "default"))
    for call in (lambda: check_deal_number(**kwargs), lambda: make_deal(BD, **kwargs),
                 lambda: list(dealt_positions(BD, [1, batch[0]], *batch[1:]))):
        with pytest.raises(DealError) as info:
            call()
        msg = str(info.value)
        for fragment in fragments:
            assert fragment in msg, (fragment, msg)


def test_deal_error_is_a_value_error_and_sources():
    assert issubclass(DealError, ValueError)
    assert SOURCES == ("default", "pysol")
    assert MAX_DEAL == MAX_SEED == 2**62 - 1
    check_deal_number(MAX_DEAL, MAX_SEED)
    check_deal_number(PYSOL_MAX_DEAL, 0, "pysol")


# --- the shuffle is uniform enough ---------------------------------------------------------------


def test_shuffle_positions_are_uniform():
    n = 20_000
    deck = np.arange(52, dtype=np.int64)
    first = np.zeros(52, dtype=np.int64)
    last = np.zeros(52, dtype=np.int64)
    middle = np.zeros(52, dtype=np.int64)
    kings_in_pile0 = np.zeros(5, dtype=np.int64)
    for number in range(1, n + 1):
        d = deck.copy()
        E.shuffle_deck(2024, number, d)
        first[d[0]] += 1
        middle[d[26]] += 1
        last[d[51]] += 1
        kings_in_pile0[int(np.sum(d[0::13] % 13 == KING))] += 1
    for counts in (first, middle, last):
        assert counts.sum() == n
        assert chisquare(counts).pvalue > 1e-4
    # kings in one pile of 4: hypergeometric(52, 4 kings, 4 draws)
    from scipy.stats import hypergeom

    expected = hypergeom(52, 4, 4).pmf(range(5)) * n
    observed = kings_in_pile0
    mask = expected > 5
    merged_obs = np.append(observed[mask], observed[~mask].sum())
    merged_exp = np.append(expected[mask], expected[~mask].sum())
    assert chisquare(merged_obs, merged_exp).pvalue > 1e-4


def test_chisquare_would_catch_a_biased_shuffle():
    """The uniformity test has teeth: a classic off-by-one Fisher-Yates (j in [0, i)) fails it."""
    n = 20_000
    first = np.zeros(52, dtype=np.int64)
    for number in range(1, n + 1):
        rng = CounterRNG(stream_key(2024, number))
        d = list(range(52))
        for i in range(51, 0, -1):
            j = rng.below(i)  # Sattolo's algorithm: a card never stays in place
            d[i], d[j] = d[j], d[i]
        first[d[0]] += 1
    assert first[0] == 0
    assert chisquare(first).pvalue < 1e-4


@pytest.mark.parametrize("seed", [-1, MAX_SEED + 1, 10**23, 2**64, 1.0, 0.5, True, "3", None, float("nan")])
def test_strategy_seeds_outside_what_the_generator_holds_are_refused(seed):
    with pytest.raises(DealError, match=rf"strategy seed .* allowed: 0\.\.{MAX_SEED}"):
        check_strategy_seed(seed)


@pytest.mark.parametrize("seed", [0, 1, MAX_SEED, np.int64(7)])
def test_strategy_seeds_in_range_are_accepted(seed):
    check_strategy_seed(seed)
