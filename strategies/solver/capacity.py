"""Capacity proofs of loss: the "free parking" relaxation, where only the number of holders counts.

Applies to in-suit foundations without worrying back, any-suit building, and
empty piles that are never refilled (`applies`): Baker's Dozen and Good Measure.

Read a position X as *base* cards and *parked* cards: a pile's base is the
pile without its top run (the cards from the top down that each build on the
card beneath); the run cards are parked. From X on, a base card never moved
since X stays where it is, with only base cards under it, so each pile's base
shrinks from the top, one card at a time; every other tableau card (a run card
of X, or a card that has moved) lies directly on a card one rank higher, since
a card only ever goes onto a pile by building on its top card (no card enters
an empty pile). Call that card its *holder*: a base top or a parked card, and
a holder holds one card. Kings are never parked (no card is a rank higher).

So in every position reachable from X, for every rank r, the parked cards of
rank r are at most the base tops of rank r + 1 plus the parked cards of rank
r + 1 (*feasible*). The *configuration* (the base lengths and the foundation
heights; the parked cards are then every card neither in a base nor home)
changes only when a base top leaves (home, if its suit is next, or onto a
holder, then parked) or a card goes home (a base top or a parked card whose
suit is next); moves of parked cards between holders leave it unchanged. So
the configurations along any real line from X form a path of feasible
configurations in which each step is one of those three changes. The relaxed
game allows exactly those steps between feasible configurations (it lets the
parked cards be rearranged at will between steps); if no path reaches all
cards home, no real line does: X is lost. The states are exact (no hashing).

A relaxed win proves nothing. This is every argument that counts holders per
rank over time (Hall's condition per rank, as the cards must be parked while
bases are dug out), and nothing about the order of parked cards on each other.
"""

from __future__ import annotations

import numpy as np

from sim.cards import DECK_SIZE, KING, card, rank_of, suit_of
from sim.engine import P_BUILD, P_FILL, P_FOUND, P_PILES, P_WORRY, builds_on, fheight_at, is_king, pile_base, rule_params
from sim.rules import BUILDS, EMPTY_FILLS, FOUNDATIONS, Rules

WON, LOST, CAPPED = "won", "lost", "capped"


def applies(rules: Rules) -> bool:
    """Whether the argument above holds under ``rules``."""
    return applies_to(rule_params(rules))


def applies_to(prm: np.ndarray) -> bool:
    """`applies`, read from the engine's rule parameters ``prm`` (as the solver holds them)."""
    return bool(prm[P_FOUND] == FOUNDATIONS.index("suit") and not prm[P_WORRY]
                and prm[P_BUILD] == BUILDS.index("any-suit") and prm[P_FILL] == EMPTY_FILLS.index("none"))


def split(piles: list[tuple[int, ...]], build: int) -> list[tuple[int, ...]]:
    """Each pile's base: the pile without its top run (``build``: the engine's building rule code)."""
    bases = []
    for pile in piles:
        j = len(pile) - 1
        while j >= 1 and builds_on(pile[j], pile[j - 1], build):
            j -= 1
        bases.append(tuple(pile[: j + 1]))
    return bases


def free_parking(bases: list[tuple[int, ...]], home: tuple[int, ...], cap: int) -> tuple[str, int]:
    """The relaxed game from (``bases``, foundation heights ``home``): (WON / LOST / CAPPED, states expanded).

    CAPPED: more than ``cap`` states, undecided."""
    P = len(bases)

    def feasible(L: tuple[int, ...], h: tuple[int, ...]) -> bool:
        inbase = {bases[p][i] for p in range(P) for i in range(L[p])}
        parked = [0] * (KING + 1)  # by rank
        holders = [0] * (KING + 2)
        for p in range(P):
            if L[p]:
                holders[rank_of(bases[p][L[p] - 1])] += 1
        for c in range(DECK_SIZE):
            if rank_of(c) >= h[suit_of(c)] and c not in inbase:
                parked[rank_of(c)] += 1
        return parked[KING] == 0 and all(parked[r] <= holders[r + 1] + parked[r + 1] for r in range(KING))

    def children(L: tuple[int, ...], h: tuple[int, ...]) -> list[tuple[tuple[int, ...], tuple[int, ...]]]:
        inbase = {bases[p][i] for p in range(P) for i in range(L[p])}
        out = []
        for s in range(4):  # a parked card home
            if h[s] <= KING and card(h[s], s) not in inbase:
                out.append((L, h[:s] + (h[s] + 1,) + h[s + 1:]))
        for p in range(P):  # a base top home, or parked
            if L[p]:
                b = bases[p][L[p] - 1]
                L2 = L[:p] + (L[p] - 1,) + L[p + 1:]
                s = suit_of(b)
                if h[s] == rank_of(b):
                    out.append((L2, h[:s] + (h[s] + 1,) + h[s + 1:]))
                if not is_king(b):
                    out.append((L2, h))
        return [x for x in out if feasible(*x)]

    root = (tuple(len(b) for b in bases), tuple(home))
    seen = {root}
    stack = [iter(children(*root))]
    while stack:
        for x in stack[-1]:
            if x in seen:
                continue
            if all(v == KING + 1 for v in x[1]):
                return WON, len(seen)
            seen.add(x)
            if len(seen) > cap:
                return CAPPED, len(seen)
            stack.append(iter(children(*x)))
            break
        else:
            stack.pop()
    return LOST, len(seen)


def free_parking_state(st: np.ndarray, prm: np.ndarray, cap: int) -> tuple[str, int]:
    """`free_parking` from the engine state ``st`` (rule parameters ``prm``)."""
    P = int(prm[P_PILES])
    piles = [tuple(int(st[pile_base(prm, p) + i]) for i in range(int(st[p]))) for p in range(P)]
    home = tuple(int(st[fheight_at(P, s)]) for s in range(4))
    return free_parking(split(piles, int(prm[P_BUILD])), home, cap)
