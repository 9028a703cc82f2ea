"""Solver and sampling-player figures on fixed deal sets (prints; not a test).

Part ``solver``: per variant, the solver's verdicts on a fixed deal set (PySol
deals 1-1000 for bakers-dozen, the toolkit's deals 1-N for the others, and
Spanish Patience with worrying back), with decided fraction, mean / median /
max seconds per deal, nodes per second and peak memory; every win is replayed
by the referee.

Part ``sampling``: win rates on dick-1883 deals 1-N of the sampling player next
to the clairvoyant solver and the heuristic players, with 95% Wilson
intervals.

Usage: ``.venv/bin/python benchmarks/solver.py --part solver`` (and
``--part sampling``); one core unless ``--jobs``.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bakers_dozen.solve import solve_deals, summary  # noqa: E402
from sim.rules import VARIANTS, find_variant  # noqa: E402
from strategies import load_strategy  # noqa: E402
from strategies.batch import play_batch  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402
from studies.stats import win_rate_interval  # noqa: E402


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def solver_part(deals: int, bd_deals: int, jobs: int) -> None:
    params = dict(SolverStrategy().params)
    print(f"solver benchmark: {SolverStrategy().label} "
          f"(nodes={params['nodes']:,}, seconds={params['seconds']}, tt_mb={params['tt_mb']}); jobs={jobs}")
    cases = [(find_variant("bakers-dozen"), "pysol", bd_deals)]
    cases += [(v.rules, "default", deals) for v in VARIANTS if v.name != "bakers-dozen"]
    spanish = find_variant("spanish-patience")
    cases.append((spanish.replace(name="spanish+worrying", worrying_back=True), "default", bd_deals))
    header = (f"{'variant':18} {'source':7} {'deals':>5} {'won':>5} {'lost':>4} {'unk':>4} {'decided':>8} "
              f"{'mean s':>8} {'median s':>9} {'max s':>7} {'nodes/s':>10} {'referee':>8} {'peak MiB':>9}")
    print(header)
    print("-" * len(header))
    for rules, source, n in cases:
        rows = solve_deals(rules, params, 1, n, source=source, jobs=jobs)
        s = summary(rows)
        print(f"{rules.name:18} {source:7} {n:5d} {s['won']:5d} {s['lost']:4d} {s['unknown']:4d} {s['decided']:8.2%} "
              f"{s['mean_seconds']:8.4f} {s['median_seconds']:9.4f} {s['max_seconds']:7.2f} "
              f"{s['nodes_per_second']:10,.0f} {s['verified']:4d}/{s['won']:<4d} {peak_mib():9.0f}", flush=True)
        odd = [(r["deal"], r["verdict"]) for r in rows if r["verdict"] != "won"]
        if odd:
            print(f"{'':18} not won: {odd}", flush=True)


def sampling_part(deals: int, strategy_seed: int) -> None:
    rules = find_variant("dick-1883")
    numbers = np.arange(1, deals + 1, dtype=np.int64)
    print(f"dick-1883, deals 1-{deals} (seed 0), strategy seed {strategy_seed}; 95% Wilson intervals")
    header = f"{'strategy':42} {'won':>5} {'win rate':>9} {'95% interval':>19} {'unknown':>8} {'s/deal':>8}"
    print(header)
    print("-" * len(header))
    for spec in ("solver", "sampling", "lookahead", "heuristic", "greedy", "random:home_first=true"):
        try:
            strategy = load_strategy(spec)
        except ValueError as exc:
            print(f"{spec:42} unavailable: {exc}")
            continue
        t = time.perf_counter()
        result = play_batch(rules, strategy, numbers, strategy_seed=strategy_seed)
        dt = time.perf_counter() - t
        won = int((result.outcome == 1).sum())
        low, high = win_rate_interval(won, deals)
        unknown = int((result.outcome == 2).sum())
        print(f"{strategy.label:42} {won:5d} {won / deals:9.2%} {low:8.2%} - {high:8.2%} {unknown:8d} {dt / deals:8.3f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("solver", "sampling", "all"), default="all")
    ap.add_argument("--deals", type=int, default=200, help="deals per variant (other than bakers-dozen) in part solver")
    ap.add_argument("--bd-deals", type=int, default=1000, help="PySol bakers-dozen deals (and Spanish with worrying back)")
    ap.add_argument("--sampling-deals", type=int, default=1000, help="dick-1883 deals in part sampling")
    ap.add_argument("--strategy-seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    print(f"cpu count {__import__('os').cpu_count()}; {time.strftime('%Y-%m-%d')}")
    if args.part in ("solver", "all"):
        solver_part(args.deals, args.bd_deals, args.jobs)
    if args.part in ("sampling", "all"):
        sampling_part(args.sampling_deals, args.strategy_seed)


if __name__ == "__main__":
    main()
