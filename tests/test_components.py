"""Components of inner moves (`strategies.solver.components`) and the layered prover that stores them.

The structural checks replay every legal move of every member of a component with the engine and
classify it by the definitions, independently of the compiled code: an inner move must keep the
configuration and the foundations, need no safe move after it, lead to a member and have an inner
move back; every other move (an exit) must leave the component. A deliberately wrong rule must fail
them. The prover with components must give the verdicts of the prover without them and of the
plain search wherever both decide.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import numpy as np
import pytest

from sim import engine as E
from sim.cards import DECK_SIZE
from sim.game import Game
from sim.rules import find_variant
from strategies.solver.codec import KEY_WORDS, decode, encode, root_below
from strategies.solver.components import ComponentWork, component, config_hash, is_inner
from strategies.solver.layers import prove
from strategies.solver.safe import play_safe_moves
from strategies.solver.search import F_DEAD, F_LONE, F_SAFE, S_LOST, S_UNKNOWN, VERDICTS
from tests.solver_helpers import late_positions, random_walk, solver

FLAGS = F_SAFE | F_DEAD | F_LONE
LAYERED = tuple(find_variant(v) for v in ("bakers-dozen", "kings-into-empty", "other-suit", "good-measure",
                                          "spanish-patience"))


def _normal(st: np.ndarray, prm: np.ndarray) -> np.ndarray:
    out = st.copy()
    play_safe_moves(out, prm, np.zeros(DECK_SIZE + 1, dtype=np.int64), 0, False, False)
    return out


def _configuration(st: np.ndarray, prm: np.ndarray) -> tuple:
    """Foundation heights and the multiset of pile bases (each pile without its top run), from the definitions."""
    P = int(prm[E.P_PILES])
    bases = []
    for p in range(P):
        pile = [int(st[E.pile_base(prm, p) + i]) for i in range(int(st[p]))]
        j = len(pile) - 1
        while j >= 1 and E.builds_on(pile[j], pile[j - 1], prm[E.P_BUILD]):
            j -= 1
        if pile:
            bases.append(tuple(pile[: j + 1]))
    return tuple(int(st[E.fheight_at(P, s)]) for s in range(4)), tuple(sorted(bases))


def _key(st: np.ndarray, prm: np.ndarray, rb: np.ndarray) -> tuple:
    out = np.zeros((1, KEY_WORDS), dtype=np.uint64)
    assert encode(st, prm, rb, out, 0)
    return tuple(out[0].tolist())


def _members(st: np.ndarray, prm: np.ndarray, rb: np.ndarray, cap: int) -> set | None:
    cw = ComponentWork(prm, cap, 16)
    key = np.array([_key(st, prm, rb)], dtype=np.uint64)
    n = component(key, 0, prm, rb, cw.members, cw.table, cw.stamp, cw.gen, cw.st, cw.above, cw.tmp)
    return None if n < 0 else {tuple(r) for r in cw.members[:n].tolist()}


def _violations(st: np.ndarray, prm: np.ndarray, inner: Callable[[np.ndarray, int], bool], cap: int = 3000) -> list:
    """Every way the component of ``st`` (normal form) breaks the definitions when moves are classified
    by ``inner``; [] when it holds (or the component is over ``cap``)."""
    rb = root_below(st, prm)
    members = _members(st, prm, rb, cap)
    if members is None:
        return []
    config = _configuration(st, prm)
    out = []
    buf = E.new_moves(prm)
    for row in members:
        m_st = np.zeros_like(st)
        decode(np.array([row], dtype=np.uint64), 0, prm, rb, m_st, np.zeros(52, dtype=np.int64))
        if _configuration(m_st, prm) != config:
            out.append(("member of another configuration", row))
        for i in range(E.gen_moves(m_st, prm, buf)):
            m = int(buf[i])
            child = m_st.copy()
            E.apply_move(child, prm, m)
            safe = _normal(child, prm)
            key = _key(safe, prm, rb)
            if key == row:
                continue  # a lone card into another empty pile: the same position (the prover never plays it)
            if inner(m_st, m):
                if not np.array_equal(safe, child):
                    out.append(("safe move after an inner move", row, m))
                if _configuration(child, prm) != config or key not in members:
                    out.append(("inner move leaves the component", row, m))
                back = E.make_move(E.move_to(m), E.move_from(m))
                if not inner(child, back):
                    out.append(("inner move without an inner move back", row, m))
            elif key in members:
                out.append(("exit into the component", row, m))
    return out


def _positions(rules, count: int, seed: int) -> list[np.ndarray]:  # noqa: ANN001
    """Positions in the safe-moves normal form along random walks from deals (early and late)."""
    prm = E.rule_params(rules)
    rng = random.Random(seed)
    out = []
    for deal in range(1, count + 1):
        g = Game.from_deal(rules, deal)
        walk = random_walk(g, 60, rng)
        out += [_normal(walk[k], prm) for k in range(0, len(walk), 15)]
    return out


@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
def test_inner_moves_keep_the_configuration_and_reverse_and_exits_leave(rules) -> None:  # noqa: ANN001
    prm = E.rule_params(rules)
    checked = 0
    for st in _positions(rules, 4, 3):
        assert _violations(st, prm, lambda s, m: is_inner(s, prm, m)) == []
        checked += 1
    assert checked >= 8


def _any_card_onto_a_pile(st: np.ndarray, m: int) -> bool:
    """A wrong rule: every move onto a non-empty pile counts as inner, a base card's too."""
    src, dst = E.move_from(m), E.move_to(m)
    return src < E.FOUNDATION and dst < E.FOUNDATION and st[dst] > 0 and st[src] >= 2


def test_a_wrong_component_rule_fails_the_checks() -> None:
    """The checks above catch a rule that is too wide (a base card's move called inner) and one that is
    too narrow (no move inner: every member's inner moves then reach the component as exits)."""
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    wide = narrow = 0
    for st in _positions(rules, 3, 5):
        wide += bool(_violations(st, prm, _any_card_onto_a_pile))
        narrow += bool(_violations(st, prm, lambda s, m: False))
    assert wide > 0 and narrow > 0


def test_the_configuration_hash_ignores_run_cards_and_pile_order() -> None:
    rules = LAYERED[0]
    prm = E.rule_params(rules)
    for st in _positions(rules, 3, 7):
        rb = root_below(st, prm)
        members = _members(st, prm, rb, 3000)
        if members is None:
            continue
        hashes = set()
        for row in members:
            m_st = np.zeros_like(st)
            decode(np.array([row], dtype=np.uint64), 0, prm, rb, m_st, np.zeros(52, dtype=np.int64))
            hashes.add(int(config_hash(m_st, prm)))
        assert len(hashes) == 1


def _near_the_end(rules, deals: range, per_deal: int, seed: int) -> list[np.ndarray]:  # noqa: ANN001
    """Positions three quarters or more along a winning line, then up to 5 random moves (some lost)."""
    rng = random.Random(seed)
    s = solver(nodes=300_000)
    out = []
    for d in deals:
        verdict, _, line, _ = s.solve_state(rules, Game.from_deal(rules, d).state_array())
        if verdict != "won":
            continue
        for _ in range(per_deal):
            g = Game.from_deal(rules, d)
            for code in line[: rng.randrange(3 * len(line) // 4, len(line))]:
                g.play_code(code)
            random_walk(g, rng.randrange(6), rng)
            out.append(g.state_array())
    return out


@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
@pytest.mark.parametrize("cap", (2, 5000), ids=("cap2", "cap5000"))
def test_components_keep_the_provers_verdicts(rules, cap: int) -> None:  # noqa: ANN001
    """With components (whole, or a cap of 2 that leaves most positions single) the prover gives the
    verdicts it gives without them, and the plain search's, wherever both decide."""
    prm = E.rule_params(rules)
    s = solver(nodes=300_000)
    decided = 0
    for st in _near_the_end(rules, range(1, 9), 2, seed=9):
        a = prove(st, prm, FLAGS, 2**27, 2.0)
        b = prove(st, prm, FLAGS, 2**27, 2.0, component_cap=cap, cache_entries=1 << 12)
        search = s.solve_state(rules, st)[0]
        if S_UNKNOWN in (a.verdict, b.verdict):
            continue
        assert a.verdict == b.verdict
        if search != "unknown":
            assert VERDICTS[b.verdict] == search
        decided += 1
    assert decided >= 8


@pytest.mark.slow
@pytest.mark.parametrize("rules", LAYERED, ids=lambda r: r.name)
def test_components_keep_the_provers_verdicts_on_many_positions(rules) -> None:  # noqa: ANN001
    prm = E.rule_params(rules)
    s = solver(nodes=1_000_000)
    seen = {"won": 0, "lost": 0}
    for st in late_positions(rules, range(1, 17), 4, seed=13, wander=12):
        a = prove(st, prm, FLAGS, 2**28, 2.0)
        b = prove(st, prm, FLAGS, 2**28, 2.0, component_cap=20_000)
        if S_UNKNOWN in (a.verdict, b.verdict):
            continue
        assert a.verdict == b.verdict
        search = s.solve_state(rules, st)[0]
        if search != "unknown":
            assert VERDICTS[b.verdict] == search
        seen[VERDICTS[b.verdict]] += 1
    assert seen["won"] > 10


def test_a_proof_with_components_resumes_from_its_checkpoint(tmp_path) -> None:  # noqa: ANN001
    rules = LAYERED[3]
    prm = E.rule_params(rules)
    lost = [st for st in late_positions(rules, range(1, 12), 4, seed=3, wander=10)
            if prove(st, prm, FLAGS, 2**27, 5.0).verdict == S_LOST and prove(st, prm, FLAGS, 2**27, 5.0).layers >= 2]
    assert lost
    st = lost[0]
    whole = prove(st, prm, FLAGS, 2**27, 60.0, component_cap=5000)
    assert whole.verdict == S_LOST
    r = prove(st, prm, FLAGS, 2**27, 0.0, checkpoint=tmp_path, checkpoint_seconds=0.0, component_cap=5000)
    runs = 1
    while r.verdict == S_UNKNOWN:
        r = prove(st, prm, FLAGS, 2**27, 0.0 if runs < 3 else 60.0, checkpoint=tmp_path, checkpoint_seconds=0.0,
                  component_cap=5000)
        runs += 1
    assert r.verdict == S_LOST and runs >= 2
    assert r.layers == whole.layers
