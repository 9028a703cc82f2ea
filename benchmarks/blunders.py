"""Where an honest player's lost games are lost: the fatal move, and whether a look at that move could have seen it.

For each deal the strategy loses (a face-down variant, compiled tier, one core)
it asks the clairvoyant solver, which sees the real deal:

1. whether the deal could be won at all (if not, no player wins it: it is lost
   from the deal; a deal the solver cannot decide on its budget is counted
   undecided and looked at no further);
2. whether the position the game ended in could still be won (then the player
   gave up, or wandered until the engine's no-progress guard, with a win on the
   table);
3. otherwise, the *fatal move*: the first move after which the real deal can no
   longer be won. Winnability only falls along a game (a position reached from a
   lost one is lost), so a binary search over the game's positions finds it; a
   position the solver cannot decide on its budget counts as not won, and such
   searches are counted.

At the fatal move it then looks as an honest player could, and asks whether
that look would have told it to play something else: it draws ``2 x
--completions`` deals consistent with what the player saw there
(`strategies.sampling.draw_completion`: the face-up cards and the foundations
only). On the first half it counts, for every legal move, the completions the
solver still wins after it (budget ``--nodes``) and takes the best move; on the
second half (fresh deals, so picking the best of several moves does not flatter
it) it compares that move with the one played, completion by completion. The
loss is a *choice* when the best move wins significantly more of them (a
one-sided sign test on the completions where exactly one of the two wins,
p < 0.05), and *no better move seen* otherwise. Both counts use clairvoyant
play after the move, so "no better move seen" does not prove the loss was
luck: it says only that this look, the most a player can learn there without
searching over what it will see later, does not tell the moves apart.

Usage: ``nice .venv/bin/python benchmarks/blunders.py --variant dick-1883
--first 3001 --last 3100`` (prints; ``--csv FILE`` also writes one row a lost
deal). Not a test.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.cards import DECK_SIZE  # noqa: E402
from sim.deals import check_deal_range  # noqa: E402
from sim.engine import apply_move  # noqa: E402
from sim.errors import UserError, run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.notation import Move  # noqa: E402
from sim.rules import Rules, find_variant  # noqa: E402
from strategies import load_strategy  # noqa: E402
from strategies.base import DealInfo  # noqa: E402
from strategies.play import play_compiled  # noqa: E402
from strategies.sampling import draw_completion  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402
from studies.stats import win_rate_interval  # noqa: E402


@dataclass
class LostGame:
    """One lost deal's diagnosis (a row of ``--csv``)."""

    deal: int
    termination: str
    moves: int
    kind: str  # "lost from the deal", "gave up while winnable", "choice", "no better move seen", "undecided" (the deal)
    fatal_move: int = -1  # index in the game (0: the first move)
    played: str = ""
    hidden_before: int = -1  # face-down cards before the fatal move
    played_share: float = float("nan")  # share of the second half's completions won after the played move
    best_share: float = float("nan")  # the same after the move that won most of the first half's
    best_move: str = ""
    undecided_searches: int = 0


def _hidden(game: Game) -> int:
    view = game.view()
    return sum(view.face_down(p) for p in range(view.n_piles))


class Referee:
    """The clairvoyant solver on a fixed node budget, and the game positions it is asked about."""

    def __init__(self, rules: Rules, nodes: int) -> None:
        self.rules = rules
        self.solver = SolverStrategy(nodes=nodes, seconds=600.0)
        self.undecided = 0

    def after(self, number: int, moves: list[Move], k: int) -> Game:
        """The game of deal ``number`` after its first ``k`` moves."""
        game = Game.from_deal(self.rules, number)
        for m in moves[:k]:
            game.play_legal(m)
        return game

    def verdict(self, game: Game) -> str:
        """The solver's verdict on the position (clairvoyant): won, lost, or another word when it cannot
        decide on its budget (counted)."""
        verdict = self.solver.solve_state(self.rules, game.state_array(), game.rule_params)[0]
        self.undecided += verdict not in ("won", "lost")
        return verdict

    def winnable(self, game: Game) -> bool:
        """Whether the solver wins the position; undecided counts as not."""
        return self.verdict(game) == "won"

    def draw(self, game: Game, count: int, seed: int) -> list[np.ndarray]:
        """``count`` completions of the face-down cards consistent with what a player sees in ``game``."""
        st, prm = game.state_array(), game.rule_params
        rng = np.array([seed, 0], dtype=np.uint64)
        pool = np.zeros(DECK_SIZE, dtype=np.int64)
        drawn = []
        for _ in range(count):
            out = st.copy()
            draw_completion(st, prm, out, rng, pool)
            drawn.append(out)
        return drawn

    def wins_after(self, game: Game, move: Move, drawn: list[np.ndarray]) -> np.ndarray:
        """Whether the solver wins each completion in ``drawn`` after ``move``."""
        prm = game.rule_params
        won = np.zeros(len(drawn), dtype=bool)
        for j, sample in enumerate(drawn):
            s2 = sample.copy()
            apply_move(s2, prm, move.code)
            won[j] = self.solver.solve_state(self.rules, s2, prm)[0] == "won"
        return won


def diagnose(referee: Referee, number: int, moves: list[Move], termination: str, completions: int) -> LostGame:
    """Why deal ``number``, played as ``moves``, was lost (see the module text)."""
    referee.undecided = 0
    row = LostGame(number, termination, len(moves), "undecided")
    start = referee.verdict(referee.after(number, moves, 0))
    if start != "won":
        row.kind = "lost from the deal" if start == "lost" else "undecided"
    elif referee.winnable(referee.after(number, moves, len(moves))):
        row.kind = "gave up while winnable"
    else:
        lo, hi = 0, len(moves)  # winnable after lo moves, not after hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if referee.winnable(referee.after(number, moves, mid)):
                lo = mid
            else:
                hi = mid
        before = referee.after(number, moves, lo)
        drawn = referee.draw(before, 2 * completions, seed=number)
        pick, check = drawn[:completions], drawn[completions:]
        played = moves[lo]
        legal = before.legal_moves()
        first_half = {m.code: referee.wins_after(before, m, pick).sum() for m in legal}
        best = max(legal, key=lambda m: (first_half[m.code], m.code == played.code))
        won_played = referee.wins_after(before, played, check)
        won_best = won_played if best.code == played.code else referee.wins_after(before, best, check)
        only_best, only_played = int((won_best & ~won_played).sum()), int((won_played & ~won_best).sum())
        p = binomtest(only_best, only_best + only_played, 0.5, alternative="greater").pvalue if only_best else 1.0
        row.fatal_move, row.played, row.hidden_before = lo, str(played), _hidden(before)
        row.played_share, row.best_share, row.best_move = won_played.mean(), won_best.mean(), str(best)
        row.kind = "choice" if p < 0.05 else "no better move seen"
    row.undecided_searches = referee.undecided
    return row


def report(variant: str, first: int, last: int, spec: str, nodes: int, completions: int, csv_path: Path | None) -> None:
    """Play the deals, diagnose every loss, and print the summary."""
    check_deal_range(first, last, f"--first {first} --last {last}")
    rules = find_variant(variant)
    if rules.face_down == 0:
        raise UserError(f"--variant {variant!r} deals every card face up: an honest player there is the solver; "
                        "allowed: a variant with face_down above 0 (dick-1883, castles-in-spain)")
    if nodes < 1 or completions < 1:
        raise UserError(f"--nodes {nodes} --completions {completions}: allowed: whole numbers of at least 1")
    strategy = load_strategy(spec)
    referee = Referee(rules, nodes)
    rows: list[LostGame] = []
    won = 0
    start = time.perf_counter()
    for number in range(first, last + 1):
        game = Game.from_deal(rules, number)
        record = play_compiled(strategy, game, DealInfo(rules=rules, number=number, seed=0, source="default"))
        if record.outcome == "won":
            won += 1
            continue
        rows.append(diagnose(referee, number, record.moves, record.termination or "", completions))
    deals = last - first + 1
    low, high = win_rate_interval(won, deals)
    print(f"{variant}, deals {first}-{last}, {strategy.label}: won {won} of {deals} ({won / deals:.1%}, "
          f"{low:.1%}-{high:.1%}); solver budget {nodes:,} nodes, 2 x {completions} completions a look; "
          f"{time.perf_counter() - start:.0f} s")
    kinds = Counter(r.kind for r in rows)
    for kind in ("lost from the deal", "gave up while winnable", "choice", "no better move seen", "undecided"):
        print(f"  {kind:24} {kinds[kind]:5d}  ({kinds[kind] / deals:.1%} of the deals)")
    fatal = [r for r in rows if r.fatal_move >= 0]
    if fatal:
        hidden = np.array([r.hidden_before for r in fatal])
        print("  face-down cards before the fatal move: "
              + ", ".join(f"{a}-{b}: {int(((hidden >= a) & (hidden <= b)).sum())}"
                          for a, b in ((0, 9), (10, 19), (20, 29), (30, 52))))
        print(f"  completions won after the fatal move (second half): played {np.mean([r.played_share for r in fatal]):.1%}, "
              f"best of the first half {np.mean([r.best_share for r in fatal]):.1%}")
    print(f"  searches the solver left undecided: {sum(r.undecided_searches for r in rows)}")
    if csv_path is not None:
        with csv_path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(asdict(rows[0]).keys()) if rows else ["deal"])
            writer.writeheader()
            writer.writerows(asdict(r) for r in rows)


def main() -> None:
    """Parse the command line and print the diagnosis."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="dick-1883")
    ap.add_argument("--first", type=int, default=3001)
    ap.add_argument("--last", type=int, default=3100)
    ap.add_argument("--spec", default="sampling", help="the honest strategy (default: sampling)")
    ap.add_argument("--nodes", type=int, default=300_000, help="the clairvoyant solver's node budget a search")
    ap.add_argument("--completions", type=int, default=30,
                    help="completions for each half of the look at the fatal move (pick the best move, then compare)")
    ap.add_argument("--csv", type=Path, help="also write one row a lost deal to this CSV file")
    args = ap.parse_args()
    report(args.variant, args.first, args.last, args.spec, args.nodes, args.completions, args.csv)


if __name__ == "__main__":
    run_script(main)
