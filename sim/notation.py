"""Move notation: ``"9H 3>7"`` (card, from pile, to pile), ``"AS 5>F"`` (home),
``"3D F>2"`` (worrying back). Piles are numbered 1..N in text, 0..N-1 inside.

With alternate-colour foundations several foundations may accept a card, so
the foundation is numbered: ``"2H 5>F2"``. A bare ``F`` there means "the first
foundation that accepts it", resolved when the move is played.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from itertools import repeat, starmap
from operator import itemgetter

from sim.cards import CardParseError, card_str, parse_card, quote_short, suit_of
from sim.errors import UserError

FOUNDATION = 56
"""Place number of foundation 0 (piles are 0..N-1 with N <= 52); foundation f is FOUNDATION + f."""
ANY_FOUNDATION = FOUNDATION - 1
"""Destination of a parsed ``>F`` whose foundation is still to be resolved."""

_MOVE_RE = re.compile(r"^\s*(\S{2,4})\s+([0-9]{1,6}|F[0-9]?)\s*>\s*([0-9]{1,6}|F[0-9]?)\s*$", re.IGNORECASE | re.ASCII)
"""CARD FROM>TO; a card is 2-4 characters (``9H``, ``10h``, ``T♥``) and a pile number at most 6 digits, so that
any text, however long, is refused by the pattern rather than read as a huge number."""


class MoveParseError(UserError):
    """Text that is not a move."""


class _Sealed(type):
    """The metaclass of `Move`: a class whose attributes cannot be set or deleted once it is made.

    Strategies run in the arena's process and are handed moves; sealing the class means that no
    code can redefine what a move compares equal to, which place it names or which engine code it is.
    """

    def __setattr__(cls, name: str, value: object) -> None:
        raise AttributeError(f"{cls.__name__}.{name} cannot be set: the class {cls.__name__} is sealed")

    def __delattr__(cls, name: str) -> None:
        raise AttributeError(f"{cls.__name__}.{name} cannot be deleted: the class {cls.__name__} is sealed")


class Move(tuple, metaclass=_Sealed):  # noqa: SLOT001 - __slots__ is set below
    """One single-card move: the card, its source and its destination.

    ``src``/``dst`` are engine places: 0..N-1 for piles, ``FOUNDATION + f`` for
    foundation f. ``code`` is the engine's integer for the move. A move is an
    immutable tuple ``(card, src, dst)`` of a sealed class (`_Sealed`): neither a
    move nor the meaning of its fields can be changed after it is made.
    """

    __slots__ = ()

    def __new__(cls, card: int, src: int, dst: int) -> Move:
        return tuple.__new__(cls, (card, src, dst))

    def __getnewargs__(self) -> tuple[int, int, int]:
        return (self[0], self[1], self[2])

    def __repr__(self) -> str:
        return f"Move(card={self[0]!r}, src={self[1]!r}, dst={self[2]!r})"

    card: int = property(itemgetter(0), doc="The card moved.")  # type: ignore[assignment]
    src: int = property(itemgetter(1), doc="The place it leaves.")  # type: ignore[assignment]
    dst: int = property(itemgetter(2), doc="The place it goes to.")  # type: ignore[assignment]

    @property
    def code(self) -> int:
        return self[1] * 64 + self[2]

    @property
    def to_foundation(self) -> bool:
        return self[2] >= ANY_FOUNDATION

    @property
    def from_foundation(self) -> bool:
        return self[1] >= ANY_FOUNDATION

    def text(self, numbered_foundations: bool = False) -> str:
        """The move's notation; foundations carry their number when ``numbered_foundations``."""
        return f"{card_str(self.card)} {_place(self.src, numbered_foundations)}>{_place(self.dst, numbered_foundations)}"

    def __str__(self) -> str:
        return self.text()


def moves_of(triples: Iterable[tuple[int, int, int]]) -> tuple[Move, ...]:
    """The `Move` values of (card, src, dst) triples, each made by ``tuple.__new__`` as `Move` makes it but without
    a call of Python code a move: a replay of a stored game keeps about a hundred, and a million games a run."""
    return tuple(starmap(tuple.__new__, zip(repeat(Move), triples)))


def _place(p: int, numbered: bool) -> str:
    if p == ANY_FOUNDATION:
        return "F"
    if p >= FOUNDATION:
        return f"F{p - FOUNDATION + 1}" if numbered else "F"
    return str(p + 1)


def parse_move(text: str, piles: int, suit_foundations: bool = True) -> Move:
    """Read a move for a game of ``piles`` piles.

    With in-suit foundations a bare ``F`` is the card's own suit's foundation.
    """
    m = _MOVE_RE.match(text)
    if not m:
        raise MoveParseError(
            f"{quote_short(text)} is not a move; write CARD FROM>TO with piles 1..{piles} or F, e.g. '9H 3>7', 'AS 5>F', '3D F>2'"
        )
    try:
        c = parse_card(m.group(1))
    except CardParseError as exc:
        raise MoveParseError(f"{quote_short(text)}: {exc}") from None

    def place(word: str) -> int:
        w = word.upper()
        if w.startswith("F"):
            if len(w) == 1:
                return FOUNDATION + suit_of(c) if suit_foundations else ANY_FOUNDATION
            k = int(w[1:])
            if not 1 <= k <= 4:
                raise MoveParseError(f"{quote_short(text)}: foundation F{k} does not exist; allowed: F1..F4")
            own = suit_of(c)
            if suit_foundations and k - 1 != own:
                raise MoveParseError(f"{quote_short(text)}: foundations build in suit; {card_str(c)} belongs on F{own + 1} (or just F)")
            return FOUNDATION + k - 1
        k = int(w)
        if not 1 <= k <= piles:
            raise MoveParseError(f"{quote_short(text)}: pile {k} does not exist; allowed: 1..{piles}")
        return k - 1

    src, dst = place(m.group(2)), place(m.group(3))
    if src >= ANY_FOUNDATION and dst >= ANY_FOUNDATION:
        raise MoveParseError(f"{quote_short(text)}: a move goes from a pile or to a pile; foundation to foundation is not a move")
    if src == dst:
        raise MoveParseError(f"{quote_short(text)}: source and destination are the same pile")
    return Move(c, src, dst)
