"""Drawn positions: one SVG picture of a table (foundations above, piles below), as plain text.

Every picture of a position in the toolkit comes from here: `deal --svg`, the
notebook display of `sim.game.Game` and `sim.game.View`, the replay page and
the report. It is string building only (no drawing library), so a picture is
the same on every machine and a page that embeds it needs nothing from the
network.

A face-up card shows its rank and suit in the corners and its suit large in
the middle, red or black. A face-down card is drawn as a back, unless the
picture ``reveal``s it: it is then drawn face up on a grey ground, so a
clairvoyant picture still says which cards the player could not see. An
empty foundation or pile is a dashed outline. Each card carries
the class ``card`` (with ``back`` for a back, ``red`` or ``black``, and
``down`` for a revealed face-down card) and ``data-card="9H"``, so pages and
tests can find it.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from sim.cards import DECK_SIZE, SUIT_SYMBOLS, card_str, is_red, rank_of, suit_of
from sim.position import Position

CARD_W, CARD_H = 52, 74
"""A card's size in pixels (about the 5:7 of a real card)."""
GAP = 8
"""Space between piles, and around the table."""
STEP_UP, STEP_DOWN = 22, 10
"""How far the next card of a pile lies below a face-up card, and below a face-down one."""
LABEL_H = 16
"""Height of the row of place names (F1..F4, 1..N) above the cards."""
RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
TABLE = "#2e7d4f"
STYLE = ("<style>"
         ".bd-table .card rect{fill:#fff;stroke:#333;stroke-width:1}.bd-table .card.down rect{fill:#d9d9d9}"
         ".bd-table .card text{font-size:15px;font-weight:bold}.bd-table .card .bd-s{font-size:26px;font-weight:normal;text-anchor:middle}"
         ".bd-table .card.red text{fill:#c0392b}.bd-table .card.black text{fill:#1a1a1a}"
         ".bd-table .card.back rect{fill:#2d5ea8;stroke:#fff}.bd-table .card.back .bd-i{fill:none;stroke:#9fc0ef}"
         ".bd-table .slot.empty{fill:none;stroke:#cfe8d5;stroke-width:1.5;stroke-dasharray:4 3}"
         ".bd-table .bd-l{font-size:11px;fill:#e8f5e9;text-anchor:middle}"
         "</style>")
"""The look of the cards, once per picture: the cards themselves carry only classes, so a page of many
positions (the replay) stays small. Every rule is scoped to ``.bd-table``, the picture's class."""


def position_svg(position: Position, reveal: bool = False, caption: str | None = None) -> str:
    """The SVG text of ``position``: face-down cards as backs, or (``reveal``) face up on grey."""
    return table_svg(position.piles, position.face_down, position.foundations, reveal, caption)


def table_svg(piles: Sequence[Sequence[int]], face_down: Sequence[int], foundations: Sequence[Sequence[int]],
              reveal: bool = False, caption: str | None = None) -> str:
    """The SVG text of a table given as lists: piles bottom to top (a negative card is one the
    viewer cannot see, as in `sim.game.View`), face-down counts per pile, and the four foundations."""
    n = len(piles)
    pile_h = [_pile_height(pile, 0 if reveal else down) for pile, down in zip(piles, face_down, strict=True)]
    width = GAP + max(n, 4) * (CARD_W + GAP)
    top = GAP + (LABEL_H + 4 if caption else 0)
    piles_y = top + LABEL_H + CARD_H + GAP + LABEL_H
    height = piles_y + max(pile_h, default=CARD_H) + GAP
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="bd-table" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">', STYLE,
           f'<rect width="{width}" height="{height}" rx="6" fill="{TABLE}"/>']
    if caption:
        out.append(f'<text x="{GAP}" y="{GAP + LABEL_H - 3}" font-size="13" fill="#fff">{escape(caption)}</text>')
    for f, stack in enumerate(foundations):
        x = GAP + f * (CARD_W + GAP)
        out.append(_label(x, top + LABEL_H - 3, f"F{f + 1}"))
        out.append(_card(stack[-1], x, top + LABEL_H, False) if stack else _empty(x, top + LABEL_H))
    for p, (pile, down) in enumerate(zip(piles, face_down, strict=True)):
        x = GAP + p * (CARD_W + GAP)
        out.append(_label(x, piles_y - 3, str(p + 1)))
        if not pile:
            out.append(_empty(x, piles_y))
        y = piles_y
        for i, c in enumerate(pile):
            hidden = i < down
            back = c < 0 or (hidden and not reveal)
            out.append(_back(x, y) if back else _card(c, x, y, hidden))
            y += STEP_DOWN if back else STEP_UP
    out.append("</svg>")
    return "\n".join(out)


def _pile_height(pile: Sequence[int], down: int) -> int:
    """Pixels from the top of a pile's first card to the bottom of its last, ``down`` of them drawn as backs."""
    if not pile:
        return CARD_H
    return sum(STEP_DOWN if i < down else STEP_UP for i in range(len(pile) - 1)) + CARD_H


def _label(x: int, y: int, text: str) -> str:
    return f'<text class="bd-l" x="{x + CARD_W // 2}" y="{y}">{text}</text>'


def _empty(x: int, y: int) -> str:
    return f'<rect class="slot empty" x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="5"/>'


def _back(x: int, y: int) -> str:
    return (f'<g class="card back" transform="translate({x},{y})"><rect width="{CARD_W}" height="{CARD_H}" rx="5"/>'
            f'<rect class="bd-i" x="4" y="4" width="{CARD_W - 8}" height="{CARD_H - 8}" rx="3"/></g>')


def _card(c: int, x: int, y: int, hidden: bool) -> str:
    """A face-up card; ``hidden`` (a revealed face-down card) on a grey ground."""
    if not 0 <= c < DECK_SIZE:
        raise ValueError(f"card code {c!r} is outside 0..51")
    colour = "red" if is_red(c) else "black"
    rank, suit = RANK_TEXT[rank_of(c)], SUIT_SYMBOLS[suit_of(c)]
    down = " down" if hidden else ""
    return (f'<g class="card {colour}{down}" data-card="{card_str(c)}" transform="translate({x},{y})">'
            f'<rect width="{CARD_W}" height="{CARD_H}" rx="5"/><text x="4" y="16">{rank}{suit}</text>'
            f'<text class="bd-s" x="{CARD_W // 2}" y="{CARD_H - 14}">{suit}</text></g>')
