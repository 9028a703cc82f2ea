"""The engine's bounds under hostile shapes: a grid of extreme rules and tall typed layouts,
played by every built-in strategy in both tiers, every game checked by the referee.

`tests/test_bounds.py` runs these cases in its own process and again in a
subprocess under ``NUMBA_BOUNDSCHECK=1`` (``python -m tests.bounds_grid``), where
any write or read outside an array raises instead of corrupting memory.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from sim.cards import DECK_SIZE, card_str, parse_card
from sim.deals import make_deal
from sim.game import Game
from sim.position import Position, parse_position
from sim.referee import replay
from sim.rules import BUILDS, EMPTY_FILLS, FOUNDATIONS, Rules, find_variant
from strategies import DealInfo, Strategy, load_strategy
from strategies.batch import play_batch
from strategies.play import GameRecord, play_compiled, play_python

SHAPES = ((1, 52, ()), (2, 26, ()), (12, 4, ("AC", "AD", "AH", "AS")), (26, 2, ()), (51, 1, ("AC",)), (52, 1, ()))
"""(columns, cards_per_column, start_home): from one pile to one card a pile."""

SPECS = (
    "random", "random:home_first=true", "greedy", "heuristic", "heuristic:preset=balanced", "heuristic:preset=builder",
    "lookahead:depth=1", "lookahead:mode=search,depth=2", "solver:nodes=1500,restart_nodes=300,tt_mb=0.1",
)
"""Every built-in strategy (small budgets); sampling is added where cards are face down."""
SAMPLING = "sampling:samples=2,sample_nodes=100,nodes=1500,tt_mb=0.1"


def grid() -> list[Rules]:
    """24 variants: each shape four times, the builds, fills, foundations, worrying back,
    kings to the bottom and face-down cards spread over them so that every value meets every shape."""
    out = []
    for i, (columns, cpc, home) in enumerate(SHAPES):
        for j in range(4):
            out.append(Rules(
                name=f"x{columns}-{j}", columns=columns, cards_per_column=cpc, start_home=home,
                build=BUILDS[j], empty_fill=EMPTY_FILLS[(i + j) % 3], foundation=FOUNDATIONS[(i + j // 2) % 2],
                worrying_back=(i + j) % 2 == 1, kings_to_bottom=j < 2, face_down=cpc - 1 if j % 2 == 0 else 0,
            ))
    return out


def specs_for(rules: Rules) -> tuple[str, ...]:
    return SPECS + ((SAMPLING,) if rules.face_down else ())


ISSUE_PILE = "AC 2C 4C 5C 6C 8C 9C TC QC KC AD 3D 4D 5D 7D 8D KS"


def _spread(first: list[int], rest: list[int], columns: int, per: int) -> list[list[int]]:
    piles = [first] + [[] for _ in range(columns - 1)]
    for k, c in enumerate(rest):
        piles[1 + min(k // per, columns - 2)].append(c)
    return piles


def tall_layouts() -> Iterator[tuple[str, Rules, Position]]:
    """Typed layouts with piles far taller than a deal makes, and empty piles."""
    bd = find_variant("bakers-dozen")
    first = [parse_card(w) for w in ISSUE_PILE.split()]
    rest = [c for c in range(DECK_SIZE) if c not in first]
    text = "\n".join(" ".join(map(card_str, p)) for p in _spread(first, rest, 13, 3)) + "\n"
    yield "issue-15", bd, parse_position(text, bd)
    rng = np.random.default_rng(15)
    for name, base in (("bakers-dozen", bd), ("spanish-patience", find_variant("spanish-patience")),
                       ("kings-into-empty", find_variant("kings-into-empty")),
                       ("worrying", Rules(name="worrying", empty_fill="any", worrying_back=True, kings_to_bottom=False))):
        deck = [int(c) for c in rng.permutation(DECK_SIZE)]
        forty = _spread(deck[:40], deck[40:], 13, 1)
        yield f"{name}/pile-of-40", base, Position(tuple(map(tuple, forty)), (0,) * 13)
        yield f"{name}/all-in-one", base, Position((tuple(deck),) + ((),) * 12, (0,) * 13)
        ordered = sorted(range(DECK_SIZE), key=lambda c: (-(c % 13), c // 13))  # kings at the bottom, aces on top
        yield f"{name}/sorted-in-one", base, Position((tuple(ordered),) + ((),) * 12, (0,) * 13)
    dick = find_variant("castles-in-spain")
    deck = [int(c) for c in rng.permutation(DECK_SIZE)]
    yield "castles/face-down-tower", dick, Position((tuple(deck[:45]),) + tuple((c,) for c in deck[45:]) + ((),) * 5,
                                                   (44,) + (0,) * 12)


@dataclass
class Problem:
    case: str
    what: str

    def __str__(self) -> str:
        return f"{self.case}: {self.what}"


def check_record(case: str, rules: Rules, game: Game, rec: GameRecord) -> list[Problem]:
    """The referee's replay of the record must agree with everything the record and the engine claim."""
    v = replay(rules, game.start, rec.moves)
    problems = []
    if not v.legal:
        problems.append(Problem(case, f"illegal record: {v.reason}"))
    if v.cards_home != rec.cards_home or v.final != game.position():
        problems.append(Problem(case, f"record says {rec.cards_home} home, referee {v.cards_home}; final positions "
                                      f"{'differ' if v.final != game.position() else 'agree'}"))
    if v.won != (rec.outcome == "won"):
        problems.append(Problem(case, f"outcome {rec.outcome} but the referee says won={v.won}"))
    if rec.outcome == "error":
        problems.append(Problem(case, f"a built-in strategy erred: {rec.error}"))
    return problems


@functools.cache
def strategy(spec: str) -> Strategy:
    """One instance per spec, reused from deal to deal as the runner does (and loaded once: it is slow)."""
    return load_strategy(spec)


def play_both(case: str, rules: Rules, position: Position, spec: str, number: int, seed: int = 0,
              problems: list[Problem] | None = None) -> GameRecord:
    """Play ``position`` with ``spec`` in the Python and compiled tiers; check both records and their
    equality (problems go to ``problems``); return the compiled tier's record."""
    problems = [] if problems is None else problems
    info = DealInfo(rules, number, 0, "typed")
    recs = []
    for tier, play in (("python", play_python), ("compiled", play_compiled)):
        game = Game(rules, position)
        rec = play(strategy(spec), game, info, seed)
        problems += check_record(f"{case} {spec} {tier} seed {seed}", rules, game, rec)
        recs.append(rec)
    if (recs[0].outcome, recs[0].moves) != (recs[1].outcome, recs[1].moves):
        problems.append(Problem(f"{case} {spec} seed {seed}", "the tiers played differently"))
    return recs[1]


def play_rules(rules: Rules, numbers: tuple[int, ...] = (1, 2)) -> list[Problem]:
    """Every strategy on deals ``numbers`` of ``rules``: both tiers, and the batch loop agreeing with them."""
    problems: list[Problem] = []
    for spec in specs_for(rules):
        batch = play_batch(rules, strategy(spec), np.array(numbers))
        for i, number in enumerate(numbers):
            rec = play_both(f"{rules.name} deal {number}", rules, make_deal(rules, number).position, spec, number,
                            problems=problems)
            if (int(batch.cards_home[i]), int(batch.moves[i])) != (rec.cards_home, len(rec.moves)):
                problems.append(Problem(f"{rules.name} deal {number} {spec}", "play_batch and play_compiled disagree"))
            won = [m.code for m in rec.moves] if rec.outcome == "won" else []
            if batch.win_moves[batch.win_offsets[i]: batch.win_offsets[i + 1]].tolist() != won:
                problems.append(Problem(f"{rules.name} deal {number} {spec}", "play_batch stored another winning line"))
    return problems


def play_layout(case: str, rules: Rules, position: Position, seeds: int = 2) -> list[Problem]:
    """Every strategy on a typed layout (``seeds`` strategy seeds each), both tiers."""
    problems: list[Problem] = []
    for spec in specs_for(rules):
        for seed in range(seeds):
            play_both(case, rules, position, spec, 1, seed, problems)
    return problems


def issue_layout_seeds(seeds: int = 32) -> list[Problem]:
    """The issue's layout with random:home_first=true on ``seeds`` strategy seeds."""
    case, rules, position = next(tall_layouts())
    problems: list[Problem] = []
    for seed in range(seeds):
        play_both(case, rules, position, "random:home_first=true", 1, seed, problems)
    return problems


def main() -> int:
    """Run every case; print the problems; exit status 1 if there were any."""
    problems = issue_layout_seeds()
    for case, rules, position in tall_layouts():
        problems += play_layout(case, rules, position, seeds=1)
    for rules in grid():
        problems += play_rules(rules, numbers=(1,))
    for p in problems:
        print(p)
    print(f"bounds grid: {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
