"""The completions of the hidden cards a hint scores every move on: drawn at random, or every one when few.

A completion deals the cards the player has not seen into the face-down slots.
`Completions` hands out completion 0, 1, 2, ... in a fixed order made from the
seed, so that every move is scored on the same ones (common random numbers: the
differences between moves are not drowned in the differences between samples).

With many cards hidden they are drawn as the `sampling` player draws them
(`strategies.sampling.draw_completion`). With few, every arrangement is dealt
exactly once, in the same way: each order of the unseen cards is dealt pile by
pile, the hidden kings put under the other hidden cards where the variant moves
kings to the bottom, and an order that puts a non-king under a face-up king
resting on hidden cards is left out. So the enumeration is the distribution the
draws sample (an arrangement that several orders give counts as many times),
and the two agree. Dick's last pile's three hidden cards are 6 orders.

Only face-up cards and the foundations are read: the states handed in have
their face-down slots blanked (`sim.position.Position.blanked`) and every slot
is overwritten.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from sim import engine as E
from sim.cards import DECK_SIZE
from sim.rng import CounterRNG, stream_key
from strategies.sampling import draw_completion
from strategies.sampling.keep import cards_in_sight

HINT_STREAM = 0x48494E54
"""Mixed into the seed of a hint's random stream, so that it never coincides with a deal's or a strategy's."""


class Completions:
    """Completion ``j`` of the hidden cards of the state ``st`` (rules ``prm``), for j below `size`.

    `exact` says whether they are every arrangement (when at most ``limit`` orders of
    the unseen cards exist) or ``limit`` random draws. `key` names a completion's
    arrangement, so that one dealt by several orders is solved once.
    """

    def __init__(self, st: np.ndarray, prm: np.ndarray, limit: int, seed: int) -> None:
        self.st, self.prm = st, prm
        P = int(prm[E.P_PILES])
        self.downs = [int(st[E.down_at(P, p)]) for p in range(P)]
        self.hidden = sum(self.downs)
        self._rng = CounterRNG(stream_key(seed ^ HINT_STREAM, self.hidden))
        self.exact = math.factorial(self.hidden) <= limit
        self._drawn: list[np.ndarray] = []
        if self.exact:
            self._states, self._order = self._enumerate()
            self.size = len(self._order)
        else:
            self._draw_rng = np.array([self._rng.key, 0], dtype=np.uint64)
            self._pool = np.zeros(DECK_SIZE, dtype=np.int64)
            self.size = limit

    def key(self, j: int) -> int:
        """The arrangement of completion ``j`` (equal keys: the same cards in the same slots)."""
        return self._order[j] if self.exact else j

    def state(self, j: int) -> np.ndarray:
        """Completion ``j`` as an engine state (do not change it)."""
        if self.exact:
            return self._states[self._order[j]]
        while len(self._drawn) <= j:
            out = self.st.copy()
            draw_completion(self.st, self.prm, out, self._draw_rng, self._pool)
            self._drawn.append(out)
        return self._drawn[j]

    def _enumerate(self) -> tuple[list[np.ndarray], list[int]]:
        """Every arrangement (distinct states) and, for each order of the unseen cards that fits the table,
        the arrangement it deals, shuffled with the seed's stream."""
        pool = np.flatnonzero(~cards_in_sight(self.st, self.prm))
        ktb = bool(self.prm[E.P_KTB])
        index: dict[bytes, int] = {}
        states: list[np.ndarray] = []
        order: list[int] = []
        for perm in itertools.permutations(pool.tolist()):
            out = self.st.copy()
            if not self._deal(np.array(perm, dtype=np.int64), out, ktb):
                continue
            k = index.setdefault(out.tobytes(), len(states))
            if k == len(states):
                states.append(out)
            order.append(k)
        for i in range(len(order) - 1, 0, -1):  # Fisher-Yates: a fixed order from the seed
            j = self._rng.below(i + 1)
            order[i], order[j] = order[j], order[i]
        return states, order

    def _deal(self, cards: np.ndarray, out: np.ndarray, ktb: bool) -> bool:
        """Deal ``cards`` into the face-down slots of ``out`` as `draw_completion` does; False when a face-up king
        rests on a hidden non-king, which no deal gives where kings go to the bottom."""
        k = 0
        for p, d in enumerate(self.downs):
            base = int(E.pile_base(self.prm, p))
            E.put_pile(cards, k, d, out, base, ktb)
            if ktb and d > 0 and E.is_king(np.int64(out[base + d])) and not all(E.is_king(c) for c in cards[k : k + d]):
                return False
            k += d
        return True
