"""The free-parking relaxation as a cut inside the search (`strategies.solver.relax_cut`): its configuration
is the relaxation's, inner moves keep it, a configuration it cuts is lost, its kept set never changes a
verdict the relaxation reaches alone, and the searches with and without it never disagree."""

from __future__ import annotations

import random

import numpy as np
import pytest

from sim.engine import P_PILES, apply_move, gen_moves, new_moves
from sim.game import Game
from sim.rules import find_variant
from strategies.solver.capacity import CAPPED, LOST, base_lengths, free_parking_state, relaxation_input
from strategies.solver.relax_cut import (
    KEPT_CALLS,
    KS_ROOT,
    KS_USED,
    RW_STATE,
    config_lost,
    keeps_configuration,
    renumber_root,
)
from strategies.solver.search import SolverWork
from tests.solver_helpers import late_positions, random_walk, solver

VARIANTS = ("bakers-dozen", "good-measure")


def walk_positions(variant: str, deals: range, walks: int, steps: int, seed: int) -> list[tuple[int, np.ndarray]]:
    """(deal, state) along random walks from each deal as dealt, the start included."""
    rules = find_variant(variant)
    rng = random.Random(seed)
    out = []
    for d in deals:
        start = Game.from_deal(rules, d)
        out.append((d, start.state_array()))
        for _ in range(walks):
            g = start.clone()
            out += [(d, st) for st in random_walk(g, steps, rng)]
    return out


@pytest.mark.parametrize("variant", VARIANTS)
def test_base_lengths_are_the_split(variant):
    prm = Game.from_deal(find_variant(variant), 1).rule_params
    L = np.zeros(int(prm[P_PILES]), dtype=np.int64)
    for _, st in walk_positions(variant, range(1, 6), 4, 60, seed=3):
        base_lengths(st, prm, L)
        assert L.tolist() == [len(b) for b in relaxation_input(st, prm)[0]]


@pytest.mark.parametrize("variant", VARIANTS)
def test_inner_moves_keep_the_configuration_and_the_others_change_it(variant):
    prm = Game.from_deal(find_variant(variant), 1).rule_params
    moves = new_moves(prm)
    inner = other = 0
    for _, st in walk_positions(variant, range(1, 6), 4, 60, seed=5):
        before = relaxation_input(st, prm)
        for m in moves[:gen_moves(st, prm, moves)].tolist():
            keeps = keeps_configuration(st, prm, m)
            after = st.copy()
            apply_move(after, prm, m)
            assert (relaxation_input(after, prm) == before) == keeps, (st.tolist(), m)
            inner += keeps
            other += not keeps
    assert inner > 100 and other > 100, (inner, other)


@pytest.mark.parametrize("variant", VARIANTS)
def test_what_it_cuts_is_lost_and_it_loses_nothing_the_relaxation_finds(variant):
    """Positions of random walks and near the end of winning lines, asked in turn with one kept set per deal
    (as one root's search asks): a configuration it calls lost is one the relaxation alone, with far more
    states, never wins; a configuration the relaxation alone proves lost within the cut's states it calls
    lost too (the kept set only skips configurations already proven lost)."""
    rules = find_variant(variant)
    prm = Game.from_deal(rules, 1).rule_params
    work = SolverWork(prm, 0.01, max_depth=64, relax_states=2_000)
    positions = walk_positions(variant, range(1, 9), 6, 80, seed=7)
    positions += [(1000 + i, st) for i, st in enumerate(late_positions(rules, range(1, 9), 3, wander=10))]
    cut = 0
    for deal, st in positions:
        lost = config_lost(st, prm, work.rmemo, work.rtable, work.rwork, 2_000, deal)
        alone, states = free_parking_state(st, prm, 2_000)
        if alone == LOST:
            assert lost, (deal, st.tolist())
        if lost:
            cut += 1
            assert free_parking_state(st, prm, 200_000)[0] in (LOST, CAPPED), (deal, st.tolist())
    assert cut >= 5, cut


def test_the_kept_set_belongs_to_one_root_and_its_states_are_bounded():
    rules = find_variant("good-measure")
    prm = Game.from_deal(rules, 1).rule_params
    work = SolverWork(prm, 0.01, max_depth=64, relax_states=100)
    ks = work.rwork[RW_STATE]
    for deal, st in walk_positions("good-measure", range(1, 4), 10, 40, seed=9):
        config_lost(st, prm, work.rmemo, work.rtable, work.rwork, 100, deal)
        assert ks[KS_ROOT] == deal and ks[KS_USED] <= KEPT_CALLS * 100
    assert work.rtable.shape[0] >= 2 * KEPT_CALLS * 100  # at most half full


def test_renumbering_keeps_the_roots_verdicts_only():
    """When generations start again the root being decided keeps its remembered verdicts and kept set, as
    root 1; another root's are dropped."""
    rules = find_variant("good-measure")
    prm = Game.from_deal(rules, 1).rule_params
    work = SolverWork(prm, 0.01, max_depth=64, relax_states=100)
    ks, tag = work.rwork[RW_STATE], work.rmemo.shape[1] - 1
    positions = [st for _, st in walk_positions("good-measure", range(2, 3), 5, 30, seed=4)]
    for _, st in walk_positions("good-measure", range(1, 2), 5, 30, seed=3):
        config_lost(st, prm, work.rmemo, work.rtable, work.rwork, 100, 7)
    verdicts = [config_lost(st, prm, work.rmemo, work.rtable, work.rwork, 100, 9) for st in positions]
    used = ks[KS_USED]
    assert (work.rmemo[:, tag] >> 1 == 7).any()
    renumber_root(work.rmemo, work.rwork, 9, 1)
    assert not (work.rmemo[:, tag] >> 1 == 7).any() and not (work.rmemo[:, tag] >> 1 == 9).any()
    assert ks[KS_ROOT] == 1
    assert [config_lost(st, prm, work.rmemo, work.rtable, work.rwork, 100, 1) for st in positions] == verdicts
    assert ks[KS_USED] == used  # answered from the memo: nothing searched again
    renumber_root(work.rmemo, work.rwork, 0, 1)
    assert not work.rmemo.any() and ks[KS_ROOT] == 0


def test_good_measure_675_falls_to_the_cut():
    """Lost, but the searches alone need 531,520 nodes (CHANGELOG.md, solver version 3); with the cut from the first
    node a few thousand suffice."""
    rules = find_variant("good-measure")
    st = Game.from_deal(rules, 675).state_array()
    assert solver(nodes=5_000).solve_state(rules, st)[0] == "unknown"
    assert solver(nodes=5_000, relax_states=1_000, relax_after=0).solve_state(rules, st)[0] == "lost"


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_searches_with_and_without_the_cut_never_disagree(variant):
    """Deals as dealt and positions near the end of winning lines, some of them lost: a verdict with the cut
    (from the first node) is the verdict without it wherever both decide, and every deal it wins is won by
    playing its line."""
    rules = find_variant(variant)
    plain = solver(nodes=30_000)
    cutting = solver(nodes=30_000, relax_states=2_000, relax_after=0)
    prm = Game.from_deal(rules, 1).rule_params
    cases = [(d, Game.from_deal(rules, d).state_array()) for d in range(1, 41)]
    cases += [(None, st) for st in late_positions(rules, range(1, 11), 4, wander=12)]
    decided = {"won": 0, "lost": 0, "unknown": 0}
    for deal, st in cases:
        a = plain.solve_state(rules, st, prm)[0]
        b, _, line, _ = cutting.solve_state(rules, st, prm)
        if "unknown" not in (a, b):
            assert a == b, st.tolist()
        if b == "won" and deal is not None:
            g = Game.from_deal(rules, deal)
            for code in line:
                g.play_code(code)
            assert g.is_won, deal
        decided[b] += 1
    assert decided["won"] > 20 and decided["lost"] > 0, decided
