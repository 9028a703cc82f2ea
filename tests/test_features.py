"""The table of needs that `heuristic` and `lookahead` keep in their scratch: it is refilled
only when the foundations change, so a reused table must always equal a fresh one."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim import engine as E
from sim.cards import DECK_SIZE
from sim.game import Game
from sim.rules import VARIANTS, Rules
from strategies import features as F


def _expected(game: Game) -> list[int]:
    """Each card's need computed from the foundation heights alone (the rules' meaning)."""
    heights = [game.view().home_height(f) for f in range(4)]
    needs = []
    for suit in range(4):
        done = heights[suit] if game.rules.foundation == "suit" else min(heights)
        needs += [max(r - done, 0) for r in range(13)]
    return needs


def _rules() -> list[Rules]:
    return [v.rules for v in VARIANTS] + [Rules(name="alt-home", foundation="alternate-colour")]


@pytest.mark.parametrize("rules", _rules(), ids=lambda r: r.name)
def test_a_reused_table_of_needs_equals_a_fresh_one_along_a_game(rules: Rules) -> None:
    for number in (1, 2, 3):
        game = Game.from_deal(rules, number)
        scratch = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)  # reused, as a game's scratch is
        for step in range(120):
            F.fill_needs(game.state_array(), game.rule_params, F.needs_of(scratch))
            assert scratch[F.NEEDS_OFFSET : F.NEEDS_OFFSET + DECK_SIZE].tolist() == _expected(game)
            moves = game.legal_moves()
            if not moves:
                break
            back = [m for m in moves if m.from_foundation]
            home = [m for m in moves if m.to_foundation]
            # cards go home and come back, so the table must follow the foundations both ways
            pick = back if back and step % 5 == 4 else home if home and step % 3 else moves
            game.play(pick[(number + step) % len(pick)])


@pytest.mark.parametrize("foundation", ["suit", "alternate-colour"])
def test_every_foundation_state_has_its_own_stamp(foundation: str) -> None:
    prm = E.rule_params(Rules(name="stamps", foundation=foundation))
    st = E.new_state(prm)
    P = int(prm[E.P_PILES])
    stamps = set()
    for heights in itertools.product(range(14), repeat=4):
        for f, h in enumerate(heights):
            st[E.fheight_at(P, f)] = h
        stamps.add(int(F.needs_stamp(st, prm)))
    assert len(stamps) == 14**4 and 0 not in stamps
    other = E.rule_params(Rules(name="other", foundation="suit" if foundation != "suit" else "alternate-colour"))
    st[:] = 0
    assert F.needs_stamp(st, prm) != F.needs_stamp(E.new_state(other), other)
