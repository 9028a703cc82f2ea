"""Card codes: the 52 cards as the integers 0..51, and their text forms.

A card is ``suit * 13 + rank`` with ranks ``A=0 .. K=12`` and suits in the
order clubs, diamonds, hearts, spades. Integers keep the compiled engine's
arrays small; the text forms (``"9H"``, ``"TD"``, ``"K♠"``) are what users read
and type.
"""

from __future__ import annotations

from collections.abc import Callable

from sim.errors import UserError, quoted

Card = int
"""A card code, 0..51."""

RANKS = "A23456789TJQK"
SUITS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
DECK_SIZE = 52
KING = 12
ACE = 0

_RANK_ALIASES = {"10": "T", "1": "A"}


def card(rank: int, suit: int) -> Card:
    """The code of the card with ``rank`` (0 = ace .. 12 = king) and ``suit`` (0..3)."""
    return suit * 13 + rank


def rank_of(c: Card) -> int:
    """Rank 0 (ace) .. 12 (king)."""
    return c % 13


def suit_of(c: Card) -> int:
    """Suit 0..3 in the order clubs, diamonds, hearts, spades."""
    return c // 13


_COMPILED = {"nb_card": card, "nb_rank_of": rank_of, "nb_suit_of": suit_of}
"""The layout's functions callable from compiled code, by the names compiled code imports them under."""


def __getattr__(name: str) -> Callable[..., int]:
    """`nb_card`, `nb_rank_of`, `nb_suit_of`: `card`, `rank_of`, `suit_of` compiled by numba (inlined into their
    callers), so that the layout is written once. Made on first import, so that the verbs that only read cards
    (``bakers-dozen variants``) never load numba."""
    if name not in _COMPILED:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import numba as nb

    compiled = nb.njit(cache=True, inline="always")(_COMPILED[name])
    globals()[name] = compiled
    return compiled


def is_red(c: Card) -> bool:
    """Diamonds and hearts are red; clubs and spades black."""
    return suit_of(c) in (1, 2)


def card_str(c: Card, symbols: bool = False) -> str:
    """Two-character text of a card: ``"9H"``, or ``"9♥"`` with ``symbols``."""
    if not 0 <= c < DECK_SIZE:
        raise ValueError(f"card code {c!r} is outside 0..51")
    suit = (SUIT_SYMBOLS if symbols else SUITS)[suit_of(c)]
    return RANKS[rank_of(c)] + suit


class CardParseError(UserError):
    """Text that does not name a card."""


def quote_short(text: str, limit: int = 40) -> str:
    """``repr(text)``, cut to about ``limit`` characters so that an error message stays one short line
    (`sim.errors.quoted`)."""
    return quoted(text, limit)


def parse_card(text: str) -> Card:
    """Read ``"9H"``, ``"10h"``, ``"T♥"`` or ``"ks"``; raise `CardParseError` otherwise."""
    t = text.strip()
    if len(t) < 2:
        raise CardParseError(f"{quote_short(text)} is not a card: expected rank A23456789TJQK then suit CDHS, e.g. 9H or TD")
    rank_text, suit_text = t[:-1].upper(), t[-1].upper()
    rank_text = _RANK_ALIASES.get(rank_text, rank_text)
    if suit_text in SUIT_SYMBOLS:
        suit = SUIT_SYMBOLS.index(suit_text)
    elif len(suit_text) == 1 and suit_text in SUITS:
        suit = SUITS.index(suit_text)
    else:
        raise CardParseError(f"{quote_short(text)} is not a card: the suit must be one of C D H S (or ♣ ♦ ♥ ♠)")
    if len(rank_text) != 1 or rank_text not in RANKS:
        raise CardParseError(f"{quote_short(text)} is not a card: the rank must be one of A 2-9 T(10) J Q K")
    return card(RANKS.index(rank_text), suit)
