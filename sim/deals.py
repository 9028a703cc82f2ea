"""Deal numbering: (seed, deal number) -> the starting `Position`, the same on every machine.

The default source shuffles with the counter-based generator of `sim.rng`:
the deck is the cards not starting home, in card-code order; a Fisher-Yates
shuffle (for i = n-1 down to 1, swap i with a uniform j in [0, i]) draws from the
stream keyed by (seed, deal number). Card k of the shuffled deck goes to pile
k mod columns. With ``kings_to_bottom``, each pile's kings move under its other
cards, both groups keeping their order. The bottom ``face_down`` cards of each
pile are face down, and the cards starting home go home (rank by rank; with
alternate-colour foundations each ace to the first empty foundation). Deal
numbers are stable forever; golden layouts in the tests pin them.

There is one dealer: the compiled `sim.engine.deal_state` lays out every deal,
here (`arrange`, which reads the layout back as a `Position`) and in the
compiled batch loop (`sim.engine.play_deals`, given `deck_and_home`), so the
two agree by construction. It is imported when a deal is made, not with this
module, whose bounds (`MAX_DEAL`, `MAX_SEED`) label the command line's options:
verbs that deal nothing do not load numba.

The ``pysol`` source reproduces PySolFC's numbered Baker's Dozen and Good
Measure deals from the ``pysol-cards`` package's shuffle, including PySolFC's
own way of moving kings down (a swap with the lowest non-king of the pile) and
of taking Good Measure's two aces out (with suits renamed; see
`_pysol_good_measure`). It exists to cross-check figures against other
programs and to tell PySolFC's players which of its deals can be won.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sim.cards import ACE, DECK_SIZE, KING, card, parse_card, rank_of, suit_of
from sim.errors import UserError, quoted
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
        raise DealError(f"unknown deal source {quoted(source)}; allowed: {', '.join(SOURCES)}")
    top = PYSOL_MAX_DEAL if source == "pysol" else MAX_DEAL
    if not _is_whole(number):
        raise DealError(f"deal number {quoted(number)} is not a whole number; allowed: 1..{top} for source {source!r}")
    if not 1 <= number <= top:
        raise DealError(f"deal number {quoted(number)} is out of range; allowed: 1..{top} for source {source!r}")
    if not _is_whole(seed):
        raise DealError(f"seed {quoted(seed)} is not a whole number; allowed: 0..{MAX_SEED}")
    if not 0 <= seed <= MAX_SEED:
        raise DealError(f"seed {quoted(seed)} is out of range; allowed: 0..{MAX_SEED}")
    if source == "pysol" and seed != 0:
        raise DealError("the pysol source numbers deals by PySolFC's own generator; it takes no seed (use --seed 0)")


def check_deal_range(first: object, last: object, what: str) -> tuple[int, int]:
    """(first, last) when both are whole deal numbers with 1 <= first <= last; else `DealError` in one line
    starting with ``what`` (how the caller's user wrote the range: ``--deals '5-3'``, ``deals=(5, 3)``)."""
    if not (_is_whole(first) and _is_whole(last)):
        raise DealError(f"{what} is not a range; allowed: A-B or N, whole numbers, 1 <= A <= B")
    if first < 1:  # type: ignore[operator]
        raise DealError(f"{what}: deal numbers start at 1")
    if first > last:  # type: ignore[operator]
        raise DealError(f"{what}: the first deal ({first}) is after the last ({last})")
    return int(first), int(last)  # type: ignore[call-overload]


def check_strategy_seed(seed: int) -> None:
    """Raise `DealError` naming the allowed range when a strategy seed is not one the RNG supports."""
    if not _is_whole(seed):
        raise DealError(f"strategy seed {quoted(seed)} is not a whole number; allowed: 0..{MAX_SEED}")
    if not 0 <= seed <= MAX_SEED:
        raise DealError(f"strategy seed {quoted(seed)} is out of range; allowed: 0..{MAX_SEED}")


def _is_whole(value: object) -> bool:
    """An integer (Python or numpy), but not a bool."""
    return isinstance(value, int | np.integer) and not isinstance(value, bool | np.bool_)


def deck_and_home(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """What the compiled dealer takes: the cards to deal (every card not starting home) in
    card-code order, the deck before its shuffle; and the cards starting home, in the order
    they go home (`Rules.start_home_cards`)."""
    home = rules.start_home_cards
    deck = np.array([c for c in range(DECK_SIZE) if c not in home], dtype=np.int64)
    return deck, np.array(home, dtype=np.int64)


def deck_order(rules: Rules, number: int, seed: int = 0) -> np.ndarray:
    """The shuffled order of the dealt cards (default source)."""
    from sim.engine import shuffle_deck

    deck, _ = deck_and_home(rules)
    shuffle_deck(seed, number, deck)
    return deck


def arrange(order: list[int] | np.ndarray, rules: Rules) -> Position:
    """Deal ``order`` (each card not starting home, once, in dealing order) into the piles of
    ``rules`` with the engine's dealer, `sim.engine.deal_state` (round-robin, kings to the
    bottom, face-down cards, the cards starting home put home), and return the layout.

    Raises `ValueError` when ``order`` is not the variant's dealt cards.
    """
    from sim.engine import deal_state, new_state, rule_params

    deck, home = deck_and_home(rules)
    dealt = np.array(order, dtype=np.int64)
    if dealt.shape != deck.shape or not np.array_equal(np.sort(dealt), deck):
        raise ValueError(f"a deal of variant {rules.name!r} deals its {deck.shape[0]} cards not starting home, "
                         f"each once; got {dealt.size} cards")
    prm = rule_params(rules)
    st = new_state(prm)
    deal_state(st, prm, dealt, home)
    return _dealt_position(st, prm, rules.columns)


def _dealt_position(st: np.ndarray, prm: np.ndarray, piles: int) -> Position:
    """The layout in a dealt engine state (read by the engine's `offsets`)."""
    from sim.engine import P_CAP, offsets

    o, cap = offsets(piles), int(prm[P_CAP])
    flat = st.tolist()
    return Position(
        tuple(tuple(flat[o.pile(p, cap) : o.pile(p, cap) + flat[o.height(p)]]) for p in range(piles)),
        tuple(flat[o.down : o.down + piles]),
        tuple(tuple(flat[o.foundation(f) : o.foundation(f) + flat[o.fheight + f]]) for f in range(4)),
    )


RENAME_SAFE_BUILDS = ("any-suit", "other-suit", "same-suit")
"""Builds that no renaming of suits changes (the pysol Good Measure deal renames them)."""


def check_pysol_shape(rules: Rules) -> None:
    """Raise `DealError` in one line unless PySolFC deals ``rules``'s shape: its Baker's Dozen (13 piles of 4,
    nothing home) or its Good Measure (10 piles of 5, two aces home, with rules a renaming of suits keeps)."""
    shape = (rules.columns, rules.cards_per_column)
    home = rules.start_home_cards
    if shape == (13, 4) and not home:
        return
    if shape == (10, 5) and len(home) == 2 and all(rank_of(c) == ACE for c in home):
        if rules.build not in RENAME_SAFE_BUILDS or rules.foundation != "suit":
            raise DealError(
                f"the pysol source's Good Measure renames suits, which variant {rules.name!r} tells apart by colour "
                f"(build {rules.build}, foundation {rules.foundation}); allowed: build "
                f"{', '.join(RENAME_SAFE_BUILDS)} with foundations in suit"
            )
        return
    raise DealError(
        f"the pysol source deals 13 piles of 4 with nothing home (PySolFC's Baker's Dozen) or 10 piles of 5 with "
        f"two aces home (its Good Measure); variant {rules.name!r} has {rules.columns} x {rules.cards_per_column}"
        f"{f' with {len(home)} cards starting home' if home else ''}"
    )


def pysol_order(number: int, rules: Rules) -> list[int]:
    """PySolFC's deal ``number`` for the shape of ``rules`` (`check_pysol_shape`), as a dealing order for `arrange`.

    Its Baker's Dozen, or its Good Measure (`_pysol_good_measure`). With
    ``kings_to_bottom`` PySolFC's own king step is applied, and `make_deal`
    then lays the order out without the dealer's: the layout is PySolFC's.
    """
    check_pysol_shape(rules)
    if rules.columns == 10:
        return _pysol_good_measure(number, rules)
    shuffled = _pysol_shuffle(number)
    return _pysol_king_swap(shuffled, 13) if rules.kings_to_bottom else shuffled


def _pysol_shuffle(number: int) -> list[int]:
    """PySolFC's shuffled deck for deal ``number`` (the same for every game of one 52-card deck), in
    the order PySolFC deals it: card k goes to pile k mod piles."""
    from pysol_cards.cards import CardRenderer
    from pysol_cards.deal_game import Game
    from pysol_cards.random_base import RandomBase

    game = Game("bakers_dozen", number, RandomBase.DEALS_PYSOLFC, 13)
    game.game_num = number
    game.deal()
    renderer = CardRenderer(True)
    return [parse_card(renderer.to_s(c)) for c in reversed(game.cards)]


def _pysol_good_measure(number: int, rules: Rules) -> list[int]:
    """PySolFC's Good Measure deal ``number``, its suits renamed to put the variant's aces home.

    PySolFC moves kings down as in its Baker's Dozen (over 10 piles), then takes
    out the two aces dealt last and puts them home: every card dealt after one
    of them moves one pile back, so about 2% of its deals keep a king above
    another card. It homes whichever two aces those are; the variant names its
    own (clubs and diamonds in the preset). Renaming suits, PySolFC's home
    aces' suits to the variant's in suit order and the other two likewise,
    changes no verdict where the build ignores suits or only compares them
    (checked by `pysol_order`) and foundations build in suit.
    """
    order = _pysol_shuffle(number)
    if rules.kings_to_bottom:
        order = _pysol_king_swap(order, 10)
    homed_at = [i for i, c in enumerate(order) if rank_of(c) == ACE][-2:]
    homed = sorted(suit_of(order[i]) for i in homed_at)
    wanted = sorted(suit_of(c) for c in rules.start_home_cards)
    rest = sorted(set(range(4)) - set(homed)), sorted(set(range(4)) - set(wanted))
    rename = dict(zip(homed + rest[0], wanted + rest[1], strict=True))
    return [card(rank_of(c), rename[suit_of(c)]) for i, c in enumerate(order) if i not in homed_at]


def _pysol_king_swap(order: list[int], n: int) -> list[int]:
    """PySolFC's king step: each king swaps with the lowest non-king dealt into its pile."""
    cards = list(order)
    for i in [i for i, c in enumerate(cards) if rank_of(c) == KING]:
        for j in range(i % n, i, n):
            if rank_of(cards[j]) != KING:
                cards[i], cards[j] = cards[j], cards[i]
                break
    return cards


def dealt_positions(rules: Rules, numbers: Sequence[int], seed: int = 0, source: str = "default") -> Iterator[Position]:
    """The layouts of deals ``numbers`` of ``rules`` from ``source`` (each checked), in order: `make_deal`'s
    positions (for the default source it deals through this), with the deck, the rule parameters and the state made
    once for them all (a run checks a chunk's wins from their layouts, and making each deal alone costs as much as
    checking a quarter of its moves). The order is `deck_order`'s, dealt as `arrange` deals it, unchecked: it is
    the shuffle's own."""
    if source != "default":
        yield from (make_deal(rules, number, seed, source).position for number in numbers)
        return
    from sim.engine import deal_state, new_state, rule_params, shuffle_deck

    deck, home = deck_and_home(rules)
    prm = rule_params(rules)
    st = new_state(prm)
    order = np.empty_like(deck)
    for number in numbers:
        check_deal_number(number, seed, source)
        order[:] = deck
        shuffle_deck(int(seed), int(number), order)
        deal_state(st, prm, order, home)
        yield _dealt_position(st, prm, rules.columns)


def make_deal(rules: Rules, number: int, seed: int = 0, source: str = "default") -> Deal:
    """Deal number ``number`` of ``rules`` from ``source`` (checked)."""
    check_deal_number(number, seed, source)
    number, seed = int(number), int(seed)
    if source == "pysol":  # PySolFC's own king step is in the order; the dealer's would undo its quirks
        position = arrange(pysol_order(number, rules), replace(rules, kings_to_bottom=False))
    else:
        position = next(dealt_positions(rules, [number], seed))
    return Deal(rules, number, seed, source, position)
