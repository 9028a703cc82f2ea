"""Strategy throughput in both tiers, and a win-rate table for the README.

Speed: deals per second on one core for every built-in strategy, compiled
(`strategies.batch.play_batch`) and Python tier (`strategies.play.play_python` through
`Game`), each including dealing, in this process's CPU time. Compiled figures are
the best of a few rounds that measure every strategy in turn on the same deals, so
that the ratio to greedy (the reference column) holds on a shared machine.

    python benchmarks/strategies.py [--variant V] [--seconds S]
    python benchmarks/strategies.py --table 10000 [--jobs 2]   # win rates with 95% intervals
    python benchmarks/strategies.py --choices 20000   # heuristic/greedy time on fixed deals, and what they chose
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

# This file is named like the `strategies` package; keep its folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402
from joblib import Parallel, delayed  # noqa: E402

from sim.errors import run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.rules import find_variant  # noqa: E402
from strategies import DealInfo, load_strategy  # noqa: E402
from strategies.batch import play_batch  # noqa: E402
from strategies.play import play_python  # noqa: E402
from studies.stats import win_rate_interval  # noqa: E402

SPECS = (
    "random",
    "random:home_first=true",
    "greedy",
    "heuristic:preset=builder",
    "heuristic:preset=balanced",
    "heuristic",
    "lookahead:mode=search,depth=2",
    "lookahead",
)


ROUNDS = 3
"""Compiled figures are the best of this many rounds, every strategy measured once per round."""


def batch_size(rules, strategy, seconds: float) -> int:  # noqa: ANN001
    """Deals (numbers 1..n) whose compiled batch takes about ``seconds`` of this process's CPU time."""
    play_batch(rules, strategy, np.arange(1, 3))  # compile
    n = 16
    while True:
        t = time.process_time()
        play_batch(rules, strategy, np.arange(1, n + 1))
        if time.process_time() - t >= seconds:
            return n
        n *= 2


def compiled_rates(rules, specs: tuple[str, ...], seconds: float) -> dict[str, float]:  # noqa: ANN001
    """Deals per CPU second of each strategy's compiled tier: the best of `ROUNDS` rounds, each
    playing the same deals once per strategy in turn, so that a slow spell of a shared machine
    (CPU time still grows with cache misses and frequency changes) hits every strategy alike."""
    strategies = {spec: load_strategy(spec) for spec in specs}
    sizes = {spec: batch_size(rules, strategies[spec], seconds / ROUNDS) for spec in specs}
    best = dict.fromkeys(specs, 0.0)
    for _ in range(ROUNDS):
        for spec in specs:
            numbers = np.arange(1, sizes[spec] + 1)
            t = time.process_time()
            play_batch(rules, strategies[spec], numbers)
            best[spec] = max(best[spec], len(numbers) / max(time.process_time() - t, 1e-9))
    return best


def python_rate(rules, spec: str, seconds: float) -> float:  # noqa: ANN001
    """Deals per CPU second of the Python tier over ``seconds`` of CPU time."""
    strategy = load_strategy(spec)
    python_one(rules, strategy, 1)
    t, n = time.process_time(), 0
    while time.process_time() - t < seconds:
        n += 1
        python_one(rules, strategy, n + 1)
    return n / (time.process_time() - t)


def python_one(rules, strategy, number: int) -> str:  # noqa: ANN001
    return play_python(strategy, Game.from_deal(rules, number), DealInfo(rules, number, 0, "default")).outcome


def speed(rules, seconds: float) -> None:  # noqa: ANN001
    print(f"strategy throughput on {rules.name}, one core, ~{seconds:g} s per figure "
          f"(CPU time; compiled: best of {ROUNDS} interleaved rounds)")
    header = f"{'strategy':32} {'compiled deals/s':>17} {'x greedy':>9} {'python deals/s':>15}"
    print(header)
    print("-" * len(header))
    compiled = compiled_rates(rules, SPECS, seconds)
    reference = compiled["greedy"]
    for spec in SPECS:
        c = compiled[spec]
        p = python_rate(rules, spec, seconds)
        print(f"{spec:32} {c:17,.0f} {c / reference:9.3f} {p:15,.0f}")


HEURISTICS = ("greedy", "heuristic:preset=builder", "heuristic:preset=balanced", "heuristic")
"""What `choices` compares: greedy and the heuristic presets."""


def choices(rules, deals: int) -> None:  # noqa: ANN001
    """Time of each of `HEURISTICS` on deals 1..``deals`` against greedy's (CPU time, best of `ROUNDS`
    interleaved rounds), with its wins, mean moves and a digest of every deal's outcome, termination,
    cards home, move count and winning moves: run on two versions of the code, equal digests say
    that they made the same moves on every deal."""
    print(f"heuristic time against greedy on {rules.name}, deals 1-{deals}, CPU time, best of {ROUNDS} rounds")
    numbers = np.arange(1, deals + 1)
    strategies = {spec: load_strategy(spec) for spec in HEURISTICS}
    for spec in HEURISTICS:
        play_batch(rules, strategies[spec], numbers[:2])  # compile
    best, seen = dict.fromkeys(HEURISTICS, float("inf")), {}
    for _ in range(ROUNDS):
        for spec in HEURISTICS:
            t = time.process_time()
            res = play_batch(rules, strategies[spec], numbers)
            best[spec] = min(best[spec], time.process_time() - t)
            digest = hashlib.sha256()
            for column in (res.outcome, res.termination, res.cards_home, res.moves, res.win_moves):
                digest.update(np.ascontiguousarray(column).tobytes())
            seen[spec] = (int((res.outcome == 1).sum()), float(res.moves.mean()), digest.hexdigest()[:12])
    print(f"{'strategy':28} {'deals/s':>9} {'x greedy time':>14} {'wins':>6} {'mean moves':>11}  digest")
    for spec in HEURISTICS:
        wins, moves, digest = seen[spec]
        print(f"{spec:28} {deals / best[spec]:9,.0f} {best[spec] / best['greedy']:14.2f} {wins:6} {moves:11.3f}  {digest}")


def _chunk(rules, spec: str, numbers: np.ndarray) -> tuple[int, int, float]:  # noqa: ANN001
    res = play_batch(rules, load_strategy(spec), numbers)
    return int((res.outcome == 1).sum()), len(numbers), float(res.cards_home.sum())


def table(rules, deals: int, jobs: int) -> None:  # noqa: ANN001
    print(f"win rates on {rules.name}, deals 1-{deals} (seed 0), 95% Wilson intervals")
    print("| strategy | wins | win rate | 95% interval | mean cards home |\n|---|---:|---:|---|---:|")
    for spec in SPECS:
        chunks = np.array_split(np.arange(1, deals + 1), max(jobs * 8, 1))
        parts = Parallel(n_jobs=jobs)(delayed(_chunk)(rules, spec, c) for c in chunks)
        wins, n, home = (sum(x) for x in zip(*parts, strict=True))
        low, high = win_rate_interval(wins, n)
        print(f"| `{spec}` | {wins} | {wins / n:.2%} | {low:.2%} - {high:.2%} | {home / n:.1f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", default="bakers-dozen")
    ap.add_argument("--seconds", type=float, default=2.0, help="time per speed figure")
    ap.add_argument("--table", type=int, default=0, help="instead of speed, win rates over this many deals")
    ap.add_argument("--jobs", type=int, default=1, help="processes for --table")
    ap.add_argument("--choices", type=int, default=0, help="instead of speed, heuristic/greedy time and choices on this many deals")
    args = ap.parse_args()
    rules = find_variant(args.variant)
    if args.table:
        table(rules, args.table, args.jobs)
    elif args.choices:
        choices(rules, args.choices)
    else:
        speed(rules, args.seconds)


if __name__ == "__main__":
    run_script(main)
