"""The rules referee: a deliberately plain, separate re-implementation of the rules
of the Baker's Dozen family that replays a move list and names the first illegal move.

Why a second implementation? The compiled engine (`sim.engine`) and its Python
face (`sim.game`) are fast and intricate; a mistake there would silently bend
every figure the toolkit reports. The referee is the check on them: it is written
from the rules (docs/rules.md, sections "Baker's Dozen" and "Rule parameters")
with plain Python lists and tuples and shares no move-generation or legality
code with the engine (it does not import `sim.engine` or `sim.game`). Every recorded win can be re-checked: a move list
in notation (a ``play --json`` record) with `replay`, the engine's move codes (a
compiled game's record, a stored win) with `replay_codes`; the tests compare
`legal_moves` with the engine's move list position by position.

Who sees which reason. Every reason the command line gives for an illegal
move is the referee's (`why_illegal`): ``verify`` on a ``play --json`` record,
a claimed win refused by ``simulate --verify`` (the store's ``error`` column),
a failed check of ``solve``. Code that plays moves through the Python API
(`sim.game.Game.play`: a notebook, a strategy author's tests) is refused with
`sim.game.Game.why_illegal`, which reads the engine. The two word a reason
alike where they judge the same thing (a test compares them move by move; the
referee alone names the slot a numbered alternate-colour foundation refuses),
and neither calls the other.

It uses only the shared vocabulary: card codes (`sim.cards`), the rule
parameters (`sim.rules.Rules`), layouts (`sim.position.Position`) and the move
notation (`sim.notation.parse_move` and `Move`; reading text is not deciding
legality).

Places. A move is ``Move(card, src, dst)``. Piles are ``0..N-1``; foundation
slot ``f`` (0..3) is ``FOUNDATION + f``. With in-suit foundations slot ``f``
holds suit ``f`` (clubs, diamonds, hearts, spades). A parsed bare ``F``
destination (`sim.notation.ANY_FOUNDATION`) means "the first foundation that
accepts the card".

Conventions shared with the engine so that move lists can be compared:

* With alternate-colour foundations the four empty foundations are
  interchangeable, so an ace may go only to the FIRST (lowest-numbered) empty
  foundation. A record that puts an ace on F3 while F1 is empty is refused; this
  keeps positions canonical (one position, one representation).
* With in-suit foundations a card goes only to its own suit's slot.
* A bare ``F`` as the SOURCE of a worrying-back move with alternate-colour
  foundations is read as "the foundation whose top card is the moved card"
  (each card lies in one place only, so this is unambiguous).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from sim.cards import DECK_SIZE, KING, card_str, is_red, rank_of, suit_of
from sim.errors import quoted, shortened
from sim.notation import ANY_FOUNDATION, Move, MoveParseError, moves_of, parse_move
from sim.position import Position
from sim.rules import BUILD_WORDS, Rules

FOUNDATION = 56
"""Place number of foundation slot 0 (slot f is ``FOUNDATION + f``).

The same number as ``sim.engine.FOUNDATION``; it is written out here rather than
imported so that the referee does not import the engine (a test checks they agree).
"""

SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

Triple = tuple[int, int, int]
"""A move as (card, src, dst): what a replay reads and plays, made a `Move` only for its verdict (`moves_of`)."""



class Places(Protocol):
    """What the rule checks read of a position: its piles and foundations, each bottom to top (a `Position`, or
    the table a replay changes in place)."""

    @property
    def piles(self) -> Sequence[Sequence[int]]: ...

    @property
    def foundations(self) -> Sequence[Sequence[int]]: ...


class IllegalMove(ValueError):
    """`apply` was asked to play a move the rules do not allow; the message says why."""


@dataclass(frozen=True)
class Verdict:
    """The referee's judgement of a move list.

    ``legal``: every move was legal. ``won``: all 52 cards are home at the end.
    ``moves_checked``: how many moves were legal and played. ``first_illegal``:
    the 1-based index of the first illegal move (None when all are legal), and
    ``reason`` a sentence saying why. ``final``: the position after the legal
    moves. ``cards_home``: cards on the foundations in ``final``. ``played``:
    the legal moves as played, each foundation named by its slot.
    """

    legal: bool
    won: bool
    moves_checked: int
    first_illegal: int | None
    reason: str | None
    final: Position
    cards_home: int
    played: tuple[Move, ...] = ()


# --- the rules, one predicate each ---------------------------------------------


def builds_on(rules: Rules, card: int, target: int) -> bool:
    """Whether ``card`` may be placed on the tableau card ``target``: one rank
    lower, and of the suit/colour the build rule asks for. A king is never one
    rank lower than anything, so kings never go onto the tableau."""
    if rank_of(card) + 1 != rank_of(target):
        return False
    if rules.build == "any-suit":
        return True
    if rules.build == "other-suit":
        return suit_of(card) != suit_of(target)
    if rules.build == "alternate-colour":
        return is_red(card) != is_red(target)
    if rules.build == "same-suit":
        return suit_of(card) == suit_of(target)
    raise ValueError(f"unknown build rule {rules.build!r}")


def may_enter_empty(rules: Rules, card: int) -> bool:
    """Whether ``card`` may move into an empty pile (fill rule none / kings / any)."""
    if rules.empty_fill == "none":
        return False
    if rules.empty_fill == "kings":
        return rank_of(card) == KING
    if rules.empty_fill == "any":
        return True
    raise ValueError(f"unknown empty_fill rule {rules.empty_fill!r}")


def pile_accepts(rules: Rules, pile: Sequence[int], card: int) -> bool:
    """Whether ``card`` may be put on top of tableau pile ``pile`` (bottom to top)."""
    if len(pile) == 0:
        return may_enter_empty(rules, card)
    return builds_on(rules, card, pile[-1])


def foundation_accepts(rules: Rules, foundations: Sequence[Sequence[int]], f: int, card: int) -> bool:
    """Whether foundation slot ``f`` accepts ``card``.

    In suit: slot f holds suit f, and takes the next rank of that suit (the ace
    first). Alternate colour: an empty slot takes an ace, but only when every
    lower-numbered slot is occupied (the engine's convention: the empty slots
    are interchangeable, so an ace goes to the first one); a started slot takes
    the card one rank higher than its top, of the other colour.
    """
    stack = foundations[f]
    if rules.foundation == "suit":
        return suit_of(card) == f and rank_of(card) == len(stack)
    if len(stack) == 0:
        if rank_of(card) != 0:
            return False
        return all(len(foundations[g]) > 0 for g in range(f))
    top = stack[-1]
    return rank_of(card) == rank_of(top) + 1 and is_red(card) != is_red(top)


# --- places and text -------------------------------------------------------------


def _resolve(rules: Rules, position: Places, move: Move) -> Move:
    """Turn a bare-``F`` destination (or source) into a numbered foundation slot.

    Destination: the first slot that accepts the card (with in-suit foundations,
    its suit's slot). Source: the slot whose top card is the moved card. When
    nothing fits, the move is returned unchanged and `why_illegal` explains.
    """
    card, src, dst = move
    if src != ANY_FOUNDATION and dst != ANY_FOUNDATION:  # a numbered slot or a pile: nothing to resolve
        return move
    if src == ANY_FOUNDATION:
        for f in range(4):
            stack = position.foundations[f]
            if stack and stack[-1] == card:
                src = FOUNDATION + f
                break
    if dst == ANY_FOUNDATION:
        if rules.foundation == "suit":
            if 0 <= card < DECK_SIZE:
                dst = FOUNDATION + suit_of(card)
        else:
            for f in range(4):
                if foundation_accepts(rules, position.foundations, f, card):
                    dst = FOUNDATION + f
                    break
    return Move(card, src, dst)


def why_illegal(rules: Rules, position: Places, move: Move | Triple) -> str | None:
    """None if ``move`` (a `Move` or its (card, src, dst) triple) is legal in ``position``; otherwise a sentence
    saying why not.

    ``move`` should already have its foundations resolved (see `replay`); an
    unresolved bare ``F`` left here means no foundation fits.
    """
    card, src, dst = move
    n = len(position.piles)
    if not isinstance(card, int) or not 0 <= card < DECK_SIZE:
        return f"card code {quoted(card)} is not a card (allowed: 0..51)"

    # The source: an existing pile or foundation whose exposed/top card is `card`.
    if src >= ANY_FOUNDATION:  # a foundation: a numbered slot or a bare F
        if src == ANY_FOUNDATION:
            if not rules.worrying_back:
                return "cards never come back from the foundations in this variant (worrying_back is off)"
            return f"{card_str(card)} is not the top card of any foundation"
        f = src - FOUNDATION
        if not 0 <= f < 4:
            return f"foundation F{f + 1} does not exist (foundations are F1..F4)"
        if not rules.worrying_back:
            return "cards never come back from the foundations in this variant (worrying_back is off)"
        stack = position.foundations[f]
        if not stack:
            return f"foundation F{f + 1} is empty"
        if stack[-1] != card:
            return f"{card_str(card)} is not the top card of foundation F{f + 1} (the top card is {card_str(stack[-1])})"
    else:
        if not 0 <= src < n:
            return f"pile {src + 1} does not exist (piles are 1..{n})"
        pile = position.piles[src]
        if not pile:
            return f"pile {src + 1} is empty"
        if pile[-1] != card:
            return f"{card_str(card)} is not the exposed card of pile {src + 1} (the exposed card is {card_str(pile[-1])})"

    if src == dst:
        return "the source and the destination are the same place"

    # The destination: a foundation.
    if dst >= ANY_FOUNDATION:
        if src >= ANY_FOUNDATION:
            return "a card cannot move from one foundation to another"
        if dst == ANY_FOUNDATION:
            return f"no foundation accepts {card_str(card)} " + _foundation_rule(rules)
        f = dst - FOUNDATION
        if not 0 <= f < 4:
            return f"foundation F{f + 1} does not exist (foundations are F1..F4)"
        if foundation_accepts(rules, position.foundations, f, card):
            return None
        return _foundation_refusal(rules, position, f, card)

    # The destination: a pile.
    if not 0 <= dst < n:
        return f"pile {dst + 1} does not exist (piles are 1..{n})"
    target = position.piles[dst]
    if pile_accepts(rules, target, card):
        return None
    if not target:
        if rules.empty_fill == "none":
            return f"pile {dst + 1} is empty and empty piles stay empty in this variant"
        return f"pile {dst + 1} is empty and only a king may enter an empty pile"
    top = target[-1]
    if rank_of(card) + 1 != rank_of(top):
        return f"{card_str(card)} cannot go on {card_str(top)}: a card goes only on a card one rank higher"
    return f"{card_str(card)} cannot go on {card_str(top)}: in this variant a card builds down on {BUILD_WORDS[rules.build]}"


def _foundation_rule(rules: Rules) -> str:
    if rules.foundation == "suit":
        return "(foundations build up in suit from the ace)"
    return "(foundations build up from the ace in alternating colours)"


def _foundation_refusal(rules: Rules, position: Places, f: int, card: int) -> str:
    """Why foundation slot f refuses ``card`` (which it does)."""
    name = card_str(card)
    stack = position.foundations[f]
    if rules.foundation == "suit":
        if suit_of(card) != f:
            return f"{name} belongs on foundation F{suit_of(card) + 1}, not F{f + 1}"
        if len(stack) == 13:
            return f"the {SUIT_NAMES[f]} foundation is already complete"
        need = card_str(f * 13 + len(stack))
        return f"{name} cannot go home yet: its foundation needs {need} next"
    if not stack:
        if rank_of(card) != 0:
            return f"foundation F{f + 1} is empty and only an ace starts a foundation"
        first = next(g for g in range(4) if not position.foundations[g])
        return f"an ace goes to the first empty foundation (F{first + 1}); the empty foundations are interchangeable"
    top = stack[-1]
    return f"{name} cannot go on {card_str(top)} on foundation F{f + 1}: foundations build up by one rank in alternating colours"


# --- playing moves ---------------------------------------------------------------


@dataclass
class _Table:
    """A position that a replay changes in place, move by move: making a new `Position` at every move would cost
    about as much as checking the move. It has the fields `why_illegal` and the functions above read."""

    piles: list[list[int]]
    face_down: list[int]
    foundations: list[list[int]]

    @classmethod
    def of(cls, position: Position) -> _Table:
        return cls([list(p) for p in position.piles], list(position.face_down), [list(f) for f in position.foundations])

    def position(self) -> Position:
        return Position(tuple(map(tuple, self.piles)), tuple(self.face_down), tuple(map(tuple, self.foundations)))

    def play(self, move: Move | Triple) -> None:
        """Play the (legal, resolved) ``move``; turn up a face-down card that becomes exposed."""
        card, src, dst = move
        if src >= FOUNDATION:
            stack = self.foundations[src - FOUNDATION]
        else:
            stack = self.piles[src]
        assert stack[-1] == card, "the referee played a move it had not checked"
        stack.pop()
        # The new exposed card, if it was face down, turns face up: a pile of h
        # cards with h face down has its top card face down.
        if src < FOUNDATION and stack and self.face_down[src] >= len(stack):
            self.face_down[src] = len(stack) - 1
        (self.foundations[dst - FOUNDATION] if dst >= FOUNDATION else self.piles[dst]).append(card)


def apply(rules: Rules, position: Position, move: Move) -> Position:
    """The position after ``move``, a new `Position` (``position`` is not changed).

    A bare-``F`` foundation is resolved first. Raises `IllegalMove` (with the
    reason) when the rules do not allow the move.
    """
    mv = _resolve(rules, position, Move(*move))
    reason = why_illegal(rules, position, mv)
    if reason is not None:
        raise IllegalMove(f"{mv.text(numbered_foundations=True) if 0 <= mv.card < DECK_SIZE else mv}: {reason}")
    table = _Table.of(position)
    table.play(mv)
    return table.position()


def legal_moves(rules: Rules, position: Position) -> list[Move]:
    """Every legal move in ``position`` (order irrelevant).

    Candidates are every (exposed card, destination) pair: each non-empty pile's
    exposed card to each foundation slot and each other pile, and, with worrying
    back, each foundation's top card to each pile; a candidate is legal when the
    rule predicates above accept it. Foundation moves name their slot; see the
    module docstring for the alternate-colour ace convention.
    """
    moves: list[Move] = []
    # The exposed card of each pile (None for an empty pile), looked up once.
    tops = [pile[-1] if pile else None for pile in position.piles]
    for src, card in enumerate(tops):
        if card is None:
            continue
        for f in range(4):
            if foundation_accepts(rules, position.foundations, f, card):
                moves.append(Move(card, src, FOUNDATION + f))
        for dst, top in enumerate(tops):
            if dst == src:
                continue
            if top is None:
                ok = may_enter_empty(rules, card)
            else:
                ok = builds_on(rules, card, top)
            if ok:
                moves.append(Move(card, src, dst))
    if rules.worrying_back:
        for f in range(4):
            stack = position.foundations[f]
            if not stack:
                continue
            card = stack[-1]
            for dst in range(len(position.piles)):
                if pile_accepts(rules, position.piles[dst], card):
                    moves.append(Move(card, FOUNDATION + f, dst))
    return moves


def _label(move: str | Move) -> str:
    """The move as the record wrote it (text), or the notation of a `Move` value
    with numbered foundations (the slot it names, even a wrong one)."""
    if isinstance(move, str):
        return shortened(move.strip())
    try:
        return Move(*move).text(numbered_foundations=True)
    except (ValueError, TypeError):
        return quoted(move)


def _read_move(rules: Rules, position: Places, raw: str | Move) -> tuple[Move | None, str]:
    """A move of a record (text or a `Move` value), a bare ``F`` resolved (`_resolve`), and its label; (None, why)
    when it is not a move."""
    label = _label(raw)
    if isinstance(raw, str):
        try:
            return _resolve(rules, position, parse_move(raw, rules.columns, rules.foundation == "suit")), label
        except MoveParseError as exc:
            return None, f"'{label}': cannot be read: {exc}"
    try:
        return _resolve(rules, position, Move(*(int(x) for x in raw))), label
    except (TypeError, ValueError):
        return None, f"{quoted(raw)}: is not a move (expected text or Move(card, src, dst))"


def _read_code(rules: Rules, position: Places, raw: int) -> tuple[Triple | None, str]:
    """An engine move code (`Move.code`, ``src * 64 + dst``) as the move (a `Triple`) of the card on top of
    ``src`` in ``position``, and an empty label (the move's notation is written only for a reason, by
    `_replay`: a stored game is checked move by move); (None, why) when no card lies there to move."""
    try:
        code = operator.index(raw)
    except TypeError:
        return None, f"{quoted(raw)}: is not a move code (a whole number src * 64 + dst)"
    src, dst = divmod(code, 64)
    n = len(position.piles)
    if 0 <= src < n:
        stack = position.piles[src]
    elif 0 <= src - FOUNDATION < 4:
        stack = position.foundations[src - FOUNDATION]
    else:
        return None, _no_place(code, "source", src, n)
    if not stack:
        place = f"pile {src + 1}" if src < n else f"foundation F{src - FOUNDATION + 1}"
        return None, f"code {code}: {place} is empty"
    if dst == ANY_FOUNDATION:  # the notation's bare F, which a code never means
        return None, _no_place(code, "destination", dst, n)
    return (stack[-1], src, dst), ""


def _no_place(code: int, role: str, place: int, piles: int) -> str:
    """Why a code whose ``role`` (source or destination) place is no place at all cannot be played."""
    return (f"code {code}: its {role} {place} is neither a pile (0..{piles - 1}) nor a foundation "
            f"({FOUNDATION}..{FOUNDATION + 3})")


def replay(rules: Rules, start: Position, moves: Sequence[str | Move]) -> Verdict:
    """Replay ``moves`` (notation text or `Move` values) from ``start``; stop at the
    first illegal one and say why.

    Raises `ValueError` only when ``start`` does not fit ``rules`` (see
    `_check_start`); every problem with a move, unreadable text included, is
    reported in the `Verdict`. Moves after a win are judged like any other (with
    worrying back a king may still leave home); ``won`` describes the final position.
    """
    return _replay(rules, start, moves, _read_move)


def replay_codes(rules: Rules, start: Position, codes: Iterable[int], *, keep_moves: bool = True) -> Verdict:
    """Replay engine move codes (`sim.notation.Move.code`: what a compiled game records and the
    store keeps of a win) from ``start``, as `replay` does a move list; without ``keep_moves`` the
    verdict's ``played`` is left empty (a check that reads only the verdict: a run's every win).

    This is how every claimed win is re-checked (a stored win, ``simulate --verify``,
    ``solve``). Each code names only the source and the destination; the card is the
    one on top of the source in the referee's own position, so the check needs nothing
    from the engine. A code whose source holds no card is reported like an illegal
    move, and a foundation is never guessed (a code names its slot).
    """
    return _replay(rules, start, codes, _read_code, keep_moves)


def _replay(rules: Rules, start: Position, items: Iterable[Any],
            read: Callable[[Rules, Places, Any], tuple[Move | Triple | None, str]], keep_moves: bool = True) -> Verdict:
    """Play the moves that ``read`` makes of ``items`` (each with its foundations resolved) from ``start`` up to
    the first illegal one; the verdict's ``played`` holds them with ``keep_moves``."""
    _check_start(rules, start)
    table = _Table.of(start)
    played: list[Move | Triple] = []
    keep = played.append if keep_moves else _drop
    k = 0
    for k, raw in enumerate(items, start=1):
        mv, label = read(rules, table, raw)
        if mv is None:
            return _verdict(table, played, k - 1, k, f"move {k} {label}")
        reason = why_illegal(rules, table, mv)
        if reason is not None:
            return _verdict(table, played, k - 1, k, f"move {k} '{label or _label(mv)}': {reason}")
        table.play(mv)
        keep(mv)
    return _verdict(table, played, k, None, None)


def _check_start(rules: Rules, start: Position) -> None:
    """Raise `ValueError` when ``start`` cannot be a position of ``rules``: wrong
    number of piles, a face-down count that hides a pile's top card, a card code
    outside 0..51 or a card in two places. (A start need not hold the full deck,
    so that small hand-made positions can be replayed.)"""
    if len(start.piles) != rules.columns or len(start.face_down) != rules.columns:
        raise ValueError(f"start position has {len(start.piles)} piles; variant {rules.name!r} has {rules.columns}")
    if len(start.foundations) != 4:
        raise ValueError(f"start position has {len(start.foundations)} foundations; there are 4")
    for p, (pile, down) in enumerate(zip(start.piles, start.face_down, strict=True)):
        if not 0 <= down <= max(len(pile) - 1, 0):
            raise ValueError(f"pile {p + 1} has {len(pile)} cards and {down} face down; the top card of a pile is face up")
    seen: set[int] = set()
    for stack in (*start.piles, *start.foundations):
        for c in stack:
            if not 0 <= c < DECK_SIZE:
                raise ValueError(f"card code {quoted(c)} in the start position is not a card (allowed: 0..51)")
            if c in seen:
                raise ValueError(f"card {card_str(c)} appears twice in the start position")
            seen.add(c)


def _drop(move: Move | Triple) -> None:
    """Keep no move (`replay_codes` without ``keep_moves``)."""


def _verdict(table: _Table, played: list[Move | Triple], checked: int, first_illegal: int | None,
             reason: str | None) -> Verdict:
    position = table.position()
    home = position.cards_home
    return Verdict(
        legal=first_illegal is None,
        won=home == DECK_SIZE,
        moves_checked=checked,
        first_illegal=first_illegal,
        reason=reason,
        final=position,
        cards_home=home,
        played=moves_of(played),
    )


__all__ = [
    "FOUNDATION",
    "IllegalMove",
    "Verdict",
    "apply",
    "builds_on",
    "foundation_accepts",
    "legal_moves",
    "may_enter_empty",
    "pile_accepts",
    "replay",
    "replay_codes",
    "why_illegal",
]
