"""Card codes and their text forms (sim.cards)."""

from __future__ import annotations

import pytest

from sim.cards import (
    ACE,
    DECK_SIZE,
    KING,
    RANKS,
    SUITS,
    CardParseError,
    card,
    card_str,
    is_red,
    parse_card,
    rank_of,
    suit_of,
)

ALL_CARDS = range(DECK_SIZE)


def test_code_layout_is_suit_times_13_plus_rank():
    assert card(ACE, 0) == 0  # AC
    assert card(KING, 0) == 12  # KC
    assert card(ACE, 1) == 13  # AD
    assert card(KING, 3) == 51  # KS
    for c in ALL_CARDS:
        assert card(rank_of(c), suit_of(c)) == c
        assert 0 <= rank_of(c) <= 12 and 0 <= suit_of(c) <= 3


@pytest.mark.parametrize(
    ("code", "text"),
    [(0, "AC"), (9, "TC"), (12, "KC"), (13, "AD"), (21, "9D"), (26, "AH"), (34, "9H"), (38, "KH"), (39, "AS"), (51, "KS")],
)
def test_card_str_known_codes(code, text):
    assert card_str(code) == text
    assert parse_card(text) == code


def test_all_52_texts_are_distinct_and_round_trip():
    texts = [card_str(c) for c in ALL_CARDS]
    assert len(set(texts)) == DECK_SIZE
    for c, t in zip(ALL_CARDS, texts, strict=True):
        assert len(t) == 2
        assert t[0] in RANKS and t[1] in SUITS
        assert parse_card(t) == c
        assert parse_card(t.lower()) == c
        assert parse_card(f"  {t} ") == c


def test_symbols_round_trip():
    assert card_str(34, symbols=True) == "9♥"
    assert card_str(51, symbols=True) == "K♠"
    assert card_str(0, symbols=True) == "A♣"
    assert card_str(13, symbols=True) == "A♦"
    for c in ALL_CARDS:
        s = card_str(c, symbols=True)
        assert s[0] == card_str(c)[0]
        assert parse_card(s) == c


@pytest.mark.parametrize(("text", "code"), [("10H", 35), ("10h", 35), ("10♥", 35), ("th", 35), ("10C", 9), ("10S", 48)])
def test_ten_spelled_10(text, code):
    assert parse_card(text) == code


def test_colours():
    reds = {c for c in ALL_CARDS if is_red(c)}
    assert reds == set(range(13, 39))  # diamonds and hearts
    assert not is_red(parse_card("KS")) and not is_red(parse_card("AC"))
    assert is_red(parse_card("QD")) and is_red(parse_card("2H"))


@pytest.mark.parametrize("code", [-1, 52, 100])
def test_card_str_rejects_out_of_range(code):
    with pytest.raises(ValueError, match=r"outside 0\.\.51"):
        card_str(code)


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "expected rank"),
        ("K", "expected rank"),
        ("  9 ", "expected rank"),
        ("9X", "suit must be one of C D H S"),
        ("99", "suit must be one of C D H S"),
        ("1O", "suit must be one of C D H S"),
        ("ZH", "rank must be one of A 2-9 T(10) J Q K"),
        ("11H", "rank must be one of"),
        ("0H", "rank must be one of"),
        ("AHH", "rank must be one of"),
        ("9 H", "rank must be one of"),
    ],
)
def test_parse_errors_say_what_is_wrong(text, fragment):
    with pytest.raises(CardParseError) as info:
        parse_card(text)
    assert fragment in str(info.value)
    assert repr(text) in str(info.value)


def test_card_parse_error_is_a_value_error():
    assert issubclass(CardParseError, ValueError)


def test_compiled_accessors_agree_with_the_layout_inside_compiled_code():
    import numba as nb
    import numpy as np

    from sim.cards import nb_card, nb_rank_of, nb_suit_of

    @nb.njit
    def decode(codes):  # noqa: ANN001, ANN202 (numba)
        out = np.empty((codes.shape[0], 3), dtype=np.int64)
        for i in range(codes.shape[0]):
            c = codes[i]
            out[i, 0], out[i, 1] = nb_rank_of(c), nb_suit_of(c)
            out[i, 2] = nb_card(nb_rank_of(c), nb_suit_of(c))
        return out

    got = decode(np.arange(DECK_SIZE, dtype=np.int8))
    assert [tuple(row) for row in got] == [(rank_of(c), suit_of(c), c) for c in ALL_CARDS]


def test_an_unknown_name_is_still_an_attribute_error():
    import sim.cards

    with pytest.raises(AttributeError, match="nb_colour"):
        sim.cards.nb_colour  # noqa: B018
