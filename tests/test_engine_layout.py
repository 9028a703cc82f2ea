"""The engine's layout is named once (`sim.engine`), and the names agree with each other.

State offsets: the compiled accessors (`down_at`, `fheight_at`, `home_at`, `found_at`,
`pile_base`) and the Python `offsets()` give the same index for every part of a state of
1..52 piles, the parts follow each other without overlap, and on real games they read what
the `Position` holds. Move codes: `make_move` / `move_from` / `move_to` round-trip every
(source, destination) the rules allow with up to 52 piles, agree with `Move.code`, and are
what the engine generates. Slot names: the policies' parameter and scratch slots, and the
solver's work arrays, are where their names say.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from sim import engine as E
from sim.cards import DECK_SIZE, KING, rank_of
from sim.game import Game
from sim.notation import ANY_FOUNDATION, FOUNDATION, Move
from sim.rules import VARIANTS, Rules
from strategies import features as F
from strategies.heuristic import HP_ALLOW_DIG, HP_HOME_FIRST, HP_SIZE, HP_WEIGHT, PRESETS, RULES, WIDTHS, policy_params
from strategies.sampling import KEEP_BASE, scratch_size
from strategies.solver import search as S
from strategies.solver import strategy as SS

PILE_COUNTS = range(1, DECK_SIZE + 1)


def _prm(piles: int, cap: int) -> np.ndarray:
    """A rule-parameter array with only the fields the offsets read."""
    prm = np.zeros(E.P_MOVEBUF + 1, dtype=np.int64)
    prm[E.P_PILES], prm[E.P_CAP] = piles, cap
    return prm


@pytest.mark.parametrize("piles", PILE_COUNTS)
def test_accessors_agree_with_offsets(piles: int) -> None:
    o = E.offsets(piles)
    cap = E.pile_capacity(DECK_SIZE // piles)
    prm = _prm(piles, cap)
    assert [E.down_at(piles, p) for p in range(piles)] == [o.down + p for p in range(piles)]
    assert [E.fheight_at(piles, f) for f in range(4)] == [o.fheight + f for f in range(4)]
    assert E.home_at(piles) == o.home
    assert [E.found_at(piles, f) for f in range(4)] == [o.foundation(f) for f in range(4)]
    assert [E.pile_base(prm, p) for p in range(piles)] == [o.pile(p, cap) for p in range(piles)]


@pytest.mark.parametrize("piles", PILE_COUNTS)
def test_parts_follow_each_other_without_overlap(piles: int) -> None:
    o = E.offsets(piles)
    cap = E.pile_capacity(DECK_SIZE // piles)
    parts = [(0, piles), (o.down, piles), (o.fheight, 4), (o.home, 1)]
    parts += [(o.foundation(f), E.FOUNDATION_SLOTS) for f in range(4)]
    parts += [(o.pile(p, cap), cap) for p in range(piles)]
    for (start, length), (following, _) in itertools.pairwise(parts):
        assert start + length == following


def _games() -> list[Game]:
    games = [Game.from_deal(v.rules, n) for v in VARIANTS for n in (1, 2)]
    games.append(Game.from_deal(Rules(name="piles-52", columns=52, cards_per_column=1, face_down=0), 1))
    for g in games[:]:  # and some positions with cards home and turned up
        g = g.clone()
        for _ in range(30):
            moves = g.legal_moves()
            if not moves:
                break
            g.play(next((m for m in moves if m.to_foundation), moves[-1]))
        games.append(g)
    return games


@pytest.mark.parametrize("game", _games(), ids=lambda g: f"{g.rules.name}-{len(g.history)}")
def test_accessors_read_what_the_position_holds(game: Game) -> None:
    st, prm, pos = game.state_array(), game.rule_params, game.position()
    P = game.rules.columns
    for p, pile in enumerate(pos.piles):
        assert st[p] == len(pile)
        assert st[E.down_at(P, p)] == pos.face_down[p]
        base = E.pile_base(prm, p)
        assert tuple(st[base : base + len(pile)]) == pile
    for f, stack in enumerate(pos.foundations):
        assert st[E.fheight_at(P, f)] == len(stack)
        assert tuple(st[E.found_at(P, f) : E.found_at(P, f) + len(stack)]) == stack
    assert st[E.home_at(P)] == pos.cards_home == E.cards_home(st, prm)
    assert E.pile_base(prm, P - 1) + prm[E.P_CAP] <= prm[E.P_SIZE] == st.size


def _places(piles: int) -> list[int]:
    return [*range(piles), *(FOUNDATION + f for f in range(4))]


@pytest.mark.parametrize("piles", [1, 4, 13, DECK_SIZE])
def test_move_codes_round_trip_for_every_move_the_rules_allow(piles: int) -> None:
    places = _places(piles)
    assert max(places) < E.PLACES and piles <= DECK_SIZE < ANY_FOUNDATION
    codes = set()
    for src, dst in itertools.product(places, places):
        if src == dst or (src >= FOUNDATION and dst >= FOUNDATION):
            continue  # not moves: a move goes from a pile or to a pile
        m = E.make_move(src, dst)
        assert (E.move_from(m), E.move_to(m)) == (src, dst)
        assert m == Move(0, src, dst).code
        codes.add(m)
    n = len(places)
    assert len(codes) == n * (n - 1) - 4 * 3  # distinct codes


@pytest.mark.parametrize("game", _games()[::3], ids=lambda g: f"{g.rules.name}-{len(g.history)}")
def test_generated_moves_decode_to_their_places(game: Game) -> None:
    for mv, code in zip(game.legal_moves(), game.legal_codes().tolist(), strict=True):
        assert code == E.make_move(mv.src, mv.dst) == mv.code
        assert (E.move_from(code), E.move_to(code)) == (mv.src, mv.dst)
        assert E.moved_card(game.state_array(), game.rule_params, code) == mv.card


def test_is_king_is_the_rank() -> None:
    assert [bool(E.is_king(c)) for c in range(DECK_SIZE)] == [rank_of(c) == KING for c in range(DECK_SIZE)]


@pytest.mark.parametrize("order", [*PRESETS.values(), ("cover",), ("keep_piles", "home"), tuple(reversed(RULES))])
@pytest.mark.parametrize("allow_dig", [False, True])
def test_heuristic_weights_order_moves_rule_by_rule(order: tuple[str, ...], allow_dig: bool) -> None:
    """Each rule's weight exceeds the most that all later rules can add (scores are below 2**width),
    so comparing packed keys compares the rules in order; rules left out weigh nothing."""
    pp = policy_params(order, allow_dig)
    assert pp.shape == (HP_SIZE,) and pp[HP_ALLOW_DIG] == allow_dig and pp[HP_HOME_FIRST] == (order[0] == "home")
    weight = {r: int(pp[HP_WEIGHT + i]) for i, r in enumerate(RULES)}
    for i, rule in enumerate(order):
        later = sum(((1 << WIDTHS[r]) - 1) * weight[r] for r in order[i + 1 :])
        assert weight[rule] > later
    assert all(weight[r] == 0 for r in RULES if r not in order)
    assert sum(((1 << WIDTHS[r]) - 1) * weight[r] for r in order) < 1 << 62  # no overflow in int64


def test_scratch_slots_do_not_overlap() -> None:
    own = E.SCRATCH_OWN
    assert {E.SCRATCH_NODES, E.SCRATCH_MICROS, E.SCRATCH_PROVEN} == set(range(own))
    assert own <= F.SCRATCH_STORED < F.SCRATCH_LAST < F.VISITED_OFFSET
    assert F.VISITED_OFFSET + F.VISITED_SLOTS <= F.NEEDS_OFFSET
    assert F.NEEDS_STAMP >= DECK_SIZE and F.NEEDS_OFFSET + F.NEEDS_STAMP < F.SCRATCH_MOVED < F.PILES_OFFSET
    assert F.PILES_OFFSET + DECK_SIZE <= F.SCRATCH_WITH_VISITED  # a slot for every pile a rule set may have
    assert own <= SS.SC_STATUS < SS.SC_LEN < SS.SC_POS < SS.SCRATCH_SIZE < KEEP_BASE  # sampling: solver's, seen set, kept
    assert all(KEEP_BASE < scratch_size(v.rules, 1) < scratch_size(v.rules, 2) for v in VARIANTS)


def test_solver_work_arrays_are_where_their_names_say() -> None:
    w = S.SolverWork(E.rule_params(Rules()), tt_mb=0.01, max_depth=64)
    arrays = w.arrays()
    names = {S.W_KEYS: w.keys, S.W_TT: w.tt, S.W_TIDX: w.tidx, S.W_TSTACK: w.tstack, S.W_META: w.meta,
             S.W_FRAMES: w.frames, S.W_MBUF: w.mbuf, S.W_ABUF: w.abuf,
             S.W_TMP: w.tmp, S.W_SCORES: w.scores, S.W_DWORK: w.dwork, S.W_LINE: w.line, S.W_RMEMO: w.rmemo,
             S.W_RTABLE: w.rtable, S.W_RWORK: w.rwork,
             S.W_STATE: w.state, S.W_SCRATCH: w.scratch}
    assert len(arrays) == len(names)
    for slot, array in names.items():
        assert arrays[slot] is array
    assert w.meta.shape == (S.META_SIZE,)
    strategy = SS.SolverStrategy(tt_mb=0.01, depth=64)
    pparams = strategy.policy_params(Rules())
    assert pparams[SS.POLICY_CONFIG].shape == (SS.PP_SIZE,) and len(pparams[SS.POLICY_WORK]) == len(names)
