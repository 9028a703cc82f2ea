"""Engine throughput: compiled random and greedy playouts, games per second on one core, and what the
whole ``simulate`` command keeps of the bare loop's speed.

Each figure includes dealing the deal from its number and recording the
outcome (the whole `strategies.batch.play_batch` path). A deal-only pass (a policy
that resigns at once) is measured in the same process as the reference, so
the ratio column stays meaningful on a noisy shared machine.

Then, end to end: ``bakers-dozen simulate -s greedy -n N --jobs 1`` as a fresh
process into a new store (start-up, checks, rows, Parquet writes and fsyncs
included) against greedy's bare compiled loop over the same deals in this process,
back to back, ``--repeats`` times (`perf_check`'s two measurements). It prints the
ratio of the two (the goal is 0.8 or more) by wall time and by CPU seconds; on a
loaded machine read the CPU ratio.

    python benchmarks/engine.py [--deals N] [--variants a,b,...] [--end-to-end 1000000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

# benchmarks/strategies.py is named like the `strategies` package; keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import sim  # noqa: E402, F401 - before numba: it sets numba's cache folder (sim.compile_cache)

# isort: split
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

from sim.errors import run_script  # noqa: E402
from sim.rules import VARIANTS, find_variant  # noqa: E402
from strategies import CompiledPolicy, Strategy, load_strategy  # noqa: E402
from strategies.batch import play_batch  # noqa: E402


@nb.njit(cache=True)
def _resign(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN202 (numba)
    return -1


class DealOnly(Strategy):
    """Deals, generates the first moves and resigns: the cost floor of a playout."""

    name = "deal-only"

    def compiled(self, rules):  # noqa: ANN001, ANN201
        return CompiledPolicy(_resign, np.zeros(1, dtype=np.int64))


def rate(rules, strategy, deals: int, repeats: int = 3) -> tuple[float, float, float]:  # noqa: ANN001
    """Best-of-``repeats`` deals per second, win rate and mean moves."""
    play_batch(rules, strategy, np.arange(1, 50))  # compile outside the timing
    best = 0.0
    for _ in range(repeats):
        numbers = np.arange(1, deals + 1, dtype=np.int64)
        t = time.perf_counter()
        res = play_batch(rules, strategy, numbers)
        best = max(best, deals / (time.perf_counter() - t))
    return best, float((res.outcome == 1).mean()), float(res.moves.mean())


def _perf_check():  # noqa: ANN202 - the module
    """`perf_check.py` beside this file, loaded by its path (this folder is kept off the import path)."""
    spec = importlib.util.spec_from_file_location("perf_check", Path(__file__).with_name("perf_check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def end_to_end(deals: int, repeats: int) -> None:
    """Print ``simulate``'s whole-process speed against the bare loop's, measured back to back, and their ratios."""
    check = _perf_check()
    print(f"\nend to end: `bakers-dozen simulate -s greedy -n {deals} --jobs 1` (fresh process, new store) against "
          f"greedy's bare compiled loop on the same deals, back to back, {repeats} rounds")
    walls, cpus = [], []
    for _ in range(repeats):
        bare, bare_cpu, _ = check.bare_seconds(deals)
        whole, whole_cpu = check.simulate_seconds(deals)
        walls.append(bare / whole)
        cpus.append(bare_cpu / whole_cpu)
        print(f"  bare loop {bare:6.2f} s wall {bare_cpu:6.2f} s CPU | simulate {whole:6.2f} s wall {whole_cpu:6.2f} s CPU "
              f"| ratio {walls[-1]:.2f} wall, {cpus[-1]:.2f} CPU", flush=True)
    print(f"simulate / bare loop: best {max(walls):.2f} wall, {max(cpus):.2f} CPU; "
          f"median {statistics.median(walls):.2f} wall, {statistics.median(cpus):.2f} CPU (goal: 0.80 or more)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=200_000, help="deals per measurement (random plays 1/20 of this)")
    ap.add_argument("--variants", default=",".join(v.name for v in VARIANTS),
                    help="variants of the throughput table ('' for none)")
    ap.add_argument("--end-to-end", type=int, default=1_000_000, metavar="DEALS",
                    help="deals of the simulate-against-bare-loop comparison (0: skip it)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds of that comparison")
    args = ap.parse_args()
    nb.set_num_threads(1)
    variants = [name for name in args.variants.split(",") if name]
    if variants:
        print(f"engine benchmark: 1 core, {args.deals} deals per greedy measurement, best of 3; cpu count {os.cpu_count()}")
        header = f"{'variant':18} {'strategy':24} {'deals/s':>10} {'x deal-only':>11} {'win rate':>9} {'moves':>7}"
        print(header)
        print("-" * len(header))
    for name in variants:
        rules = find_variant(name)
        floor, _, _ = rate(rules, DealOnly(), args.deals)
        print(f"{rules.name:18} {'(deal only)':24} {floor:10,.0f} {1.0:11.2f} {'':>9} {'':>7}")
        for spec, deals in (("greedy", args.deals), ("random:home_first=true", args.deals // 20), ("random", args.deals // 20)):
            r, win, moves = rate(rules, load_strategy(spec), deals)
            print(f"{rules.name:18} {spec:24} {r:10,.0f} {r / floor:11.3f} {win:9.4f} {moves:7.1f}")
    if args.end_to_end > 0:
        end_to_end(args.end_to_end, args.repeats)


if __name__ == "__main__":
    run_script(main)
