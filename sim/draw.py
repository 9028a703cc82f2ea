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
``class="card"`` (``"card back"`` for a back) and ``data-card="9H"``, so pages
and tests can find it.
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
RED, BLACK, BACK, TABLE, HIDDEN_GROUND = "#c0392b", "#1a1a1a", "#2d5ea8", "#2e7d4f", "#d9d9d9"


def position_svg(position: Position, reveal: bool = False, caption: str | None = None) -> str:
    """The SVG text of ``position``: face-down cards as backs, or (``reveal``) face up on grey."""
    return table_svg(position.piles, position.face_down, position.foundations, reveal, caption)


def table_svg(piles: Sequence[Sequence[int]], face_down: Sequence[int], foundations: Sequence[Sequence[int]],
              reveal: bool = False, caption: str | None = None) -> str:
    """The SVG text of a table given as lists: piles bottom to top (a negative card is one the
    viewer cannot see, as in `sim.game.View`), face-down counts per pile, and the four foundations."""
    n = len(piles)
    pile_h = [_pile_height(pile, down) for pile, down in zip(piles, face_down, strict=True)]
    width = GAP + max(n, 4) * (CARD_W + GAP)
    top = GAP + (LABEL_H + 4 if caption else 0)
    piles_y = top + LABEL_H + CARD_H + GAP + LABEL_H
    height = piles_y + max(pile_h, default=CARD_H) + GAP
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="table" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif">',
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
            if c < 0 or (hidden and not reveal):
                out.append(_back(x, y))
            else:
                out.append(_card(c, x, y, hidden))
            y += STEP_DOWN if hidden else STEP_UP
    out.append("</svg>")
    return "\n".join(out)


def _pile_height(pile: Sequence[int], down: int) -> int:
    """Pixels from the top of a pile's first card to the bottom of its last."""
    if not pile:
        return CARD_H
    return sum(STEP_DOWN if i < down else STEP_UP for i in range(len(pile) - 1)) + CARD_H


def _label(x: int, y: int, text: str) -> str:
    return f'<text x="{x + CARD_W // 2}" y="{y}" font-size="11" fill="#e8f5e9" text-anchor="middle">{text}</text>'


def _empty(x: int, y: int) -> str:
    return (f'<rect class="slot empty" x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="5" fill="none" '
            'stroke="#cfe8d5" stroke-width="1.5" stroke-dasharray="4 3"/>')


def _back(x: int, y: int) -> str:
    return (f'<g class="card back"><rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="5" fill="{BACK}" '
            f'stroke="#fff" stroke-width="1"/><rect x="{x + 4}" y="{y + 4}" width="{CARD_W - 8}" height="{CARD_H - 8}" '
            'rx="3" fill="none" stroke="#9fc0ef" stroke-width="1"/></g>')


def _card(c: int, x: int, y: int, hidden: bool) -> str:
    """A face-up card; ``hidden`` (a revealed face-down card) on a grey ground."""
    if not 0 <= c < DECK_SIZE:
        raise ValueError(f"card code {c!r} is outside 0..51")
    colour = RED if is_red(c) else BLACK
    rank, suit = RANK_TEXT[rank_of(c)], SUIT_SYMBOLS[suit_of(c)]
    ground = HIDDEN_GROUND if hidden else "#fff"
    return (f'<g class="card" data-card="{card_str(c)}"><rect x="{x}" y="{y}" width="{CARD_W}" height="{CARD_H}" rx="5" '
            f'fill="{ground}" stroke="#333" stroke-width="1"/>'
            f'<text x="{x + 4}" y="{y + 16}" font-size="15" font-weight="bold" fill="{colour}">{rank}{suit}</text>'
            f'<text x="{x + CARD_W // 2}" y="{y + CARD_H - 14}" font-size="26" fill="{colour}" '
            f'text-anchor="middle">{suit}</text></g>')
