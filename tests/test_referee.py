"""Tests of the rules referee (`sim.referee`).

Three groups:

* the rules one by one, on small hand-made positions (each rule of
  docs/rules.md, sections "Baker's Dozen" and "Rule parameters"; the reasons
  given for illegal moves; the index of the first illegal move);
* engine == referee: random games played with the engine through `sim.game.Game`
  in every preset variant and some custom combinations; at every step the
  engine's legal moves must equal the referee's, and the referee's replay of the
  record must end in the engine's position;
* corrupted records: one move of a legal record spoiled; the referee must name
  that move and `Game.play` must refuse it.
"""

from __future__ import annotations

import ast
import dataclasses
import random
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import sim.engine
from sim import referee
from sim.cards import DECK_SIZE, parse_card
from sim.deals import arrange, make_deal
from sim.game import Game, IllegalMoveError
from sim.notation import ANY_FOUNDATION, Move, MoveParseError
from sim.position import Position
from sim.rules import VARIANTS, Rules

F = referee.FOUNDATION


# --- helpers ------------------------------------------------------------------------


def small(**changes: object) -> Rules:
    """A four-pile variant (4 x 13 cards) for hand-made positions; rule changes on top."""
    base = {"name": "small", "columns": 4, "cards_per_column": 13, "kings_to_bottom": False}
    base.update(changes)
    return Rules(**base)  # type: ignore[arg-type]


def layout(*piles: str, home: tuple[str, ...] = ()) -> Position:
    """A position from pile texts (bottom to top, ``<5C>`` face down, ``""`` empty)
    and up to four foundation texts (bottom to top, slot order). Need not hold a full deck."""
    cards, downs = [], []
    for text in piles:
        pile, down = [], 0
        for word in text.split():
            if word.startswith("<"):
                assert down == len(pile), "face-down cards go at the bottom"
                down += 1
                word = word[1:-1]
            pile.append(parse_card(word))
        cards.append(tuple(pile))
        downs.append(down)
    foundations = [tuple(parse_card(w) for w in f.split()) for f in home]
    foundations += [()] * (4 - len(foundations))
    return Position(tuple(cards), tuple(downs), tuple(foundations))


def verdict_of(rules: Rules, position: Position, *moves: str | Move) -> referee.Verdict:
    return referee.replay(rules, position, list(moves))


def is_legal(rules: Rules, position: Position, move: str) -> bool:
    return verdict_of(rules, position, move).legal


# --- the rules, one at a time --------------------------------------------------------

BUILD_CASES = [
    ("any-suit", "9H", "TC", True),
    ("any-suit", "9H", "TH", True),
    ("any-suit", "9H", "JC", False),
    ("any-suit", "9H", "8C", False),
    ("other-suit", "9H", "TD", True),
    ("other-suit", "9H", "TS", True),
    ("other-suit", "9H", "TH", False),
    ("alternate-colour", "9H", "TC", True),
    ("alternate-colour", "9S", "TD", True),
    ("alternate-colour", "9H", "TD", False),
    ("alternate-colour", "9S", "TC", False),
    ("same-suit", "9H", "TH", True),
    ("same-suit", "9H", "TD", False),
    ("same-suit", "9H", "TC", False),
]


@pytest.mark.parametrize(("build", "card", "target", "legal"), BUILD_CASES)
def test_tableau_build_rules(build: str, card: str, target: str, legal: bool) -> None:
    rules = small(build=build)
    start = layout(f"2C {card}", f"3D {target}", "4S", "5S")
    text = f"{card} 1>2"
    verdict = verdict_of(rules, start, text)
    assert verdict.legal is legal
    assert (Move(parse_card(card), 0, 1) in referee.legal_moves(rules, start)) is legal
    if legal:
        assert verdict.final.piles[1] == (parse_card("3D"), parse_card(target), parse_card(card))
        assert verdict.final.piles[0] == (parse_card("2C"),)
    else:
        assert verdict.first_illegal == 1
        assert verdict.reason is not None and verdict.reason.startswith(f"move 1 '{text}': {card} cannot go on {target}")
        if card[0] != "9" or target[0] != "T":
            assert "one rank higher" in verdict.reason
        else:
            assert "builds down on" in verdict.reason
        assert verdict.final == start


@pytest.mark.parametrize("build", ["any-suit", "other-suit", "alternate-colour", "same-suit"])
def test_kings_never_go_onto_the_tableau(build: str) -> None:
    rules = small(build=build, empty_fill="none")
    start = layout("KH", "QH", "KS", "AC QC")
    moves = referee.legal_moves(rules, start)
    assert all(m.card % 13 != 12 for m in moves if m.dst < F)
    verdict = verdict_of(rules, start, "KH 1>2")
    assert not verdict.legal and "one rank higher" in (verdict.reason or "")


@pytest.mark.parametrize(
    ("fill", "card", "legal", "why"),
    [
        ("none", "KH", False, "empty piles stay empty"),
        ("none", "QH", False, "empty piles stay empty"),
        ("kings", "KH", True, None),
        ("kings", "QH", False, "only a king may enter an empty pile"),
        ("any", "KH", True, None),
        ("any", "QH", True, None),
        ("any", "2C", True, None),
    ],
)
def test_empty_pile_fill_rules(fill: str, card: str, legal: bool, why: str | None) -> None:
    rules = small(empty_fill=fill)
    start = layout(f"5D {card}", "", "9S", "8D")
    verdict = verdict_of(rules, start, f"{card} 1>2")
    assert verdict.legal is legal
    assert (Move(parse_card(card), 0, 1) in referee.legal_moves(rules, start)) is legal
    if legal:
        assert verdict.final.piles[1] == (parse_card(card),)
    else:
        assert why is not None and why in (verdict.reason or "")
        assert "pile 2 is empty" in (verdict.reason or "")


def test_emptied_pile_stays_empty_in_bakers_dozen() -> None:
    rules = small()
    start = layout("9H", "TC", "KD", "8S")
    verdict = verdict_of(rules, start, "9H 1>2", "8S 4>1")
    assert verdict.first_illegal == 2
    assert verdict.reason == "move 2 '8S 4>1': pile 1 is empty and empty piles stay empty in this variant"
    assert verdict.final.piles[0] == ()


def test_foundations_build_in_suit_from_the_ace() -> None:
    rules = small()
    start = layout("2C AC", "3C 2D", "AD", "KS")
    assert Move(parse_card("AC"), 0, F + 0) in referee.legal_moves(rules, start)
    # the ace first
    verdict = verdict_of(rules, start, "2D 2>F")
    assert verdict.reason == "move 1 '2D 2>F': 2D cannot go home yet: its foundation needs AD next"
    # then up by one rank in suit
    verdict = verdict_of(rules, start, "AC 1>F", "2C 1>F", "AD 3>F", "2D 2>F", "3C 2>F")
    assert verdict.legal and verdict.cards_home == 5
    assert verdict.final.foundations == (
        (parse_card("AC"), parse_card("2C"), parse_card("3C")),
        (parse_card("AD"), parse_card("2D")),
        (),
        (),
    )
    assert verdict.final.piles == ((), (), (), (parse_card("KS"),))
    # numbered foundation text is accepted when it names the card's own suit
    assert verdict_of(rules, start, "AC 1>F1").legal
    # a slot of another suit is refused (as a Move value; the text does not even parse)
    verdict = verdict_of(rules, start, Move(parse_card("AD"), 2, F + 0))
    assert verdict.reason == "move 1 'AD 3>F1': AD belongs on foundation F2, not F1"
    verdict = verdict_of(rules, start, "AD 3>F1")
    assert verdict.first_illegal == 1 and "cannot be read" in (verdict.reason or "")
    # skipping a rank is refused
    verdict = verdict_of(rules, start, "AC 1>F", "3C 2>F")
    assert verdict.first_illegal == 2
    assert verdict.reason == "move 2 '3C 2>F': 3C is not the exposed card of pile 2 (the exposed card is 2D)"


def test_cards_home_never_come_back_without_worrying_back() -> None:
    rules = small(worrying_back=False)
    start = layout("4H", "5S", "", "KS", home=("AC 2C 3C",))
    assert not [m for m in referee.legal_moves(rules, start) if m.src >= F]
    verdict = verdict_of(rules, start, "3C F>1")
    assert verdict.reason == "move 1 '3C F>1': cards never come back from the foundations in this variant (worrying_back is off)"


def test_worrying_back_when_allowed() -> None:
    rules = small(worrying_back=True)
    start = layout("4H", "5S", "", "KS", home=("AC 2C 3C",))
    moves = referee.legal_moves(rules, start)
    assert Move(parse_card("3C"), F, 0) in moves
    assert Move(parse_card("3C"), F, 2) not in moves  # empty piles stay empty
    verdict = verdict_of(rules, start, "3C F>1")
    assert verdict.legal and verdict.cards_home == 2
    assert verdict.final.piles[0] == (parse_card("4H"), parse_card("3C"))
    assert verdict.final.foundations[0] == (parse_card("AC"), parse_card("2C"))
    # only the top card of a foundation comes back
    verdict = verdict_of(rules, start, "2C F>1")
    assert verdict.reason == "move 1 '2C F>1': 2C is not the top card of foundation F1 (the top card is 3C)"
    # it must still build down on the target
    verdict = verdict_of(rules, start, "3C F>2")
    assert verdict.reason == "move 1 '3C F>2': 3C cannot go on 5S: a card goes only on a card one rank higher"
    # and it may go back home again
    assert verdict_of(rules, start, "3C F>1", "3C 1>F").final == start
    # an empty foundation has nothing to give back
    verdict = verdict_of(rules, start, Move(parse_card("AH"), F + 2, 0))
    assert verdict.reason == "move 1 'AH F3>1': foundation F3 is empty"
    # with 'any' fill a card from home may enter an empty pile
    assert verdict_of(small(worrying_back=True, empty_fill="any"), start, "3C F>3").legal


def test_alternate_colour_foundations() -> None:
    rules = small(foundation="alternate-colour")
    start = layout("2S 2D AS", "3D 2H AH", "AC", "KS QD")
    moves = referee.legal_moves(rules, start)
    # an ace goes to the first empty foundation only (the engine's convention)
    assert {m for m in moves if m.dst >= F} == {Move(parse_card(a), p, F) for a, p in (("AS", 0), ("AH", 1), ("AC", 2))}
    verdict = verdict_of(rules, start, "AS 1>F3")
    assert verdict.reason == (
        "move 1 'AS 1>F3': an ace goes to the first empty foundation (F1); the empty foundations are interchangeable"
    )
    # a bare F goes to the first foundation that accepts the card
    verdict = verdict_of(rules, start, "AS 1>F", "AH 2>F", "2D 1>F")
    assert verdict.legal
    assert verdict.final.foundations[:2] == ((parse_card("AS"), parse_card("2D")), (parse_card("AH"),))
    # up by one rank, alternating colour: 2H on AH is refused, on AS accepted
    here = verdict_of(rules, start, "AS 1>F", "AH 2>F").final
    assert verdict_of(rules, here, "2H 2>F2").reason == (
        "move 1 '2H 2>F2': 2H cannot go on AH on foundation F2: foundations build up by one rank in alternating colours"
    )
    assert verdict_of(rules, here, "2H 2>F1").final.foundations[0] == (parse_card("AS"), parse_card("2H"))
    # a bare F takes the first slot that fits: 2D (red) goes on AS (black) in F1
    assert verdict_of(rules, here, "2D 1>F").final.foundations[0][-1] == parse_card("2D")
    # a non-ace never starts a foundation
    assert verdict_of(rules, here, "2D 1>F3").reason == "move 1 '2D 1>F3': foundation F3 is empty and only an ace starts a foundation"
    # nothing fits anywhere
    assert verdict_of(rules, start, "QD 4>F").reason == (
        "move 1 'QD 4>F': no foundation accepts QD (foundations build up from the ace in alternating colours)"
    )
    # the next ace goes to the next empty slot
    assert Move(parse_card("AC"), 2, F + 2) in referee.legal_moves(rules, here)
    assert Move(parse_card("AC"), 2, F + 3) not in referee.legal_moves(rules, here)


def test_alternate_colour_worrying_back_with_bare_f_source() -> None:
    """A bare F source is the foundation whose top card is the moved card."""
    rules = small(foundation="alternate-colour", worrying_back=True)
    start = layout("3D", "3S", "", "KS", home=("AC 2H", "AH 2S"))
    verdict = verdict_of(rules, start, "2S F>1")
    assert verdict.legal and verdict.final.piles[0] == (parse_card("3D"), parse_card("2S"))
    assert verdict.final.foundations[1] == (parse_card("AH"),)
    assert verdict_of(rules, start, "2S F2>1").final == verdict.final
    assert verdict_of(rules, start, "2S F1>1").reason == "move 1 '2S F1>1': 2S is not the top card of foundation F1 (the top card is 2H)"
    assert verdict_of(rules, start, "4S F>1").reason == "move 1 '4S F>1': 4S is not the top card of any foundation"


def test_face_down_cards_turn_up_when_exposed() -> None:
    rules = small(face_down=2)
    start = layout("<5C> <7C> TS", "JD", "8H", "9S 6D")
    assert start.face_down == (2, 0, 0, 0)
    # a face-down card is never the exposed card
    verdict = verdict_of(rules, start, "7C 1>3")
    assert verdict.reason == "move 1 '7C 1>3': 7C is not the exposed card of pile 1 (the exposed card is TS)"
    verdict = verdict_of(rules, start, "TS 1>2")
    assert verdict.legal and verdict.final.face_down == (1, 0, 0, 0)
    assert verdict.final.piles[0] == (parse_card("5C"), parse_card("7C"))
    verdict = verdict_of(rules, start, "TS 1>2", "7C 1>3")
    assert verdict.legal and verdict.final.face_down == (0, 0, 0, 0)
    assert verdict.final.piles[0] == (parse_card("5C"),)
    # a card put on a face-down pile's exposed card changes no face-down count
    verdict = verdict_of(rules, start, "TS 1>2", "6D 4>1")
    assert verdict.final.face_down == (1, 0, 0, 0)


def test_win_detection() -> None:
    rules = Rules()
    spades = " ".join(f"{r}S" for r in "A23456789TJQ")
    home = tuple(" ".join(f"{r}{s}" for r in "A23456789TJQK") for s in "CDH") + (spades,)
    piles = [""] * 13
    piles[4] = "KS"
    start = layout(*piles, home=home)
    assert start.cards_home == 51
    before = verdict_of(rules, start)
    assert before.legal and not before.won and before.cards_home == 51 and before.moves_checked == 0
    verdict = verdict_of(rules, start, "KS 5>F")
    assert verdict.legal and verdict.won and verdict.cards_home == DECK_SIZE and verdict.moves_checked == 1
    assert referee.legal_moves(rules, verdict.final) == []
    after = verdict_of(rules, start, "KS 5>F", "KS 5>F")
    assert after.won and not after.legal and after.first_illegal == 2
    assert after.reason == "move 2 'KS 5>F': pile 5 is empty"
    assert Game(rules, start).play("KS 5>F") and Game(rules, verdict.final).is_won


def test_first_illegal_move_index_reason_and_final_position() -> None:
    rules = small()
    start = layout("5D TC", "QS JH", "4C", "AC")
    moves = ["AC 4>F", "TC 1>2", "9H 3>1", "4C 3>F"]
    verdict = referee.replay(rules, start, moves)
    assert verdict == referee.Verdict(
        legal=False,
        won=False,
        moves_checked=2,
        first_illegal=3,
        reason="move 3 '9H 3>1': 9H is not the exposed card of pile 3 (the exposed card is 4C)",
        final=layout("5D", "QS JH TC", "4C", "", home=("AC",)),
        cards_home=1,
        played=(Move(parse_card("AC"), 3, F), Move(parse_card("TC"), 0, 1)),
    )
    assert referee.replay(rules, start, moves[:2]).first_illegal is None


@pytest.mark.parametrize(
    ("move", "reason"),
    [
        ("hello", "move 1 'hello': cannot be read: 'hello' is not a move"),
        ("9H 1>9", "move 1 '9H 1>9': cannot be read: '9H 1>9': pile 9 does not exist; allowed: 1..4"),
        ("9H 1>1", "move 1 '9H 1>1': cannot be read: '9H 1>1': source and destination are the same pile"),
        (Move(parse_card("TC"), 0, 8), "move 1 'TC 1>9': pile 9 does not exist (piles are 1..4)"),
        (Move(parse_card("TC"), 6, 1), "move 1 'TC 7>2': pile 7 does not exist (piles are 1..4)"),
        (Move(parse_card("TC"), -1, 65), "pile 0 does not exist (piles are 1..4)"),
        (Move(parse_card("TC"), 0, 0), "move 1 'TC 1>1': the source and the destination are the same place"),
        (Move(parse_card("TC"), 0, F + 5), "move 1 'TC 1>F6': foundation F6 does not exist (foundations are F1..F4)"),
        (Move(60, 0, 1), "card code 60 is not a card"),
        (Move(parse_card("AC"), F, F + 1), "move 1 'AC F1>F2': a card cannot move from one foundation to another"),
    ],
)
def test_malformed_moves_are_reported_not_raised(move: str | Move, reason: str) -> None:
    rules = small(worrying_back=True)
    start = layout("5D TC", "QS JH", "4C", "", home=("AC",))
    verdict = referee.replay(rules, start, [move])
    assert not verdict.legal and verdict.first_illegal == 1 and verdict.moves_checked == 0
    assert verdict.final == start
    assert verdict.reason is not None and reason in verdict.reason


def test_apply_returns_a_new_position_and_refuses_illegal_moves() -> None:
    rules = small()
    start = layout("5D TC", "QS JH", "4C", "AC")
    after = referee.apply(rules, start, Move(parse_card("TC"), 0, 1))
    assert after.piles[1][-1] == parse_card("TC") and start.piles[0][-1] == parse_card("TC")
    with pytest.raises(referee.IllegalMove, match="9H is not the exposed card of pile 3"):
        referee.apply(rules, start, Move(parse_card("9H"), 2, 0))
    # a bare F destination is resolved
    assert referee.apply(rules, start, Move(parse_card("AC"), 3, ANY_FOUNDATION)).foundations[0] == (parse_card("AC"),)


def test_replay_refuses_a_start_position_that_does_not_fit() -> None:
    with pytest.raises(ValueError, match="4 piles"):
        referee.replay(Rules(), layout("AC", "2C", "3C", "4C"), [])
    with pytest.raises(ValueError, match="appears twice"):
        referee.replay(small(), layout("AC", "2C", "3C AC", ""), [])
    with pytest.raises(ValueError, match="top card of a pile is face up"):
        referee.replay(small(), Position(((0,), (), (), ()), (1, 0, 0, 0)), [])
    verdict = referee.replay(small(), layout("AC", "2C", "3C", ""), [("AC", 1, 2)])  # type: ignore[list-item]
    assert verdict.first_illegal == 1 and "is not a move" in (verdict.reason or "")


def test_referee_is_independent_of_the_engine() -> None:
    """The referee imports neither the engine nor Game, and its foundation numbering agrees."""
    source = Path(referee.__file__).read_text(encoding="utf-8")
    imported = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            imported.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
    assert not imported & {"sim.engine", "sim.game", "sim.deals", "studies.runner"}
    assert not any(name.startswith(("sim.engine", "sim.game", "numba")) for name in imported)
    assert referee.FOUNDATION == sim.engine.FOUNDATION
    assert ANY_FOUNDATION == referee.FOUNDATION - 1


# --- engine == referee ---------------------------------------------------------------------

CUSTOM_RULES = (
    Rules(name="same-suit-kings-fd2-worry", kings_to_bottom=False, face_down=2, build="same-suit", empty_fill="kings", worrying_back=True),
    Rules(name="alt-foundations", kings_to_bottom=False, empty_fill="any", foundation="alternate-colour", worrying_back=True),
    Rules(name="other-suit-any-fill", build="other-suit", empty_fill="any", kings_to_bottom=False),
    Rules(name="spanish-worrying-back", kings_to_bottom=False, empty_fill="any", worrying_back=True),
    Rules(
        name="good-measure-alt-fd2",
        columns=10,
        cards_per_column=5,
        start_home=("AC", "AD"),
        foundation="alternate-colour",
        face_down=2,
        empty_fill="kings",
        worrying_back=True,
    ),
    Rules(name="four-piles", columns=4, cards_per_column=13, face_down=10, build="alternate-colour", empty_fill="kings"),
)
RULESETS = tuple(v.rules for v in VARIANTS) + CUSTOM_RULES
RULESET_IDS = [r.name for r in RULESETS]
MAX_MOVES = 300


def _record_text(rules: Rules, record: list[Move]) -> list[str]:
    return [m.text(numbered_foundations=rules.foundation != "suit") for m in record]


def _where(rules: Rules, start: Position, record: list[Move]) -> str:
    """A reproducer for a failure message: variant, start layout and the moves so far."""
    return (
        f"\nvariant {rules.name} {rules.parameters()}\nstart:\n{start.to_text(reveal=True)}"
        f"moves ({len(record)}): {' | '.join(_record_text(rules, record))}"
    )


def play_and_check(
    rules: Rules,
    start: Position,
    rng: random.Random,
    *,
    home_first: bool = False,
    every_step_position: bool = True,
    max_moves: int = MAX_MOVES,
) -> list[Move]:
    """Play one random game with the engine, checking it against the referee.

    Moves are chosen uniformly from `Game.legal_moves` (``home_first``: uniformly
    among the moves home when there are any, which reaches endgames and wins).
    At every step the engine's legal moves must equal the referee's on the same
    position, and the referee's own running position (`referee.apply`) must
    equal `Game.position()`. With ``every_step_position=False`` (the bulk
    volume) the referee's moves are computed on its running position and the
    positions are compared every 25 steps and at the end. Finally the referee
    replays the record's text and must agree on the final position and the win.
    """
    game = Game(rules, start)
    tracked = start
    record: list[Move] = []
    for step in range(max_moves + 1):
        engine_moves = game.legal_moves()
        if every_step_position or step % 25 == 0:
            here = game.position()
            assert here == tracked, "referee.apply and the engine disagree on the position" + _where(rules, start, record)
        else:
            here = tracked
        referee_moves = referee.legal_moves(rules, here)
        if sorted(engine_moves) != sorted(referee_moves):
            only_engine = sorted(set(engine_moves) - set(referee_moves))
            only_referee = sorted(set(referee_moves) - set(engine_moves))
            pytest.fail(
                f"legal moves differ: engine only {[m.text(True) for m in only_engine]}, "
                f"referee only {[m.text(True) for m in only_referee]}, "
                f"engine count {len(engine_moves)} vs referee {len(referee_moves)}" + _where(rules, start, record)
            )
        if not engine_moves or game.is_won or step == max_moves:
            break  # stuck, won (with worrying back a won game still has moves), or long enough
        pool = [m for m in engine_moves if m.dst >= ANY_FOUNDATION] if home_first else []
        move = rng.choice(pool or engine_moves)
        game.play(move)
        tracked = referee.apply(rules, tracked, move)
        record.append(move)

    final = game.position()
    assert final == tracked, "final positions differ" + _where(rules, start, record)
    verdict = referee.replay(rules, start, _record_text(rules, record))
    assert verdict.legal, f"{verdict.reason}" + _where(rules, start, record)
    assert verdict.moves_checked == len(record)
    assert verdict.final == final
    assert verdict.won == game.is_won
    assert verdict.cards_home == game.cards_home
    assert verdict.won == (final.cards_home == DECK_SIZE)
    assert verdict.played == tuple(record)
    assert referee.replay_codes(rules, start, [m.code for m in record]) == verdict
    assert all(type(m) is Move for m in verdict.played)
    lean = referee.replay_codes(rules, start, [m.code for m in record], keep_moves=False)
    assert lean.played == () and lean == dataclasses.replace(verdict, played=())
    return record


def _random_layout(rules: Rules, order: list[int]) -> Position:
    """Deal a permutation of the 52 cards (less those starting home) through `arrange`."""
    home = set(rules.start_home_cards)
    return arrange([c for c in order if c not in home], rules)


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=5, deadline=None)
@given(deal=st.integers(1, 10**9), seed=st.integers(0, 2**32 - 1), home_first=st.booleans())
def test_engine_matches_referee_on_dealt_games(rules: Rules, deal: int, seed: int, home_first: bool) -> None:
    start = make_deal(rules, deal).position
    record = play_and_check(rules, start, random.Random(seed), home_first=home_first)
    # the same record replays through Game (as text) to the same place
    game = Game(rules, start)
    game.replay(_record_text(rules, record))
    by_values = referee.replay(rules, start, record)
    assert game.position() == by_values.final
    # numbered foundations are accepted in every variant (F1..F4 name the slot)
    assert referee.replay(rules, start, [m.text(numbered_foundations=True) for m in record]) == by_values


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=4, deadline=None)
@given(order=st.permutations(range(DECK_SIZE)), seed=st.integers(0, 2**32 - 1), home_first=st.booleans())
def test_engine_matches_referee_on_random_layouts(rules: Rules, order: list[int], seed: int, home_first: bool) -> None:
    play_and_check(rules, _random_layout(rules, order), random.Random(seed), home_first=home_first)


def late_game_layout(rules: Rules, order: list[int], home_counts: list[int], downs: list[int]) -> Position:
    """A random position from late in a game: some cards home, the rest dealt round-robin.

    In-suit foundations: foundation s holds the lowest ``home_counts[s]`` cards of
    suit s. Alternate-colour foundations: foundation f is a chain of up to
    ``home_counts[f]`` cards from an ace up, alternating colour, the cards taken in
    ``order``'s order (so any slot may be the empty one). Each pile gets
    ``downs[p]`` face-down cards, at most all but its top card. Such positions have
    empty piles, many cards home and wins within reach, so random play reaches
    the endgame rules (empty-pile fills, worrying back, the win) quickly.
    """
    used: set[int] = set()
    foundations: list[tuple[int, ...]] = []
    for f in range(4):
        if rules.foundation == "suit":
            chain = tuple(f * 13 + r for r in range(home_counts[f]))
        else:
            chain = ()
            for _ in range(home_counts[f]):
                fits = [
                    c
                    for c in order
                    if c not in used
                    and c % 13 == len(chain)
                    and (not chain or (c // 13 in (1, 2)) != (chain[-1] // 13 in (1, 2)))
                ]
                if not fits:
                    break
                chain += (fits[0],)
                used.add(fits[0])
        used.update(chain)
        foundations.append(chain)
    rest = [c for c in order if c not in used]
    piles = [tuple(rest[p :: rules.columns]) for p in range(rules.columns)]
    face_down = tuple(max(0, min(downs[p % len(downs)], len(piles[p]) - 1)) for p in range(rules.columns))
    return Position(tuple(piles), face_down, tuple(foundations))


late_games = {
    "order": st.permutations(range(DECK_SIZE)),
    "home_counts": st.lists(st.integers(0, 13), min_size=4, max_size=4),
    "downs": st.lists(st.integers(0, 3), min_size=1, max_size=13),
    "seed": st.integers(0, 2**32 - 1),
}


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=8, deadline=None)
@given(**late_games)
def test_engine_matches_referee_on_late_game_layouts(
    rules: Rules, order: list[int], home_counts: list[int], downs: list[int], seed: int
) -> None:
    start = late_game_layout(rules, order, home_counts, downs)
    play_and_check(rules, start, random.Random(seed), home_first=seed % 2 == 0)


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
def test_engine_and_referee_agree_on_wins(rules: Rules) -> None:
    """Home-first random play from late-game layouts wins some games; the win flags
    and final positions agree (checked in play_and_check), and wins do happen."""
    rng = random.Random(2024)
    wins = 0
    for _ in range(12):
        order = rng.sample(range(DECK_SIZE), DECK_SIZE)
        start = late_game_layout(rules, order, [rng.randint(8, 13) for _ in range(4)], [rng.randint(0, 2)])
        record = play_and_check(rules, start, rng, home_first=True, max_moves=120)
        wins += referee.replay(rules, start, record).won
    assert wins > 0


SLOW_GAMES = 140
SLOW_LATE_GAMES = 100


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=SLOW_GAMES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(order=st.permutations(range(DECK_SIZE)), seed=st.integers(0, 2**32 - 1), home_first=st.booleans())
def test_engine_matches_referee_many_games(rules: Rules, order: list[int], seed: int, home_first: bool) -> None:
    play_and_check(rules, _random_layout(rules, order), random.Random(seed), home_first=home_first, every_step_position=False)


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=SLOW_LATE_GAMES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**late_games)
def test_engine_matches_referee_many_late_games(
    rules: Rules, order: list[int], home_counts: list[int], downs: list[int], seed: int
) -> None:
    start = late_game_layout(rules, order, home_counts, downs)
    play_and_check(rules, start, random.Random(seed), home_first=seed % 2 == 0, every_step_position=False)


# --- corrupted records --------------------------------------------------------------------

CORRUPTIONS = ("wrong-card", "wrong-pile", "pile-out-of-range", "foundation-out-of-order", "no-build")


def _random_record(rules: Rules, start: Position, rng: random.Random, length: int) -> list[Move]:
    game = Game(rules, start)
    record = []
    for _ in range(length):
        moves = game.legal_moves()
        if not moves:
            break
        record.append(game.play(rng.choice(moves)))
    return record


def _corrupt(kind: str, rules: Rules, game: Game, original: Move | None, rng: random.Random) -> Move | None:
    """A move that is illegal in the game's position, made from ``original`` (the
    record's move there) or chosen fresh; None when no such move exists here."""
    here = game.position()
    n = rules.columns
    legal = set(game.legal_moves())
    if kind in ("wrong-card", "wrong-pile", "pile-out-of-range") and original is None:
        return None
    if kind == "wrong-card":
        assert original is not None
        card = rng.choice([c for c in range(DECK_SIZE) if c != original.card])
        return Move(card, original.src, original.dst)
    if kind == "wrong-pile":
        assert original is not None
        src = rng.choice([p for p in range(n) if p not in (original.src, original.dst)])
        return Move(original.card, src, original.dst)
    if kind == "pile-out-of-range":
        assert original is not None
        return Move(original.card, original.src, n + rng.randrange(3))
    if kind == "foundation-out-of-order":
        homeless = [p for p in range(n) if here.piles[p] and not any(m.src == p and m.dst >= F for m in legal)]
        if not homeless:
            return None
        p = rng.choice(homeless)
        dst = F + here.piles[p][-1] // 13 if rules.foundation == "suit" else ANY_FOUNDATION
        return Move(here.piles[p][-1], p, dst)
    if kind == "no-build":
        candidates = [
            Move(here.piles[p][-1], p, q) for p in range(n) for q in range(n) if p != q and here.piles[p]
        ]
        candidates = [m for m in candidates if m not in legal]
        return rng.choice(candidates) if candidates else None
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", CORRUPTIONS)
@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(deal=st.integers(1, 10**9), seed=st.integers(0, 2**32 - 1), where=st.integers(0, 10**6), as_text=st.booleans())
def test_corrupted_move_is_named(rules: Rules, kind: str, deal: int, seed: int, where: int, as_text: bool) -> None:
    rng = random.Random(seed)
    start = make_deal(rules, deal).position
    record = _random_record(rules, start, rng, 60)
    i = where % (len(record) + 1)
    game = Game(rules, start)
    for m in record[:i]:
        game.play(m)
    here = game.position()
    bad = _corrupt(kind, rules, game, record[i] if i < len(record) else None, rng)
    assume(bad is not None)
    assert bad is not None
    in_range = 0 <= bad.dst < rules.columns or bad.dst >= ANY_FOUNDATION
    written: str | Move = bad.text(numbered_foundations=True) if as_text and in_range else bad
    moves: list[str | Move] = [*record[:i], written, *record[i + 1 :]]

    verdict = referee.replay(rules, start, moves)
    assert not verdict.legal
    assert verdict.first_illegal == i + 1, verdict.reason
    assert verdict.moves_checked == i
    assert verdict.final == here
    assert verdict.reason is not None and verdict.reason.startswith(f"move {i + 1} '")
    with pytest.raises(IllegalMoveError) as refused:
        game.play(bad)
    reason = verdict.reason.split("': ", 1)[1]
    if not reason.startswith("cannot be read"):  # the same move judged: the same words
        assert str(refused.value).endswith(f": {reason}"), "Game and the referee word one reason differently"
    assert game.position() == here, "a refused move changed the game"


def test_unreadable_text_is_a_parse_error_in_game_and_an_illegal_move_for_the_referee() -> None:
    rules = Rules()
    start = make_deal(rules, 1).position
    verdict = referee.replay(rules, start, ["9H 3>14"])
    assert verdict.first_illegal == 1 and "cannot be read" in (verdict.reason or "")
    with pytest.raises(MoveParseError):
        Game(rules, start).play("9H 3>14")


def test_out_of_range_move_whose_code_aliases_a_legal_one_is_refused_by_both() -> None:
    """Move(c, s - 1, d + 64) has the same engine code as Move(c, s, d); both must refuse it."""
    rules = Rules()
    game = Game.from_deal(rules, 1)
    legal = next(m for m in game.legal_moves() if m.src > 0 and m.dst < F)
    alias = Move(legal.card, legal.src - 1, legal.dst + 64)
    assert alias.code == legal.code
    assert not referee.replay(rules, game.position(), [alias]).legal
    with pytest.raises(IllegalMoveError):
        game.play(alias)


def test_bare_f_source_with_alternate_colour_foundations_agrees_with_game() -> None:
    rules = small(foundation="alternate-colour", worrying_back=True)
    start = layout("3D", "3S", "", "KS", home=("AC 2H", "AH 2S"))
    game = Game(rules, start)
    assert game.play("2S F>1") == Move(parse_card("2S"), F + 1, 0)
    assert game.position() == referee.replay(rules, start, ["2S F>1"]).final


# --- engine move codes --------------------------------------------------------------------


@pytest.mark.parametrize("rules", RULESETS, ids=RULESET_IDS)
@settings(max_examples=4, deadline=None)
@given(deal=st.integers(1, 10**9), seed=st.integers(0, 2**32 - 1), where=st.integers(0, 10**6),
       code=st.integers(-200, 64 * 64 + 200))
def test_any_code_is_judged_as_the_engine_judges_it(rules: Rules, deal: int, seed: int, where: int, code: int) -> None:
    """A record of codes with one spoiled: legal for the referee exactly when the engine lists that code,
    and a refused code is named with the position before it (no code can make the referee raise)."""
    rng = random.Random(seed)
    start = make_deal(rules, deal).position
    record = [m.code for m in _random_record(rules, start, rng, 40)]
    i = where % (len(record) + 1)
    game = Game(rules, start)
    for c in record[:i]:
        game.play_code(c)
    verdict = referee.replay_codes(rules, start, [*record[:i], code])
    assert referee.replay_codes(rules, start, [*record[:i], code], keep_moves=False) == dataclasses.replace(
        verdict, played=())
    assert verdict.legal == (code in game.legal_codes().tolist()), verdict.reason
    if verdict.legal:
        assert verdict.final == referee.apply(rules, game.position(), verdict.played[-1])
    else:
        assert verdict.first_illegal == i + 1 and verdict.moves_checked == i and verdict.final == game.position()
        assert verdict.reason is not None and verdict.reason.startswith(f"move {i + 1} ")


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (2 * 64 + 0, "move 1 code 128: pile 3 is empty"),
        (7 * 64 + 0, "move 1 code 448: its source 7 is neither a pile (0..3) nor a foundation (56..59)"),
        (-1, "move 1 code -1: its source -1 is neither a pile"),
        ((F + 1) * 64 + 0, "move 1 code 3648: foundation F2 is empty"),
        (F * 64 + 2, "move 1 'AC F1>3': cards never come back from the foundations"),
        (0 * 64 + F + 1, "move 1 'TC 1>F2': TC belongs on foundation F1, not F2"),
        (0 * 64 + ANY_FOUNDATION, "move 1 code 55: its destination 55 is neither a pile"),
        (0 * 64 + 5, "move 1 'TC 1>6': pile 6 does not exist (piles are 1..4)"),
        ("0", "move 1 '0': is not a move code"),
    ],
)
def test_codes_that_name_no_move_are_reported_not_raised(code: object, reason: str) -> None:
    start = layout("5D TC", "QS JH", "", "", home=("AC",))
    verdict = referee.replay_codes(small(), start, [code])  # type: ignore[list-item]
    assert not verdict.legal and verdict.first_illegal == 1 and verdict.final == start
    assert verdict.reason is not None and verdict.reason.startswith(reason), verdict.reason
