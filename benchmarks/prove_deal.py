"""Prove one deal with the layered prover (`strategies.solver.layers`), resumably, printing progress.

    python benchmarks/prove_deal.py --source pysol --deal 417 --checkpoint /tmp/proof-417 --gib 6
    python benchmarks/prove_deal.py --variant good-measure --deal 22 --components 20000

Run it again with the same ``--checkpoint`` to continue a proof that was stopped
or killed; Ctrl-C or a plain ``kill`` (SIGTERM: a proof run in the background ignores
Ctrl-C) stops it at its next safe point with the checkpoint saved. Prints a line per finished layer (elapsed seconds, positions,
largest layer, peak MiB) and the verdict with its figures at the end; with
``--components`` the prover stores components of inner moves
(`strategies.solver.components`) and the figures count components too.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, before benchmarks/strategies.py

from sim.deals import make_deal  # noqa: E402
from sim.errors import run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.rules import find_variant  # noqa: E402
from strategies.solver.layers import ProofResult, prove  # noqa: E402
from strategies.solver.search import F_DEAD, F_LONE, F_SAFE, VERDICTS  # noqa: E402


def main() -> None:
    """Parse the arguments, run the proof, print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="bakers-dozen")
    ap.add_argument("--deal", type=int, required=True)
    ap.add_argument("--source", default="default", choices=("default", "pysol"))
    ap.add_argument("--checkpoint", default=None, help="directory for the resumable state")
    ap.add_argument("--gib", type=float, default=4.0, help="memory budget for the layer and seeds in memory")
    ap.add_argument("--seconds", type=float, default=1e9, help="stop (resumably) after this long")
    ap.add_argument("--components", type=int, default=0,
                    help="store components of inner moves of at most this many members (0: positions)")
    ap.add_argument("--cache", type=int, default=1 << 22, help="entries of the member -> component cache")
    args = ap.parse_args()
    rules = find_variant(args.variant)
    game = Game(rules, make_deal(rules, args.deal, source=args.source).position)
    t0 = time.perf_counter()

    def show(r: ProofResult) -> None:
        print(f"{time.perf_counter() - t0:9.0f} s  {r.positions:>14,} positions  {r.components:>12,} keys  "
              f"{r.layers:>6} layers  largest {r.largest_layer:>12,}  peak {r.peak_bytes / 2**20:8.0f} MiB  "
              f"{r.reason}", flush=True)

    r = prove(game.state_array(), game.rule_params, F_SAFE | F_DEAD | F_LONE, args.gib * 2**30, args.seconds,
              checkpoint=args.checkpoint, progress=show, component_cap=args.components, cache_entries=args.cache)
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    print(f"verdict {VERDICTS[r.verdict]} {r.reason}: {r.positions:,} positions, {r.components:,} keys "
          f"(components with --components), {r.layers} layers, largest layer {r.largest_layer:,}, peak "
          f"{r.peak_bytes / 2**20:.0f} MiB of keys, {rss:.0f} MiB resident, {r.seconds:.1f} s this run, "
          f"{cpu.ru_utime + cpu.ru_stime:.1f} CPU s in the process (compiling included)", flush=True)
    if r.stats is not None:
        print("components:", ", ".join(f"{k} {v:,}" for k, v in r.stats.items()), flush=True)
    if r.reason == "interrupted":
        print("interrupted: run the same command again to continue from the checkpoint" if args.checkpoint
              else "interrupted: nothing saved (no --checkpoint)", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    run_script(main)
