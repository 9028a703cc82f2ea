"""Deal numbering: (seed, deal number) -> the starting `Position`, the same on every machine.

The default source shuffles with the counter-based generator of `sim.rng`:
the deck is the cards not starting home, in card-code order; a Fisher-Yates
shuffle (for i = n-1 down to 1, swap i with a uniform j in [0, i]) draws from the
stream keyed by (seed, deal number). Card k of the shuffled deck goes to pile
k mod columns. With ``kings_to_bottom``, each pile's kings move under its other
cards, both groups keeping their order. The bottom ``face_down`` cards of each
pile are face down. Deal numbers are stable forever; golden layouts in the tests
pin them.

The ``pysol`` source reproduces PySolFC's numbered Baker's Dozen deals through
the ``pysol-cards`` package, including PySolFC's own way of moving kings down
(a swap with the lowest non-king of the pile). It exists to cross-check figures
against other programs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sim.cards import KING, parse_card, rank_of
from sim.engine import shuffle_deck
from sim.errors import UserError
from sim.position import Position
from sim.rules import Rules

SOURCES = ("default", "pysol")
MAX_DEAL = (1 << 62) - 1
MAX_SEED = (1 << 62) - 1
"""Deal seeds and strategy seeds: 0..MAX_SEED, which the compiled generator holds as int64 (`sim.rng`)."""
PYSOL_MAX_DEAL = 10**20 - 1


class DealError(UserError):
    """A deal number, seed or source that is not allowed."""


@dataclass(frozen=True)
class Deal:
    """A starting position with where it came from."""

    rules: Rules
    number: int
    seed: int
    source: str
    position: Position


def check_deal_number(number: int, seed: int = 0, source: str = "default") -> None:
    """Raise `DealError` naming the allowed range when the deal, seed or source is out of it."""
    if source not in SOURCES:
        raise DealError(f"unknown deal source {source!r}; allowed: {', '.join(SOURCES)}")
    top = PYSOL_MAX_DEAL if source == "pysol" else MAX_DEAL
    if not _is_whole(number):
        raise DealError(f"deal number {number!r} is not a whole number; allowed: 1..{top} for source {source!r}")
    if not 1 <= number <= top:
        raise DealError(f"deal number {number!r} is out of range; allowed: 1..{top} for source {source!r}")
    if not _is_whole(seed):
        raise DealError(f"seed {seed!r} is not a whole number; allowed: 0..{MAX_SEED}")
    if not 0 <= seed <= MAX_SEED:
        raise DealError(f"seed {seed!r} is out of range; allowed: 0..{MAX_SEED}")
    if source == "pysol" and seed != 0:
        raise DealError("the pysol source numbers deals by PySolFC's own generator; it takes no seed (use --seed 0)")


def check_strategy_seed(seed: int) -> None:
    """Raise `DealError` naming the allowed range when a strategy seed is not one the RNG supports."""
    if not _is_whole(seed):
        raise DealError(f"strategy seed {seed!r} is not a whole number; allowed: 0..{MAX_SEED}")
    if not 0 <= seed <= MAX_SEED:
        raise DealError(f"strategy seed {seed!r} is out of range; allowed: 0..{MAX_SEED}")


def _is_whole(value: object) -> bool:
    """An integer (Python or numpy), but not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def deck_order(rules: Rules, number: int, seed: int = 0) -> np.ndarray:
    """The shuffled order of the dealt cards (default source)."""
    home = set(rules.start_home_cards)
    deck = np.array([c for c in range(52) if c not in home], dtype=np.int64)
    shuffle_deck(seed, number, deck)
    return deck


def kings_to_bottom(pile: list[int]) -> list[int]:
    """The pile with its kings moved under the other cards, each group in its order."""
    return [c for c in pile if rank_of(c) == KING] + [c for c in pile if rank_of(c) != KING]


def arrange(order: list[int] | np.ndarray, rules: Rules) -> Position:
    """Deal ``order`` round-robin into the piles of ``rules`` and apply the deal-time rules."""
    piles: list[list[int]] = [[] for _ in range(rules.columns)]
    for k, c in enumerate(order):
        piles[k % rules.columns].append(int(c))
    if rules.kings_to_bottom:
        piles = [kings_to_bottom(p) for p in piles]
    return _position(piles, rules)


def _position(piles: list[list[int]], rules: Rules) -> Position:
    foundations: list[tuple[int, ...]] = [(), (), (), ()]
    for i, c in enumerate(sorted(rules.start_home_cards, key=rank_of)):
        slot = c // 13 if rules.foundation == "suit" else i
        foundations[slot] = foundations[slot] + (c,)
    downs = tuple(min(rules.face_down, max(len(p) - 1, 0)) for p in piles)
    return Position(tuple(tuple(p) for p in piles), downs, tuple(foundations))


def pysol_piles(number: int, rules: Rules) -> list[list[int]]:
    """PySolFC's layout of Baker's Dozen deal ``number`` (13 piles of 4)."""
    from pysol_cards.cards import CardRenderer
    from pysol_cards.deal_game import Game
    from pysol_cards.random_base import RandomBase

    if rules.columns != 13 or rules.cards_per_column != 4 or rules.start_home:
        raise DealError(
            f"the pysol source deals 13 piles of 4 (PySolFC's Baker's Dozen); variant {rules.name!r} "
            f"has {rules.columns} x {rules.cards_per_column}{' with cards starting home' if rules.start_home else ''}"
        )
    game = Game("bakers_dozen", number, RandomBase.DEALS_PYSOLFC, 13)
    game.game_num = number
    game.deal()
    renderer = CardRenderer(True)
    order = [parse_card(renderer.to_s(c)) for c in reversed(game.cards)]
    if rules.kings_to_bottom:
        order = _pysol_king_swap(order, 13)
    return [order[i::13] for i in range(13)]


def _pysol_king_swap(order: list[int], n: int) -> list[int]:
    """PySolFC's king step: each king swaps with the lowest non-king dealt into its pile."""
    cards = list(order)
    for i in [i for i, c in enumerate(cards) if rank_of(c) == KING]:
        for j in range(i % n, i, n):
            if rank_of(cards[j]) != KING:
                cards[i], cards[j] = cards[j], cards[i]
                break
    return cards


def make_deal(rules: Rules, number: int, seed: int = 0, source: str = "default") -> Deal:
    """Deal number ``number`` of ``rules`` from ``source`` (checked)."""
    check_deal_number(number, seed, source)
    number, seed = int(number), int(seed)
    if source == "pysol":
        position = _position(pysol_piles(number, rules), rules)
    else:
        position = arrange(deck_order(rules, number, seed), rules)
    return Deal(rules, number, seed, source, position)
