"""Drawn positions (`sim.draw`): every card readable or a back, foundations and empty piles, and the
notebook display of `Game` and `View`; `deal --svg` writes the same picture."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.cards import card_str, parse_card
from sim.draw import position_svg
from sim.game import Game
from sim.position import parse_position
from sim.rules import Rules, find_variant

SVG = "{http://www.w3.org/2000/svg}"


def cards(svg: str) -> tuple[list[str], int, int]:
    """(the face-up cards drawn, the number of backs, the number of empty outlines) of a picture, read as XML."""
    root = ET.fromstring(svg)
    groups = [(g.get("class", "").split(), g) for g in root.iter(f"{SVG}g")]
    faces = [g.get("data-card") for cls, g in groups if "card" in cls and "back" not in cls]
    backs = sum(1 for cls, _ in groups if cls == ["card", "back"])
    empty = sum(1 for r in root.iter(f"{SVG}rect") if r.get("class") == "slot empty")
    return faces, backs, empty


def test_a_face_up_deal_draws_every_card_once_with_rank_and_suit():
    game = Game.from_deal(Rules(), 7)
    svg = game._repr_svg_()
    faces, backs, empty = cards(svg)
    assert sorted(faces) == sorted(c for pile in game.position().piles for c in map(card_str, pile))
    assert len(faces) == 52 and backs == 0 and empty == 4  # four empty foundations
    assert "10" in svg and "♠" in svg and "♥" in svg


def test_face_down_cards_are_backs_unless_revealed():
    game = Game.from_deal(find_variant("dick-1883"), 3)
    faces, backs, _ = cards(game.svg())
    assert (len(faces), backs) == (13, 39)
    faces, backs, _ = cards(game.svg(reveal=True))
    assert (len(faces), backs) == (52, 0)
    assert cards(game.view()._repr_svg_())[:2] == (cards(game.svg())[0], 39)
    assert cards(game.view(peeks=True).svg())[1] == 0


def test_foundations_show_their_top_card_and_empty_piles_an_outline():
    rules = Rules()
    text = "\n".join(["-"] * 12 + ["KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C"]) + "\nhome: AC / " + " ".join(
        f"{r}D" for r in "A23456789TJQK") + " / " + " ".join(f"{r}H" for r in "A23456789TJQK") + " / " + " ".join(
        f"{r}S" for r in "A23456789TJQK")
    pos = parse_position(text, rules)
    faces, backs, empty = cards(position_svg(pos, caption="a <test> & more"))
    assert empty == 12 and backs == 0
    assert {"AC", "KD", "KH", "KS"} <= set(faces) and len(faces) == 12 + 4
    assert "a &lt;test&gt; &amp; more" in position_svg(pos, caption="a <test> & more")
    game = Game(rules, pos)
    game.play("2C 13>F")
    assert "2C" in cards(game._repr_svg_())[0] and parse_card("2C") in game.position().foundations[0]


def test_deal_svg_writes_the_picture(tmp_path):
    out = tmp_path / "d.svg"
    r = CliRunner().invoke(main, ["deal", "-v", "dick", "-d", "3", "--svg", str(out)])
    assert r.exit_code == 0, r.output
    faces, backs, _ = cards(out.read_text(encoding="utf-8"))
    assert (len(faces), backs) == (13, 39)
    assert "dick-1883, deal 3" in out.read_text(encoding="utf-8")
