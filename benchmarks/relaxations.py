"""Two relaxations of the hard deals, as tests of the capacity and symmetry candidates for proving hard deals lost (prints).

Both read a position as *base* cards (every pile with its top run taken off:
the cards from the top down that each build on the card beneath; they have
never moved in the relaxed game) and *parked* cards (the runs, and every card
that leaves a base). Without refilled empty piles, a parked card always sits on
a card one rank higher (a *holder*: a base top or a parked card), one card on
a holder. Every real line is a line of either relaxed game, so a relaxed loss
would prove a real loss; a relaxed win proves nothing, and says the relaxation
cannot be the reduction that decides the deal.

- ``free``: `strategies.solver.capacity.free_parking` (the parked cards are
  rearranged at will between steps, only their number per rank is bounded by
  the holders; its docstring has the soundness argument).
- ``shape``: the parked cards keep their places and their order, but only as
  ranks: a parked card at a pile's top may go home as any parked card of its
  rank whose suit is next (the suits of moved cards are forgotten). The state
  is the base lengths, the foundation heights and each pile's run length.

With ``--solver``, each deal is also solved by the default search alone
(``capacity_states=0``, no time limit), and a summary compares them: how many
of the search's losses and unknowns the ``free`` relaxation proves within
``--cap`` states, at what cost in CPU seconds against the search's, and the
CPU time per deal of running the relaxation first (``--before`` states) and
the search only where it does not prove a loss. CPU seconds are
``time.process_time`` of this one-threaded process.

Usage: ``nice .venv/bin/python benchmarks/relaxations.py --goal good-measure:22,39,65 --walks 500``
(``--walks``: also the ``free`` relaxation from the ends of N random real lines from each deal);
``nice .venv/bin/python benchmarks/relaxations.py --goal good-measure:1-1000 --no-shape --solver --cap 100000``
(``--source pysol`` for PySol's numbering).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sim  # noqa: E402, F401 - before numba: it sets numba's cache folder (sim.compile_cache)

# isort: split
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402

from bakers_dozen.solve import parse_deals  # noqa: E402
from sim.cards import DECK_SIZE, nb_card, nb_rank_of  # noqa: E402
from sim.deals import make_deal  # noqa: E402
from sim.engine import P_BUILD, P_PILES, fheight_at, pile_base  # noqa: E402
from sim.errors import run_script  # noqa: E402
from sim.game import Game  # noqa: E402
from sim.position import Position  # noqa: E402
from sim.rng import nb_mix64  # noqa: E402
from sim.rules import Rules, find_variant  # noqa: E402
from strategies.solver.capacity import CAPPED, LOST, WON, free_parking, free_parking_state, split  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402

MAX_DEPTH = 1 << 22
"""Longest path of the ``shape`` search (a deeper one answers capped)."""


@nb.njit(cache=True)
def _shape_key(L: np.ndarray, h: np.ndarray, k: np.ndarray) -> np.uint64:
    x = np.uint64(0x5EED)
    for p in range(L.shape[0]):
        x = nb_mix64(x ^ np.uint64((p * 64 + L[p]) * 64 + k[p]))
    for s in range(4):
        x = nb_mix64(x ^ np.uint64(s * 64 + h[s] + 1 << 20))
    return x | np.uint64(1)


@nb.njit(cache=True)
def _insert(tab: np.ndarray, key: np.uint64) -> bool:
    mask = np.uint64(tab.shape[0] - 1)
    i = key & mask
    while tab[i] != 0:
        if tab[i] == key:
            return False
        i = (i + np.uint64(1)) & mask
    tab[i] = key
    return True


@nb.njit(cache=True)
def _shape_child(L, h, k, bases, pile_of, idx_of, j, nL, nh, nk) -> bool:  # noqa: ANN001
    """Move number j (pile p = j // (P + 4) moves its top; x = j % (P + 4): 0-3 home to that suit, else onto
    pile x - 4) of the ``shape`` relaxation into (nL, nh, nk); False if it is not a move."""
    P = L.shape[0]
    p = j // (P + 4)
    x = j % (P + 4)
    if L[p] == 0:
        return False
    nL[:] = L
    nh[:] = h
    nk[:] = k
    top = bases[p, L[p] - 1]
    if k[p] > 0:  # a parked card of rank r
        r = nb_rank_of(top) - k[p]
        nk[p] -= 1
    else:  # the base top
        r = nb_rank_of(top)
        nL[p] -= 1
    if x < 4:
        if h[x] != r:
            return False
        c = nb_card(r, x)
        if k[p] > 0:  # any parked card of rank r whose suit is next: not in a base
            if pile_of[c] >= 0 and idx_of[c] < L[pile_of[c]]:
                return False
        elif c != top:
            return False
        nh[x] += 1
        return True
    q = x - 4
    if q == p or L[q] == 0 or nb_rank_of(bases[q, L[q] - 1]) - k[q] - 1 != r:
        return False
    nk[q] += 1
    return True


@nb.njit(cache=True)
def _shape_search(bases, pile_of, idx_of, L0, h0, k0, cap, tab):  # noqa: ANN001, ANN202
    """Depth-first search of the ``shape`` relaxation (states told apart by 64-bit keys). (0 lost / 1 won / 2 capped, states)."""
    P = L0.shape[0]
    D = min(cap + 1, MAX_DEPTH)
    FL = np.zeros((D, P), dtype=np.int8)
    FK = np.zeros((D, P), dtype=np.int8)
    FH = np.zeros((D, 4), dtype=np.int8)
    FJ = np.zeros(D, dtype=np.int64)
    FL[0], FK[0], FH[0] = L0, k0, h0
    _insert(tab, _shape_key(L0, h0, k0))
    nL, nK, nH = L0.copy(), k0.copy(), h0.copy()
    d, n = 0, 1
    while d >= 0:
        if FJ[d] >= P * (P + 4):
            d -= 1
            continue
        FJ[d] += 1
        if not _shape_child(FL[d], FH[d], FK[d], bases, pile_of, idx_of, FJ[d] - 1, nL, nH, nK):
            continue
        if nH.sum() == DECK_SIZE:
            return 1, n
        if not _insert(tab, _shape_key(nL, nH, nK)):
            continue
        n += 1
        if n > cap or d + 1 >= D:
            return 2, n
        d += 1
        FL[d], FK[d], FH[d], FJ[d] = nL, nK, nH, 0
    return 0, n


def shape_relaxation(piles: list[tuple[int, ...]], home: tuple[int, ...], build: int, cap: int) -> tuple[str, int]:
    """The ``shape`` relaxation from a position: its verdict and the states it expanded."""
    bases = split(piles, build)
    P = len(piles)
    b = np.zeros((P, max(len(x) for x in bases) + 1), dtype=np.int64)
    pile_of = np.full(DECK_SIZE, -1, dtype=np.int64)
    idx_of = np.zeros(DECK_SIZE, dtype=np.int64)
    for p, base in enumerate(bases):
        for i, c in enumerate(base):
            b[p, i], pile_of[c], idx_of[c] = c, p, i
    L0 = np.array([len(x) for x in bases], dtype=np.int8)
    k0 = np.array([len(piles[p]) - len(bases[p]) for p in range(P)], dtype=np.int8)
    tab = np.zeros(1 << max(10, (2 * cap).bit_length()), dtype=np.uint64)
    v, n = _shape_search(b, pile_of, idx_of, L0, np.array(home, dtype=np.int8), k0, cap, tab)
    return (LOST, WON, CAPPED)[v], int(n)


def walk_ends(rules: Rules, start: Position, walks: int, seed: int) -> list[tuple[list[tuple[int, ...]], tuple[int, ...]]]:
    """The last positions of ``walks`` random real lines (5 to 200 moves) from ``start``, as (piles, home)."""
    rng = random.Random(seed)
    out = []
    for _ in range(walks):
        g = Game(rules, start)
        for _ in range(rng.randrange(5, 200)):
            codes = g.legal_codes()
            if len(codes) == 0:
                break
            g.play_code(int(rng.choice(codes)))
        st, prm = g.state_array(), g.rule_params
        P = int(prm[P_PILES])
        piles = [tuple(int(st[pile_base(prm, p) + i]) for i in range(int(st[p]))) for p in range(P)]
        out.append((piles, tuple(int(st[fheight_at(P, s)]) for s in range(4))))
    return out


def deal_numbers(spec: str) -> list[int]:
    """``"1-5,9"`` as [1, 2, 3, 4, 5, 9]."""
    out: list[int] = []
    for part in spec.split(","):
        first, last = parse_deals(part)
        out += range(first, last + 1)
    return out


def cpu_call(f, *args):  # noqa: ANN001, ANN002, ANN201
    """f(*args) and the CPU seconds it took."""
    t = time.process_time()
    r = f(*args)
    return r, time.process_time() - t


def compare(rows: list[tuple[int, str, int, float, str, int, float, str, int, float]], cap: int, before: int) -> None:
    """The summary of ``--solver``: rows (deal, search verdict, nodes, CPU s, free verdict at ``cap``, states,
    CPU s, free verdict at ``before``, states, CPU s)."""
    search_cpu = sum(r[3] for r in rows)
    print(f"search alone: won {sum(r[1] == 'won' for r in rows)}, lost {sum(r[1] == 'lost' for r in rows)}, "
          f"unknown {sum(r[1] == 'unknown' for r in rows)}; {sum(r[2] for r in rows):,} nodes, {search_cpu:.1f} CPU s "
          f"(mean {search_cpu / len(rows) * 1000:.1f} ms, max {max(r[3] for r in rows):.2f} s)")
    wrong = [r[0] for r in rows if r[4] == LOST and r[1] == WON]
    print(f"free relaxation lost where the search won (must be none): {wrong}")
    for verdict in ("lost", "unknown"):
        sel = [r for r in rows if r[1] == verdict]
        proved = [r for r in sel if r[4] == LOST]
        print(f"search {verdict} {len(sel)}: free proves {len(proved)} within {cap:,} states "
              f"({sum(r[5] for r in proved):,} states, {sum(r[6] for r in proved):.2f} CPU s; the search on them "
              f"{sum(r[2] for r in proved):,} nodes, {sum(r[3] for r in proved):.2f} CPU s); not proved: "
              f"{[r[0] for r in sel if r[4] != LOST]}")
    after = search_cpu + sum(r[6] for r in rows if r[1] == "unknown")
    first = sum(r[9] + (0.0 if r[7] == LOST else r[3]) for r in rows)
    worst = max(r[9] + (0.0 if r[7] == LOST else r[3]) for r in rows)
    print(f"free after the search ({cap:,} states, unknowns only): {after:.1f} CPU s, mean {after / len(rows) * 1000:.1f} "
          f"ms; unknown left {sum(r[1] == 'unknown' and r[4] != LOST for r in rows)}")
    print(f"free first ({before:,} states, every deal), then the search where it does not prove a loss: {first:.1f} "
          f"CPU s, mean {first / len(rows) * 1000:.1f} ms, max {worst:.2f} s; the free stage alone "
          f"{sum(r[9] for r in rows):.1f} CPU s, {sum(r[8] for r in rows):,} states; proves "
          f"{sum(r[7] == LOST for r in rows)} lost")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--goal", action="append", required=True, metavar="VARIANT:D1,D2-D3,...")
    ap.add_argument("--source", choices=("default", "pysol"), default="default", help="deal numbering")
    ap.add_argument("--cap", type=int, default=20_000_000, help="states per relaxed search")
    ap.add_argument("--walks", type=int, default=0)
    ap.add_argument("--no-shape", action="store_true", help="only the free relaxation")
    ap.add_argument("--solver", action="store_true", help="also the default search alone, and the summary")
    ap.add_argument("--before", type=int, default=20_000, help="with --solver: states of the free stage run first")
    args = ap.parse_args()
    search = SolverStrategy(seconds=1e6, capacity_states=0)
    print(f"{time.strftime('%Y-%m-%d %H:%M')}; load average {os.getloadavg()}", flush=True)
    for goal in args.goal:
        name, _, deals = goal.partition(":")
        rules = find_variant(name)
        rows = []
        numbers = deal_numbers(deals)
        if args.solver:  # compile (or load) both before the first timed deal
            warm = Game(rules, make_deal(rules, numbers[0], source=args.source).position)
            search.solve_state(rules, warm.state_array(), warm.rule_params)
            free_parking_state(warm.state_array(), warm.rule_params, args.before)
        for deal in numbers:
            pos = make_deal(rules, deal, source=args.source).position
            game = Game(rules, pos)
            build = int(game.rule_params[P_BUILD])
            piles, home = [tuple(p) for p in pos.piles], tuple(len(f) for f in pos.foundations)
            bases = split(piles, build)
            free, sec = cpu_call(free_parking, bases, home, args.cap)
            line = f"{name} {deal}: free {free[0]} ({free[1]:,} states, {sec:.2f} CPU s)"
            if not args.no_shape:
                t = time.time()
                shape = shape_relaxation(piles, home, build, args.cap)
                line += f"; shape {shape[0]} ({shape[1]:,} states, {time.time() - t:.1f} s)"
            if args.walks:
                ends = walk_ends(rules, pos, args.walks, deal)
                verdicts = [free_parking(split(p, build), h, args.cap)[0] for p, h in ends]
                line += f"; free from {len(ends)} random line ends: " + ", ".join(
                    f"{v} {verdicts.count(v)}" for v in (WON, LOST, CAPPED))
            if args.solver:
                (verdict, nodes, _, _), ssec = cpu_call(search.solve_state, rules, game.state_array(), game.rule_params)
                small, bsec = cpu_call(free_parking, bases, home, args.before)
                rows.append((deal, verdict, nodes, ssec, free[0], free[1], sec, small[0], small[1], bsec))
                line += f"; search {verdict} ({nodes:,} nodes, {ssec:.2f} CPU s)"
                if verdict == "won" and free[0] == WON:
                    continue  # the common case: one line per deal of interest only
            print(line, flush=True)
        if rows:
            print(f"{name} {deals} ({args.source}):")
            compare(rows, args.cap, args.before)
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    run_script(main)
