"""Restarts that keep their proofs of loss (`keep_lost`, `strategies.solver.table`): the table's rules,
losses bigger than any one restart proven, and verdicts that never contradict a search without it."""

from __future__ import annotations

import numpy as np
import pytest

from sim.game import Game
from sim.position import parse_position
from sim.rules import find_variant
from strategies.batch import preset_states
from strategies.solver.search import M_GEN, M_RENUMBERED
from strategies.solver.strategy import SolverStrategy
from strategies.solver.table import (
    BUCKET,
    DONE,
    GEN_LIMIT,
    LOST_TAG,
    T_ABSENT,
    T_FULL,
    T_LOST,
    absent_at,
    absent_slot,
    renumber,
    table_slots,
    tt_find,
    tt_insert,
    tt_mark_lost,
)
from tests.solver_helpers import late_positions, solver
from tests.test_solver_final import LOST_3408

GM = find_variant("good-measure")
BD = find_variant("bakers-dozen")
CASTLES = find_variant("castles-in-spain")


# --- the table ------------------------------------------------------------------------------


def _table(slots: int = 64) -> tuple[np.ndarray, np.ndarray]:
    return np.zeros(slots, dtype=np.uint64), np.zeros(slots, dtype=np.int32)


def _find(tt, tidx, key, check, gen, root):  # noqa: ANN001, ANN202
    return int(tt_find(tt, tidx, np.uint64(key), np.uint64(check), np.uint64(gen), np.uint64(LOST_TAG | root)))


def _put(tt, tidx, key, check, gen, root, index):  # noqa: ANN001, ANN202
    found = _find(tt, tidx, key, check, gen, root)
    assert found <= T_ABSENT
    slot = absent_slot(found)
    tt_insert(tt, tidx, slot, np.uint64(check), np.uint64(gen), index)
    return slot


def test_an_expanded_position_is_found_by_its_search_only_and_a_proof_by_every_search_of_its_root():
    tt, tidx = _table()
    check = 0xABCDEF << 16
    slot = _put(tt, tidx, 5, check, gen=3, root=3, index=0)
    assert _find(tt, tidx, 5, check, 3, 3) == slot
    assert _find(tt, tidx, 5, check ^ (1 << 40), 3, 3) <= T_ABSENT  # another check: absent
    assert _find(tt, tidx, 5, check, 4, 3) <= T_ABSENT  # the next search does not see it
    tt_mark_lost(tt, slot, np.uint64(LOST_TAG | 3))
    assert _find(tt, tidx, 5, check, 4, 3) == T_LOST  # a later search of the same root sees the proof
    assert _find(tt, tidx, 5, check, 9, 9) <= T_ABSENT  # another root's search does not


def test_a_slot_on_tarjans_stack_is_never_taken_and_a_full_bucket_of_them_says_so():
    tt, tidx = _table()
    slots = [_put(tt, tidx, 0, (i + 1) << 16, gen=1, root=1, index=i) for i in range(BUCKET)]
    assert sorted(slots) == list(range(BUCKET))  # one bucket, every slot taken
    assert _find(tt, tidx, 0, 99 << 16, 1, 1) == T_FULL
    tidx[slots[5]] = DONE  # finished without a proof: may be overwritten
    assert _find(tt, tidx, 0, 99 << 16, 1, 1) == absent_at(slots[5])
    tidx[slots[5]] = 5
    tt_mark_lost(tt, slots[2], np.uint64(LOST_TAG | 1))  # a proof may be overwritten too
    assert _find(tt, tidx, 0, 99 << 16, 1, 1) == absent_at(slots[2])


def test_the_table_with_its_bookkeeping_fits_its_megabytes():
    for mb in (0.02, 1, 64):
        slots = table_slots(mb)
        assert slots & (slots - 1) == 0 and slots * 16 <= max(mb * 2**20, 1024 * 16) < 2 * slots * 16


def test_renumbering_keeps_only_the_roots_proofs_and_renames_them():
    tt, tidx = _table()
    checks = [(k + 1) << 16 for k in range(4)]
    expanded = _put(tt, tidx, 0, checks[0], gen=900, root=800, index=0)
    mine = _put(tt, tidx, 8, checks[1], gen=900, root=800, index=1)
    other = _put(tt, tidx, 16, checks[2], gen=700, root=700, index=0)
    tt_mark_lost(tt, mine, np.uint64(LOST_TAG | 800))
    tt_mark_lost(tt, other, np.uint64(LOST_TAG | 700))
    renumber(tt, LOST_TAG | 800, LOST_TAG | 1)
    assert _find(tt, tidx, 8, checks[1], 2, 1) == T_LOST  # the root's proof, now root 1's
    assert tt[expanded] == 0 and tt[other] == 0  # expanded positions and other roots' proofs: gone
    renumber(tt, 0, LOST_TAG | 1)
    assert not tt.any()


def test_a_deal_is_decided_alike_whatever_the_table_decided_before():
    """The same nodes and line fresh, after other deals, and with its restarts spanning the point where the
    generations start again (good-measure 806's 579,101 nodes; before version 7 that point cleared its kept
    proofs and it took 2,096,665)."""
    def decide(before: range = range(0), gen: int | None = None) -> tuple:
        s = SolverStrategy()
        for d in before:
            s.solve_state(GM, Game.from_deal(GM, d).state_array())
        if gen is not None:
            s.work(GM).meta[M_GEN] = gen
        out = s.solve_state(GM, Game.from_deal(GM, 806).state_array())[:3]
        assert s.work(GM).meta[M_RENUMBERED] == (gen is not None)
        return out

    fresh = decide()
    assert fresh[0] == "won" and fresh[1] == 579_101
    assert decide(range(1, 4)) == fresh
    assert decide(gen=GEN_LIMIT - 300) == fresh


# --- proofs kept from one restart to the next ------------------------------------------------


def test_restarts_that_keep_their_proofs_prove_a_loss_bigger_than_each_of_them():
    position = parse_position(LOST_3408, GM)
    # restarts of 100 x Luby within 20,000 nodes: the biggest search has 3,200 nodes, the proof needs 3,408
    assert solver(restart_nodes=100, nodes=20_000, keep_lost=False).solve_position(GM, position)[0] == "unknown"
    verdict, nodes, _, _ = solver(restart_nodes=100, nodes=20_000).solve_position(GM, position)
    assert verdict == "lost" and nodes < 20_000


@pytest.mark.parametrize(("rules", "number"), [(GM, 178), (GM, 235), (CASTLES, 28)], ids=str)
def test_lost_deals_are_proven_within_three_times_one_search(rules, number):
    st = preset_states(rules, np.array([number]), 0, "default")[0]
    verdict, one, _, _ = solver(restart_nodes=0, nodes=100_000).solve_state(rules, st)
    assert verdict == "lost"
    assert solver(restart_nodes=100, nodes=3 * one, keep_lost=False).solve_state(rules, st)[0] == "unknown"
    assert solver(restart_nodes=100, nodes=3 * one).solve_state(rules, st)[0] == "lost"


def check_keep_lost_against_one_search(rules, deals: range, per_deal: int, **tiny) -> dict[str, int]:  # noqa: ANN001, ANN003
    """Positions near the end of winning lines: the verdict of restarts of 20 x Luby that keep their proofs
    (with ``tiny`` settings) is the verdict of one plain search, or unknown. Returns how many positions each
    decided."""
    plain = solver(nodes=60_000, restart_nodes=0)
    kept = solver(nodes=20_000, restart_nodes=20, **tiny)
    seen = {"plain": 0, "kept": 0}
    for st in late_positions(rules, deals, per_deal, seed=5, wander=14):
        truth = plain.solve_state(rules, st)[0]
        verdict = kept.solve_state(rules, st)[0]
        assert verdict in (truth, "unknown") or truth == "unknown", (rules.name, truth, verdict)
        seen["plain"] += truth != "unknown"
        seen["kept"] += verdict != "unknown"
    return seen


@pytest.mark.parametrize("rules", [BD, GM, CASTLES, find_variant("kings-into-empty"), find_variant("other-suit")],
                         ids=lambda r: r.name)
@pytest.mark.parametrize("tt_mb", [8, 0.02], ids=["table", "tiny table"])
def test_kept_proofs_never_contradict_one_plain_search(rules, tt_mb):
    seen = check_keep_lost_against_one_search(rules, range(1, 9), 6, tt_mb=tt_mb)
    assert seen["plain"] >= 30 and seen["kept"] >= 20


@pytest.mark.slow
@pytest.mark.parametrize("rules", [BD, GM, CASTLES, find_variant("kings-into-empty"), find_variant("other-suit")],
                         ids=lambda r: r.name)
def test_kept_proofs_never_contradict_one_plain_search_on_many_positions(rules):
    seen = check_keep_lost_against_one_search(rules, range(9, 109), 20, tt_mb=0.05)
    assert seen["plain"] >= 1000


def test_kept_proofs_never_contradict_on_full_deals():
    numbers = np.arange(170, 240)
    states = preset_states(GM, numbers, 0, "default")
    configs = [solver(nodes=30_000, restart_nodes=50), solver(nodes=30_000, restart_nodes=50, keep_lost=False),
               solver(nodes=30_000, restart_nodes=0)]
    decided = 0
    for number, st in zip(numbers, states, strict=True):
        verdicts = {s.solve_state(GM, st)[0] for s in configs} - {"unknown"}
        assert len(verdicts) <= 1, (number, verdicts)
        decided += len(verdicts) == 1
    assert decided >= 60
