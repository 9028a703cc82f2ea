"""`heuristic`: a priority-rule player built from the game's own advice.

The advice of the rule pages: find the aces and twos first and dig out the
piles that hold them; put a card where it does not bury a card you need soon;
do not rush to empty a pile. Each piece is a named rule that scores a move;
moves are compared rule by rule in the order given (lexicographically), and
ties go to the engine's move order.

Rules (higher score wins):

- ``home``: the move goes to a foundation.
- ``dig``: the cards left in the source pile hold a card needed soon, with few
  cards above it (urgency = cards still to go home before it x 16 + cards
  above it; unseen cards count as needed after 6 others).
- ``no_bury``: the destination pile holds no card needed soon (foundations and
  empty piles score best).
- ``misplaced``: the moved card does not rest on a card it builds on.
- ``keep_piles``: the move does not empty a pile (a pile is a place to build).
- ``cover``: the card covered at the destination is needed late.

Which moves are considered at all (so that play always ends): moves home;
moves of a misplaced card; moves that uncover a card that can go home at once;
and with ``allow_dig``, moves of a well-placed card to a pile whose most urgent
card is needed later than the source pile's. A move into a position already
seen in this game is never played; when nothing is left, it resigns.

Presets set the rule order; ``order`` (rule names joined by ``/``) overrides it.
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.engine import FOUNDATION, P_FILL, P_PILES
from sim.rules import Rules
from strategies.base import CompiledPolicy, Param, PolicyStrategy, StrategyError
from strategies.features import (
    F_BELOW,
    F_FREES_HOME,
    F_FULL,
    F_MISPLACED,
    F_TOP_NEED,
    FAR,
    SCRATCH_WITH_VISITED,
    WORK_OFFSET,
    child_hash,
    pile_features,
    position_hash,
    remember,
    visited,
)

RULES = ("home", "dig", "no_bury", "misplaced", "keep_piles", "cover")
PRESETS = {
    "balanced": ("home", "dig", "no_bury", "misplaced", "keep_piles", "cover"),
    "cautious": ("home", "no_bury", "dig", "keep_piles", "misplaced", "cover"),
    "builder": ("home", "misplaced", "cover", "keep_piles", "dig", "no_bury"),
}
WIDTHS = {"home": 1, "dig": 21, "no_bury": 21, "misplaced": 1, "keep_piles": 1, "cover": 4}
"""Bits each rule's (non-negative) score needs: dig and no_bury reach `FAR` + 1 < 2**21."""


def _packing(order: tuple[str, ...]) -> list[int]:
    """pparams[1:13]: each rule's bit shift (first rule highest), then whether it is used."""
    shifts, used, at = {}, {}, 0
    for name in reversed(order):
        shifts[name], used[name], at = at, 1, at + WIDTHS[name]
    return [shifts.get(r, 0) for r in RULES] + [used.get(r, 0) for r in RULES]


@nb.njit(cache=True)
def heuristic_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled heuristic; `HeuristicStrategy.choose` runs this same code on the view."""
    P = prm[P_PILES]
    known = scratch[WORK_OFFSET : WORK_OFFSET + P]
    for p in range(P):
        known[p] = st[P + p]
    feat = scratch[WORK_OFFSET + 52 : WORK_OFFSET + 52 * 6].reshape((5, 52))
    pile_features(st, prm, known, feat, scratch[WORK_OFFSET + 52 * 6 : WORK_OFFSET + 52 * 7])
    here = np.uint64(scratch[3]) if scratch[2] > 0 else position_hash(st, prm)
    if not remember(scratch, here):
        return -1
    allow_dig = pparams[0] != 0  # pparams[1:13]: see _packing
    fill_none = prm[P_FILL] == 0
    best = -1
    best_key = np.int64(-1)
    best_child = np.uint64(0)
    for i in range(n):
        m = moves[i]
        src, dst = m // 64, m % 64
        if src >= FOUNDATION:
            continue
        hs = np.int64(st[src])
        to_home = dst >= FOUNDATION
        dst_empty = not to_home and st[dst] == 0
        if not (to_home or feat[F_MISPLACED, src] == 1 or feat[F_FREES_HOME, src] == 1):
            if not allow_dig or hs < 2 or (dst_empty and fill_none):
                continue
            if feat[F_BELOW, src] >= (FAR if dst_empty else feat[F_FULL, dst]):
                continue
        # Each rule's score, made non-negative, packed into one key so that a
        # single comparison orders moves rule by rule (see `_packing`).
        key = ((1 if to_home else 0) << pparams[1]) * pparams[7]
        key += (FAR - feat[F_BELOW, src]) << pparams[2] if pparams[8] else 0
        key += (FAR + 1 if to_home else (FAR if dst_empty else feat[F_FULL, dst])) << pparams[3] if pparams[9] else 0
        key += feat[F_MISPLACED, src] << pparams[4] if pparams[10] else 0
        key += (0 if (hs == 1 and not to_home) else 1) << pparams[5] if pparams[11] else 0
        key += (13 if (to_home or dst_empty) else feat[F_TOP_NEED, dst]) << pparams[6] if pparams[12] else 0
        if key > best_key:
            child = child_hash(st, prm, here, m)
            if to_home or not visited(scratch, child):
                best = i
                best_key = key
                best_child = child
    if best >= 0:
        scratch[3] = np.int64(best_child)
    return best


def _order(strategy: str, preset: str, order: str) -> tuple[str, ...]:
    if not order:
        return PRESETS[preset]
    names = tuple(x.strip() for x in order.split("/") if x.strip())
    bad = [x for x in names if x not in RULES]
    if bad or len(set(names)) != len(names) or not names:
        raise StrategyError(f"strategy {strategy!r}: order={order!r} must name distinct rules from {'/'.join(RULES)}")
    return names


class HeuristicStrategy(PolicyStrategy):
    """Priority rules from the game's advice, in a configurable order."""

    name: ClassVar[str] = "heuristic"
    version: ClassVar[str] = "1"
    description: ClassVar[str] = "priority rules: home first, dig out needed cards, do not bury them, keep piles"
    PARAMETERS = {
        "preset": Param(str, "cautious", "rule order preset: " + ", ".join(f"{k} ({'/'.join(v)})" for k, v in PRESETS.items()),
                        choices=tuple(PRESETS)),
        "order": Param(str, "", "explicit rule order, names joined by '/', overriding the preset"),
        "allow_dig": Param(bool, True, "also move well-placed cards to dig out a pile holding a card needed sooner"),
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.rule_order = _order(self.name, self.params["preset"], self.params["order"])
        self._pparams = np.array([int(self.params["allow_dig"])] + _packing(self.rule_order), dtype=np.int64)

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(heuristic_policy, self._pparams, SCRATCH_WITH_VISITED)
