"""Volume check of the engine by the referee: thousands of whole games per variant,
played by compiled policies, replayed move by move by the independent referee,
which must find every move legal and reach the same final position and outcome."""

from __future__ import annotations

import pytest

from sim.game import Game
from sim.referee import replay
from sim.rules import VARIANTS, Rules
from strategies import DealInfo, load_strategy
from strategies.play import play_compiled

RULE_SETS = tuple(v.rules for v in VARIANTS) + (
    Rules(name="worrying-any-fill", kings_to_bottom=False, empty_fill="any", worrying_back=True),
    Rules(name="alt-foundations", foundation="alternate-colour", build="alternate-colour", face_down=1, empty_fill="kings"),
)


def check(rules: Rules, spec: str, numbers: range) -> None:
    """Play and referee each deal."""
    for number in numbers:
        game = Game.from_deal(rules, number)
        record = play_compiled(load_strategy(spec), game, DealInfo(rules, number, 0, "default"))
        verdict = replay(rules, game.start, record.moves)
        assert verdict.legal, f"{rules.name} deal {number} {spec}: {verdict.reason}"
        assert verdict.final == game.position(), f"{rules.name} deal {number} {spec}: final positions differ"
        assert verdict.won == (record.outcome == "won") and verdict.cards_home == record.cards_home


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.name)
def test_referee_accepts_compiled_games(rules):
    check(rules, "heuristic", range(1, 151))
    check(rules, "random:home_first=true", range(1, 6))


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: r.name)
def test_referee_accepts_thousands_of_compiled_games(rules):
    check(rules, "heuristic", range(151, 2151))
    check(rules, "greedy", range(1, 501))
    check(rules, "random:home_first=true", range(6, 106))
