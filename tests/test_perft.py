"""Perft-style counts: how many DISTINCT positions are reachable within k moves.

For each fixed start position the set of positions reachable in at most k moves
(the start included, so k = 0 gives 1) is computed twice, by breadth-first search
with the engine (`Game.play_code` / `Game.position` / `Game.undo`) and with the
referee (`referee.legal_moves` / `referee.apply`); the sets must be equal, and
their sizes must equal the golden numbers pinned below. A change to the engine,
the deal generator or the rules that alters what is reachable shows up here as a
changed count: check it against the rules before updating a number.

Positions compare as `sim.position.Position` values, so two move orders that
reach the same layout count once.
"""

from __future__ import annotations

import pytest
from vectors import PYSOL_DEAL_24

from sim import referee
from sim.deals import make_deal
from sim.game import Game
from sim.position import Position, parse_position
from sim.rules import Rules, find_variant

# Reachable within k = 1, 2, 3, 4 moves (start included) from default-source deals.
GOLDEN_DEALS: dict[tuple[str, int], tuple[int, int, int, int]] = {
    ("bakers-dozen", 1): (13, 92, 483, 2170),
    ("bakers-dozen", 2): (15, 126, 798, 4239),
    ("bakers-dozen", 3): (17, 161, 1106, 6125),
    ("spanish-patience", 1): (13, 92, 481, 2147),
    ("spanish-patience", 2): (15, 121, 712, 3467),
    ("spanish-patience", 3): (14, 106, 572, 2475),
    ("kings-into-empty", 1): (13, 92, 481, 2147),
    ("kings-into-empty", 2): (15, 121, 712, 3467),
    ("kings-into-empty", 3): (14, 106, 572, 2475),
    ("castles-in-spain", 1): (8, 33, 99, 253),
    ("castles-in-spain", 2): (10, 54, 206, 613),
    ("castles-in-spain", 3): (9, 43, 143, 377),
    ("good-measure", 1): (9, 51, 222, 825),
    ("good-measure", 2): (10, 45, 132, 322),
    ("good-measure", 3): (11, 68, 305, 1104),
    ("dick-1883", 1): (13, 93, 495, 2250),
    ("other-suit", 1): (12, 72, 297, 996),
}

# PySolFC's Baker's Dozen deal 24 (docs/rules.md, section "Layouts of the PySol source"), typed in: pins the counts
# independently of the deal generator.
PYSOL_24 = "\n" + PYSOL_DEAL_24

# Mid-game positions with an empty pile, face-down cards and cards home, for
# variants with worrying back, king/any fills and alternate-colour foundations.
SAME_SUIT_MID = """
<8D> <TH> 6S
<TC> <6D> KH
<KD> <TS> 9C
<3S> <8C> 4D
<9H> <KS> QS
<7C> <JS> 7D
<JD> <5S> QC
<QH> <9D> JC
<9S> <KC> 5D
<6C> <JH> TD
<8S> <8H> QD
<4S> 7S
-
home: AC 2C 3C 4C 5C / AD 2D 3D / AH 2H 3H 4H 5H 6H 7H / AS 2S
"""

ALT_FOUNDATIONS_MID = """
<JH> <8H> 6D
<6H> <3C> 6S
<9H> <QS> 5D
<8D> <4D> 7C
<QH> <TS> QD
<4S> <7S> KD
<JD> <JC> 8S
<QC> <5C> KC
<KH> <TH> 9C
<9S> <TC> 7H
<9D> <8C> TD
<JS> KS
-
home: AS 2H 3S 4H 5S / AD 2C 3D / AH 2S 3H 4C 5H 6C 7D / AC 2D
"""

GOOD_MEASURE_ALT_MID = """
<8S> <4C> 8H TC
<6S> <QS> 9D 5H
<7D> <9C> 8D KH
<JH> <JD> 7H JS
<QD> <9S> KS QC
<TD> <KC> QH
<TS> <3C> <6H> 7C
<JC> <6C> <5C> 9H
<8C> <TH> <4D> KD
-
home: AD 2C 3H 4S 5D / AH 2S 3D / AC 2D 3S 4H 5S 6D 7S / AS 2H
"""

MID_RULES = {
    "pysol-24": (Rules(), PYSOL_24),
    "same-suit-mid": (
        Rules(name="same-suit-mid", kings_to_bottom=False, face_down=2, build="same-suit", empty_fill="kings", worrying_back=True),
        SAME_SUIT_MID,
    ),
    "alt-foundations-mid": (
        Rules(name="alt-mid", kings_to_bottom=False, empty_fill="any", foundation="alternate-colour", worrying_back=True),
        ALT_FOUNDATIONS_MID,
    ),
    "good-measure-alt-mid": (
        Rules(
            name="gm-alt-mid",
            columns=10,
            cards_per_column=5,
            start_home=("AC", "AD"),
            foundation="alternate-colour",
            face_down=2,
            empty_fill="kings",
            worrying_back=True,
        ),
        GOOD_MEASURE_ALT_MID,
    ),
}

# Reachable within k = 1, 2, ... moves; the slow test goes as deep as the tuple,
# the fast one to at most FAST_DEPTH (alt-foundations-mid branches widely: 2).
GOLDEN_MID: dict[str, tuple[int, ...]] = {
    "pysol-24": (11, 66, 279, 998),
    "same-suit-mid": (7, 27, 82, 212, 484, 1012),
    "alt-foundations-mid": (35, 531, 5231),
    "good-measure-alt-mid": (11, 69, 334, 1378, 5189),
}
FAST_DEPTH_MID = {"alt-foundations-mid": 2}

FAST_DEPTH = 3
SLOW_DEPTH = 4


def reachable_by_referee(rules: Rules, start: Position, depth: int) -> list[set[Position]]:
    """Positions reachable within 1..depth moves, by breadth-first search with the referee."""
    seen = {start}
    frontier = [start]
    layers = []
    for _ in range(depth):
        following = []
        for position in frontier:
            for move in referee.legal_moves(rules, position):
                after = referee.apply(rules, position, move)
                if after not in seen:
                    seen.add(after)
                    following.append(after)
        frontier = following
        layers.append(set(seen))
    return layers


def reachable_by_engine(rules: Rules, start: Position, depth: int) -> list[set[Position]]:
    """Positions reachable within 1..depth moves, by breadth-first search with the engine."""
    seen = {start}
    frontier = [start]
    layers = []
    for _ in range(depth):
        following = []
        for position in frontier:
            game = Game(rules, position)
            assert game.position() == position
            for code in game.legal_codes():
                game.play_code(int(code))
                after = game.position()
                game.undo()
                if after not in seen:
                    seen.add(after)
                    following.append(after)
        frontier = following
        layers.append(set(seen))
    return layers


def check_perft(rules: Rules, start: Position, depth: int, golden: tuple[int, ...]) -> None:
    by_engine = reachable_by_engine(rules, start, depth)
    by_referee = reachable_by_referee(rules, start, depth)
    for k in range(depth):
        if by_engine[k] != by_referee[k]:
            only_engine = len(by_engine[k] - by_referee[k])
            only_referee = len(by_referee[k] - by_engine[k])
            example = next(iter(by_engine[k] ^ by_referee[k]))
            pytest.fail(
                f"within {k + 1} moves: {only_engine} positions only the engine reaches, {only_referee} only the referee; "
                f"e.g.\n{example.to_text(reveal=True)}"
            )
    assert tuple(len(layer) for layer in by_referee) == golden[:depth]


@pytest.mark.parametrize(("variant", "deal"), list(GOLDEN_DEALS), ids=[f"{v}-{d}" for v, d in GOLDEN_DEALS])
def test_perft_from_deals(variant: str, deal: int) -> None:
    rules = find_variant(variant)
    check_perft(rules, make_deal(rules, deal).position, FAST_DEPTH, GOLDEN_DEALS[variant, deal])


@pytest.mark.parametrize("name", list(MID_RULES))
def test_perft_from_typed_positions(name: str) -> None:
    rules, text = MID_RULES[name]
    check_perft(rules, parse_position(text, rules), FAST_DEPTH_MID.get(name, FAST_DEPTH), GOLDEN_MID[name])


@pytest.mark.slow
@pytest.mark.parametrize(("variant", "deal"), list(GOLDEN_DEALS), ids=[f"{v}-{d}" for v, d in GOLDEN_DEALS])
def test_perft_from_deals_deeper(variant: str, deal: int) -> None:
    rules = find_variant(variant)
    check_perft(rules, make_deal(rules, deal).position, SLOW_DEPTH, GOLDEN_DEALS[variant, deal])


@pytest.mark.slow
@pytest.mark.parametrize("name", list(MID_RULES))
def test_perft_from_typed_positions_deeper(name: str) -> None:
    rules, text = MID_RULES[name]
    check_perft(rules, parse_position(text, rules), len(GOLDEN_MID[name]), GOLDEN_MID[name])


def test_typed_start_layouts() -> None:
    """The typed layouts parse for their rules: empty pile, face-down cards and cards home
    where intended, and PySol deal 24 as docs/rules.md, section "Layouts of the PySol source" prints it."""
    rules, text = MID_RULES["pysol-24"]
    assert parse_position(text, rules).to_text() == text.lstrip()
    for name in ("same-suit-mid", "alt-foundations-mid", "good-measure-alt-mid"):
        rules, text = MID_RULES[name]
        position = parse_position(text, rules)
        assert position.piles[-1] == (), name
        assert all(down >= 1 for down in position.face_down[:-1]) and position.cards_home >= 12, name
