"""The beam search's rung on the deals a shipped atlas row leaves unknown: how many it wins, at what cost.

    python benchmarks/beam_rung.py --variant good-measure --count 40
    python benchmarks/beam_rung.py --variant bakers-dozen --source pysol --width 20000 --nodes 20000000

Takes the first ``--count`` unknown deals of the row in ``studies/atlas/data`` (or ``--atlas``) and solves each with the
ladder's beam rung alone (`bakers_dozen.escalate.LADDER`'s last rung, or ``--width`` / ``--nodes``), one process:
prints each deal's verdict, positions and seconds (every win replayed by the referee), then the totals. A win here
is what the rung would add to that row if the row's ladder reached it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository, before benchmarks/strategies.py

from sim.errors import UserError, run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.referee import replay_codes  # noqa: E402
from sim.rules import find_variant  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402
from studies import atlas as files  # noqa: E402
from studies.atlas.ladder import LADDER  # noqa: E402


def unknown_deals(folder: Path, variant: str, source: str, count: int) -> list[int]:
    """The first ``count`` deals the atlas row of ``variant`` in ``source`` numbering leaves unknown."""
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    path = folder / files.deals_file(variant, source)
    if not path.exists():
        raise UserError(f"--atlas {folder}: no {path.name}")
    table = pq.read_table(path, columns=["deal", "verdict"])
    return table.filter(pc.equal(table["verdict"], "unknown"))["deal"].to_pylist()[:count]


def main() -> None:
    """Parse the arguments, solve the deals, print the figures."""
    rung = LADDER[-1].params
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--variant", default="bakers-dozen")
    ap.add_argument("--source", default="default", choices=("default", "pysol"))
    ap.add_argument("--atlas", type=Path, default=Path(__file__).resolve().parents[1] / "studies" / "atlas" / "data")
    ap.add_argument("--count", type=int, default=20, help="unknown deals to try, the lowest-numbered first")
    ap.add_argument("--width", type=int, default=rung["beam_width"])
    ap.add_argument("--nodes", type=int, default=rung["beam_nodes"], help="positions the beam may generate")
    args = ap.parse_args()
    rules = find_variant(args.variant)
    deals = unknown_deals(args.atlas, rules.name, args.source, args.count)
    solver = SolverStrategy(**{**rung, "beam_width": args.width, "beam_nodes": args.nodes})
    solver.ready(rules)
    print(f"{rules.name} ({args.source} numbering): {len(deals)} unknown deal(s) of {args.atlas}, beam width "
          f"{args.width:,}, at most {args.nodes:,} positions")
    won, positions, t0 = [], 0, time.perf_counter()
    for deal in deals:
        game = Game.from_deal(rules, deal, source=args.source)
        verdict, nodes, line, seconds = solver.solve_state(rules, game.state_array(), game.rule_params)
        if verdict == "won":
            if not replay_codes(rules, game.deal.position, line).won:
                raise RuntimeError(f"deal {deal}: the beam's line does not win under the referee")
            won.append(deal)
        positions += nodes
        print(f"{deal:>9}  {verdict:8} {nodes:>12,} positions {seconds:8.1f} s" +
              (f"  {len(line)} moves, replayed" if line else ""), flush=True)
    wall = time.perf_counter() - t0
    print(f"won {len(won)} of {len(deals)} ({', '.join(map(str, won)) or 'none'}); {positions:,} positions, "
          f"{wall:.0f} s, {wall / max(len(deals), 1):.1f} s a deal")


if __name__ == "__main__":
    run_script(main)
