"""`Game`: the Python face of one deal, and `View`, what a player at the table sees.

`Game` wraps the compiled engine's state for one deal: legal moves, play,
undo, clone, outcome tests and a text rendering. Python-tier strategies and
replays use it; bulk simulation calls the engine directly.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

import numpy as np

from sim import engine as E
from sim.cards import DECK_SIZE, KING, card, card_str, rank_of, suit_of
from sim.deals import Deal, make_deal
from sim.draw import position_svg, table_svg
from sim.errors import UserError
from sim.notation import ANY_FOUNDATION, Move, parse_move
from sim.position import LayoutError, Position
from sim.rules import BUILD_WORDS, Rules

_as_move = functools.partial(tuple.__new__, Move)
"""A `Move` from a list [card, src, dst] (the fast path of `Game.legal_moves`)."""

HIDDEN_CARD = -1
"""What a `View` shows in place of a face-down card."""


class IllegalMoveError(UserError):
    """A move that the rules do not allow in the current position; the message says why."""


@functools.lru_cache(maxsize=8)
def _build_table(build: int) -> tuple[bool, ...]:
    """``table[card * 52 + target]``: the engine's build rule for every pair of cards."""
    return tuple(bool(E.builds_on(c, t, build)) for c in range(DECK_SIZE) for t in range(DECK_SIZE))


class View:
    """The table as a player sees it: face-down cards are `HIDDEN_CARD` unless
    the view was made for a strategy that declared it peeks (``clairvoyant``).

    It is a snapshot: playing on the game afterwards does not change it.
    """

    __slots__ = ("rules", "clairvoyant", "_st", "_b", "_prm", "_piles", "_builds", "_cap", "_o")

    def __init__(self, rules: Rules, st: np.ndarray, prm: np.ndarray, clairvoyant: bool) -> None:
        self.rules = rules
        self.clairvoyant = clairvoyant
        self._st = st.copy()
        self._b = self._st.tobytes()  # fast Python-level reads (every value here is 0..127)
        self._prm = prm.copy()  # the game's is shared by every game of these rules: a strategy holds a view
        self._piles: tuple[tuple[int, ...], ...] | None = None
        self._builds = _build_table(int(prm[E.P_BUILD]))
        self._cap = int(prm[E.P_CAP])
        self._o = E.offsets(rules.columns)

    @property
    def n_piles(self) -> int:
        return self.rules.columns

    def height(self, p: int) -> int:
        """Cards in pile p."""
        return self._b[p]

    def face_down(self, p: int) -> int:
        """Face-down cards at the bottom of pile p."""
        return self._b[self._o.down + p]

    def top(self, p: int) -> int:
        """The exposed card of pile p, or -1 if it is empty (always face up)."""
        h = self._b[p]
        return self._b[self._base(p) + h - 1] if h else -1

    def svg(self, caption: str | None = None) -> str:
        """This view drawn (`sim.draw`): unseen cards as backs; a clairvoyant view shows them on grey."""
        downs = [self.face_down(p) for p in range(self.n_piles)]
        return table_svg(self.piles, downs, self.foundations, reveal=self.clairvoyant, caption=caption)

    def _repr_svg_(self) -> str:
        """The picture a notebook shows for a view."""
        return self.svg()

    def _base(self, p: int) -> int:
        return self._o.pile(p, self._cap)

    def card_at(self, p: int, i: int) -> int:
        """Card i (0 = bottom) of pile p; `HIDDEN_CARD` if face down and not clairvoyant."""
        if not 0 <= i < self.height(p):
            raise IndexError(f"pile {p + 1} has {self.height(p)} cards; no card {i}")
        if i < self.face_down(p) and not self.clairvoyant:
            return HIDDEN_CARD
        return self._b[self._base(p) + i]

    @property
    def piles(self) -> tuple[tuple[int, ...], ...]:
        """Every pile bottom to top, face-down cards hidden unless clairvoyant."""
        if self._piles is None:
            flat = self._st.tolist()
            piles = []
            for p in range(self.n_piles):
                base, h, down = self._base(p), flat[p], 0 if self.clairvoyant else flat[self._o.down + p]
                piles.append((HIDDEN_CARD,) * down + tuple(flat[base + down : base + h]))
            self._piles = tuple(piles)
        return self._piles

    @property
    def foundations(self) -> tuple[tuple[int, ...], ...]:
        o = self._o
        flat = self._st[: o.piles].tolist()  # all but the piles
        return tuple(tuple(flat[o.foundation(f) : o.foundation(f) + flat[o.fheight + f]]) for f in range(4))

    def home_height(self, f: int) -> int:
        """Cards on foundation f (with in-suit foundations, f is the suit)."""
        return int(self._st[self._o.fheight + f])

    @property
    def cards_home(self) -> int:
        return int(E.cards_home(self._st, self._prm))

    @property
    def unknown(self) -> frozenset[int]:
        """Cards the player has not seen: the face-down ones (empty when clairvoyant)."""
        if self.clairvoyant:
            return frozenset()
        seen = {c for pile in self.piles for c in pile if c != HIDDEN_CARD}
        seen.update(c for f in self.foundations for c in f)
        return frozenset(range(DECK_SIZE)) - seen

    def builds_on(self, card: int, target: int) -> bool:
        """Whether ``card`` may be placed on the tableau card ``target``."""
        return self._builds[card * 52 + target]

    def state(self) -> np.ndarray:
        """The view as an engine state array, for compiled helpers of Python-tier strategies.

        Face-down cards hold `HIDDEN_CARD` (-1) unless clairvoyant, so a compiled
        helper that reads one behaves differently from its compiled-tier twin:
        the tier-equivalence tests catch it.
        """
        st = self._st.copy()
        if not self.clairvoyant:
            for p in range(self.n_piles):
                base = self._base(p)
                st[base : base + self.face_down(p)] = HIDDEN_CARD
        return st

    @property
    def rule_params(self) -> np.ndarray:
        """A copy of the engine's rule-parameter array for this view's position (a strategy may write
        it without changing the game)."""
        return self._prm.copy()

    def home_slot(self, card: int) -> int:
        """The foundation that would take ``card`` now, or -1."""
        return int(E.home_slot(self._st, self._prm, card, 0))

    def card_rests_on_base(self, p: int) -> bool:
        """Whether pile p's exposed card sits on a visible card it could have been built on."""
        b = self._b
        h = b[p]
        if h < 2 or b[self._o.down + p] >= h - 1:
            return False
        base = self._base(p)
        return self._builds[b[base + h - 1] * 52 + b[base + h - 2]]


class Game:
    """One deal in play: legal moves, play, undo, clone, outcome, text.

    >>> g = Game.from_deal(Rules(), 1)
    >>> g.play(g.legal_moves()[0])
    """

    def __init__(self, rules: Rules, position: Position, deal: Deal | None = None) -> None:
        """Set up ``position`` under ``rules``; a position that is not a legal layout for them
        raises `LayoutError`. The state is sized for this position (see `sim.engine.rule_params`)."""
        check_position(rules, position)
        self.rules = rules
        self.deal = deal
        self.start = position
        self._prm = E.rule_params(rules, max(map(len, position.piles), default=0))
        self._st = E.new_state(self._prm)
        self._buf = E.new_moves(self._prm)
        self._triples = np.empty((int(self._prm[E.P_MOVES]), 3), dtype=np.int64)
        self._history: list[tuple[Move, int]] = []
        _load(self._st, self._prm, rules, position)

    @classmethod
    def from_deal(cls, rules: Rules, number: int, seed: int = 0, source: str = "default") -> Game:
        """Deal number ``number`` of ``rules`` (see `sim.deals.make_deal`)."""
        d = make_deal(rules, number, seed, source)
        return cls(rules, d.position, d)

    # --- moves ---------------------------------------------------------------
    def legal_codes(self) -> np.ndarray:
        """The engine codes of the legal moves, in the engine's order."""
        n = E.gen_moves(self._st, self._prm, self._buf)
        return self._buf[:n].copy()

    def legal_moves(self) -> list[Move]:
        """Every legal move, in the engine's fixed order."""
        n = E.gen_move_triples(self._st, self._prm, self._buf, self._triples)
        return list(map(_as_move, self._triples[:n].tolist()))

    def parse(self, text: str) -> Move:
        """Read a move in notation for this game."""
        return parse_move(text, self.rules.columns, self.rules.foundation == "suit")

    def play(self, move: Move | str) -> Move:
        """Play a move (a `Move` or its text); raise `IllegalMoveError` with the reason if illegal."""
        mv = self.parse(move) if isinstance(move, str) else move
        n = E.gen_moves(self._st, self._prm, self._buf)
        codes = self._buf[:n]
        if mv.dst == ANY_FOUNDATION or mv.src == ANY_FOUNDATION:
            mv = self._resolve_bare_foundation(mv, codes)
        if mv not in self.legal_moves():
            raise IllegalMoveError(f"{mv}: {self.why_illegal(mv)}")
        revealed = int(E.apply_move(self._st, self._prm, mv.code))
        self._history.append((mv, revealed))
        return mv

    def _resolve_bare_foundation(self, mv: Move, codes: np.ndarray) -> Move:
        """A bare ``F`` (alternate-colour foundations) becomes the first foundation that makes the move legal."""
        for m in codes:
            src, dst = divmod(int(m), E.PLACES)  # `sim.engine.move_from`, `move_to`
            from_ok = src == mv.src or (mv.src == ANY_FOUNDATION and src >= E.FOUNDATION)
            to_ok = dst == mv.dst or (mv.dst == ANY_FOUNDATION and dst >= E.FOUNDATION)
            if from_ok and to_ok and E.moved_card(self._st, self._prm, m) == mv.card:
                return Move(mv.card, src, dst)
        return mv

    def play_legal(self, move: Move) -> None:
        """Play a move taken from `legal_moves` of this very position (the hot path: no reason is worded
        first). The engine plays only a legal move: any other raises `IllegalMoveError`, the game untouched."""
        self._play_checked(move.code)

    def play_code(self, code: int) -> None:
        """Play an engine move code known to be legal (the hot path of Python-tier play); checked like
        `play_legal`."""
        self._play_checked(code)

    def _play_checked(self, code: int) -> None:
        """Play ``code`` through `sim.engine.play_if_legal`, which refuses a code that is not legal here."""
        done = int(E.play_if_legal(self._st, self._prm, self._buf, code))
        if done < 0:
            src, dst = divmod(code, E.PLACES)
            raise IllegalMoveError(f"engine move code {code} (from place {src} to place {dst}) is not legal in this "
                                   "position; the game is unchanged")
        card, revealed = divmod(done, 2)
        self._history.append((Move(card, *divmod(code, E.PLACES)), revealed))  # `sim.engine.move_from`, `move_to`

    def undo(self) -> Move:
        """Take back the last move and return it."""
        if not self._history:
            raise IllegalMoveError("nothing to undo: no move has been played")
        mv, revealed = self._history.pop()
        E.undo_move(self._st, self._prm, mv.code, revealed)
        return mv

    def why_illegal(self, mv: Move) -> str:
        """A sentence saying why ``mv`` is not legal here (or 'legal'): what `play` raises with.

        Worded as the independent referee (`sim.referee.why_illegal`) words the same reason,
        without sharing its code; the referee's reasons are what ``verify`` prints."""
        P = self.rules.columns
        if mv.src >= E.FOUNDATION:
            if not self.rules.worrying_back:
                return "cards never come back from the foundations in this variant (worrying_back is off)"
            have = int(E.foundation_top(self._st, self._prm, mv.src - E.FOUNDATION))
            place, top = f"foundation F{mv.src - E.FOUNDATION + 1}", "top card"
        else:
            if not 0 <= mv.src < P:
                return f"pile {mv.src + 1} does not exist (piles are 1..{P})"
            have = int(E.top_card(self._st, self._prm, mv.src))
            place, top = f"pile {mv.src + 1}", "exposed card"
        if have < 0:
            return f"{place} is empty"
        if have != mv.card:
            return f"{card_str(mv.card)} is not the {top} of {place} (the {top} is {card_str(have)})"
        if mv.src == mv.dst:
            return "the source and the destination are the same place"
        if mv.dst >= ANY_FOUNDATION:
            if mv.src >= E.FOUNDATION:
                return "a card cannot move from one foundation to another"
            if self.rules.foundation == "suit":
                if mv.dst not in (ANY_FOUNDATION, E.FOUNDATION + suit_of(mv.card)):
                    return f"{card_str(mv.card)} belongs on foundation F{suit_of(mv.card) + 1}, not F{mv.dst - E.FOUNDATION + 1}"
                need = int(self._st[E.offsets(P).fheight + suit_of(mv.card)])
                return f"{card_str(mv.card)} cannot go home yet: its foundation needs {card_str(card(need, suit_of(mv.card)))} next"
            return f"no foundation accepts {card_str(mv.card)} (foundations build up from the ace in alternating colours)"
        if not 0 <= mv.dst < P:
            return f"pile {mv.dst + 1} does not exist (piles are 1..{P})"
        target = int(E.top_card(self._st, self._prm, mv.dst))
        if target < 0:
            fill = self.rules.empty_fill
            if fill == "none":
                return f"pile {mv.dst + 1} is empty and empty piles stay empty in this variant"
            if fill == "kings" and rank_of(mv.card) != KING:
                return f"pile {mv.dst + 1} is empty and only a king may enter an empty pile"
            return "legal"
        if rank_of(mv.card) + 1 != rank_of(target):
            return f"{card_str(mv.card)} cannot go on {card_str(target)}: a card goes only on a card one rank higher"
        if not E.builds_on(mv.card, target, self._prm[E.P_BUILD]):
            return (f"{card_str(mv.card)} cannot go on {card_str(target)}: in this variant a card builds down on "
                    f"{BUILD_WORDS[self.rules.build]}")
        return "legal"

    # --- state ---------------------------------------------------------------
    @property
    def history(self) -> list[Move]:
        """The moves played so far."""
        return [mv for mv, _ in self._history]

    @property
    def cards_home(self) -> int:
        return int(E.cards_home(self._st, self._prm))

    @property
    def is_won(self) -> bool:
        return self.cards_home == DECK_SIZE

    @property
    def is_stuck(self) -> bool:
        """No legal move is left (and the game is not won)."""
        return not self.is_won and E.gen_moves(self._st, self._prm, self._buf) == 0

    def view(self, peeks: bool = False) -> View:
        """What a player sees; ``peeks`` shows face-down cards (clairvoyant)."""
        return View(self.rules, self._st, self._prm, peeks)

    def position(self) -> Position:
        """The current position (all cards known)."""
        v = self.view(peeks=True)
        downs = tuple(v.face_down(p) for p in range(self.rules.columns))
        return Position(v.piles, downs, v.foundations)

    def clone(self) -> Game:
        """An independent copy with the same position and history."""
        other = object.__new__(Game)
        other.rules, other.deal, other.start, other._prm = self.rules, self.deal, self.start, self._prm
        other._st = self._st.copy()
        other._buf = np.empty_like(self._buf)
        other._triples = np.empty_like(self._triples)
        other._history = list(self._history)
        return other

    def state_array(self) -> np.ndarray:
        """A copy of the engine state (for compiled strategies and tests)."""
        return self._st.copy()

    @property
    def rule_params(self) -> np.ndarray:
        """A copy of the rule-parameter array the state is laid out by (sized for this game's tallest pile)."""
        return self._prm.copy()

    def __str__(self) -> str:
        return self.position().to_text(reveal=False)

    def svg(self, reveal: bool = False, caption: str | None = None) -> str:
        """The current position drawn (`sim.draw`): face-down cards as backs, or face up on grey with ``reveal``."""
        return position_svg(self.position(), reveal, caption)

    def _repr_svg_(self) -> str:
        """The picture a notebook shows for a game: the table as the player sees it."""
        return self.svg()

    def replay(self, moves: Iterable[Move | str]) -> None:
        """Play a sequence of moves, stopping at the first illegal one (which raises)."""
        for k, mv in enumerate(moves, start=1):
            try:
                self.play(mv)
            except IllegalMoveError as exc:
                raise IllegalMoveError(f"move {k}: {exc}") from None


def _is_card(c: object) -> bool:
    return isinstance(c, int | np.integer) and not isinstance(c, bool) and 0 <= c < DECK_SIZE


def check_position(rules: Rules, position: Position) -> None:
    """Refuse, with `LayoutError`, a position the engine cannot play under ``rules``: the wrong
    number of piles, a card code out of range or in two places (a hand-made position need not
    hold the whole deck), face-down counts out of range or foundations that do not build up
    from the ace. `parse_position` only makes positions that pass; this guards positions
    built in code."""
    P = rules.columns
    if len(position.piles) != P or len(position.face_down) != P or len(position.foundations) != 4:
        raise LayoutError(f"position has {len(position.piles)} piles, {len(position.face_down)} face-down counts and "
                          f"{len(position.foundations)} foundations; allowed: {P}, {P} and 4 for variant {rules.name!r}")
    cards = [c for pile in (*position.piles, *position.foundations) for c in pile]
    if len(set(cards)) != len(cards) or not all(_is_card(c) for c in cards):
        raise LayoutError(f"position holds {len(cards)} cards ({len(set(cards))} distinct); allowed: cards "
                          f"(codes 0..{DECK_SIZE - 1}), each at most once, on the piles or home")
    for p, (pile, down) in enumerate(zip(position.piles, position.face_down, strict=True)):
        if not 0 <= down <= max(len(pile) - 1, 0):
            raise LayoutError(f"pile {p + 1} has {len(pile)} cards and {down} face down; allowed: 0..{max(len(pile) - 1, 0)} "
                              "(the top card is face up)")
    for f, stack in enumerate(position.foundations):
        if any(rank_of(c) != k for k, c in enumerate(stack)):
            raise LayoutError(f"foundation {f + 1} holds {' '.join(map(card_str, stack))}; allowed: ace upwards by one rank")


def _load(st: np.ndarray, prm: np.ndarray, rules: Rules, position: Position) -> None:
    """Write a `Position` (checked by `check_position`) into an engine state array sized for it."""
    o = E.offsets(rules.columns)
    st[:] = 0
    for p, (pile, down) in enumerate(zip(position.piles, position.face_down, strict=True)):
        base = o.pile(p, int(prm[E.P_CAP]))
        st[base : base + len(pile)] = pile
        st[p] = len(pile)
        st[o.down + p] = down
    for f, stack in enumerate(position.foundations):
        st[o.foundation(f) : o.foundation(f) + len(stack)] = stack
        st[o.fheight + f] = len(stack)
    st[o.home] = position.cards_home
