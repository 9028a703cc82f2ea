"""Positions and their text form (sim.position)."""

from __future__ import annotations

import pytest

from sim.cards import card_str, parse_card
from sim.deals import make_deal
from sim.position import HIDDEN, LayoutError, Position, parse_position
from sim.rules import VARIANTS, Rules, find_variant

ALL_RULES = [v.rules for v in VARIANTS]
RULE_IDS = [v.name for v in VARIANTS]
BD = find_variant("bakers-dozen")
DICK = find_variant("dick-1883")
GM = find_variant("good-measure")


def c(text: str) -> int:
    return parse_card(text)


def cs(text: str) -> tuple[int, ...]:
    return tuple(parse_card(w) for w in text.split())


def layout(rules: Rules = BD, number: int = 1) -> str:
    return make_deal(rules, number).position.to_text(reveal=True)


# --- round trips ---------------------------------------------------------------------------------


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_round_trip_of_deals(rules):
    for number in range(1, 41):
        pos = make_deal(rules, number, seed=number % 3).position
        text = pos.to_text(reveal=True)
        assert parse_position(text, rules) == pos
        assert parse_position(pos.to_text(reveal=True, symbols=True), rules) == pos


def test_good_measure_text_has_home_line():
    pos = make_deal(GM, 1).position
    text = pos.to_text(reveal=True)
    lines = text.splitlines()
    assert len(lines) == 11 and lines[-1] == "home: AC / AD"
    assert parse_position(text, GM).foundations == ((0,), (13,), (), ())


def test_dick_text_shows_face_down_cards():
    pos = make_deal(DICK, 1).position
    revealed = pos.to_text(reveal=True).splitlines()
    hidden = pos.to_text().splitlines()
    assert len(revealed) == 13
    for r, h, pile in zip(revealed, hidden, pos.piles, strict=True):
        words = r.split()
        assert words[:3] == [f"<{card_str(x)}>" for x in pile[:3]]
        assert words[3] == card_str(pile[3])
        assert h.split() == [HIDDEN] * 3 + [card_str(pile[3])]
    assert parse_position(pos.to_text(reveal=True), DICK).face_down == (3,) * 13


def test_text_format_details():
    pos = Position(
        piles=(cs("KC 2D"), (), cs("9H")),
        face_down=(1, 0, 0),
        foundations=(cs("AC"), (), cs("AH 2H"), ()),
    )
    assert pos.to_text() == "?? 2D\n-\n9H\nhome: AC / - / AH 2H\n"
    assert pos.to_text(reveal=True) == "<KC> 2D\n-\n9H\nhome: AC / - / AH 2H\n"
    assert pos.to_text(reveal=True, symbols=True) == "<K♣> 2♦\n-\n9♥\nhome: A♣ / - / A♥ 2♥\n"
    assert pos.cards_home == 3


def _mid_game() -> Position:
    """A Baker's Dozen position after some play: empty piles, partly built foundations."""
    piles = [list(p) for p in make_deal(BD, 3).position.piles]
    home = {0: [], 1: [], 2: [], 3: []}
    # take every ace, two and three of clubs and hearts out of the piles and put them home
    for suit in (0, 2):
        for rank in range(3):
            card = suit * 13 + rank
            for p in piles:
                if card in p:
                    p.remove(card)
            home[suit].append(card)
    moved = piles[5] + piles[6]
    piles[5], piles[6] = [], []
    piles[7] = piles[7] + moved
    return Position(tuple(tuple(p) for p in piles), (0,) * 13, tuple(tuple(home[s]) for s in range(4)))


def test_round_trip_mid_game():
    pos = _mid_game()
    text = pos.to_text()
    assert "\n-\n-\n" in text and "home: AC 2C 3C / - / AH 2H 3H" in text
    assert parse_position(text, BD) == pos
    assert parse_position(pos.to_text(symbols=True), BD) == pos


def test_round_trip_alternate_colour_foundations():
    rules = Rules(foundation="alternate-colour")
    piles = [list(p) for p in make_deal(rules, 1).position.piles]
    stacks = [cs("AH 2S 3D"), cs("AC"), cs("AS 2H"), ()]
    for card in (x for s in stacks for x in s):
        for p in piles:
            if card in p:
                p.remove(card)
    pos = Position(tuple(tuple(p) for p in piles), (0,) * 13, tuple(stacks))
    assert parse_position(pos.to_text(), rules) == pos


def test_parse_accepts_comments_blank_lines_and_numbers():
    text = "# deal 1\n\n" + "".join(f"{i + 1}: {line}\n" for i, line in enumerate(layout().splitlines())) + "\n# end\n"
    assert parse_position(text, BD) == make_deal(BD, 1).position
    assert parse_position(layout().lower(), BD) == make_deal(BD, 1).position
    assert parse_position(layout().replace("T", "10"), BD) == make_deal(BD, 1).position
    assert parse_position("   " + layout().replace("\n", "  \n"), BD) == make_deal(BD, 1).position


def test_parse_home_line_variants():
    text = layout(GM).replace("home: AC / AD", "HOME:  AD /AC ")
    assert parse_position(text, GM).foundations == ((0,), (13,), (), ())


# --- errors ----------------------------------------------------------------------------------------


def _error(text: str, rules: Rules = BD) -> str:
    with pytest.raises(LayoutError) as info:
        parse_position(text, rules)
    return str(info.value)


def _lines(rules: Rules = BD, number: int = 1) -> list[str]:
    return layout(rules, number).splitlines()


def test_wrong_pile_count():
    msg = _error("\n".join(_lines()[:12]))
    assert "12 piles" in msg and "'bakers-dozen' has 13" in msg
    msg = _error("\n".join(_lines() + ["-"]))
    assert "14 piles" in msg and "13" in msg
    msg = _error(layout(BD), GM)
    assert "13 piles" in msg and "'good-measure' has 10" in msg
    assert "12 piles" in _error("\n".join(_lines()[:12]) + "\n# a comment\n\n")


def test_duplicate_card():
    lines = _lines()
    first = lines[0].split()[0]
    lines[5] = lines[5] + " " + first
    msg = _error("\n".join(lines))
    assert f"card {first} appears twice" in msg and "pile 1" in msg and "pile 6" in msg


def test_duplicate_between_pile_and_home():
    lines = _lines()
    where = next(i for i, line in enumerate(lines) if "AC" in line.split())
    msg = _error("\n".join(lines + ["home: AC 2C"]))
    assert "card AC appears twice" in msg and f"pile {where + 1}" in msg and "home" in msg


def test_missing_cards():
    lines = _lines()
    lost = lines[3].split()[-2:]
    lines[3] = " ".join(lines[3].split()[:-2])
    msg = _error("\n".join(lines))
    assert "lacks 2 card(s)" in msg
    for word in lost:
        assert word in msg
    assert "home:" in msg


def test_good_measure_without_home_line_lacks_the_aces():
    text = "\n".join(line for line in _lines(GM) if not line.startswith("home"))
    msg = _error(text, GM)
    assert "lacks 2 card(s): AC AD" in msg


def test_hidden_card_in_layout():
    pos = make_deal(DICK, 1).position
    msg = _error(pos.to_text(), DICK)
    assert "line 1" in msg and "'??'" in msg and "<4C>" in msg


def test_face_down_card_above_face_up():
    lines = _lines(DICK)
    words = lines[1].split()  # <a> <b> <c> d
    words[1], words[3] = words[3], words[1]  # <a> d <c> <b>
    lines[1] = " ".join(words)
    msg = _error("\n".join(lines), DICK)
    assert "line 2" in msg and "face-down card" in msg and "above a face-up card" in msg


def test_all_face_down_pile():
    lines = _lines(DICK)
    words = lines[4].split()
    lines[4] = " ".join(words[:3] + [f"<{words[3]}>"])
    msg = _error("\n".join(lines), DICK)
    assert "line 5" in msg and "top card of a pile is face up" in msg


@pytest.mark.parametrize(
    ("home", "fragments"),
    [
        ("2C", ["foundation pile 2C", "from the ace up by one rank in the same suit"]),
        ("AC 3C", ["foundation pile AC 3C", "same suit"]),
        ("AC 2D", ["foundation pile AC 2D", "same suit"]),
        ("AC / AC 2C", ["two foundation piles of suit C"]),
        ("AC / AD / AH / AS / 2C", ["5 foundation piles", "at most 4"]),
        ("AC XX", ["'XX' is not a card"]),
    ],
)
def test_bad_foundation_piles(home, fragments):
    lines = _lines()
    msg = _error("\n".join(lines + [f"home: {home}"]))
    assert "line 14" in msg
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)


def test_bad_alternate_colour_foundation():
    rules = Rules(foundation="alternate-colour")
    msg = _error("\n".join(_lines() + ["home: AC 2S"]), rules)
    assert "foundation pile AC 2S" in msg and "alternating colours" in msg
    msg = _error("\n".join(_lines() + ["home: 2H"]), rules)
    assert "foundation pile 2H" in msg


@pytest.mark.parametrize("bad", ["XX", "1X", "KCC", "<KC", "K"])
def test_unparsable_card(bad):
    lines = _lines()
    lines[6] = lines[6] + " " + bad
    msg = _error("\n".join(lines))
    assert "line 7" in msg and repr(bad) in msg and "is not a card" in msg


def test_layout_error_is_a_value_error():
    assert issubclass(LayoutError, ValueError)


def test_position_properties():
    pos = make_deal(GM, 1).position
    assert pos.cards_home == 2
    assert make_deal(BD, 1).position.cards_home == 0
    with pytest.raises(AttributeError):
        pos.piles = ()  # type: ignore[misc]


def test_numbered_foundations_keep_their_places_through_text():
    alt = Rules(foundation="alternate-colour")
    piles = [p for p in make_deal(Rules(), 1).position.piles]
    rest = [c for p in piles for c in p if c != parse_card("AD")]
    pos = Position(tuple(tuple(rest[i::13]) for i in range(13)), (0,) * 13, ((), (parse_card("AD"),), (), ()))
    text = pos.to_text()
    assert text.splitlines()[-1] == "home: - / AD"
    assert parse_position(text, alt) == pos
