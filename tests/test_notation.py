"""Move notation (sim.notation): text forms, parsing, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sim.cards import card_str, parse_card
from sim.engine import FOUNDATION
from sim.game import Game
from sim.notation import ANY_FOUNDATION, Move, MoveParseError, moves_of, parse_move
from sim.rules import Rules, find_variant


def c(text: str) -> int:
    return parse_card(text)


# --- the four kinds of move ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move", "piles"),
    [
        ("9H 3>7", Move(c("9H"), 2, 6), 13),
        ("KS 1>13", Move(c("KS"), 0, 12), 13),
        ("TD 10>1", Move(c("TD"), 9, 0), 10),
        ("AS 5>F", Move(c("AS"), 4, FOUNDATION + 3), 13),
        ("AC 13>F", Move(c("AC"), 12, FOUNDATION + 0), 13),
        ("2D 1>F", Move(c("2D"), 0, FOUNDATION + 1), 13),
        ("3D F>2", Move(c("3D"), FOUNDATION + 1, 1), 13),
        ("QH F>13", Move(c("QH"), FOUNDATION + 2, 12), 13),
        ("5C 52>51", Move(c("5C"), 51, 50), 52),
    ],
)
def test_in_suit_moves_round_trip(text, move, piles):
    assert parse_move(text, piles) == move
    assert move.text() == text
    assert str(move) == text
    assert move.text(numbered_foundations=True).replace("F1", "F").replace("F2", "F").replace("F3", "F").replace("F4", "F") == text


def test_in_suit_numbered_foundation_text_is_accepted_when_it_names_the_suit():
    assert parse_move("AS 5>F4", 13) == Move(c("AS"), 4, FOUNDATION + 3)
    assert parse_move("3D F2>2", 13) == Move(c("3D"), FOUNDATION + 1, 1)
    assert Move(c("AS"), 4, FOUNDATION + 3).text(numbered_foundations=True) == "AS 5>F4"


@pytest.mark.parametrize(
    ("text", "move"),
    [
        ("2H 5>F2", Move(c("2H"), 4, FOUNDATION + 1)),
        ("AC 1>F1", Move(c("AC"), 0, FOUNDATION)),
        ("KS 13>F4", Move(c("KS"), 12, FOUNDATION + 3)),
        ("3D F3>2", Move(c("3D"), FOUNDATION + 2, 1)),
        ("9C F4>10", Move(c("9C"), FOUNDATION + 3, 9)),
    ],
)
def test_numbered_foundations_round_trip(text, move):
    assert parse_move(text, 13, suit_foundations=False) == move
    assert move.text(numbered_foundations=True) == text
    assert move.to_foundation == (move.dst >= FOUNDATION)
    assert move.from_foundation == (move.src >= FOUNDATION)


def test_bare_foundation_with_alternate_colours_is_resolved_later():
    m = parse_move("2H 5>F", 13, suit_foundations=False)
    assert m == Move(c("2H"), 4, ANY_FOUNDATION)
    assert m.to_foundation and not m.from_foundation
    assert m.text() == m.text(numbered_foundations=True) == "2H 5>F"
    back = parse_move("3D F>2", 13, suit_foundations=False)
    assert back == Move(c("3D"), ANY_FOUNDATION, 1)
    assert back.from_foundation and not back.to_foundation
    assert back.text() == "3D F>2"


def test_move_properties():
    m = Move(c("9H"), 2, 6)
    assert m.code == 2 * 64 + 6
    assert not m.to_foundation and not m.from_foundation
    home = Move(c("AS"), 4, FOUNDATION + 3)
    assert home.code == 4 * 64 + FOUNDATION + 3
    assert home.to_foundation and not home.from_foundation
    back = Move(c("3D"), FOUNDATION + 1, 1)
    assert back.code == (FOUNDATION + 1) * 64 + 1
    assert back.from_foundation and not back.to_foundation
    assert ANY_FOUNDATION == FOUNDATION - 1


@pytest.mark.parametrize(
    "text",
    ["9h 3>7", "  9H   3 > 7  ", "10H 3>7", "9♥ 3>7", "th 3>f", "TH 3>F3", "th f3>1", "TH f>1"],
)
def test_spelling_tolerance(text):
    m = parse_move(text, 13)
    assert m.card in (c("9H"), c("TH"))
    assert parse_move(m.text(), 13) == m


# --- errors ------------------------------------------------------------------------------------------


def _error(text: str, piles: int = 13, suit_foundations: bool = True) -> str:
    with pytest.raises(MoveParseError) as info:
        parse_move(text, piles, suit_foundations)
    return str(info.value)


@pytest.mark.parametrize("text", ["", "hello", "9H", "9H 3", "9H 3-7", "9H 3>", "9H>3 7", "9H 3>7>8", "9H F10>2", "9H 3>G", "9H3>7"])
def test_garbage(text):
    msg = _error(text)
    assert "is not a move" in msg and repr(text) in msg
    assert "CARD FROM>TO" in msg and "1..13" in msg and "'9H 3>7'" in msg


def test_garbage_names_the_pile_range():
    assert "piles 1..10" in _error("nonsense", piles=10)


@pytest.mark.parametrize(("text", "fragment"), [("XX 3>7", "'XX' is not a card"), ("1Z 3>7", "suit must be one of")])
def test_bad_card(text, fragment):
    msg = _error(text)
    assert fragment in msg and repr(text) in msg


@pytest.mark.parametrize(("text", "pile"), [("9H 0>7", 0), ("9H 3>0", 0), ("9H 14>7", 14), ("9H 3>14", 14), ("9H 3>99", 99)])
def test_pile_out_of_range(text, pile):
    msg = _error(text)
    assert f"pile {pile} does not exist" in msg and "allowed: 1..13" in msg


def test_pile_range_follows_the_variant():
    assert "allowed: 1..10" in _error("9H 11>1", piles=10)
    assert parse_move("9H 11>1", 13) == Move(c("9H"), 10, 0)


def test_same_pile():
    msg = _error("9H 3>3")
    assert "source and destination are the same pile" in msg


@pytest.mark.parametrize("text", ["9H F>F", "AS F4>F4", "AS F>F4", "2H F1>F2"])
def test_foundation_to_foundation(text):
    for suit in (True, False):
        if suit and text in ("2H F1>F2",):
            continue  # F1 is the wrong suit for 2H, reported first
        msg = _error(text, suit_foundations=suit)
        assert "foundation to foundation is not a move" in msg


@pytest.mark.parametrize(("text", "right"), [("9H 3>F1", "F3"), ("AS 5>F1", "F4"), ("3D F3>2", "F2"), ("KC 1>F4", "F1")])
def test_numbered_foundation_of_the_wrong_suit(text, right):
    msg = _error(text)
    assert "foundations build in suit" in msg and f"belongs on {right}" in msg and "(or just F)" in msg
    parse_move(text, 13, suit_foundations=False)  # fine with alternate-colour foundations


@pytest.mark.parametrize("k", [0, 5, 9])
def test_foundation_number_out_of_range(k):
    for suit in (True, False):
        msg = _error(f"9H 3>F{k}", suit_foundations=suit)
        assert f"foundation F{k} does not exist" in msg and "F1..F4" in msg


def test_move_parse_error_is_a_value_error():
    assert issubclass(MoveParseError, ValueError)


# --- property: text round-trips -----------------------------------------------------------------------

cards = st.integers(min_value=0, max_value=51)


@settings(max_examples=300, deadline=None)
@given(card=cards, data=st.data(), piles=st.integers(min_value=2, max_value=52))
def test_pile_to_pile_round_trip(card, data, piles):
    src = data.draw(st.integers(min_value=0, max_value=piles - 1))
    dst = data.draw(st.integers(min_value=0, max_value=piles - 1).filter(lambda d: d != src))
    m = Move(card, src, dst)
    assert m.text() == f"{card_str(card)} {src + 1}>{dst + 1}"
    assert parse_move(m.text(), piles) == m
    assert parse_move(m.text(), piles, suit_foundations=False) == m
    assert parse_move(m.text().lower(), piles) == m


@settings(max_examples=300, deadline=None)
@given(card=cards, pile=st.integers(min_value=0, max_value=51), home=st.booleans(), slot=st.integers(min_value=0, max_value=3))
def test_foundation_moves_round_trip(card, pile, home, slot):
    suit_slot = FOUNDATION + card // 13
    # in-suit: the foundation is the card's suit
    m = Move(card, pile, suit_slot) if home else Move(card, suit_slot, pile)
    assert parse_move(m.text(), 52) == m
    assert parse_move(m.text(numbered_foundations=True), 52) == m
    # alternate colour: any numbered foundation
    m = Move(card, pile, FOUNDATION + slot) if home else Move(card, FOUNDATION + slot, pile)
    assert parse_move(m.text(numbered_foundations=True), 52, suit_foundations=False) == m


@pytest.mark.parametrize("name", ["bakers-dozen", "spanish-patience", "castles-in-spain", "good-measure"])
def test_every_legal_move_of_real_games_round_trips(name):
    rules = find_variant(name).replace(worrying_back=True)
    numbered = rules.foundation != "suit"
    seen = 0
    for number in range(1, 6):
        g = Game.from_deal(rules, number)
        for _ in range(30):
            moves = g.legal_moves()
            if not moves:
                break
            for m in moves:
                assert parse_move(m.text(numbered), rules.columns, rules.foundation == "suit") == m
                seen += 1
            g.play(moves[len(moves) // 2])
    assert seen > 50


def test_alternate_colour_game_moves_round_trip():
    rules = Rules(foundation="alternate-colour", worrying_back=True, empty_fill="any")
    g = Game.from_deal(rules, 3)
    for _ in range(40):
        moves = g.legal_moves()
        if not moves:
            break
        for m in moves:
            assert parse_move(m.text(numbered_foundations=True), 13, suit_foundations=False) == m
        g.play(moves[0])


@pytest.mark.parametrize("text", ["9H 99999999999999999999999>1", "9H ١>2", "9H 3>" + "9" * 5000, "x" * 10_000,
                                  "9H\t3 > ７", "9" * 5000 + "H 3>4", "9H F99>1"])
def test_hostile_move_text_is_refused_in_one_short_line(text):
    with pytest.raises(MoveParseError) as info:
        parse_move(text, 13)
    assert len(str(info.value)) < 200 and "\n" not in str(info.value)


def test_moves_of_triples_are_the_moves_move_makes():
    triples = [(0, 3, 56), (51, 57, 2), (12, 0, 12)]
    made = moves_of(triples)
    assert made == tuple(Move(*t) for t in triples) and all(type(m) is Move for m in made)
    assert [m.code for m in made] == [3 * 64 + 56, 57 * 64 + 2, 12] and made[1].card == 51
    assert moves_of([]) == () and moves_of(m for m in made) == made
