"""The perf check: `simulate` of greedy with one job, whole process, against a bare cached numba loop.

The bare loop is the greedy policy's cached game loop (`strategies.loops`)
called once on all the deals in this process, after a warm-up call: deals per
second of the machine code alone. The `simulate` figure is the whole command
line in a fresh process (start-up, imports, cache loads, the worker, chunking,
store writes) into a new store. The two are run back to back, alternately,
``--repeats`` times each (best of each), so that a noisy shared machine
disturbs both alike. The goal is a ratio of 0.8 or better.

    python benchmarks/perf_check.py [--deals 1000000] [--repeats 2] [--checkout DIR]

On a shared machine the wall ratio moves with the load; the CPU ratio (the bare
loop's seconds against the CPU seconds simulate's process and its workers used)
moves less.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# benchmarks/strategies.py is named like the `strategies` package; keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import numpy as np  # noqa: E402

from sim import engine as E  # noqa: E402
from sim.deals import deck_and_home  # noqa: E402
from sim.rules import resolve_variant  # noqa: E402
from strategies.greedy import greedy_policy  # noqa: E402
from strategies.loops import loops_for  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def bare_seconds(deals: int) -> tuple[float, float, int]:
    """Wall and CPU seconds of one call of greedy's cached loop over deals 1..deals (after a warm-up call), and the wins."""
    rules = resolve_variant("bakers-dozen")
    prm = E.rule_params(rules)
    base, home = deck_and_home(rules)
    play_deals = loops_for(greedy_policy).play_deals

    def run(n: int) -> tuple[float, float, int]:
        numbers = np.arange(1, n + 1, dtype=np.int64)
        outs = [np.zeros(n, dtype=t) for t in (np.int8, np.int8, np.int16, np.int32, np.int64, np.int64)]
        win_offsets = np.zeros(n + 1, dtype=np.int64)
        win_moves = np.zeros(n * 60, dtype=np.int16)  # greedy wins are short: no second call needed
        preset = np.zeros((0, prm[E.P_SIZE]), dtype=np.int8)
        t, c = time.perf_counter(), time.process_time()
        done = play_deals(prm, 0, numbers, preset, base, home, np.zeros(1, dtype=np.int64), E.SCRATCH_OWN, 0, 0.0,
                          *outs, win_moves, win_offsets)
        seconds, cpu = time.perf_counter() - t, time.process_time() - c
        assert done == n
        return seconds, cpu, int((outs[0] == E.WON).sum())

    run(100)
    return run(deals)


def simulate_seconds(deals: int, checkout: Path = ROOT) -> tuple[float, float]:
    """Wall and CPU seconds (user + system, its workers included) of ``bakers-dozen simulate`` of ``checkout``
    on greedy deals 1..deals, one job, into a new store."""
    with tempfile.TemporaryDirectory() as tmp:
        command = [sys.executable, "-m", "bakers_dozen", "simulate", "--strategy", "greedy", "--deals", str(deals),
                   "--jobs", "1", "--store", str(Path(tmp) / "results")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL, cwd=tmp)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--checkout", type=Path, default=ROOT,
                    help="the bakers-dozen tree whose simulate is timed (default: this one), e.g. an older one")
    args = ap.parse_args()
    bare, bare_cpu, whole, cpu = [], [], [], []
    for _ in range(args.repeats):
        seconds, used, wins = bare_seconds(args.deals)
        bare.append(seconds)
        bare_cpu.append(used)
        wall, spent = simulate_seconds(args.deals, args.checkout)
        whole.append(wall)
        cpu.append(spent)
        print(f"bare loop {args.deals / seconds:,.0f} deals/s ({wins:,} won, {seconds:.2f} s wall, {used:.2f} s CPU); "
              f"simulate {args.deals / wall:,.0f} deals/s ({wall:.2f} s wall, {spent:.2f} s CPU)", flush=True)
    b, w = args.deals / min(bare), args.deals / min(whole)
    print(f"best: bare loop {b:,.0f} deals/s, simulate (whole process) {w:,.0f} deals/s, ratio {w / b:.2f}x; "
          f"by CPU seconds (the bare loop's against simulate's): {min(bare_cpu) / min(cpu):.2f}x")


if __name__ == "__main__":
    main()
