"""A tournament played in rounds that stops once its ranking is decided.

Every strategy plays the same deals, a round at a time. After each round the strategies are ranked by
deals won, and each adjacent pair of the ranking (the pairs that decide it) is tested with the two-sided
sequential test of `studies.sequential` on the deals played so far. The tournament stops when every
adjacent pair is decided (one strategy better by at least about ``delta``, or neither), or when
``max_deals`` are played. Each round is a run of the project's runner, so its rows are stored and a
later tournament, ``simulate`` or report reuses them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from sim.rules import Rules
from studies.paired import Player
from studies.sequential import PairTest, two_sided
from studies.spec import RunSpec


@dataclass
class PairState:
    """An adjacent pair of the final ranking: its test after the last round, and ``needed``, the deals after which
    its decision was reached and held to the end (None: undecided)."""

    first: str
    second: str
    test: PairTest
    needed: int | None

    def to_json(self) -> dict[str, object]:
        t = self.test
        return {"first": self.first, "second": self.second, "deals_needed": self.needed, "decision": t.decision,
                "only_first": t.only_first, "only_second": t.only_second, "llr": t.llr, "llr_reverse": t.llr_reverse,
                "lower": t.lower, "upper": t.upper}


@dataclass
class SequentialResult:
    """Where the tournament stopped: ``deals_played``, the ranking (best first, with wins), the adjacent pairs'
    tests, and each round's tests (deals so far, then (first, second, llr, llr_reverse) per adjacent pair)."""

    deals_played: int
    ranking: list[str]
    wins: dict[str, int]
    pairs: list[PairState]
    decided: bool
    history: list[tuple[int, list[tuple[str, str, float, float]]]] = field(default_factory=list)


def ranked(specs: Sequence[str], won: dict[str, np.ndarray]) -> list[str]:
    """``specs`` by deals won, most first (ties in the order given)."""
    return sorted(specs, key=lambda s: -int(won[s].sum()))


def play_rounds(rules: Rules, specs: Sequence[str], player: Player, *, max_deals: int, round_deals: int, first: int = 1,
                seed: int = 0, source: str = "default", alpha: float = 0.05, beta: float = 0.05,
                delta: float = 0.01, on_round: Callable[[int, list[PairState]], None] | None = None) -> SequentialResult:
    """Play ``specs`` round by round on deals ``first``.. until every adjacent pair is decided or ``max_deals``;
    ``on_round`` hears the deals played and the adjacent pairs' tests after each round."""
    won: dict[str, list[np.ndarray]] = {s: [] for s in specs}
    since: dict[frozenset[str], tuple[str | None, int]] = {}
    history: list[tuple[int, list[tuple[str, str, float, float]]]] = []
    played = 0
    while True:
        count = min(round_deals, max_deals - played)
        for s in specs:
            won[s].append(player(RunSpec(rules, s, count, first + played, seed, source))[1])
        played += count
        so_far = {s: np.concatenate(won[s]) for s in specs}
        order = ranked(specs, so_far)
        pairs: list[PairState] = []
        for a, b in zip(order, order[1:], strict=False):
            x, y = so_far[a], so_far[b]
            test = two_sided(int((x & ~y).sum()), int((~x & y).sum()), played, alpha, beta, delta)
            key = frozenset((a, b))
            # the decision (which of the two, or neither) reached at some round and unchanged since
            decision = None if test.decision is None else (a if test.decision == "first" else
                                                           b if test.decision == "second" else "equal")
            held = since.get(key)
            if decision is None:
                since.pop(key, None)
            elif held is None or held[0] != decision:
                since[key] = (decision, played)
            pairs.append(PairState(a, b, test, since[key][1] if key in since else None))
        history.append((played, [(p.first, p.second, p.test.llr, p.test.llr_reverse) for p in pairs]))
        if on_round is not None:
            on_round(played, pairs)
        decided = all(p.test.decided for p in pairs)
        if decided or played >= max_deals:
            return SequentialResult(played, order, {s: int(so_far[s].sum()) for s in specs}, pairs, decided, history)
