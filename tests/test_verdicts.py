"""Verdicts that are exact and do not depend on the machine: the solver's stored row carries its own verdict
and its whole line (however long between two cards home), a wall-clock stop is stored as ``timeout`` and
never as ``unknown`` at budget, and a node budget gives the same verdicts and nodes under load as idle."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sim import engine as E
from sim.cards import DECK_SIZE
from sim.deals import make_deal
from sim.game import Game
from sim.rules import BUILDS, EMPTY_FILLS, FOUNDATIONS, Rules, find_variant
from strategies.base import DealInfo
from strategies.play import play_compiled, play_python
from strategies.solver.strategy import SolverStrategy
from studies.reading import read_table
from studies.solving import solve_deals

EIGHT_BY_SIX = Rules(name="eight-by-six", columns=8, cards_per_column=6, kings_to_bottom=False, empty_fill="any",
                     start_home=("AC", "AD", "AH", "AS"))
"""A variant a new user writes: 8 piles of 6, the aces home, any card into a space. Its deal 1529 is won by a
line of 1,688 moves, found in about 20,000 nodes, with more than `sim.engine.NO_PROGRESS_LIMIT` moves between
two cards home."""
LONG_DEAL = 1529
SMALL = {"tt_mb": 8.0, "seconds": 1e6}
"""A small table, and no wall-clock cap: the node budget alone decides."""


def _stored(store, result, columns):  # noqa: ANN001, ANN202
    last = result.first + result.deals - 1
    return read_table(store, key=result.key, deals=(result.first, last), columns=columns).to_pylist()


def test_a_won_line_longer_than_the_no_progress_guard_is_stored_won_with_its_whole_line(tmp_path):
    verdict, nodes, line, _ = SolverStrategy(**SMALL).solve_position(
        EIGHT_BY_SIX, make_deal(EIGHT_BY_SIX, LONG_DEAL).position)
    assert verdict == "won" and len(line) > E.NO_PROGRESS_LIMIT
    rows, result = solve_deals(EIGHT_BY_SIX, SMALL, LONG_DEAL, LONG_DEAL, store=tmp_path / "s", jobs=1)
    assert (rows[0]["verdict"], rows[0]["verified"], rows[0]["nodes"], rows[0]["moves"]) == ("won", True, nodes,
                                                                                              len(line))
    (stored,) = _stored(tmp_path / "s", result, ["termination", "win_moves", "cards_home"])
    assert stored["termination"] == "won" and stored["cards_home"] == DECK_SIZE
    assert stored["win_moves"] == line


@pytest.mark.parametrize("play", [play_python, play_compiled], ids=["python", "compiled"])
def test_both_tiers_play_a_long_proven_line_to_the_win(play):
    game = Game.from_deal(EIGHT_BY_SIX, LONG_DEAL)
    record = play(SolverStrategy(**SMALL), game, DealInfo(EIGHT_BY_SIX, LONG_DEAL, 0, "default"))
    assert (record.outcome, record.termination, record.cards_home) == ("won", "won", DECK_SIZE)
    assert len(record.moves) > E.NO_PROGRESS_LIMIT


def test_every_line_the_solver_can_find_fits_the_guards_allowance_and_the_game_record():
    """The longest line (`strategies.solver.search.SolverWork`'s line buffer at the deepest search allowed)
    is within the moves the guard leaves uncounted, and every game, counted moves too, fits the record."""
    deepest = SolverStrategy.PARAMETERS["depth"].maximum
    assert 2 * deepest + DECK_SIZE <= E.MAX_PROVEN_LINE
    assert E.MAX_GAME_LENGTH >= E.MAX_PROVEN_LINE + (2 * DECK_SIZE + 1) * (E.NO_PROGRESS_LIMIT + 1)


LAYOUTS = [(13, 4, ()), (10, 5, ("AC", "AD")), (8, 6, ("AC", "AD", "AH", "AS")), (12, 4, ("AC", "AD", "AH", "AS")),
           (16, 3, ("AC", "AD", "AH", "AS")), (6, 8, ("AC", "AD", "AH", "AS"))]


@st.composite
def rule_sets(draw) -> Rules:  # noqa: ANN001
    columns, per_column, home = draw(st.sampled_from(LAYOUTS))
    return Rules(name="random-rules", columns=columns, cards_per_column=per_column,
                 kings_to_bottom=draw(st.booleans()), face_down=draw(st.integers(0, min(per_column - 1, 3))),
                 build=draw(st.sampled_from(BUILDS)), empty_fill=draw(st.sampled_from(EMPTY_FILLS)),
                 foundation=draw(st.sampled_from(FOUNDATIONS)), start_home=home, worrying_back=draw(st.booleans()))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(rules=rule_sets(), deal=st.integers(1, 5000), nodes=st.integers(200, 40_000),
       stages=st.sampled_from([{"capacity_states": 0, "relax_states": 0},
                               {"capacity_states": 3000, "capacity_after": 1000, "relax_states": 500,
                                "relax_after": 2000}]))
def test_solves_stored_verdict_is_solve_positions(tmp_path_factory, rules, deal, nodes, stages):
    params = {**SMALL, "nodes": nodes, **stages}
    verdict, used, line, _ = SolverStrategy(**params).solve_position(rules, make_deal(rules, deal).position)
    rows, _ = solve_deals(rules, params, deal, deal, store=tmp_path_factory.mktemp("s"), jobs=1)
    (row,) = rows
    assert row["verdict"] == verdict
    if Game.from_deal(rules, deal).legal_moves():  # with no move at the start the engine ends the game unsearched
        assert row["nodes"] == used
    if verdict == "won":
        assert (row["moves"], row["verified"]) == (len(line), True)


HARD = (find_variant("good-measure"), 983)
"""A deal no search of the default budget decides: any small time cap stops it first."""


def test_a_deal_the_seconds_cap_stops_is_stored_as_timeout_and_one_out_of_nodes_as_unknown(tmp_path):
    rules, deal = HARD
    capped = {**SMALL, "nodes": 10**9, "seconds": 0.01, "capacity_states": 0}
    budget = {**SMALL, "nodes": 2000, "capacity_states": 0}
    for params, termination in ((capped, "timeout"), (budget, "undecided")):
        rows, result = solve_deals(rules, params, deal, deal, store=tmp_path / termination, jobs=1)
        assert rows[0]["verdict"] == "unknown"
        (stored,) = _stored(tmp_path / termination, result, ["termination", "outcome"])
        assert (stored["outcome"], stored["termination"]) == ("unknown", termination)


def test_the_python_tier_stores_the_seconds_cap_as_timeout_too():
    rules, deal = HARD
    record = play_python(SolverStrategy(**{**SMALL, "nodes": 10**9, "seconds": 0.01, "capacity_states": 0}),
                         Game.from_deal(rules, deal), DealInfo(rules, deal, 0, "default"))
    assert (record.outcome, record.termination, record.error) == ("unknown", "timeout", None)


class Burners:
    """Processes that spin on every core while the block runs."""

    def __enter__(self) -> Burners:
        import os

        self.procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                      for _ in range(max(2, os.cpu_count() or 2))]
        time.sleep(0.3)
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.kill()
            p.wait()


def test_a_node_budget_gives_the_same_verdicts_and_nodes_under_heavy_load_as_idle(tmp_path):
    rules = find_variant("good-measure")
    params = {**SMALL, "nodes": 60_000, "relax_after": 10_000, "capacity_after": 30_000, "capacity_states": 20_000}
    idle, _ = solve_deals(rules, params, 1, 12, store=tmp_path / "idle", jobs=1)
    with Burners():
        loaded, _ = solve_deals(rules, params, 1, 12, store=tmp_path / "loaded", jobs=1)
    assert [(r["verdict"], r["nodes"], r["moves"]) for r in loaded] == [(r["verdict"], r["nodes"], r["moves"])
                                                                        for r in idle]
    assert {r["verdict"] for r in idle} >= {"won", "unknown"}  # the budget decides some deals and not others


def test_the_default_node_budget_binds_before_the_default_seconds_cap_under_load():
    """The default cap, at the rate this machine searches a hard deal with every core busy besides, leaves
    room for the default node budget: the budget, not the clock, decides which deals stay unknown."""
    rules, deal = HARD
    defaults = SolverStrategy.PARAMETERS
    probe = SolverStrategy(**{**SMALL, "nodes": 100_000, "capacity_states": 0})
    state = Game.from_deal(rules, deal)
    with Burners():
        start = time.perf_counter()
        verdict, nodes, _, _ = probe.solve_state(rules, state.state_array(), state.rule_params)
        rate = nodes / (time.perf_counter() - start)
    assert verdict == "unknown" and nodes >= 100_000
    assert defaults["seconds"].default * rate >= defaults["nodes"].default


def _overloads() -> dict[int, int]:
    """How many compiled versions each of the project's numba functions holds (compiled or loaded from the cache)."""
    from numba.core.dispatcher import Dispatcher

    counts = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("sim", "strategies"):
            for value in vars(module).values():
                if isinstance(value, Dispatcher):
                    counts[id(value)] = len(value.overloads)
    return counts


def test_no_deal_pays_for_a_compile_once_the_solver_is_ready():
    """`SolverStrategy.ready` (which the runner calls before any deal, in both tiers) compiles or loads
    everything a deal runs, the free-parking stage and the layered prover included: a deal that reaches them
    then compiles nothing, so neither its seconds nor the prover's time budget pay for a compile."""
    rules, deal = HARD
    solver = SolverStrategy(**{**SMALL, "nodes": 3000, "capacity_states": 2000, "capacity_after": 1000,
                               "prover_seconds": 0.3, "prover_mb": 64})
    solver.ready(rules)
    before = _overloads()
    verdict, nodes, _, _ = solver.solve_position(rules, make_deal(rules, deal).position)
    assert verdict in ("unknown", "timeout") and nodes > 3000  # the searches, the stage and the prover all ran
    assert _overloads() == before


def test_solve_says_how_many_unknown_deals_the_seconds_cap_stopped(tmp_path):
    from click.testing import CliRunner

    from bakers_dozen.cli import main

    result = CliRunner().invoke(main, ["solve", "-v", "good-measure", "-d", "983", "--nodes", "1000000000",
                                       "--seconds", "0.01", "--param", "capacity_states=0", "--tt-mb", "8", "-j", "1",
                                       "-q", "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "unknown: 1 (1 stopped by the seconds cap, not the node budget)" in " ".join(result.output.split())
