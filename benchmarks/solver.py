"""Solver and sampling-player figures on fixed deal sets (prints; not a test).

Part ``goals`` (the solver's speed targets): the solver with its default settings on
this toolkit's ``bakers-dozen`` deals 1-10,000 and ``good-measure`` deals
1-1,000, in this one process (one core): won / lost / unknown, the slowest
deal, mean milliseconds per deal, nodes per second and peak memory, every win
replayed by the referee (outside the timed search).

Part ``solver``: per variant, the same figures on a fixed deal set (PySol
deals 1-1000 for bakers-dozen, the toolkit's deals 1-N for the others, and
Spanish Patience with worrying back).

Part ``nodes``: node counts, which the machine's load does not change: the
solver without its time limit on each ``--goal`` deal set (``--source`` picks
the numbering), total nodes expanded, won / lost / unknown and the deals not
won. A change that must not change the search (a refactoring) must leave the
total the same.

Part ``census``: what one complete search spends its nodes on, for each
``--goal`` deal (`strategies.solver.census`): positions expanded, dead, cut by
the table, skipped unplayed, and how many of them are distinct under the
candidate equivalences a reduction could exploit.

Part ``sampling``: win rates on dick-1883 deals 1-N of the sampling player next
to the clairvoyant solver and the heuristic players, with 95% Wilson
intervals.

Usage: ``nice .venv/bin/python benchmarks/solver.py --part goals`` (and
``--part solver``, ``--part sampling``); it takes minutes.

Times are the solver's own per-deal clock (the compiled search's microseconds);
peak memory is the process's peak resident set (``getrusage``), which covers the
numpy work arrays and the transposition table as well as Python.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bakers_dozen.solve import parse_deals  # noqa: E402
from sim.cards import DECK_SIZE  # noqa: E402
from sim.deals import make_deal  # noqa: E402
from sim.engine import LOST, P_BUILD, UNKNOWN, WON  # noqa: E402
from sim.errors import UserError, run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.referee import replay_codes  # noqa: E402
from sim.rules import VARIANTS, Rules, find_variant  # noqa: E402
from strategies import load_strategy  # noqa: E402
from strategies.base import CLAIRVOYANT  # noqa: E402
from strategies.batch import play_batch  # noqa: E402
from strategies.solver.census import C_DEAD, C_EXPANDED, C_FULL, C_HOME, C_RUN, C_SKIPPED, C_TABLE_CUT, Census  # noqa: E402
from strategies.solver.search import F_DEAD, F_LONE, F_ORDER, F_SAFE, VERDICTS, SolverWork, solve  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402
from studies.stats import win_rate_interval  # noqa: E402

BATCH = 250
"""Deals per `play_batch` call: small enough to print progress, large enough that the call costs nothing."""


def peak_mib() -> float:
    """Peak resident memory of this process so far, MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class DealSet:
    """The solver's per-deal figures on one deal set."""

    deals: int
    won: int
    lost: int
    unknown: int
    verified: int
    seconds: np.ndarray
    nodes: np.ndarray
    not_won: list[tuple[int, str]]

    @property
    def nodes_per_second(self) -> float:
        return float(self.nodes.sum() / max(self.seconds.sum(), 1e-9))


def decide_set(rules: Rules, source: str, first: int, last: int, strategy: SolverStrategy, label: str) -> DealSet:
    """Solve deals first..last in this process; replay every win with the referee (not timed)."""
    seconds, nodes, outcome = [], [], []
    not_won: list[tuple[int, str]] = []
    verified = 0
    for a in range(first, last + 1, BATCH):
        numbers = np.arange(a, min(a + BATCH, last + 1), dtype=np.int64)
        r = play_batch(rules, strategy, numbers, source=source)
        seconds.append(r.micros / 1e6)
        nodes.append(r.nodes)
        outcome.append(r.outcome)
        for i, number in enumerate(numbers.tolist()):
            if r.outcome[i] == WON:
                codes = r.win_moves[r.win_offsets[i]:r.win_offsets[i + 1]].tolist()
                v = replay_codes(rules, make_deal(rules, number, 0, source).position, codes)
                verified += bool(v.legal and v.won)
            else:
                not_won.append((number, {LOST: "lost", UNKNOWN: "unknown"}.get(int(r.outcome[i]), "error")))
        done = numbers[-1] - first + 1
        print(f"\r  {label}: {done}/{last - first + 1} deals", end="", file=sys.stderr, flush=True)
    print("", file=sys.stderr)
    out = np.concatenate(outcome)
    return DealSet(len(out), int((out == WON).sum()), int((out == LOST).sum()), int((out == UNKNOWN).sum()), verified,
                   np.concatenate(seconds), np.concatenate(nodes), not_won)


CLAIRVOYANT_NOTE = "* the solver sees the face-down cards there: an upper bound for an honest player (clairvoyant)"


def row_name(rules: Rules, strategy: SolverStrategy) -> str:
    """The variant's name in a table, starred where the solver sees cards an honest player could not."""
    return rules.name + ("*" if strategy.sees_hidden(rules) else "")


def header_label(strategy: SolverStrategy) -> str:
    """The solver's label for a table of several variants: clairvoyance is marked per row (`row_name`)."""
    return strategy.label.removesuffix(CLAIRVOYANT)


def goals_line(name: str, first: int, last: int, s: DealSet) -> str:
    """One row of the goals table: the figures of deals first..last."""
    return (f"{name:14} {f'{first}-{last}':>11} {s.won:6d} {s.lost:5d} {s.unknown:7d} {s.seconds.max():7.2f} "
            f"{s.seconds.mean() * 1000:8.1f} {np.median(s.seconds) * 1000:9.2f} {s.nodes_per_second:11,.0f} "
            f"{s.verified:5d}/{s.won:<5d} {peak_mib():8.0f}")


def goals_part(cases: list[tuple[str, int, int]], every: int, params: dict[str, str]) -> None:
    """The solver's speed targets: unknown count, slowest deal, mean ms a deal, nodes/s and peak memory.

    With ``every`` > 0 a running line (deals first..so far) is printed after each ``every`` deals, so that
    a run stopped part way still leaves figures. ``params`` are solver parameters (default: the defaults)."""
    strategy = SolverStrategy(**params)
    p = strategy.params
    print(f"solver goals: {header_label(strategy)} (nodes={p['nodes']:,}, seconds={p['seconds']}, tt_mb={p['tt_mb']}); one core")
    header = (f"{'variant':14} {'deals':>11} {'won':>6} {'lost':>5} {'unknown':>7} {'max s':>7} {'mean ms':>8} "
              f"{'median ms':>9} {'nodes/s':>11} {'referee':>11} {'peak MiB':>8}")
    print(header)
    print("-" * len(header), flush=True)
    for name, first, last in cases:
        rules = find_variant(name)
        step = every if every > 0 else last - first + 1
        parts: list[DealSet] = []
        for a in range(first, last + 1, step):
            parts.append(decide_set(rules, "default", a, min(a + step - 1, last), strategy, name))
            s = merge(parts)
            print(("" if a + step > last else "  so far: ") + goals_line(row_name(rules, strategy), first, min(a + step - 1, last), s),
                  flush=True)
        unknown = [d for d, v in merge(parts).not_won if v == "unknown"]
        if unknown:
            print(f"{'':14} unknown: {unknown}", flush=True)
    if any(strategy.sees_hidden(find_variant(name)) for name, _, _ in cases):
        print(CLAIRVOYANT_NOTE)


def merge(parts: list[DealSet]) -> DealSet:
    """The figures of consecutive deal sets together."""
    return DealSet(sum(p.deals for p in parts), sum(p.won for p in parts), sum(p.lost for p in parts),
                   sum(p.unknown for p in parts), sum(p.verified for p in parts),
                   np.concatenate([p.seconds for p in parts]), np.concatenate([p.nodes for p in parts]),
                   [x for p in parts for x in p.not_won])


def nodes_part(cases: list[tuple[str, int, int]], source: str, params: dict[str, str]) -> None:
    """Node totals and verdicts per deal set, without the time limit (load-independent figures)."""
    strategy = SolverStrategy(**{"seconds": 1e6, **params})
    print(f"solver nodes: {header_label(strategy)}; source {source}")
    for name, first, last in cases:
        s = decide_set(find_variant(name), source, first, last, strategy, name)
        print(f"{name} {first}-{last}: {int(s.nodes.sum()):,} nodes; won {s.won}, lost {s.lost}, unknown {s.unknown}; "
              f"not won: {s.not_won}", flush=True)


def census_part(cases: list[tuple[str, int, int]], source: str, params: dict[str, str]) -> None:
    """What one complete search (the first of the restart schedule) spends its nodes on, per deal.

    ``params``: ``nodes`` (the search's budget, default 1,000,000) and ``tt_mb`` (default 64)."""
    nodes = int(params.get("nodes", 1_000_000))
    tt_mb = float(params.get("tt_mb", 64))
    flags = F_SAFE | F_DEAD | F_ORDER | F_LONE
    print(f"solver census: one search of at most {nodes:,} nodes, {tt_mb:g} MiB table; source {source}")
    for name, first, last in cases:
        rules = find_variant(name)
        for deal in range(first, last + 1):
            game = Game(rules, make_deal(rules, deal, source=source).position)
            st, prm = game.state_array(), game.rule_params
            census = Census(int(prm[P_BUILD]))
            v, n, _, sec = solve(st, prm, SolverWork(prm, tt_mb).arrays(), nodes, 1e9, flags, 0, 0, census.arrays())
            c = census.counts
            home = {i: int(c[C_HOME + i]) for i in range(DECK_SIZE + 1) if c[C_HOME + i]}
            runs = {i: int(c[C_RUN + i]) for i in range(DECK_SIZE + 1) if c[C_RUN + i]}
            print(f"{name} {deal}: {VERDICTS[v]} after {n:,} nodes ({sec:.1f} s); expanded (not dead) "
                  f"{int(c[C_EXPANDED]):,}, dead {int(c[C_DEAD]):,}, arrivals cut by the table {int(c[C_TABLE_CUT]):,}, "
                  f"children skipped unplayed {int(c[C_SKIPPED]):,}")
            print(f"  distinct: {census.distinct()}{' (a set filled: counts are lower bounds)' if c[C_FULL] else ''}")
            print(f"  cards home: {home}")
            print(f"  cards in top runs: {runs}", flush=True)


def solver_part(deals: int, bd_deals: int) -> None:
    """The solver's verdicts and speed per variant on fixed deal sets."""
    strategy = SolverStrategy()
    params = strategy.params
    print(f"solver benchmark: {header_label(strategy)} "
          f"(nodes={params['nodes']:,}, seconds={params['seconds']}, tt_mb={params['tt_mb']}); one core")
    cases = [(find_variant("bakers-dozen"), "pysol", bd_deals)]
    cases += [(v.rules, "default", deals) for v in VARIANTS if v.name != "bakers-dozen"]
    spanish = find_variant("spanish-patience")
    cases.append((spanish.replace(name="spanish+worrying", worrying_back=True), "default", bd_deals))
    header = (f"{'variant':18} {'source':7} {'deals':>5} {'won':>5} {'lost':>4} {'unk':>4} {'decided':>8} "
              f"{'mean s':>8} {'median s':>9} {'max s':>7} {'nodes/s':>10} {'referee':>9} {'peak MiB':>9}")
    print(header)
    print("-" * len(header))
    for rules, source, n in cases:
        s = decide_set(rules, source, 1, n, strategy, rules.name)
        print(f"{row_name(rules, strategy):18} {source:7} {n:5d} {s.won:5d} {s.lost:4d} {s.unknown:4d} {(s.won + s.lost) / n:8.2%} "
              f"{s.seconds.mean():8.4f} {np.median(s.seconds):9.4f} {s.seconds.max():7.2f} "
              f"{s.nodes_per_second:10,.0f} {s.verified:4d}/{s.won:<4d} {peak_mib():9.0f}", flush=True)
        if s.not_won:
            print(f"{'':18} not won: {s.not_won}", flush=True)
    print(CLAIRVOYANT_NOTE)


def sampling_part(deals: int, strategy_seed: int) -> None:
    """dick-1883 win rates of the sampling player next to the clairvoyant solver and the others."""
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
        won = int((result.outcome == WON).sum())
        low, high = win_rate_interval(won, deals)
        unknown = int((result.outcome == UNKNOWN).sum())
        print(f"{strategy.label_for(rules):42} {won:5d} {won / deals:9.2%} {low:8.2%} - {high:8.2%} {unknown:8d} {dt / deals:8.3f}",
              flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", choices=("goals", "nodes", "census", "solver", "sampling", "all"), default="goals")
    ap.add_argument("--goal", action="append", metavar="VARIANT:FIRST-LAST",
                    help="a deal set of part goals (repeatable) [default: bakers-dozen:1-10000 and good-measure:1-1000]")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="parts goals, nodes and census: a solver parameter other than its default (repeatable)")
    ap.add_argument("--source", choices=("default", "pysol"), default="default", help="parts nodes and census: deal numbering")
    ap.add_argument("--every", type=int, default=0, help="part goals: print running figures after each N deals")
    ap.add_argument("--deals", type=int, default=200, help="deals per variant (other than bakers-dozen) in part solver")
    ap.add_argument("--bd-deals", type=int, default=1000, help="PySol bakers-dozen deals (and Spanish with worrying back)")
    ap.add_argument("--sampling-deals", type=int, default=1000, help="dick-1883 deals in part sampling")
    ap.add_argument("--strategy-seed", type=int, default=0)
    args = ap.parse_args()
    print(f"cpu count {os.cpu_count()}; {time.strftime('%Y-%m-%d %H:%M')}")
    goals = args.goal or ["bakers-dozen:1-10000", "good-measure:1-1000"]
    cases = []
    for g in goals:
        name, _, span = g.partition(":")
        cases.append((find_variant(name).name, *parse_deals(span)))
    if any("=" not in p for p in args.param):
        raise UserError(f"--param {next(p for p in args.param if '=' not in p)!r}: allowed: KEY=VALUE")
    params = dict(p.split("=", 1) for p in args.param)
    if args.part in ("goals", "all"):
        goals_part(cases, args.every, params)
    if args.part == "nodes":
        nodes_part(cases, args.source, params)
    if args.part == "census":
        census_part(cases, args.source, params)
    if args.part in ("solver", "all"):
        solver_part(args.deals, args.bd_deals)
    if args.part in ("sampling", "all"):
        sampling_part(args.sampling_deals, args.strategy_seed)


if __name__ == "__main__":
    run_script(main)
