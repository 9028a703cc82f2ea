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
card is needed later than the source pile's.

The loop guard (``guard``). ``cycle`` (the default, version 2): a move already
taken from a position is not taken from it again until the game makes
progress (a card goes home or a face-down card turns up; no earlier position
can come back after that, so the memory of moves taken starts afresh). It
remembers positions by `strategies.features.placed_hash`, which tells the
piles apart. ``position`` (version 1) never moves into a position seen before
in the game, by `strategies.features.position_hash`, a sum over (card, height)
that does not say which pile a card is in: a card moved to another pile at its
own height looked like a return to the position it left and was refused,
which ended many games still won (deals 1-20,000 of Baker's Dozen: 10.16%
won against 32.32% with ``cycle``). When no move is left, it resigns. It also
resigns once it has taken `strategies.features.VISITED_LIMIT` (384) moves
without progress (``position``: seen that many positions in the game), where
its memory is full: far beyond its longest game measured (140 moves on five
presets, tests/test_features.py).

Presets set the rule order; ``order`` (rule names joined by ``/``) overrides it.
"""

from __future__ import annotations

from typing import ClassVar

import numba as nb
import numpy as np

from sim.engine import FOUNDATION, P_FILL, P_FOUND, P_PILES, down_at, move_from, move_to, pile_base, progress_mark
from sim.rules import FILL_NONE, FOUND_SUIT, Rules
from strategies.base import CompiledPolicy, Param, PolicyStrategy, StrategyError
from strategies.features import (
    ENTRY_FREES_HOME,
    ENTRY_MISPLACED,
    FAR,
    NEEDS_OFFSET,
    PILES_OFFSET,
    PROGRESS_BIAS,
    SCRATCH_LAST,
    SCRATCH_MOVED,
    SCRATCH_PROGRESS,
    SCRATCH_STORED,
    SCRATCH_WITH_VISITED,
    VISITED_LIMIT,
    alternate_frees_home,
    entry_below,
    entry_top_need,
    fill_needs_at,
    forget,
    move_key,
    moved_hash,
    placed_hash,
    placed_moved_hash,
    position_hash,
    refresh_piles,
    remember,
    suit_entry_at,
    visited,
)

RULES = ("home", "dig", "no_bury", "misplaced", "keep_piles", "cover")
R_HOME, R_DIG, R_NO_BURY, R_MISPLACED, R_KEEP_PILES, R_COVER = range(len(RULES))
"""Each rule's index in `RULES`."""
PRESETS = {
    "balanced": ("home", "dig", "no_bury", "misplaced", "keep_piles", "cover"),
    "cautious": ("home", "no_bury", "dig", "keep_piles", "misplaced", "cover"),
    "builder": ("home", "misplaced", "cover", "keep_piles", "dig", "no_bury"),
}
WIDTHS = {"home": 1, "dig": 21, "no_bury": 21, "misplaced": 1, "keep_piles": 1, "cover": 4}
"""Bits each rule's (non-negative) score needs: dig and no_bury reach `FAR` + 1 < 2**21."""


HP_ALLOW_DIG = 0
HP_WEIGHT = 1
HP_HOME_FIRST = HP_WEIGHT + len(RULES)
HP_CYCLES = HP_HOME_FIRST + 1
HP_SIZE = HP_CYCLES + 1
"""Slots of the policy's parameter array (`pparams`): whether digging moves are
allowed; from ``HP_WEIGHT``, each rule's weight in the packed key (`RULES`
order): ``2 ** shift`` for a rule in the order, the first rule's shift highest
and each next one lower by the bits the rules after it need (`WIDTHS`), 0 for
a rule left out; then whether ``home`` comes first; then which loop guard it plays
with (`GUARDS`: 1 for ``cycle``, 0 for ``position``)."""
GUARDS = ("cycle", "position")
"""The loop guards: ``cycle`` never takes a move it took before from the same position since the
last progress; ``position`` (version 1's, and `lookahead`'s rollouts, which hand it the game's
memory of positions) never moves into a position seen before in the game."""


def policy_params(order: tuple[str, ...], allow_dig: bool, guard: str = "cycle") -> np.ndarray:
    """The policy's parameter array (`HP_SIZE` slots) for the rule ``order`` and loop ``guard``."""
    pparams = np.zeros(HP_SIZE, dtype=np.int64)
    pparams[HP_ALLOW_DIG] = int(allow_dig)
    pparams[HP_CYCLES] = int(guard == "cycle")
    at = 0
    for name in reversed(order):
        pparams[HP_WEIGHT + RULES.index(name)] = 1 << at
        at += WIDTHS[name]
    pparams[HP_HOME_FIRST] = int(order[0] == "home")
    return pparams


@nb.njit(cache=True, inline="always")
def _key(weight: tuple, to_home: bool, dst_empty: bool, alone: bool, below: np.int64, src_misplaced: bool,
         dst_full: np.int64, dst_need: np.int64) -> np.int64:
    """Each rule's score of a move, made non-negative, packed into one key so
    that a single comparison orders moves rule by rule (``weight``: the rules'
    weights, see `HP_WEIGHT`)."""
    key = (1 if to_home else 0) * weight[R_HOME]
    key += (FAR - below) * weight[R_DIG]
    key += (FAR + 1 if to_home else (FAR if dst_empty else dst_full)) * weight[R_NO_BURY]
    key += (1 if src_misplaced else 0) * weight[R_MISPLACED]
    key += (0 if (alone and not to_home) else 1) * weight[R_KEEP_PILES]
    key += (13 if (to_home or dst_empty) else dst_need) * weight[R_COVER]
    return key


@nb.njit(cache=True)
def heuristic_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN201 (numba)
    """Compiled heuristic; `HeuristicStrategy.choose` runs this same code on the view.

    It reads what it needs of a pile (`strategies.features.pile_entry`) only
    when a move needs it, and keeps it in the scratch from one decision to the
    next: a move changes at most its two piles, and a card going home (a new
    table of needs) or a fresh start clears them all. Among moves of one source
    (the engine lists moves by source) the source is read once; when ``home``
    is the first rule and a card can go home, only the moves home are read (a
    move home then beats every other). Speed: every array it holds costs an
    atomic count pair whenever numba cannot prune it (docs/performance.md,
    "Strategies"), so it hands its helpers the scratch and an offset rather
    than slices, calls helpers written with one exit, hashes the child from
    values at hand (`moved_hash`), and reads piles with `suit_entry_at` (no
    count left in it), adding `alternate_frees_home` only under rules that need it.
    """
    # Read the parameters first: numba then drops its reference to pparams at once.
    home_first, allow_dig, cycles = pparams[HP_HOME_FIRST] != 0, pparams[HP_ALLOW_DIG] != 0, pparams[HP_CYCLES] != 0
    w = HP_WEIGHT
    weight = (pparams[w + R_HOME], pparams[w + R_DIG], pparams[w + R_NO_BURY], pparams[w + R_MISPLACED],
              pparams[w + R_KEEP_PILES], pparams[w + R_COVER])
    P, fill_none, in_suit = prm[P_PILES], prm[P_FILL] == FILL_NONE, prm[P_FOUND] == FOUND_SUIT
    # the last decision's move was played since (the cycle guard empties its table at each progress)
    continuing = scratch[SCRATCH_STORED] > 0 or scratch[SCRATCH_PROGRESS] != 0
    if continuing:
        here = np.uint64(scratch[SCRATCH_LAST])
    else:
        here = placed_hash(st, prm) if cycles else position_hash(st, prm)
    best = -1
    if cycles:
        mark = progress_mark(st, prm) + PROGRESS_BIAS
        if mark != scratch[SCRATCH_PROGRESS]:  # no move taken before can come again: a fresh table
            forget(scratch)
            scratch[SCRATCH_PROGRESS] = mark
        room = scratch[SCRATCH_STORED] < VISITED_LIMIT
    else:
        room = remember(scratch, here)
    if room:
        refresh_piles(scratch, P, in_suit, continuing, fill_needs_at(st, prm, scratch, NEEDS_OFFSET))
        home_only = False
        if home_first:
            for i in range(n):  # a tableau card can go home
                home_only = home_only or (move_to(moves[i]) >= FOUNDATION and move_from(moves[i]) < FOUNDATION)
        best_key, best_child = np.int64(-1), np.uint64(0)
        src_at, src_misplaced, src_free, below = -1, False, False, FAR
        for i in range(n):
            m = moves[i]
            src, dst = move_from(m), move_to(m)
            to_home = dst >= FOUNDATION
            if src >= FOUNDATION or (home_only and not to_home):
                continue
            if src != src_at:
                src_at = src
                # the cached entry's lookup is written out here and for dst below on purpose: as an inlined
                # helper taking the arrays it costs numba reference counts, 3.84x greedy's time against 2.85x
                # (`benchmarks/strategies.py --choices 20000`, same digests)
                e = scratch[PILES_OFFSET + src]
                if e == 0:
                    k = np.int64(st[down_at(P, src)])
                    e = suit_entry_at(st, prm, src, k, scratch, NEEDS_OFFSET)
                    if not in_suit:  # `pile_entry_at` in its two parts, calling the second only when needed
                        e = alternate_frees_home(st, prm, src, k, e)
                    scratch[PILES_OFFSET + src] = e
                src_misplaced = (e & ENTRY_MISPLACED) != 0
                src_free = src_misplaced or (e & ENTRY_FREES_HOME) != 0
                below = entry_below(e)
            hs = np.int64(st[src])
            dst_empty = not to_home and st[dst] == 0
            digging = not (to_home or src_free)  # considered only to dig out a pile needed sooner
            if digging and (not allow_dig or hs < 2 or (dst_empty and fill_none)):
                continue
            dst_full, dst_need = FAR, np.int64(13)
            if not (to_home or dst_empty):
                e = scratch[PILES_OFFSET + dst]
                if e == 0:
                    k = np.int64(st[down_at(P, dst)])
                    e = suit_entry_at(st, prm, dst, k, scratch, NEEDS_OFFSET)
                    if not in_suit:  # `pile_entry_at` in its two parts, calling the second only when needed
                        e = alternate_frees_home(st, prm, dst, k, e)
                    scratch[PILES_OFFSET + dst] = e
                dst_need = entry_top_need(e)
                dst_full = min(entry_below(e), dst_need * 16)  # `pile_urgency` of a pile that is not empty
            if digging and below >= dst_full:
                continue
            key = _key(weight, to_home, dst_empty, hs == 1, below, src_misplaced, dst_full, dst_need)
            if key > best_key:
                c = np.int64(st[pile_base(prm, src) + hs - 1])
                hd, d = 0 if to_home else np.int64(st[dst]), np.int64(st[down_at(P, src)])
                if cycles:
                    child = placed_moved_hash(here, c, src, hs, d, dst, hd)
                else:
                    child = moved_hash(here, c, False, hs, d, to_home, hd)
                if to_home or not visited(scratch, move_key(here, child) if cycles else child):
                    best, best_key, best_child = i, key, child
        if best >= 0:
            if cycles:
                remember(scratch, move_key(here, best_child))
            scratch[SCRATCH_LAST] = np.int64(best_child)
            scratch[SCRATCH_MOVED] = moves[best]
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
    version: ClassVar[str] = "2"
    description: ClassVar[str] = "priority rules: home first, dig out needed cards, do not bury them, keep piles"
    PARAMETERS = {
        "preset": Param(str, "cautious", "rule order preset: " + ", ".join(f"{k} ({'/'.join(v)})" for k, v in PRESETS.items()),
                        choices=tuple(PRESETS)),
        "order": Param(str, "", "explicit rule order, names joined by '/', overriding the preset"),
        "allow_dig": Param(bool, True, "also move well-placed cards to dig out a pile holding a card needed sooner"),
        "guard": Param(str, "cycle", "loop guard: cycle (never repeat a move from a position until the next progress), "
                       "position (version 1's: never move into a position seen before in the game)", choices=GUARDS),
    }

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self.rule_order = _order(self.name, self.params["preset"], self.params["order"])
        self._pparams = policy_params(self.rule_order, self.params["allow_dig"], self.params["guard"])

    def compiled(self, rules: Rules) -> CompiledPolicy:
        return CompiledPolicy(heuristic_policy, self._pparams, SCRATCH_WITH_VISITED)
