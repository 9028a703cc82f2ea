"""The sampling player's plans (`strategies.sampling.plan`): a plan is legal on every completion of the table and
turns a card up only at its last move, a shifted plan line is a real win, and the player holds to its plan."""

from __future__ import annotations

import numpy as np
import pytest

from sim import engine as E
from sim.game import Game
from sim.position import Position
from sim.referee import replay_codes
from sim.rules import find_variant
from strategies import load_strategy
from strategies.base import StrategyError
from strategies.sampling import KEEP_BASE, PLAN_BASE, SEEN_SLOTS, draw_completion, sampling_policy, scratch_size
from strategies.sampling.keep import LINE_SLOTS
from strategies.sampling.plan import PLAN_SLOTS, plan_of, shift_plan
from strategies.solver.strategy import SCRATCH_SIZE, SolverStrategy
from tests.solver_helpers import hidden_decisions

DICK = find_variant("dick-1883")
CASTLES = find_variant("castles-in-spain")
PLANS = "sampling:samples=4,sample_nodes=500,candidates=2,shift=true,plans=true"


def _won_completions(rules, number, count, seed):
    """The table of deal ``number`` and up to ``count`` of its completions the solver wins, with their lines."""
    prm = E.rule_params(rules)
    st = Game.from_deal(rules, number).state_array()
    rng = np.array([seed, 0], dtype=np.uint64)
    pool = np.zeros(52, dtype=np.int64)
    solver = SolverStrategy(nodes=20_000)
    out = []
    for _ in range(3 * count):
        c = st.copy()
        draw_completion(st, prm, c, rng, pool)
        verdict, _, line, _ = solver.solve_state(rules, c, prm)
        if verdict == "won" and len(line) <= LINE_SLOTS:
            out.append((c, np.array(line, dtype=np.int64)))
        if len(out) == count:
            break
    return st, prm, out


@pytest.mark.parametrize("rules", (DICK, CASTLES), ids=lambda r: r.name)
def test_a_plan_is_legal_on_every_completion_and_turns_a_card_up_only_at_its_end(rules):
    plans = 0
    for number in range(1, 7):
        st, prm, won = _won_completions(rules, number, 4, number)
        moves = E.new_moves(prm)
        others = [c for c, _ in won]
        rng = np.array([number + 100, 0], dtype=np.uint64)
        pool = np.zeros(52, dtype=np.int64)
        for _ in range(4):  # and on completions nobody solved
            c = st.copy()
            draw_completion(st, prm, c, rng, pool)
            others.append(c)
        for c, line in won:
            plan = np.empty(LINE_SLOTS, dtype=np.int64)
            k = plan_of(c, prm, line, len(line), plan)
            assert 0 < k <= len(line) and np.array_equal(plan[:k], line[:k])
            plans += 1
            for other in [st] + others:  # st: the real deal itself
                s = other.copy()
                for a in range(k):
                    n = E.gen_moves(s, prm, moves)
                    assert plan[a] in moves[:n].tolist(), (number, a)
                    assert E.apply_move(s, prm, plan[a]) == (a == k - 1), (number, a)
    assert plans >= 10


def test_a_shifted_plan_line_is_a_real_win_and_is_refused_where_it_breaks_the_line():
    rules = DICK
    out = np.empty(LINE_SLOTS + 1, dtype=np.int64)
    tmp = np.empty(LINE_SLOTS, dtype=np.int64)
    shifted = refused = 0
    for number in range(1, 9):
        st, prm, won = _won_completions(rules, number, 4, 7 * number)
        mbuf = E.new_moves(prm)
        for c, line in won:
            for _, other in won:  # the plan of another completion's line
                k = plan_of(c, prm, other, len(other), tmp)
                if k == 0:
                    continue
                w = shift_plan(c, prm, line, len(line), tmp, k, out, mbuf)
                if w < 0:
                    refused += 1
                    continue
                shifted += 1
                assert np.array_equal(out[:k], tmp[:k])
                v = replay_codes(rules, Game(rules, _face_up(rules, c, prm)).start, out[:w].tolist())
                assert v.legal and v.won, number
    assert shifted > 5 and refused > 5, (shifted, refused)


def _face_up(rules, st, prm):
    """The completion st as a position with every card face up (the solver's view of it, for the referee)."""
    P = rules.columns
    piles = tuple(tuple(int(x) for x in st[E.pile_base(prm, p) : E.pile_base(prm, p) + int(st[p])]) for p in range(P))
    return Position(piles, (0,) * P, ((), (), (), ()))


@pytest.mark.parametrize("rules", (DICK, CASTLES), ids=lambda r: r.name)
def test_the_player_holds_to_its_plan_until_the_reveal(rules):
    """Through a game: a decision that leaves a plan in progress is followed by that plan's moves, none of them
    turning a card up but the last, with no solver nodes spent on them."""
    prm = E.rule_params(rules)
    s = load_strategy(PLANS)
    pp = s.compiled(rules).pparams
    moves = E.new_moves(prm)
    followed = 0
    for number in range(1, 7):
        st = Game.from_deal(rules, number).state_array()
        rng = np.array([5, 0], dtype=np.uint64)
        scratch = np.zeros(scratch_size(rules, s.params["samples"]), dtype=np.int64)
        for n in hidden_decisions(rules, prm, st, moves, 200):
            held = [int(m) for m in scratch[PLAN_BASE + 1 : PLAN_BASE + 1 + scratch[PLAN_BASE]]]
            nodes = int(scratch[E.SCRATCH_NODES])
            i = sampling_policy(st, prm, moves, n, pp, rng, scratch)
            if i < 0:
                break
            revealed = E.apply_move(st, prm, moves[i])
            if held:
                followed += 1
                assert int(moves[i]) == held[0]
                assert revealed == (len(held) == 1)
                assert int(scratch[E.SCRATCH_NODES]) == nodes
    assert followed > 5


def test_the_plan_has_its_own_scratch_slots():
    """After the solver's slots and the seen set, before the kept completions."""
    assert SCRATCH_SIZE + SEEN_SLOTS <= PLAN_BASE and PLAN_BASE + PLAN_SLOTS <= KEEP_BASE


def test_plans_take_no_move_vote_tiebreaks():
    for spec in (PLANS + ",tiebreak=nodes", PLANS + ",reveal=true"):
        with pytest.raises(StrategyError, match="plans=false"):
            load_strategy(spec)
