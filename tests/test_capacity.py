"""The free-parking relaxation (`strategies.solver.capacity`): the compiled search gives the Python
reference's verdicts and state counts, it never calls a winnable position lost (positions along the
solver's winning lines), its losses agree with the solver, and it decides a deal the search cannot."""

from __future__ import annotations

import random

import pytest

from sim.cards import KING
from sim.deals import make_deal
from sim.game import Game
from sim.rules import Rules, find_variant
from strategies.solver.capacity import (
    CAPPED,
    LOST,
    WON,
    applies,
    free_parking,
    free_parking_reference,
    free_parking_state,
    relaxation_input,
)
from strategies.solver.strategy import SolverStrategy
from tests.solver_helpers import late_positions, random_walk, solver

VARIANTS = ("bakers-dozen", pytest.param("good-measure", marks=pytest.mark.slow))


def relaxed(g: Game, cap: int = 20_000) -> str:
    return free_parking_state(g.state_array(), g.rule_params, cap)[0]


def bases_home(g: Game) -> tuple[list[tuple[int, ...]], tuple[int, ...]]:
    """The relaxation's input for ``g``'s position: the piles' bases and the foundation heights."""
    return relaxation_input(g.state_array(), g.rule_params)


REDUCTIONS = ((True, True), (False, True), (True, False), (False, False))
"""(safe, exposed): the default, then each of the two off, then both."""


def agree(g: Game, caps: tuple[int, ...], reductions: tuple[tuple[bool, bool], ...] = REDUCTIONS[:1]) -> set[str]:
    """Assert that the compiled search and the reference agree on ``g`` under each cap and each setting of
    the reductions; the verdicts seen."""
    bases, home = bases_home(g)
    seen = set()
    for safe, exposed in reductions:
        for cap in caps:
            compiled = free_parking(bases, home, cap, safe, exposed)
            assert compiled == free_parking_reference(bases, home, cap, safe, exposed), (bases, home, cap, safe)
            seen.add(compiled[0])
    return seen


def starts_and_walks(rules: Rules, deals: range, walks: int, longest: int, rng: random.Random) -> list[Game]:
    """Each deal as dealt, then ``walks`` random walks of 5 to ``longest`` - 1 moves from it."""
    games = []
    for d in deals:
        g = Game.from_deal(rules, d)
        games.append(g.clone())
        for _ in range(walks):
            w = g.clone()
            random_walk(w, rng.randrange(5, longest), rng)
            games.append(w)
    return games


def test_compiled_agrees_with_the_reference():
    """Verdicts and state counts, so the same states in the same order (a cap cuts both at the same state):
    starts and random positions of both variants, and layouts whose configurations take one or two
    64-bit words (13 piles of 4; 26 of 2, 52 of 1) or wide base fields (4 piles of 13), and cards starting home."""
    rng = random.Random(5)
    verdicts = set()
    games = []
    for name in ("bakers-dozen", "good-measure"):
        games += starts_and_walks(find_variant(name), range(1, 41), 2, 80, rng)
    for columns, height, home in ((26, 2, ()), (52, 1, ()), (4, 13, ()), (7, 7, ("AC", "AD", "AH"))):
        rules = Rules(name=f"piles-{columns}", columns=columns, cards_per_column=height, start_home=home)
        for d in range(1, 11):
            g = Game.from_deal(rules, d)
            games.append(g.clone())  # as dealt: 26 x 2 and 52 x 1 take 69 bits, two words
            random_walk(g, rng.randrange(1, 20), rng)
            games.append(g)
    for i, g in enumerate(games):
        verdicts |= agree(g, (3_000, 150, 7), REDUCTIONS if i % 4 == 0 else REDUCTIONS[:1])
    assert verdicts == {WON, LOST, CAPPED}


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_reductions_only_tighten(variant):
    """With and without each reduction, on starts and random positions: the safe steps never change a
    finished verdict (they only drop orders of steps), and the exposure condition only turns relaxed wins
    into losses, never a loss into a win (it only removes steps). Both must see some losses the plain game
    does not for the comparison to mean anything."""
    games = starts_and_walks(find_variant(variant), range(1, 61), 3, 60, random.Random(17))
    tightened = compared = 0
    for g in games:
        bases, home = bases_home(g)
        plain, safe_only, exposed_only, both = (free_parking(bases, home, 200_000, sf, ex)[0]
                                                 for sf, ex in ((False, False), (True, False), (False, True),
                                                                (True, True)))
        if CAPPED in (plain, safe_only, exposed_only, both):
            continue  # a few good-measure positions take millions of states without the reductions
        compared += 1
        assert plain == safe_only and exposed_only == both
        assert plain == WON or both == LOST  # a plain loss stays a loss
        tightened += plain == WON and both == LOST
    assert compared >= 0.9 * len(games) and tightened > 0, (compared, tightened)


def test_compiled_agrees_on_good_measure_125():
    """The deal the search cannot decide: cut part way at many caps (the full proof is the slow test below)."""
    g = Game.from_deal(find_variant("good-measure"), 125)
    assert agree(g, (1, 2, 10, 99, 1_000, 4_321)) == {CAPPED}


def test_a_finished_game_is_won():
    done = ([()] * find_variant("bakers-dozen").columns, (KING + 1,) * 4)
    assert free_parking(*done, 10) == free_parking_reference(*done, 10) == (WON, 1)


def test_applies_only_where_the_argument_holds():
    assert applies(find_variant("bakers-dozen")) and applies(find_variant("good-measure"))
    for name in ("kings-into-empty", "spanish-patience", "other-suit", "castles-in-spain"):
        assert not applies(find_variant(name))
    assert not applies(find_variant("bakers-dozen").replace(worrying_back=True))


@pytest.mark.slow
@pytest.mark.parametrize("variant", VARIANTS)
def test_never_lost_along_a_winning_line(variant):
    rules = find_variant(variant)
    s = solver(nodes=200_000)
    checked = 0
    for d in range(1, 31):
        g = Game.from_deal(rules, d)
        verdict, _, line, _ = s.solve_state(rules, g.state_array())
        if verdict != "won":
            continue
        for i, code in enumerate(line):
            if i % 5 == 0:
                assert relaxed(g) != LOST, (d, i)
                checked += 1
            g.play_code(code)
    assert checked >= 300


@pytest.mark.parametrize("variant", VARIANTS)
def test_its_losses_are_losses(variant):
    """Positions off the winning lines (some lost): wherever the relaxation says lost, the solver never wins.

    Random lines of good-measure reach positions the relaxation proves lost; those of bakers-dozen hardly
    ever do, so there the positions of two lost PySol deals (64, 477) are added, which it proves lost too."""
    rules = find_variant(variant)
    s = solver(nodes=100_000)
    rng = random.Random(11)
    states = late_positions(rules, range(1, 16), 6, wander=12)
    starts = [Game.from_deal(rules, d) for d in range(1, 16)]
    if variant == "bakers-dozen":
        starts += [Game(rules, make_deal(rules, d, source="pysol").position) for d in (64, 477)]
    for g in starts:
        states += random_walk(g, 200, rng)[::10]
    verdicts = {WON: 0, LOST: 0, CAPPED: 0}
    prm = Game.from_deal(rules, 1).rule_params
    for st in states:
        v = free_parking_state(st, prm, 20_000)[0]
        verdicts[v] += 1
        if v == LOST:
            assert s.solve_state(rules, st, prm)[0] != "won"
    assert verdicts[WON] > 0 and verdicts[LOST] > 0, verdicts


def test_the_solver_stage_only_turns_unknown_into_lost():
    rules = find_variant("good-measure")
    plain, relaxing = solver(nodes=3_000), solver(nodes=3_000, capacity_states=3_000)
    for d in range(1, 25):
        st = Game.from_deal(rules, d).state_array()
        a, b = plain.solve_state(rules, st)[0], relaxing.solve_state(rules, st)[0]
        assert a == b or (a == "unknown" and b == "lost"), d


@pytest.mark.slow
def test_good_measure_125_is_lost():
    """Unknown to the search at the default budget; the relaxation proves it lost, alone and as the
    solver's stage."""
    rules = find_variant("good-measure")
    g = Game.from_deal(rules, 125)
    assert relaxed(g, cap=200_000) == LOST
    bases, home = bases_home(g)
    assert free_parking(bases, home, 200_000) == free_parking_reference(bases, home, 200_000) == (LOST, 18_107)
    plain = free_parking(bases, home, 200_000, safe=False, exposed=False)
    assert plain == free_parking_reference(bases, home, 200_000, safe=False, exposed=False) == (LOST, 45_634)
    assert solver(nodes=2_000).solve_state(rules, g.state_array())[0] == "unknown"
    assert solver(nodes=2_000, capacity_states=200_000).solve_state(rules, g.state_array())[0] == "lost"


def test_good_measure_733_is_lost_only_when_cards_move_exposed():
    """The layered prover needs 11.5 million positions to prove deal 733 lost (docs/performance.md); the
    relaxation counting holders alone wins it, and with the exposure condition proves it lost."""
    g = Game.from_deal(find_variant("good-measure"), 733)
    bases, home = bases_home(g)
    assert free_parking(bases, home, 100_000) == free_parking_reference(bases, home, 100_000) == (LOST, 9_875)
    assert free_parking(bases, home, 100_000, exposed=False)[0] == WON


@pytest.mark.slow
def test_bakers_dozen_2492_is_lost_once_a_card_goes_home_bare():
    """No search here (900 million positions) or layered proof finished deal 2492. With every base top moving
    bare, home as well as parked, and parked only onto a free holder, the relaxation proves it lost; without
    those conditions it is a relaxed win; and the solver at its defaults proves it lost with that stage."""
    rules = find_variant("bakers-dozen")
    g = Game.from_deal(rules, 2492)
    bases, home = bases_home(g)
    assert free_parking(bases, home, 2_000_000) == (LOST, 1_999_104)
    assert free_parking(bases, home, 2_000_000, exposed=False)[0] == WON
    assert SolverStrategy().solve_state(rules, g.state_array())[0] == "lost"


def test_the_relaxation_runs_once_after_capacity_after_nodes():
    """Good-measure 125: the searches cannot decide it, the relaxation proves it lost in 18,107 states. Run
    after 2,000 nodes of search it saves the rest of the budget; run after all of it (``capacity_after`` at
    least ``nodes``), it comes last; either way it runs once and its states are counted with the nodes."""
    rules = find_variant("good-measure")
    st = Game.from_deal(rules, 125).state_array()
    early = solver(nodes=100_000, restart_nodes=1_000, capacity_states=100_000, capacity_after=2_000)
    late = solver(nodes=100_000, restart_nodes=1_000, capacity_states=100_000, capacity_after=100_000)
    v_early, n_early, _, _ = early.solve_state(rules, st)
    v_late, n_late, _, _ = late.solve_state(rules, st)
    assert v_early == v_late == "lost"
    # the Luby units 1, 1 of 1,000 nodes (a search may pass its budget by a node), then the relaxation
    assert 2_000 <= n_early - 18_107 < 2_010
    assert 100_000 <= n_late - 18_107 < 100_100
    assert solver(nodes=100_000, restart_nodes=1_000).solve_state(rules, st)[0] == "unknown"


READY = """
import sim
from sim.rules import find_variant
from strategies.solver.capacity import _search
from strategies.solver.strategy import SolverStrategy
SolverStrategy(capacity_states={states}).ready(find_variant({variant!r}))
print(len(_search.signatures))
"""


@pytest.mark.parametrize(("variant", "states", "compiled"), [("good-measure", 5_000_000, 1),
                                                            ("good-measure", 0, 0), ("spanish-patience", 5_000_000, 0)])
def test_a_readied_solver_has_the_relaxation_compiled_where_it_can_run(variant, states, compiled):
    """`SolverStrategy.ready` (a worker readying a run) compiles the relaxation that `decide` calls from object
    mode, in a fresh process, only where a deal can reach it (it applies and has states to run)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", READY.format(variant=variant, states=states)], capture_output=True,
                         text=True, check=True)
    assert out.stdout.split()[-1] == str(compiled)
