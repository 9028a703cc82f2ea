"""Where an atlas deal's time goes (prints; not a test).

Solves a range of deals with the atlas's first rung (the solver's defaults) through the runner and a fresh store,
as `bakers-dozen atlas` does, twice in this one process (one core, the deals played here): without the referee and
with it. From the process's CPU time and the solver's own clock per deal it splits a deal's cost into

- search: the compiled search (the solver's clock, summed over the deals; that clock is wall time, so it is scaled by
  the pass's CPU share of its wall time: on a busy machine a deal's wall time holds other processes' turns);
- set-up and rows: the rest of the run without the referee (dealing, the table cleared, the rows built and stored);
- referee: what checking every win adds (the second pass's CPU time less the first's);

and says how much of the search the slowest deals take (the heavy tail no per-deal saving touches), and what a
million deals would take on two cores at this rate. Warm: a deal is solved first so no compile time is counted.

Usage: ``nice python benchmarks/atlas.py --variant bakers-dozen --deals 200001-203000`` (``--set
worrying_back=true`` for a rule override, ``--param safe_wide=true`` for a solver parameter; ``--against
safe_wide=true`` runs the defaults and those parameters back to back and prints the ratio).
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bakers_dozen.solve import apply_overrides, parse_deals, parse_params  # noqa: E402
from sim.errors import run_script  # noqa: E402
from sim.rules import Rules, resolve_variant  # noqa: E402
from studies.solving import solve_deals  # noqa: E402

HEAVY_SECONDS = 0.1
"""A deal whose search takes longer than this is in the heavy tail."""


def cpu_seconds() -> float:
    """User and system CPU time of this process so far."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def solve_pass(rules: Rules, params: dict[str, str], first: int, last: int, verify: bool,
               folder: Path) -> tuple[float, np.ndarray]:
    """CPU seconds of one solve of deals first..last with solver ``params`` into a fresh store in ``folder``, and
    each deal's search CPU seconds (its clock's wall seconds times the pass's CPU share)."""
    start, wall = cpu_seconds(), time.perf_counter()
    rows, _ = solve_deals(rules, params, first, last, store=folder / f"store-{verify}", jobs=1, verify=verify)
    cpu, wall = cpu_seconds() - start, time.perf_counter() - wall
    return cpu, np.array([r["seconds"] for r in rows]) * min(1.0, cpu / wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", default="bakers-dozen", help="a preset or a .toml variant file")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="a rule override, as `solve --set` takes it (repeatable), e.g. worrying_back=true")
    parser.add_argument("--deals", default="20001-22000", help="A-B, deals the atlas's shipped ranges need not hold")
    parser.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                        help="a solver parameter, as `solve --param` takes it (repeatable)")
    parser.add_argument("--against", action="append", default=[], metavar="KEY=VALUE",
                        help="solver parameters run after the --param ones, back to back, for a ratio (repeatable)")
    args = parser.parse_args()
    rules = apply_overrides(resolve_variant(args.variant), tuple(args.overrides))
    first, last = parse_deals(args.deals)
    params = parse_params(args.param)
    per_deal = report(rules, params, first, last)
    if args.against:
        other = {**params, **parse_params(args.against)}
        against = report(rules, other, first, last)
        print(f"CPU a deal with {' '.join(args.against)} / without: {against / per_deal:.2f}")


def report(rules: Rules, params: dict[str, str], first: int, last: int) -> float:
    """Print where the time of deals first..last goes with solver ``params``; return the CPU seconds a deal."""
    n = last - first + 1
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        solve_pass(rules, params, first, first, True, folder / "warm")  # compiled code loaded, not timed
        bare, search = solve_pass(rules, params, first, last, False, folder)
        checked, _ = solve_pass(rules, params, first, last, True, folder)
    heavy = search > HEAVY_SECONDS
    per_deal = checked / n
    shown = " ".join(f"{k}={v}" for k, v in params.items()) or "the solver's defaults"
    print(f"{rules.name} deals {first:,}-{last:,} ({n:,}), {shown}, one core, the runner and a fresh store:")
    print(f"  CPU a deal, referee included: {per_deal * 1000:.2f} ms (median search {np.median(search) * 1000:.2f} ms)")
    print(f"    search:        {search.sum() / n * 1000:7.3f} ms a deal")
    print(f"    set-up, rows:  {(bare - search.sum()) / n * 1000:7.3f} ms a deal")
    print(f"    referee:       {(checked - bare) / n * 1000:7.3f} ms a deal")
    print(f"  heavy tail: {int(heavy.sum()):,} deal(s) over {HEAVY_SECONDS * 1000:.0f} ms take "
          f"{search[heavy].sum() / max(search.sum(), 1e-9):.0%} of the search ({search[heavy].sum() / n * 1000:.2f} ms "
          "a deal on average)")
    print(f"  10^6 deals on 2 cores at this rate: {per_deal * 1e6 / 2 / 60:,.0f} min "
          f"({(per_deal - search[heavy].sum() / n) * 1e6 / 2 / 60:,.0f} min without the heavy tail)")
    return per_deal


if __name__ == "__main__":
    run_script(main)
