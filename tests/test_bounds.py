"""Every engine buffer is sized from bounds of the rules and the position: typed layouts with tall
piles, 1 to 52 piles, every rule, every strategy, both tiers, each game checked by the referee
(`tests.bounds_grid`); the same again with numba's bounds checking on."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from sim import engine as E
from sim.cards import DECK_SIZE
from sim.game import Game
from sim.position import LayoutError, Position, parse_position
from sim.rules import Rules, find_variant
from strategies import DealInfo, load_strategy
from strategies.batch import play_batch
from strategies.play import play_compiled
from tests import bounds_grid as G

GRID = G.grid()
TALL = list(G.tall_layouts())


def test_the_issue_layout_is_played_right_on_32_seeds():
    assert not G.issue_layout_seeds(32)


@pytest.mark.parametrize(("case", "rules", "position"), TALL, ids=[t[0] for t in TALL])
def test_tall_layouts_are_played_right_by_every_strategy(case, rules, position):
    assert not G.play_layout(case, rules, position, seeds=1)


@pytest.mark.parametrize("rules", GRID, ids=[r.name for r in GRID])
def test_extreme_rules_are_played_right_by_every_strategy(rules):
    assert not G.play_rules(rules, numbers=(1,))


def test_the_grid_covers_every_rule_value_and_shape():
    assert {r.columns for r in GRID} == {1, 2, 12, 26, 51, 52}
    assert {r.build for r in GRID} == {"any-suit", "other-suit", "alternate-colour", "same-suit"}
    assert {r.empty_fill for r in GRID} == {"none", "kings", "any"}
    assert {r.foundation for r in GRID} == {"suit", "alternate-colour"}
    assert {r.worrying_back for r in GRID} == {r.kings_to_bottom for r in GRID} == {True, False}
    assert any(r.face_down for r in GRID)


@pytest.mark.parametrize("tallest", [0, 1, 4, 17, 40, 52])
@pytest.mark.parametrize("piles", [1, 13, 52])
def test_sizes_follow_the_bounds(piles, tallest):
    rules = Rules(name="x", columns=piles, cards_per_column=DECK_SIZE // piles)
    prm = E.rule_params(rules, tallest)
    cap = max(tallest, rules.cards_per_column, 1) + 12
    assert prm[E.P_CAP] == cap and 0 <= prm[E.P_SIZE] - (E.offsets(piles).piles + piles * cap) < 8
    assert prm[E.P_SIZE] % 8 == 0
    assert prm[E.P_MOVES] == piles * (piles + 3) + 4 * piles and prm[E.P_MOVEBUF] >= prm[E.P_MOVES] + 14 + 2 * piles
    assert E.rule_params(rules)[E.P_SIZE] == E.rule_params(rules, rules.cards_per_column)[E.P_SIZE]


def test_a_dealt_game_is_no_bigger_than_before():
    prm = E.rule_params(Rules())
    assert prm[E.P_CAP] == 4 + 12 and Game.from_deal(Rules(), 1)._prm is prm


def test_a_typed_layout_gets_room_for_its_tallest_pile():
    rules = Rules()
    _, _, position = TALL[0]
    game = Game(rules, position)
    assert game._prm[E.P_CAP] == 17 + 12 and game.position() == position


def test_the_longest_possible_move_list_fits():
    """Every exposed card can go on every other pile and home; every foundation top can come back anywhere:
    52 piles of one card, a foundation of each colour filled to the queen... the bound is never exceeded."""
    rules = Rules(name="wide", columns=52, cards_per_column=1, empty_fill="any", worrying_back=True,
                  foundation="alternate-colour", kings_to_bottom=False)
    prm = E.rule_params(rules)
    rng = np.random.default_rng(0)
    most = 0
    for _ in range(20):
        deck = [int(c) for c in rng.permutation(DECK_SIZE)]
        game = Game(rules, Position(tuple((c,) for c in deck), (0,) * 52))
        for _ in range(200):
            codes = game.legal_codes()
            most = max(most, len(codes))
            if not len(codes):
                break
            game.play_code(int(codes[rng.integers(len(codes))]))
    assert 0 < most <= prm[E.P_MOVES]


def test_game_refuses_a_position_it_cannot_hold_in_one_line():
    rules = Rules()
    good = Game.from_deal(rules, 1).start
    bad = [
        Position(good.piles[:12], good.face_down[:12]),
        Position(good.piles, good.face_down[:12]),
        Position(good.piles, good.face_down, ((), (), ())),
        Position(good.piles[:-1] + (good.piles[-1] + good.piles[0][:1],), good.face_down),
        Position(good.piles[:-1] + (good.piles[-1] + (99,),), good.face_down),
        Position(good.piles[:-1] + ((True,),), good.face_down),
        Position(good.piles, (5,) + good.face_down[1:]),
        Position(good.piles[:-1] + ((),), good.face_down, ((), (), (), (good.piles[-1][1],))),
    ]
    for position in bad:
        with pytest.raises(LayoutError, match="allowed") as info:
            Game(rules, position)
        assert "\n" not in str(info.value)


def test_parse_position_accepts_every_full_deck_however_tall():
    bd = find_variant("bakers-dozen")
    for _case, rules, position in TALL:
        if rules == bd and not any(position.face_down):
            assert parse_position(position.to_text(), bd) == position


BOUNDSCHECK = textwrap.dedent("""
    import sys
    import numba as nb
    import numpy as np

    @nb.njit
    def poke(a, i):
        return a[i]

    try:
        poke(np.zeros(3), 7)
    except IndexError:
        print("boundscheck on")
    else:
        print("boundscheck OFF")
        sys.exit(3)
    from tests import bounds_grid
    sys.exit(bounds_grid.main())
""")


@pytest.mark.slow
def test_the_grid_and_tall_layouts_under_numba_boundscheck(tmp_path):
    env = {**os.environ, "NUMBA_BOUNDSCHECK": "1", "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache"),
           "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1]), os.environ.get("PYTHONPATH", "")])}
    # Compiling every kernel again with bounds checks is slow; the limit leaves room for a loaded machine (at load 7
    # it ran past 15 minutes, 2026-12-07) and still stops a hang.
    proc = subprocess.run([sys.executable, "-c", BOUNDSCHECK], capture_output=True, text=True, env=env, timeout=1800)
    assert proc.stdout.startswith("boundscheck on"), proc.stdout + proc.stderr
    assert proc.returncode == 0 and "bounds grid: 0 problem(s)" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_play_batch_grows_the_win_buffer_to_any_winning_line():
    """Random wins Spanish patience in hundreds of moves: a few wins overflow the first 1,024-slot buffer."""
    rules = find_variant("spanish-patience")
    numbers = np.arange(1, 9)
    batch = play_batch(rules, load_strategy("random"), numbers)
    assert (batch.outcome == 1).sum() >= 3 and batch.win_offsets[-1] > 1024
    for i, number in enumerate(numbers):
        rec = play_compiled(load_strategy("random"), Game.from_deal(rules, int(number)),
                            DealInfo(rules, int(number), 0, "default"))
        won = [m.code for m in rec.moves] if rec.outcome == "won" else []
        assert batch.win_moves[batch.win_offsets[i]: batch.win_offsets[i + 1]].tolist() == won
