"""The layered prover: exact keys, agreement with the plain search, budgets and resume."""

from __future__ import annotations

import json
import os
import random
import signal
import tracemalloc

import numpy as np
import pytest

from sim import engine as E
from sim.errors import UserError
from sim.game import Game, View
from sim.position import Position
from sim.rules import find_variant
from strategies import DealInfo
from strategies.play import play_compiled, play_python
from strategies.solver import layers
from strategies.solver.codec import (
    KEY_WORDS,
    STAGES,
    decode,
    encode,
    layer_of,
    layer_total,
    quiet_layer,
    root_below,
    staged_rules,
)
from strategies.solver.hash import make_keys, position_key
from strategies.solver.layers import layered_rules, prove, sorted_unique
from strategies.solver.safe import play_safe_moves
from strategies.solver.search import F_DEAD, F_LONE, F_SAFE, S_LOST, S_UNKNOWN, S_WON, VERDICTS
from tests.solver_helpers import late_positions, random_walk, solver

FLAGS = F_SAFE | F_DEAD | F_LONE
LAYERED = tuple(find_variant(v) for v in ("bakers-dozen", "kings-into-empty", "other-suit", "good-measure",
                                          "spanish-patience"))


@pytest.fixture
def live_ctrl_c():  # noqa: ANN201
    """Ctrl-C handled by default, as a terminal leaves it. A test process started in the background inherits
    SIGINT ignored, and the prover then rightly leaves the signal alone (it catches only one at its default)."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def _walk(rules, deal: int, steps: int, seed: int) -> list[np.ndarray]:  # noqa: ANN001
    """States along a random walk from a deal (every one reachable from the deal)."""
    g = Game.from_deal(rules, deal)
    return [g.state_array(), *random_walk(g, steps, random.Random(seed))]


@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
def test_keys_give_the_position_back_up_to_pile_order(rules) -> None:  # noqa: ANN001
    prm = E.rule_params(rules)
    keys = make_keys(int(prm[E.P_CAP]))
    above = np.empty(52, dtype=np.int64)
    for deal in range(1, 6):
        walk = _walk(rules, deal, 200, deal)
        rb = root_below(walk[0], prm)
        out = np.zeros((len(walk), KEY_WORDS), dtype=np.uint64)
        for i, st in enumerate(walk):
            assert encode(st, prm, rb, out, i)
            back = np.zeros_like(st)
            decode(out, i, prm, rb, back, above)
            assert position_key(back, prm, keys) == position_key(st, prm, keys)
            assert E.cards_home(back, prm) == E.cards_home(st, prm)
        # equal keys exactly for equal positions (up to pile order)
        hashes = [position_key(st, prm, keys) for st in walk]
        for i in range(len(walk)):
            for j in range(i):
                assert (hashes[i] == hashes[j]) == bool(np.array_equal(out[i], out[j]))


@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
def test_no_move_goes_back_to_an_earlier_layer(rules) -> None:  # noqa: ANN001
    """The argument of `strategies.solver.bases`, on every legal move of positions along random walks: the
    child (after the safe moves home, as the prover sees it) is in its parent's layer or in one the prover
    expands after it; a tableau move's layer is `quiet_layer`'s before any move home. Where no card but a
    king enters an empty pile, the stage moves (the test can fail)."""
    prm = E.rule_params(rules)
    moves = E.new_moves(prm)
    home = np.zeros(53, dtype=np.int64)
    staged = bool(staged_rules(prm))
    stage_moved = False
    for deal in range(1, 5):
        for st in _walk(rules, deal, 150, 10 + deal):
            lay = int(layer_of(st, prm))
            for i in range(E.gen_moves(st, prm, moves)):
                m = moves[i]
                ch = st.copy()
                E.apply_move(ch, prm, m)
                src, dst = E.move_from(m), E.move_to(m)
                if src < E.FOUNDATION and dst < E.FOUNDATION:
                    assert int(layer_of(ch, prm)) == int(quiet_layer(st, prm, lay, src, dst))
                play_safe_moves(ch, prm, home, 0, False, False)
                child = int(layer_of(ch, prm))
                same_found = child // STAGES == lay // STAGES
                assert layer_total(child) > layer_total(lay) or (same_found and child >= lay)
                stage_moved |= same_found and child > lay
    assert stage_moved == staged


def test_sorted_unique_runs() -> None:
    rng = np.random.default_rng(1)
    keys = rng.integers(0, 4, size=(500, KEY_WORDS)).astype(np.uint64)
    run = sorted_unique(keys)
    assert len(run) == len({tuple(r) for r in keys.tolist()})
    assert [tuple(r) for r in run.tolist()] == sorted({tuple(r) for r in keys.tolist()})


@pytest.mark.slow
@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
def test_prover_agrees_with_the_search(rules) -> None:  # noqa: ANN001
    """On small positions (winnable and lost; few lost where empty piles refill) both decide, and alike."""
    s = solver(nodes=2_000_000)
    seen = {"won": 0, "lost": 0}
    for st in late_positions(rules, range(1, 13), 8, seed=5, wander=10):
        prm = E.rule_params(rules)
        verdict, _, _, _ = s.solve_state(rules, st)
        r = prove(st, prm, FLAGS, 2**28, 5.0)
        if "unknown" in (verdict, VERDICTS[r.verdict]):
            continue
        assert VERDICTS[r.verdict] == verdict
        seen[verdict] += 1
    assert seen["won"] > 5 and seen["lost"] >= 1


def test_prover_refuses_worrying_back() -> None:
    rules = find_variant("spanish-patience").replace(name="spanish-worrying", worrying_back=True)
    prm = E.rule_params(rules)
    assert not layered_rules(prm)
    r = prove(Game.from_deal(rules, 1).state_array(), prm, FLAGS, 2**28, 10.0)
    assert (r.verdict, r.reason) == (S_UNKNOWN, "rules")


def _lost_position(rules) -> np.ndarray:  # noqa: ANN001
    """A lost position with a few layers to go through."""
    s = solver(nodes=2_000_000)
    for st in late_positions(rules, range(1, 30), 6, seed=11, wander=12):
        if s.solve_state(rules, st)[0] == "lost" and prove(st, E.rule_params(rules), FLAGS, 2**28, 60).layers >= 3:
            return st
    raise AssertionError("no lost position with three layers")


def test_budgets_stop_the_proof_and_a_checkpoint_resumes_it(tmp_path) -> None:  # noqa: ANN001
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    st = _lost_position(rules)
    whole = prove(st, prm, FLAGS, 2**28, 60.0)
    assert whole.verdict == S_LOST
    # a run with no time stops as unknown, saving its state; later runs finish the proof
    first = prove(st, prm, FLAGS, 2**28, 0.0, checkpoint=tmp_path, checkpoint_seconds=0.0)
    assert (first.verdict, first.reason) == (S_UNKNOWN, "seconds")
    assert (tmp_path / "prover.json").exists()
    runs = 1
    r = first
    while r.verdict == S_UNKNOWN:
        r = prove(st, prm, FLAGS, 2**28, 0.0 if runs < 3 else 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0)
        runs += 1
    assert r.verdict == S_LOST
    assert r.layers == whole.layers
    # a finished proof is read back without work
    again = prove(st, prm, FLAGS, 2**28, 0.0, checkpoint=tmp_path)
    assert (again.verdict, again.positions) == (S_LOST, r.positions)


def test_a_checkpoint_with_other_layer_numbers_is_refused_with_a_message(tmp_path) -> None:  # noqa: ANN001
    """A checkpoint of the prover before the stages numbers its layers by the foundations alone: its seeds
    would be read into the wrong layers, so it is refused, saying why, and left as it is."""
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    st = _lost_position(rules)
    prove(st, prm, FLAGS, 2**28, 0.0, checkpoint=tmp_path, checkpoint_seconds=0.0)
    meta = json.loads((tmp_path / "prover.json").read_text())
    del meta["layering"]
    (tmp_path / "prover.json").write_text(json.dumps(meta))
    with pytest.raises(UserError, match="numbers its layers otherwise"):
        prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path)
    assert json.loads((tmp_path / "prover.json").read_text()) == meta


@pytest.mark.parametrize("signum", (signal.SIGINT, signal.SIGTERM), ids=("ctrl-c", "kill"))
def test_a_first_ctrl_c_or_kill_stops_the_proof_with_its_checkpoint_and_the_next_run_finishes_it(tmp_path, signum, live_ctrl_c) -> None:  # noqa: ANN001
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    st = _lost_position(rules)
    whole = prove(st, prm, FLAGS, 2**28, 60.0)
    before = signal.getsignal(signum)
    presses = []

    def press_once(r) -> None:  # noqa: ANN001
        if not presses:
            presses.append(r)
            os.kill(os.getpid(), signum)

    first = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0, progress=press_once)
    assert (first.verdict, first.reason) == (S_UNKNOWN, "interrupted")
    assert signal.getsignal(signum) is before
    rest = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path)
    assert rest.verdict == S_LOST and rest.layers == whole.layers
    if signum == signal.SIGINT:
        # without a checkpoint there is nothing to save: Ctrl-C interrupts, and no caller takes it for a verdict
        presses.clear()
        with pytest.raises(KeyboardInterrupt):
            prove(st, prm, FLAGS, 2**28, 60.0, checkpoint_seconds=0.0, progress=press_once)


def test_a_proof_stopped_inside_a_layer_goes_on_with_it_and_expands_nothing_twice(tmp_path, monkeypatch, live_ctrl_c) -> None:  # noqa: ANN001
    """The layer a stopped run was expanding is saved as it stands: the next run goes on with it, so the
    runs together expand exactly the keys of one uninterrupted proof (before, the layer was expanded again)."""
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    st = _lost_position(rules)
    monkeypatch.setattr(layers, "EXPAND_STEP", 4)  # safe points every 4 keys: stops fall inside layers
    whole = prove(st, prm, FLAGS, 2**28, 60.0)
    assert whole.largest_layer > 16
    stops = []

    def stop_inside(r) -> None:  # noqa: ANN001
        if r.reason.startswith("in layer") and len(stops) < runs:  # one Ctrl-C a run, in its first layer
            stops.append(r.reason)
            os.kill(os.getpid(), signal.SIGINT)

    runs = 1
    r = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0, progress=stop_inside)
    while r.verdict == S_UNKNOWN:
        assert r.reason == "interrupted"
        opened = json.loads((tmp_path / "prover.json").read_text())["open"]
        assert all((tmp_path / opened[part]).exists() for part in ("expanded", "queued"))
        runs += 1
        r = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0,
                  progress=stop_inside if runs <= 3 else None)
    assert runs == 4 and len(stops) == 3
    assert (r.verdict, r.layers, r.positions) == (S_LOST, whole.layers, whole.positions)
    assert not list(tmp_path.glob("open-*.npy"))  # a finished layer leaves no saved layer behind


def test_a_layer_saved_as_components_goes_on_as_positions_and_back(tmp_path, monkeypatch, live_ctrl_c) -> None:  # noqa: ANN001
    """A layer saved with one component setting is read back by a run with another as exact positions
    (the seeds of that layer): the proof then ends with the verdict of one uninterrupted run."""
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    st = _lost_position(rules)
    monkeypatch.setattr(layers, "EXPAND_STEP", 4)
    whole = prove(st, prm, FLAGS, 2**28, 60.0)
    sent, started = [], []

    def stop_inside(r) -> None:  # noqa: ANN001
        if r.reason.startswith("in layer") and len(sent) < len(started):  # one Ctrl-C a run
            sent.append(r.reason)
            os.kill(os.getpid(), signal.SIGINT)

    for cap in (5000, 0, 5000):
        started.append(cap)
        r = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0, progress=stop_inside,
                  component_cap=cap)
        assert (r.verdict, r.reason) == (S_UNKNOWN, "interrupted")
        assert json.loads((tmp_path / "prover.json").read_text())["open"]["component_cap"] == cap
    r = prove(st, prm, FLAGS, 2**28, 60.0, checkpoint=tmp_path)
    assert (r.verdict, r.layers) == (S_LOST, whole.layers)


def test_a_layer_that_cannot_double_within_the_memory_budget_stops_the_proof_before_it_allocates(tmp_path) -> None:  # noqa: ANN001
    # good-measure deal 22's layers with 2 cards home hold more than 50 million positions: they outgrow any small budget
    rules = find_variant("good-measure")
    st = Game.from_deal(rules, 22).state_array()
    prm = E.rule_params(rules)
    budget = 48 * 2**20
    prove(st, prm, FLAGS, budget, 0.5)  # compiled (growth included) before memory is traced
    tracemalloc.start()
    try:
        r = prove(st, prm, FLAGS, budget, 60.0, checkpoint=tmp_path)
        held = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        again = prove(st, prm, FLAGS, budget, 60.0, checkpoint=tmp_path)  # the saved layer goes on, and outgrows it
        held_again = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (r.verdict, r.reason) == (S_UNKNOWN, "memory")
    assert r.positions > 100_000
    assert r.peak_bytes <= budget
    assert held <= budget + 4 * 2**20  # numpy's arrays as the allocator saw them, beyond the prover's own count
    assert (again.verdict, again.reason) == (S_UNKNOWN, "memory") and again.positions >= r.positions
    assert held_again <= budget + 4 * 2**20
    assert (tmp_path / "prover.json").exists()


def test_a_won_position_is_won() -> None:
    rules = LAYERED[0]
    st = late_positions(rules, range(1, 3), 1, seed=2, wander=1)[0]
    assert prove(st, E.rule_params(rules), FLAGS, 2**28, 60.0).verdict == S_WON


@pytest.mark.slow
@pytest.mark.parametrize("switch", (F_SAFE, F_DEAD, F_LONE), ids=("safe", "dead", "lone"))
def test_each_pruning_keeps_the_provers_verdicts(switch: int) -> None:
    """Verdicts with every pruning and with one switched off agree (where both decide)."""
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    decided = 0
    for st in late_positions(rules, range(1, 9), 6, seed=7, wander=8):
        a = prove(st, prm, FLAGS, 2**28, 5.0).verdict
        b = prove(st, prm, FLAGS & ~switch, 2**28, 5.0).verdict
        if S_UNKNOWN not in (a, b):
            assert a == b
            decided += 1
    assert decided > 10


def test_the_solver_hands_what_its_search_leaves_unknown_to_the_prover() -> None:
    rules = LAYERED[0]
    st = _lost_position(rules)
    tiny = {"nodes": 5, "restart_nodes": 0}
    assert solver(**tiny).solve_state(rules, st)[0] == "unknown"
    assert solver(prover_seconds=30.0, **tiny).solve_state(rules, st)[0] == "lost"
    view = View(rules, st, E.rule_params(rules), True)
    position = Position(view.piles, tuple(0 for _ in view.piles), view.foundations)
    info = DealInfo(rules, 1, 0, "default")
    for play in (play_python, play_compiled):
        record = play(solver(prover_seconds=30.0, **tiny), Game(rules, position), info)
        assert record.outcome == "lost" and record.moves == []
