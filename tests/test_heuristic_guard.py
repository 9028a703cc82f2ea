"""The heuristic's loop guard. Version 1 remembered positions by `position_hash`, a sum of (card,
height) keys that does not say which pile a card is in: a move of a card to another pile at its own
height looked like a return to the position it left, and was never played. Version 2 (``guard=cycle``)
hashes positions with their piles told apart (`placed_hash`) and never repeats a move from a position
until the game makes progress; ``guard=position`` keeps version 1's play (`lookahead`'s rollouts)."""

from __future__ import annotations

import numpy as np
import pytest

from sim.engine import FOUNDATION, P_PILES, down_at, move_from, move_to, pile_base, progress_mark
from sim.game import Game
from sim.rules import find_variant
from strategies import DealInfo, load_strategy
from strategies.batch import play_batch
from strategies.features import placed_hash, placed_moved_hash, position_hash
from strategies.play import play_compiled


def _games(variant: str, spec: str, deals: range):  # noqa: ANN202
    """(game at the start, moves played) of ``spec`` on each deal."""
    rules = find_variant(variant)
    for deal in deals:
        game = Game.from_deal(rules, deal)
        start = Game(rules, game.position())
        yield start, play_compiled(load_strategy(spec), game, DealInfo(rules, deal, 0, "default")).moves


@pytest.mark.parametrize("variant", ["bakers-dozen", "dick-1883", "good-measure"])
def test_the_placed_hash_follows_every_move_and_tells_positions_apart(variant: str) -> None:
    """`placed_moved_hash` gives the hash of the position a move leads to, card home or face-down card
    turned up included, and distinct positions of a game hash apart."""
    for each, moves in _games(variant, "heuristic", range(1, 61)):
        prm = each.rule_params
        hashes: dict[int, bytes] = {}
        for mv in moves:
            st = each.state_array()
            here = np.uint64(placed_hash(st, prm))
            hashes.setdefault(int(here), st.tobytes())
            assert hashes[int(here)] == st.tobytes()
            code = int(mv.code)
            src, dst = move_from(code), move_to(code)
            hs = int(st[src])
            c = int(st[pile_base(prm, src) + hs - 1])
            hd = 0 if dst >= FOUNDATION else int(st[dst])
            expected = placed_moved_hash(here, c, src, hs, int(st[down_at(prm[P_PILES], src)]), dst, hd)
            each.play(mv)
            assert int(expected) % 2**64 == int(placed_hash(each.state_array(), prm)) % 2**64


def test_version_2_plays_the_moves_version_1_took_for_a_return() -> None:
    """Moves whose `position_hash` equals the position's own (a card to another pile at its height): the
    position guard refused every one; the cycle guard plays them."""
    same = 0
    for each, moves in _games("bakers-dozen", "heuristic", range(1, 121)):
        for mv in moves:
            before = position_hash(each.state_array(), each.rule_params)
            each.play(mv)
            same += position_hash(each.state_array(), each.rule_params) == before
    assert same > 0
    for each, moves in _games("bakers-dozen", "heuristic:guard=position", range(1, 121)):
        for mv in moves:
            before = position_hash(each.state_array(), each.rule_params)
            each.play(mv)
            assert position_hash(each.state_array(), each.rule_params) != before


@pytest.mark.parametrize("variant", ["bakers-dozen", "dick-1883"])
def test_the_cycle_guard_never_repeats_a_move_before_progress(variant: str) -> None:
    for each, moves in _games(variant, "heuristic", range(1, 121)):
        taken: set[tuple[bytes, int]] = set()
        mark = progress_mark(each.state_array(), each.rule_params)
        for mv in moves:
            step = (each.state_array().tobytes(), int(mv.code))
            assert step not in taken
            taken.add(step)
            each.play(mv)
            now = progress_mark(each.state_array(), each.rule_params)
            if now != mark:
                mark, taken = now, set()


def test_the_cycle_guard_wins_far_more_deals_than_the_position_guard() -> None:
    """Deals 1-2,000 of Baker's Dozen: more than twice as many wins (well beyond noise)."""
    rules = find_variant("bakers-dozen")
    numbers = np.arange(1, 2001)
    wins = {g: int((play_batch(rules, load_strategy(f"heuristic:guard={g}"), numbers).outcome == 1).sum())
            for g in ("cycle", "position")}
    assert wins["cycle"] > 2 * wins["position"]
