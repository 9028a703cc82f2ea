"""What a hint says: each legal move with its verdict or its estimate, ranked best first (`Hint`, `MoveHint`)."""

from __future__ import annotations

from dataclasses import dataclass, field

EXACT, SAMPLED, ENUMERATED = "exact", "sampled", "enumerated"
"""How a hint was made: every card face up (the solver's verdicts), or the hidden cards sampled or enumerated."""


@dataclass(frozen=True)
class MoveHint:
    """One legal move and what the hint found for it.

    Exact hints fill ``verdict`` (won / lost / unknown / timeout) and, for a won move,
    ``line``: the winning line from the position after it. Estimates fill ``wins``
    of ``samples`` completions of the hidden cards (solved after the move), the
    ``undecided`` ones among them (not counted as wins), the ``rate`` and its 95%
    interval ``low``..``high``: Wilson's for sampled completions, and for a move scored
    on every completion the exact range from counting no undecided one won to counting
    all of them won. ``nodes`` is the search spent on the move.
    """

    move: str
    verdict: str | None = None
    line: tuple[str, ...] = ()
    wins: int | None = None
    samples: int | None = None
    undecided: int | None = None
    rate: float | None = None
    low: float | None = None
    high: float | None = None
    nodes: int = 0

    def to_json(self) -> dict[str, object]:
        """The move's row as a JSON object (``--json``)."""
        return {"move": self.move, "verdict": self.verdict, "line": list(self.line), "wins": self.wins,
                "samples": self.samples, "undecided": self.undecided, "rate": _round(self.rate),
                "low": _round(self.low), "high": _round(self.high), "nodes": self.nodes}


@dataclass(frozen=True)
class Hint:
    """The legal moves of a position, best first, and how they were ranked.

    ``mode`` is `EXACT` (no card face down: the solver's verdict for each move, won
    moves first, the best move's winning line in ``line``, that move first), `SAMPLED`
    or `ENUMERATED` (``hidden`` cards face down: each move's chance of winning over
    ``completions`` sampled completions of them, or over every one of them). Estimates
    never read a face-down card. ``clock`` is True when ``seconds`` stopped the work
    before its budget was spent (then the result depends on the machine's speed).
    """

    variant: str
    mode: str
    hidden: int
    moves: tuple[MoveHint, ...]
    line: tuple[str, ...] = ()
    completions: int = 0
    nodes: int = 0
    seconds: float = 0.0
    clock: bool = False
    budget: dict[str, float] = field(default_factory=dict)

    @property
    def best(self) -> MoveHint | None:
        """The move ranked first, or None when no move is legal."""
        return self.moves[0] if self.moves else None

    def to_json(self) -> dict[str, object]:
        """The hint as one JSON object (what ``hint --json`` prints)."""
        return {"variant": self.variant, "mode": self.mode, "hidden": self.hidden, "completions": self.completions,
                "moves": [m.to_json() for m in self.moves], "line": list(self.line), "nodes": self.nodes,
                "seconds": round(self.seconds, 3), "clock": self.clock, "budget": self.budget}


def _round(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
