"""The honest player's curve: win rate (95% Wilson interval) against seconds per deal (prints; not a test).

For each variant and each strategy spec it plays deals FIRST-LAST (seed 0) with
the compiled tier in this one process (one core) and prints wins, the win
rate with its interval, the seconds per deal, wall-clock and this process's CPU time (the
one-core figure on a machine shared with other work), and the solver nodes per deal (which load
does not change: the budget to compare on a shared machine). Where two or more
of the specs are honest (they never read a face-down card), a last line counts the deals that at
least one of them won: a player that could pick, after the fact, the right one of them for each
deal, so an estimate from above of what choosing among them could buy. The default specs
are the `sampling` presets from fastest to strongest, then the clairvoyant
solver and the heuristic for reference.

Usage: ``nice .venv/bin/python benchmarks/honest.py`` (dick-1883 and
castles-in-spain, deals 1-1000: long), or e.g. ``--variant dick-1883 --first
2001 --last 2200 --spec sampling:preset=fast`` to develop on deals that are
not the test set.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sim.engine import UNKNOWN, WON  # noqa: E402
from sim.errors import run_script  # noqa: E402
from sim.rules import find_variant  # noqa: E402
from strategies import load_strategy  # noqa: E402
from strategies.batch import play_batch  # noqa: E402
from studies.stats import win_rate_interval  # noqa: E402

SPECS = ("sampling:preset=fast", "sampling:candidates=2", "sampling", "solver", "heuristic")
"""The curve's points (fastest first) and the two references."""


CSV_COLUMNS = ("variant", "first", "last", "spec", "label", "honest", "won", "deals", "unknown", "win_rate", "ci_low",
               "ci_high", "cpu_s_per_deal", "wall_s_per_deal", "nodes_per_deal", "measured")
"""The columns ``--csv`` appends (one row per spec): what `reports.honest_figures` draws the budget curve from."""


def append_csv(path: Path, row: dict[str, object]) -> None:
    """Append one spec's figures to the curve file, writing the header first if the file is new."""
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as f:
        out = csv.DictWriter(f, fieldnames=CSV_COLUMNS)
        if new:
            out.writeheader()
        out.writerow(row)


def curve(variant: str, first: int, last: int, specs: list[str], strategy_seed: int, every: int = 0,
          outcomes: Path | None = None, csv_path: Path | None = None) -> None:
    """Print one line per spec: wins, win rate, 95% interval, unknown, seconds and nodes per deal; with ``every``
    > 0, also a line for the deals played so far after each ``every`` deals (a long run that is cut
    short still gives its first deals). With ``outcomes``, append to that file one JSON line per spec
    with the numbers of the deals won, so that two settings can be compared deal by deal (a paired test)."""
    rules = find_variant(variant)
    numbers = np.arange(first, last + 1, dtype=np.int64)
    deals = len(numbers)
    print(f"{variant}, deals {first}-{last} (seed 0), strategy seed {strategy_seed}; 95% Wilson intervals", flush=True)
    header = (f"{'strategy':42} {'won':>5} {'win rate':>9} {'95% interval':>19} {'unknown':>8} {'s/deal':>8} "
              f"{'cpu s/deal':>10} {'nodes/deal':>11}")
    print(header)
    print("-" * len(header), flush=True)
    honest_wins: list[set[int]] = []
    for spec in specs:
        strategy = load_strategy(spec)
        play_batch(rules, strategy, numbers[:1], strategy_seed=strategy_seed)  # compile outside the clock
        step = every if every > 0 else deals
        won = unknown = nodes = 0
        dt = dc = 0.0
        won_numbers: list[int] = []
        for start in range(0, deals, step):
            part = numbers[start : start + step]
            t, c = time.perf_counter(), time.process_time()
            result = play_batch(rules, strategy, part, strategy_seed=strategy_seed)
            dt, dc = dt + time.perf_counter() - t, dc + time.process_time() - c
            won += int((result.outcome == WON).sum())
            won_numbers += part[result.outcome == WON].tolist()
            unknown += int((result.outcome == UNKNOWN).sum())
            nodes += int(result.nodes.sum())
            played = start + len(part)
            low, high = win_rate_interval(won, played)
            label = strategy.label if played == deals else f"{strategy.label} [{first}-{first + played - 1}]"
            print(f"{label:42} {won:5d} {won / played:9.2%} {low:8.2%} - {high:8.2%} {unknown:8d} {dt / played:8.3f} "
                  f"{dc / played:10.3f} {nodes / played:11,.0f}", flush=True)
        if not strategy.peeks:
            honest_wins.append(set(won_numbers))
        if csv_path is not None:
            low, high = win_rate_interval(won, deals)
            append_csv(csv_path, {"variant": variant, "first": first, "last": last, "spec": spec,
                                  "label": strategy.label, "honest": not strategy.peeks, "won": won, "deals": deals,
                                  "unknown": unknown, "win_rate": round(won / deals, 6), "ci_low": round(low, 6),
                                  "ci_high": round(high, 6), "cpu_s_per_deal": round(dc / deals, 4),
                                  "wall_s_per_deal": round(dt / deals, 4), "nodes_per_deal": round(nodes / deals),
                                  "measured": datetime.date.today().isoformat()})
        if outcomes is not None:
            with outcomes.open("a") as f:
                f.write(json.dumps({"variant": variant, "first": first, "last": last, "spec": spec,
                                    "label": strategy.label, "strategy_seed": strategy_seed,
                                    "nodes_per_deal": nodes / deals, "won": won_numbers}) + "\n")
    if len(honest_wins) > 1:
        any_won = len(set().union(*honest_wins))
        low, high = win_rate_interval(any_won, deals)
        print(f"{f'any of the {len(honest_wins)} honest specs':42} {any_won:5d} {any_won / deals:9.2%} {low:8.2%} - "
              f"{high:8.2%}   (the deals at least one of them won: picking after the fact, an estimate from above)",
              flush=True)


def main() -> None:
    """Parse the command line and print the curves."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", action="append", help="variant (repeatable; default dick-1883 and castles-in-spain)")
    ap.add_argument("--first", type=int, default=1)
    ap.add_argument("--last", type=int, default=1000)
    ap.add_argument("--spec", action="append", help=f"strategy spec (repeatable; default {', '.join(SPECS)})")
    ap.add_argument("--strategy-seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=0, help="also print the running totals every N deals")
    ap.add_argument("--outcomes", type=Path, help="append the deals each spec won to this file (JSON lines)")
    ap.add_argument("--csv", type=Path, help="append one row per spec to this CSV file (the budget curve's data, "
                    "drawn by python -m reports.honest_figures)")
    args = ap.parse_args()
    for variant in args.variant or ["dick-1883", "castles-in-spain"]:
        curve(variant, args.first, args.last, args.spec or list(SPECS), args.strategy_seed, args.every, args.outcomes,
              args.csv)
        print()


if __name__ == "__main__":
    run_script(main)
