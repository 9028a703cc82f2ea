"""Where a game was lost: the solver's verdict on every position of a played game, the losing move, and a move that keeps it won.

A game's verdicts are monotone: a position from which the played move leads to a
won position is won itself, and every position reached from a lost one is lost.
So the verdicts along a game read won ... won, lost ... lost (with unknowns
where the budget ran out), and the losing move is the one between the last won
and the first lost position. `analyse_game` finds that boundary by bisection,
solving about log2(moves) positions rather than all of them, with one solver
whose table and work arrays (`strategies.solver.strategy.SolverStrategy.work`)
are allocated once and reused for every position. A won position comes with a
winning line; where the game itself followed that line, the positions along it
are won without another search.

Verdicts come from the solver, which sees face-down cards: on a variant with
face-down cards they say what could be won by a player who knew the cards
(``clairvoyant``), not what the player could have known.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from sim.errors import UserError
from sim.game import Game
from sim.notation import Move
from sim.position import Position
from sim.rules import Rules
from strategies.solver.strategy import SolverStrategy

WON, LOST, UNKNOWN = "won", "lost", "unknown"


@dataclass(frozen=True)
class Analysis:
    """The verdicts of a game's positions and where it was lost.

    ``verdicts[i]`` is the position before move i (``verdicts[-1]`` the final one);
    ``how[i]`` says where it came from: ``searched`` (a search of its own), ``line`` (the game followed
    a winning line found earlier), ``end`` (all cards home), ``inferred`` (monotonicity) or
    ``open`` (undecided).
    ``losing_move`` is the 0-based index of the move that turned a won position into a
    lost one, or None; ``alternative`` is a move from the position before it that keeps
    the game won, and ``alternative_line`` the whole winning line from there, in notation.
    """

    moves: tuple[str, ...]
    verdicts: tuple[str, ...]
    how: tuple[str, ...]
    losing_move: int | None
    alternative: str | None
    alternative_line: tuple[str, ...]
    clairvoyant: bool
    solves: int = 0
    nodes: int = 0
    seconds: float = 0.0
    budget: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """The analysis as a JSON object (what ``analyse --json`` prints)."""
        return {
            "moves": list(self.moves),
            "verdicts": list(self.verdicts),
            "how": list(self.how),
            "losing_move": self.losing_move,
            "alternative": self.alternative,
            "alternative_line": list(self.alternative_line),
            "clairvoyant": self.clairvoyant,
            "solves": self.solves,
            "nodes": self.nodes,
            "seconds": round(self.seconds, 3),
            "budget": self.budget,
        }


def analyse_game(rules: Rules, start: Position, moves: Sequence[str | Move],
                 solver: SolverStrategy | None = None) -> Analysis:
    """Analyse the game that plays ``moves`` from ``start`` under ``rules``.

    ``solver`` sets the budget per position (its ``nodes`` and ``seconds``); by default a
    `SolverStrategy` with its default parameters. An illegal move raises
    `sim.game.IllegalMoveError` naming it.
    """
    solver = solver or SolverStrategy()
    game = Game(rules, start)
    prm = game.rule_params
    states = [game.state_array()]
    played: list[Move] = []
    for k, mv in enumerate(moves):
        try:
            played.append(game.play(mv))
        except UserError as exc:  # an illegal or unreadable move: the same error, saying which move
            raise type(exc)(f"move {k + 1}: {exc}") from None
        states.append(game.state_array())
    numbered = rules.foundation != "suit"
    search = _Bisection(solver, rules, prm, states, [m.code for m in played])
    if game.is_won:  # every position of a won game is won; the finished one has no line to search for
        search.lo, search.how[len(played)] = len(played), "end"
    search.run()
    lo, hi = search.lo, search.hi
    n = len(played)
    verdicts = tuple(WON if i <= lo else LOST if i >= hi else UNKNOWN for i in range(n + 1))
    how = tuple(search.how.get(i, "inferred" if verdicts[i] != UNKNOWN else "open") for i in range(n + 1))
    losing = lo if 0 <= lo and hi == lo + 1 <= n else None
    line: tuple[str, ...] = ()
    if losing is not None:
        line = tuple(_line_text(rules, start, played[:losing], search.lines[losing], numbered))
    return Analysis(
        moves=tuple(m.text(numbered) for m in played), verdicts=verdicts, how=how, losing_move=losing,
        alternative=line[0] if line else None, alternative_line=line,
        clairvoyant=any(start.face_down) or rules.face_down > 0,
        solves=search.solves, nodes=search.nodes, seconds=search.seconds,
        budget={"nodes": solver.params["nodes"], "seconds": solver.params["seconds"]},
    )


class _Bisection:
    """The boundary between the last won and the first lost position, found with as few searches as may be.

    ``lo`` is the last position known won (-1: none), ``hi`` the first known lost
    (one past the end: none). A search that ends unknown leaves its position open
    and the next probe is the middle of the open positions still untried.
    """

    def __init__(self, solver: SolverStrategy, rules: Rules, prm: np.ndarray, states: list[np.ndarray],
                 codes: list[int]) -> None:
        self.solver, self.rules, self.prm, self.states, self.codes = solver, rules, prm, states, codes
        self.lo, self.hi = -1, len(states)
        self.tried: set[int] = set()
        self.how: dict[int, str] = {}
        self.lines: dict[int, list[int]] = {}
        self.solves, self.nodes, self.seconds = 0, 0, 0.0

    def run(self) -> None:
        last = len(self.states) - 1
        for i in (last, 0):  # a won game or an unwinnable deal ends it at once
            if self.lo < i < self.hi:
                self.probe(i)
        while True:
            open_ = [i for i in range(self.lo + 1, self.hi) if i not in self.tried]
            if not open_:
                return
            self.probe(open_[len(open_) // 2])

    def probe(self, i: int) -> None:
        """Solve position i and move the boundary."""
        verdict, nodes, line, seconds = self.solver.solve_state(self.rules, self.states[i], self.prm)
        self.tried.add(i)
        self.solves += 1
        self.nodes += nodes
        self.seconds += seconds
        self.how[i] = "searched"
        if verdict == WON:
            self.lines[i] = line
            j = i
            while j < len(self.codes) and j - i < len(line) and self.codes[j] == line[j - i]:
                j += 1  # the game followed the line: the next position is won too
                self.lines[j] = line[j - i :]
                self.how.setdefault(j, "line")
            self.lo = max(self.lo, j)
        elif verdict == LOST:
            self.hi = min(self.hi, i)


def _line_text(rules: Rules, start: Position, before: list[Move], codes: list[int], numbered: bool) -> list[str]:
    """The engine codes ``codes``, played after ``before`` from ``start``, in notation."""
    game = Game(rules, start)
    for mv in before:
        game.play_legal(mv)
    for code in codes:
        game.play_code(code)
    return [m.text(numbered) for m in game.history[len(before) :]]
