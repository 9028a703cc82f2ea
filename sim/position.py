"""`Position`: a layout of the piles and foundations, and its text form.

A position is what the engine starts from: a dealt deal, or a layout typed by
a player. The text form is one pile per line, bottom to top, with face-down
cards as ``??`` (hidden) or ``<4C>`` (revealed), and an optional ``home:``
line listing the foundation piles bottom to top, separated by ``/`` (``-`` for an
empty foundation that comes before a filled one, so that numbered
alternate-colour foundations keep their places). Lines
starting with ``#`` are comments. `Position.to_text` and `parse_position`
round-trip.

A layout must name every card, except where a caller that never reads
face-down cards asks for ``hidden=True`` (``bakers-dozen hint``): there a ``??``
stands for a card the player has not seen, and `Position.blanked` fills every
face-down slot with a placeholder, so that what a face-down card is cannot
matter to what is done with the position.
"""

from __future__ import annotations

from dataclasses import dataclass

from sim.cards import DECK_SIZE, CardParseError, card_str, is_red, parse_card, rank_of, suit_of
from sim.errors import UserError
from sim.rules import Rules

HIDDEN = "??"


class LayoutError(UserError):
    """A typed or pasted layout that does not fit the variant."""


@dataclass(frozen=True)
class Position:
    """Piles (bottom to top), how many cards at the bottom of each are face down,
    and the four foundation piles (bottom to top).

    With in-suit foundations, foundation ``s`` holds suit ``s``
    (clubs, diamonds, hearts, spades).
    """

    piles: tuple[tuple[int, ...], ...]
    face_down: tuple[int, ...]
    foundations: tuple[tuple[int, ...], ...] = ((), (), (), ())

    @property
    def cards_home(self) -> int:
        return sum(len(f) for f in self.foundations)

    def to_text(self, reveal: bool = False, symbols: bool = False) -> str:
        """One pile per line; face-down cards as ``??`` or, with ``reveal``, ``<4C>``."""
        lines = []
        for pile, down in zip(self.piles, self.face_down, strict=True):
            words = []
            for i, c in enumerate(pile):
                text = card_str(c, symbols)
                if i < down:
                    text = f"<{text}>" if reveal else HIDDEN
                words.append(text)
            lines.append(" ".join(words) if words else "-")
        if self.cards_home:
            last = max(i for i, f in enumerate(self.foundations) if f)
            groups = [" ".join(card_str(c, symbols) for c in f) or "-" for f in self.foundations[: last + 1]]
            lines.append("home: " + " / ".join(groups))
        return "\n".join(lines) + "\n"

    def unseen(self) -> tuple[int, ...]:
        """The cards a player does not see, in card order: neither face up on a pile nor home."""
        seen = {c for pile, down in zip(self.piles, self.face_down, strict=True) for c in pile[down:]}
        seen.update(c for f in self.foundations for c in f)
        return tuple(c for c in range(DECK_SIZE) if c not in seen)

    def blanked(self) -> Position:
        """The table as a player sees it: every face-down slot holds a placeholder, the unseen cards in card
        order dealt pile by pile, bottom up. Whatever the face-down cards were, the result is the same, so
        a caller that estimates from it cannot have read them."""
        placeholders = iter(self.unseen())
        piles = tuple(tuple(next(placeholders) for _ in range(down)) + pile[down:]
                      for pile, down in zip(self.piles, self.face_down, strict=True))
        return Position(piles, self.face_down, self.foundations)


_UNNAMED = -1
"""A ``??`` while a layout is read (`parse_position` with ``hidden=True``), before `Position.blanked` fills it."""


def _parse_pile(line: str, lineno: int, hidden_ok: bool) -> tuple[tuple[int, ...], int]:
    cards: list[int] = []
    down = 0
    words = line.split()
    if words == ["-"]:
        return (), 0
    for word in words:
        if word == HIDDEN and not hidden_ok:
            raise LayoutError(f"line {lineno}: '??' hides a card; a layout must name every card (use <4C> for a face-down 4C)")
        hidden = word == HIDDEN or (word.startswith("<") and word.endswith(">"))
        try:
            c = _UNNAMED if word == HIDDEN else parse_card(word[1:-1] if hidden else word)
        except CardParseError as exc:
            raise LayoutError(f"line {lineno}: {exc}") from None
        if hidden:
            if down != len(cards):
                raise LayoutError(f"line {lineno}: face-down card {word} lies above a face-up card; face-down cards are at the bottom")
            down += 1
        cards.append(c)
    if cards and down == len(cards):
        raise LayoutError(f"line {lineno}: the top card of a pile is face up; write it without brackets")
    return tuple(cards), down


def _parse_home(text: str, lineno: int, rules: Rules) -> tuple[tuple[int, ...], ...]:
    groups = [g.split() for g in text.split("/") if g.strip()]
    stacks: list[tuple[int, ...]] = []
    for g in groups:
        try:
            stacks.append(() if g == ["-"] else tuple(parse_card(w) for w in g))
        except CardParseError as exc:
            raise LayoutError(f"line {lineno}: {exc}") from None
    if len(stacks) > 4:
        raise LayoutError(f"line {lineno}: {len(stacks)} foundation piles given; allowed: at most 4, separated by '/'")
    foundations: list[tuple[int, ...]] = [(), (), (), ()]
    for i, stack in enumerate(stacks):
        if not stack:  # '-': an empty foundation, holding its place among numbered foundations
            continue
        for k, c in enumerate(stack):
            ok = rank_of(c) == k and (
                suit_of(c) == suit_of(stack[0]) if rules.foundation == "suit" else k == 0 or is_red(c) != is_red(stack[k - 1])
            )
            if not ok:
                rule = "the same suit" if rules.foundation == "suit" else "alternating colours"
                pile = " ".join(map(card_str, stack))
                raise LayoutError(f"line {lineno}: foundation pile {pile} must run from the ace up by one rank in {rule}")
        slot = suit_of(stack[0]) if rules.foundation == "suit" else i
        if foundations[slot]:
            raise LayoutError(f"line {lineno}: two foundation piles of suit {card_str(stack[0])[1]}")
        foundations[slot] = stack
    return tuple(foundations)


def parse_position(text: str, rules: Rules, hidden: bool = False) -> Position:
    """Read the text form of a layout and check it against ``rules``: pile count,
    a full deck less the cards home, no duplicates.

    With ``hidden``, a face-down card may be written ``??``: then the number of ``??``
    must be the number of cards the layout does not name, and the result is
    `Position.blanked` (every face-down slot a placeholder, named cards in brackets too)."""
    piles: list[tuple[int, ...]] = []
    downs: list[int] = []
    foundations: tuple[tuple[int, ...], ...] = ((), (), (), ())
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.lower().startswith("home:"):
            foundations = _parse_home(line[5:], lineno, rules)
            continue
        if ":" in line.split()[0] and line.split()[0].rstrip(":").isdigit():
            line = line.split(":", 1)[1]
        pile, down = _parse_pile(line, lineno, hidden)
        piles.append(pile)
        downs.append(down)
    if len(piles) != rules.columns:
        raise LayoutError(f"layout has {len(piles)} piles; variant {rules.name!r} has {rules.columns} (one pile per line, bottom to top)")
    seen: dict[int, str] = {}
    for where, cards in [(f"pile {i + 1}", p) for i, p in enumerate(piles)] + [("home", f) for f in foundations]:
        for c in cards:
            if c == _UNNAMED:
                continue
            if c in seen:
                raise LayoutError(f"card {card_str(c)} appears twice ({seen[c]} and {where}); each card once")
            seen[c] = where
    missing = sorted(set(range(DECK_SIZE)) - set(seen))
    if hidden:
        return _fill_unnamed(piles, downs, foundations, missing)
    if missing:
        raise LayoutError(
            f"layout lacks {len(missing)} card(s): {' '.join(card_str(c) for c in missing)}; "
            "a layout holds the full deck less the cards listed on the 'home:' line"
        )
    return Position(tuple(piles), tuple(downs), foundations)


def _fill_unnamed(piles: list[tuple[int, ...]], downs: list[int], foundations: tuple[tuple[int, ...], ...],
                  missing: list[int]) -> Position:
    """The layout read with ``hidden=True``: its ``??`` must stand for exactly the cards it does not name."""
    unnamed = sum(pile.count(_UNNAMED) for pile in piles)
    if unnamed != len(missing):
        raise LayoutError(f"layout has {unnamed} '??' but {len(missing)} card(s) are not named on it (face up, in "
                          "brackets or home); write one '??' for each card not seen")
    cards = iter(missing)
    filled = tuple(tuple(next(cards) if c == _UNNAMED else c for c in pile) for pile in piles)
    return Position(filled, tuple(downs), foundations).blanked()
