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


def _entry_by_hand(game: Game, p: int, k: int) -> tuple[int, int, bool, bool]:
    """A pile's (buried urgency, exposed need, misplaced, frees home) from the view and the rules' words."""
    view, needs = game.view(), _expected(game)
    st, prm = game.state_array(), game.rule_params
    base = E.offsets(int(prm[E.P_PILES])).pile(p, int(prm[E.P_CAP]))
    cards = [int(c) for c in st[base : base + int(st[E.Offsets.height(p)])]]  # face-down ones too: k says which are unseen
    h = len(cards)
    below = F.UNKNOWN_NEED * 16 + (h - k) if k > 0 else F.FAR
    for i in range(k, h - 1):
        below = min(below, needs[cards[i]] * 16 + (h - 1 - i))
    top = needs[cards[-1]] if h else 13
    seen_under = h >= 2 and h - 2 >= k
    misplaced = h >= 2 and (not seen_under or not E.builds_on(cards[-1], cards[-2], game.rule_params[E.P_BUILD]))
    frees = seen_under and view.home_slot(cards[-2]) >= 0
    return below, top, misplaced, frees


@pytest.mark.parametrize("rules", _rules(), ids=lambda r: r.name)
def test_a_pile_entry_says_what_the_pile_holds(rules: Rules) -> None:
    for number in (1, 2):
        game = Game.from_deal(rules, number)
        scratch = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)
        for step in range(60):
            st, prm = game.state_array(), game.rule_params
            F.fill_needs(st, prm, F.needs_of(scratch))
            for p in range(rules.columns):
                down = int(st[E.down_at(rules.columns, p)])
                for k in {down, 0, max(down - 1, 0)}:  # lookahead passes the face-down counts it was shown
                    e = int(F.pile_entry(st, prm, p, k, F.needs_of(scratch)))
                    got = (F.entry_below(e), F.entry_top_need(e), bool(e & F.ENTRY_MISPLACED), bool(e & F.ENTRY_FREES_HOME))
                    assert e & F.ENTRY_VALID and got == _entry_by_hand(game, p, k), (number, step, p, k)
            moves = game.legal_moves()
            if not moves:
                break
            game.play(moves[(number * 7 + step) % len(moves)])


@pytest.mark.parametrize("rules", _rules(), ids=lambda r: r.name)
@pytest.mark.parametrize("preset", ["cautious", "builder"])
def test_the_heuristic_keeps_no_stale_pile_entry(rules: Rules, preset: str) -> None:
    """After each decision every pile entry the heuristic keeps equals a fresh one: the cache
    follows tableau moves, cards going home, face-down cards turning up."""
    from strategies.heuristic import HeuristicStrategy, heuristic_policy

    pparams = HeuristicStrategy(preset=preset).compiled(rules).pparams
    checked = 0
    for number in (1, 2, 3, 4):
        game = Game.from_deal(rules, number)
        prm = game.rule_params
        scratch = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)
        fresh = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)
        rng, buf = np.zeros(2, dtype=np.uint64), E.new_moves(prm)
        st = game.state_array()
        while True:
            n = E.gen_moves(st, prm, buf)
            i = heuristic_policy(st, prm, buf, n, pparams, rng, scratch) if n else -1
            if i < 0:
                break
            F.fill_needs(st, prm, F.needs_of(fresh))
            for p in range(rules.columns):
                kept = scratch[F.PILES_OFFSET + p]
                if kept:
                    k = np.int64(st[E.down_at(rules.columns, p)])
                    assert kept == F.pile_entry(st, prm, p, k, F.needs_of(fresh)), (number, p)
                    checked += 1
            E.apply_move(st, prm, buf[i])
    assert checked > 0


@pytest.mark.parametrize("rules", _rules() + [Rules(name="worry", worrying_back=True, face_down=2)], ids=lambda r: r.name)
def test_the_child_hash_is_the_hash_of_the_position_the_move_leads_to(rules: Rules) -> None:
    """`child_hash` (and `moved_hash` under it) equals `position_hash` after the move, for every
    legal move along a few games: moves home, back from a foundation, turning a face-down card."""
    checked = 0
    for number in (1, 2, 3):
        game = Game.from_deal(rules, number)
        prm = game.rule_params
        for step in range(80):
            st = game.state_array()
            here = np.uint64(F.position_hash(st, prm))
            moves = game.legal_moves()
            if not moves:
                break
            for m in moves:
                after = st.copy()
                E.apply_move(after, prm, m.code)
                assert F.child_hash(st, prm, here, m.code) == F.position_hash(after, prm), (number, step, m)
                checked += 1
            game.play(moves[(number * 5 + step) % len(moves)])
    assert checked > 100


def test_remember_and_visited_keep_a_set_of_hashes_until_three_quarters_full() -> None:
    scratch = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)
    kept = [np.uint64(x * 0x9E3779B97F4A7C15 % 2**64) for x in range(1, F.VISITED_SLOTS)]
    room = F.VISITED_LIMIT
    assert F.remember(scratch, kept[0]) and F.remember(scratch, kept[0])  # a second time: no new slot
    assert scratch[F.SCRATCH_STORED] == 1
    for i, h in enumerate(kept):
        assert F.remember(scratch, h) == (i < room)
    assert scratch[F.SCRATCH_STORED] == room
    assert all(F.visited(scratch, h) for h in kept[:room])
    assert not any(F.visited(scratch, h) for h in kept[room:])



@pytest.mark.parametrize("spec, deals", (("heuristic", 200), ("lookahead", 40)))
def test_games_of_the_strategies_that_remember_positions_stay_far_below_the_tables_limit(spec, deals) -> None:
    """`heuristic` and `lookahead` resign once they have seen `VISITED_LIMIT` positions in a game; their
    games must stay far below it, or that limit, not their play, would decide games."""
    from sim.rules import find_variant
    from strategies import load_strategy
    from strategies.batch import play_batch

    longest = 0
    for name in ("bakers-dozen", "good-measure", "dick-1883", "spanish-patience", "kings-into-empty"):
        result = play_batch(find_variant(name), load_strategy(spec), np.arange(1, deals + 1))
        longest = max(longest, int(result.moves.max()))
    assert 50 < longest < F.VISITED_LIMIT // 2

def _reference_counts(function, *args) -> int:  # noqa: ANN001
    """How many reference-count calls numba leaves in the body of a fresh (uncached) compile of
    ``function`` for ``args``: cached code keeps no LLVM to read."""
    import numba as nb

    fresh = nb.njit(function.py_func)
    fresh(*args)
    count, inside = 0, False
    for line in next(iter(fresh.inspect_llvm().values())).splitlines():
        if line.startswith("define"):
            inside = function.py_func.__name__ in line and "cpython" not in line and "cfunc" not in line
        elif inside:
            count += "@NRT_incref" in line or "@NRT_decref" in line
    return count


def test_the_heuristic_reads_piles_and_needs_without_reference_counts() -> None:
    """`suit_entry_at`, `fill_needs_at` and `needs_stamp` run for every decision of `heuristic`: numba
    prunes every count in them (one exit, no call, the last read of each array on every path), which
    keeps the heuristic within 3x of greedy. A change that brings a count back fails here."""
    rules = Rules(name="alt-home", foundation="alternate-colour")
    game = Game.from_deal(rules, 1)
    st, prm = game.state_array(), game.rule_params
    scratch = np.zeros(F.SCRATCH_WITH_VISITED, dtype=np.int64)
    assert _reference_counts(F.needs_stamp, st, prm) == 0
    assert _reference_counts(F.fill_needs_at, st, prm, scratch, F.NEEDS_OFFSET) == 0
    assert _reference_counts(F.suit_entry_at, st, prm, 0, 0, scratch, F.NEEDS_OFFSET) == 0
