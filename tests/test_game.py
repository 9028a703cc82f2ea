"""`Game`: legal moves, play/undo/clone, outcomes, the view, and illegal-move reasons."""

from __future__ import annotations

import random

import pytest

from sim.cards import parse_card
from sim.game import HIDDEN_CARD, Game, IllegalMoveError
from sim.notation import Move
from sim.position import parse_position
from sim.rules import Rules, find_variant

BAKERS = Rules()


def position(text: str, rules: Rules = BAKERS):
    return parse_position(text, rules)


def test_play_and_undo_restore_the_position_exactly():
    g = Game.from_deal(find_variant("dick-1883"), 11)
    start = g.position()
    rng = random.Random(3)
    played = []
    for _ in range(60):
        moves = g.legal_moves()
        if not moves:
            break
        played.append(g.play(rng.choice(moves)))
    assert g.history == played
    for _ in played:
        g.undo()
    assert g.position() == start
    with pytest.raises(IllegalMoveError, match="nothing to undo"):
        g.undo()


def test_clone_is_independent():
    g = Game.from_deal(BAKERS, 24, source="pysol")
    c = g.clone()
    c.play("AS 1>F")
    assert g.cards_home == 0 and c.cards_home == 1
    assert g.history == [] and [str(m) for m in c.history] == ["AS 1>F"]


def test_move_strings_play_and_illegal_moves_say_why():
    g = Game.from_deal(BAKERS, 24, source="pysol")
    g.play("AS 1>F")
    with pytest.raises(IllegalMoveError, match="not the exposed card"):
        g.play("KD 1>F")
    with pytest.raises(IllegalMoveError, match="cannot go on"):
        g.play("2S 2>5")
    with pytest.raises(IllegalMoveError, match="cannot go home yet"):
        g.play("4C 13>F")
    with pytest.raises(IllegalMoveError, match="worrying_back is off"):
        g.play("AS F>2")


def _first_position_with_an_empty_pile(rules: Rules) -> Game:
    rng = random.Random(0)
    for number in range(1, 200):
        g = Game.from_deal(rules, number)
        for _ in range(300):
            if any(g.view().height(p) == 0 for p in range(rules.columns)):
                return g
            moves = g.legal_moves()
            if not moves:
                break
            g.play(rng.choice(moves))
    raise AssertionError("no empty pile reached")


@pytest.mark.parametrize(
    ("fill", "king_ok", "other_ok", "message"),
    [("none", False, False, "empty piles stay empty"), ("kings", True, False, "only a king may enter"), ("any", True, True, "")],
)
def test_empty_pile_fill_rules(fill, king_ok, other_ok, message):
    rules = Rules(kings_to_bottom=False, empty_fill=fill)
    g = _first_position_with_an_empty_pile(rules)
    v = g.view()
    empty = next(p for p in range(13) if v.height(p) == 0)
    moves = {(m.src, m.dst) for m in g.legal_moves()}
    for p in range(13):
        if v.height(p) == 0:
            continue
        is_king = v.top(p) % 13 == 12
        assert ((p, empty) in moves) == (king_ok if is_king else other_ok)
        if not (king_ok if is_king else other_ok):
            assert message in g.why_illegal(Move(v.top(p), p, empty))


def test_won_and_stuck():
    rules = Rules(columns=1, cards_per_column=52)
    cards = " ".join(f"{r}{s}" for s in "SHDC" for r in "KQJT98765432A")
    g = Game(rules, position(cards + "\n", rules))
    assert not g.is_won and not g.is_stuck
    while g.legal_moves():
        g.play(g.legal_moves()[0])
    assert g.is_won and g.cards_home == 52 and not g.is_stuck
    blocked = " ".join(f"{r}{s}" for s in "SHDC" for r in "A23456789TJQK")
    g = Game(rules, position(blocked + "\n", rules))
    assert g.is_stuck and g.legal_moves() == []


def test_view_hides_face_down_cards_unless_peeking():
    g = Game.from_deal(find_variant("dick-1883"), 2)
    hidden = g.view()
    seen = g.view(peeks=True)
    for p in range(13):
        assert hidden.face_down(p) == 3
        assert hidden.piles[p][:3] == (HIDDEN_CARD,) * 3
        assert HIDDEN_CARD not in seen.piles[p]
        assert hidden.piles[p][3] == seen.piles[p][3] == hidden.top(p)
    assert len(hidden.unknown) == 39 and seen.unknown == frozenset()
    assert hidden.unknown == {c for p in seen.piles for c in p[:3]}


def test_card_turns_face_up_when_exposed():
    g = Game.from_deal(find_variant("dick-1883"), 2)
    rng = random.Random(1)
    for _ in range(200):
        before = [g.view().face_down(p) for p in range(13)]
        moves = g.legal_moves()
        if not moves:
            break
        mv = g.play(rng.choice(moves))
        after = [g.view().face_down(p) for p in range(13)]
        for p in range(13):
            h = g.view().height(p)
            expected = before[p] - 1 if (p == mv.src and h == before[p] and h > 0) else before[p]
            assert after[p] == expected
            assert h == 0 or after[p] < h


def test_view_is_a_snapshot():
    g = Game.from_deal(BAKERS, 24, source="pysol")
    v = g.view()
    g.play("AS 1>F")
    assert v.top(0) == parse_card("AS") and v.cards_home == 0


def test_text_rendering_hides_face_down_cards():
    g = Game.from_deal(find_variant("dick-1883"), 1)
    lines = str(g).splitlines()
    assert len(lines) == 13 and all(line.startswith("?? ?? ?? ") for line in lines)
