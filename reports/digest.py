"""A report's figures aggregated in one pass over a store's files, never holding its rows.

A report needs, per run: its counts (deals, wins, verified wins, unknown verdicts, errors), its
deal numbers as ranges, how many deals ended with k cards home, and which deals it won (for the
paired tests and the convergence curve). `digest_runs` reads the store's checked chunk files one at
a time (`studies.reading.scan_store`: the same checks, filters and damage warnings as
`read_store`) and keeps just that: the wins as one bit per deal, the rest as counts. A run of 10^8
deals costs 12.5 MB of bits; nothing else grows with the rows.

A paired test joins two runs on deal number. The runs of a group are digested on exactly the
group's deals (`digest_runs` with ``spans``), so their bits line up deal by deal and the join is a
bitwise AND of the two, a block at a time (`pair_counts`); a tournament's Cochran's Q and its most
surprising deals come from the same blocks.

The figures equal those `reports.tables` computes from all rows in pandas (a test proves it on a
small store); `reports.build` uses these for every store.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from reports.charts import RunningWins, curve_points
from reports.tables import POINTS_PER_CARD, POINTS_PER_WIN, ReportError, Tournament
from studies.stats import cochrans_q_sums, holm_pairs, paired_counts, win_rate_interval

Spans = list[tuple[int, int]]
"""Deal numbers as sorted, disjoint (first, last) ranges, both ends included."""

META = ["variant", "rules_fingerprint", "strategy", "strategy_label", "strategy_identity", "clairvoyant", "seed", "source",
        "toolkit_version"]
"""The columns whose value is the run's (the same on every row of a key): read from its first row."""

COLUMNS = [*META, "outcome", "cards_home", "verified"]
"""What a digest reads of each row (with ``key`` and ``deal``)."""

_ONES = np.array([bin(i).count("1") for i in range(256)], dtype=np.uint8)
"""Set bits per byte value (numpy's own bitwise_count needs numpy 2)."""


def _ones(packed: np.ndarray) -> int:
    """How many bits of ``packed`` are set."""
    return int(_ONES[packed].sum(dtype=np.int64))


BLOCK = 1 << 22
"""Deals unpacked from bits at a time (4 MiB of booleans) by the functions that walk them."""


class Bits:
    """Booleans appended a chunk at a time and kept packed, 8 to a byte (`numpy.packbits` order)."""

    def __init__(self) -> None:
        self._packed: list[np.ndarray] = []
        self._tail = np.zeros(0, dtype=bool)
        self.size = 0
        self._joined: np.ndarray | None = None

    def append(self, values: np.ndarray) -> None:
        """Add ``values`` (booleans) after those already held."""
        both = np.concatenate([self._tail, values]) if self._tail.size else values
        whole = both.size - both.size % 8
        if whole:
            self._packed.append(np.packbits(both[:whole]))
        self._tail = both[whole:].copy()
        self.size += values.size
        self._joined = None

    def packed(self) -> np.ndarray:
        """All the booleans, packed (the last byte padded with zeros)."""
        if self._joined is None:
            parts = [*self._packed, *([np.packbits(self._tail)] if self._tail.size else [])]
            self._joined = np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint8)
            self._packed, self._tail = [self._joined[: self.size // 8]], self._tail
        return self._joined

    def blocks(self, size: int = BLOCK) -> Iterator[np.ndarray]:
        """The booleans in order, ``size`` (a multiple of 8) at a time."""
        packed = self.packed()
        for start in range(0, self.size, size):
            n = min(size, self.size - start)
            yield np.unpackbits(packed[start // 8: (start + n + 7) // 8], count=n).astype(bool)

    @classmethod
    def of(cls, values: np.ndarray) -> Bits:
        """``values`` (booleans) packed."""
        bits = cls()
        bits.append(np.asarray(values, dtype=bool))
        return bits


@dataclass
class RunDigest:
    """What a report shows of one run, on the deals it was digested on (``spans``)."""

    key: str
    meta: dict[str, object] = field(default_factory=dict)
    spans: Spans = field(default_factory=list)
    deals: int = 0
    wins: int = 0
    verified_wins: int = 0
    unknown: int = 0
    errors: int = 0
    home: np.ndarray = field(default_factory=lambda: np.zeros(53, dtype=np.int64))
    """Deals per number of cards home at the end (index: cards home)."""
    won: Bits = field(default_factory=Bits)
    """Per deal, in deal order, whether the run won it."""
    failed: Bits = field(default_factory=Bits)
    """Per deal, in deal order, whether its game ended in an error (neither won nor lost)."""

    def add(self, table: pa.Table) -> None:
        """Count one chunk's rows (one key's, consecutive deals in order)."""
        n = table.num_rows
        if n == 0:
            return
        if not self.meta:
            first = table.slice(0, 1).to_pylist()[0]
            self.meta = {c: first[c] for c in META}
        deals = table.column("deal")
        a, b = int(deals[0].as_py()), int(deals[-1].as_py())
        if b - a + 1 == n:  # a chunk's deals are consecutive; a filtered one's may not be
            _extend(self.spans, a, b)
        else:
            for x, y in spans_of(deals.to_numpy()):
                _extend(self.spans, x, y)
        outcome = pc.cast(table.column("outcome"), pa.string())
        won = pc.equal(outcome, "won").to_numpy(zero_copy_only=False)
        self.won.append(won)
        self.deals += n
        self.wins += int(won.sum())
        self.verified_wins += int((won & table.column("verified").to_numpy(zero_copy_only=False).astype(bool)).sum())
        self.unknown += int(pc.sum(pc.equal(outcome, "unknown")).as_py() or 0)
        failed = pc.equal(outcome, "error").to_numpy(zero_copy_only=False)
        self.failed.append(failed)
        self.errors += int(failed.sum())
        counts = np.bincount(table.column("cards_home").to_numpy(zero_copy_only=False).astype(np.int64))
        if counts.size > self.home.size:
            self.home = np.concatenate([self.home, np.zeros(counts.size - self.home.size, dtype=np.int64)])
        self.home[: counts.size] += counts

    def summary_row(self) -> dict[str, object]:
        """The run's line of `reports.tables.summary`, the same figures to the last bit."""
        n, wins = self.deals, self.wins
        low, high = win_rate_interval(wins, n)
        mean_home = float(int((np.arange(self.home.size) * self.home).sum()) / n)
        return {
            "key": self.key, "variant": str(self.meta["variant"]), "rules_fingerprint": str(self.meta["rules_fingerprint"]),
            "strategy": str(self.meta["strategy_label"]), "strategy_identity": str(self.meta["strategy_identity"]),
            "clairvoyant": bool(self.meta["clairvoyant"]), "seed": int(self.meta["seed"]),  # type: ignore[call-overload]
            "source": str(self.meta["source"]), "first_deal": self.spans[0][0], "last_deal": self.spans[-1][1],
            "deals": n, "wins": wins, "verified_wins": self.verified_wins, "win_rate": wins / n, "ci_low": low,
            "ci_high": high, "mean_cards_home": mean_home,
            "mean_score": float(POINTS_PER_CARD * mean_home + POINTS_PER_WIN * wins / n),
            "unknown": self.unknown, "errors": self.errors, "toolkit_version": str(self.meta["toolkit_version"]),
        }


def _extend(spans: Spans, a: int, b: int) -> None:
    """Add deals a..b (after every deal of ``spans``) to ``spans``, joining a range that continues the last."""
    if spans and spans[-1][1] + 1 == a:
        spans[-1] = (spans[-1][0], b)
    else:
        spans.append((a, b))


def spans_of(deals: np.ndarray) -> Spans:
    """Sorted distinct deal numbers as their ranges of consecutive numbers."""
    d = np.asarray(deals, dtype=np.int64)
    if d.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(d) != 1)
    return [(int(a), int(b)) for a, b in zip(np.r_[d[0], d[breaks + 1]], np.r_[d[breaks], d[-1]], strict=True)]


def spans_size(spans: Spans) -> int:
    """How many deals ``spans`` hold."""
    return sum(b - a + 1 for a, b in spans)


def intersect(x: Spans, y: Spans) -> Spans:
    """The deals both ``x`` and ``y`` hold."""
    out: Spans = []
    i = j = 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if a <= b:
            _extend(out, a, b)
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def union(x: Spans, y: Spans) -> Spans:
    """The deals ``x`` or ``y`` holds."""
    out: Spans = []
    for a, b in sorted([*x, *y]):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def clip(spans: Spans, first: int, last: int) -> Spans:
    """The deals of ``spans`` within first..last."""
    return intersect(spans, [(first, last)]) if first <= last else []


def within(inner: Spans, outer: Spans) -> bool:
    """Every deal of ``inner`` is in ``outer``."""
    return spans_size(intersect(inner, outer)) == spans_size(inner)


def digest_runs(store: str | os.PathLike[str], keys: Sequence[str] | None = None,
                spans: dict[str, Spans] | None = None) -> dict[str, RunDigest]:
    """Each run's digest (``keys``: those runs; default every run of the store), in the store's key order; with
    ``spans``, each run's on those deals only (a run holding none of them is left out)."""
    from studies.reading import scan_store
    from studies.store import Store

    digests: dict[str, RunDigest] = {}
    for k in Store.open(store, create=False).keys() if keys is None else keys:
        wanted = None if spans is None else spans[k]
        if wanted is not None and not wanted:
            continue
        d = RunDigest(k)
        bounds = None if wanted is None else (wanted[0][0], wanted[-1][1])
        for table in scan_store(store, key=k, deals=bounds, columns=COLUMNS):
            d.add(table if wanted is None or len(wanted) == 1 else _keep(table, wanted))
        if d.deals:
            digests[k] = d
    return digests


def _keep(table: pa.Table, spans: Spans) -> pa.Table:
    """The rows of ``table`` whose deal is in ``spans``."""
    deals = table.column("deal").to_numpy()
    starts = np.array([a for a, _ in spans], dtype=np.int64)
    ends = np.array([b for _, b in spans], dtype=np.int64)
    at = np.searchsorted(starts, deals, side="right") - 1
    inside = (at >= 0) & (deals <= ends[np.maximum(at, 0)])
    return table.filter(pa.array(inside))


def summary(digests: Sequence[RunDigest]) -> pd.DataFrame:
    """`reports.tables.summary` of the digested runs, in their order."""
    if not digests:
        raise ReportError("the store holds no rows to report on")
    return pd.DataFrame([d.summary_row() for d in digests])


def on_deals(store: str | os.PathLike[str], digests: dict[str, RunDigest], keys: Sequence[str],
             deals: Spans) -> list[RunDigest]:
    """The runs ``keys`` digested on exactly ``deals``: their whole-run digests where those are on these deals,
    else digested again on them (a second pass over just those runs' files)."""
    again = [k for k in keys if digests[k].spans != deals]
    fresh = digest_runs(store, again, {k: deals for k in again}) if again else {}
    out = [fresh.get(k, digests[k]) for k in keys]
    if any(d.spans != deals for d in out):
        raise ReportError("the runs compared do not all hold the deals they are compared on")
    return out


def failed_deals(run: RunDigest) -> np.ndarray:
    """The deal numbers (sorted) whose game ended in an error in ``run``."""
    at = np.flatnonzero(np.unpackbits(run.failed.packed(), count=run.failed.size)) if run.errors else []
    if not len(at):
        return np.zeros(0, dtype=np.int64)
    starts = np.array([a for a, _ in run.spans], dtype=np.int64)
    offsets = np.cumsum([0, *(b - a + 1 for a, b in run.spans)])[:-1]
    span = np.searchsorted(offsets, at, side="right") - 1
    return starts[span] + (at - offsets[span])


def without_failed(store: str | os.PathLike[str], runs: list[RunDigest], deals: Spans) -> tuple[list[RunDigest], dict[str, int]]:
    """``runs`` (digested on ``deals``) on the deals that every one of them played to an end, and how many deals of
    each run ended in an error (runs with none left out): an error is neither a win nor a loss, so the paired
    figures leave such a deal out for every run rather than count it lost (as `reports.tables.common_deals`)."""
    failed = {r.key: failed_deals(r) for r in runs}
    counts = {k: len(d) for k, d in failed.items() if len(d)}
    if not counts:
        return runs, {}
    kept = deals
    for d in np.unique(np.concatenate(list(failed.values()))):
        kept = [piece for a, b in kept for piece in ((a, min(b, int(d) - 1)), (max(a, int(d) + 1), b)) if piece[0] <= piece[1]]
    if not kept:
        raise ReportError("the runs share no deals that every one played to an end; compare runs over the same deal "
                          "numbers and seed")
    again = digest_runs(store, [r.key for r in runs], {r.key: kept for r in runs})
    return [again[r.key] for r in runs], counts


def pair_counts(first: Bits, second: Bits) -> tuple[int, int, int, int]:
    """(both won, only the first, only the second, neither) over two runs' deals, lined up deal by deal."""
    if first.size != second.size:
        raise ValueError(f"paired runs hold {first.size} and {second.size} deals, not the same deals")
    x, y = first.packed(), second.packed()
    both, only_first, only_second = _ones(x & y), _ones(x & ~y), _ones(~x & y)
    return both, only_first, only_second, first.size - both - only_first - only_second


def variant_comparison(runs: list[RunDigest]) -> pd.DataFrame:
    """`reports.tables.variant_comparison` of runs digested on the same deals; the first is the baseline."""
    table = summary(runs)
    diffs = [paired_counts(*pair_counts(r.won, runs[0].won)) for r in runs[1:]]
    table["difference"] = [0.0, *(d.difference for d in diffs)]
    table["diff_low"] = [0.0, *(d.low for d in diffs)]
    table["diff_high"] = [0.0, *(d.high for d in diffs)]
    table["p_value"] = [np.nan, *(d.p_value for d in diffs)]
    return table


def tournament(runs: list[RunDigest], top: int = 10) -> Tournament:
    """`reports.tables.tournament` of runs digested on the same deals."""
    ranking = summary(runs)
    order = np.argsort(-ranking["win_rate"].to_numpy(), kind="stable")
    ranking = ranking.iloc[order].reset_index(drop=True)
    ranking.insert(0, "rank", np.arange(1, len(runs) + 1))
    runs = [runs[i] for i in order]
    names = ranking["strategy"].tolist()
    k = len(runs)
    pairs = holm_pairs([(names[i], names[j], paired_counts(*pair_counts(runs[i].won, runs[j].won)))
                        for i, j in combinations(range(k), 2)])
    pairwise = pd.DataFrame(
        [{"first": a, "second": b, "both": c.both, "only_first": c.only_first, "only_second": c.only_second,
          "neither": c.neither, "difference": c.difference, "diff_low": c.low, "diff_high": c.high,
          "p_value": c.p_value, "p_holm": p} for a, b, c, p in pairs])
    over = pd.DataFrame(0, index=names, columns=names, dtype=np.int64)
    padj = pd.DataFrame(np.nan, index=names, columns=names)
    for (i, j), (_, _, c, p) in zip(combinations(range(k), 2), pairs, strict=True):
        over.iloc[i, j], over.iloc[j, i] = c.only_first, c.only_second
        padj.iloc[i, j] = padj.iloc[j, i] = p
    row_squares, picked = _deal_walk(runs, top)
    q, df, p = cochrans_q_sums([r.wins for r in runs], row_squares) if k >= 2 else (0.0, 0, 1.0)
    deals = _positions_to_deals(runs[0].spans, [pos for _, pos, _ in picked])
    dis = pd.DataFrame({"deal": np.asarray(deals, dtype=np.int64),
                        "upsets": np.asarray([u for u, _, _ in picked], dtype=np.int64),
                        "won_by": [", ".join(n for n, w in zip(names, won, strict=True) if w) for _, _, won in picked],
                        "lost_by": [", ".join(n for n, w in zip(names, won, strict=True) if not w) for _, _, won in picked],
                        "top_loser": [next(n for n, w in zip(names, won, strict=True) if not w) for _, _, won in picked]})
    return Tournament(ranking, pairwise, over, padj, q, df, p, dis, runs[0].deals)


def _deal_walk(runs: list[RunDigest], top: int) -> tuple[int, list[tuple[int, int, list[bool]]]]:
    """One walk over the deals of runs in ranking order: the sum over deals of the squared number of runs that
    won it (Cochran's Q), and the ``top`` deals that disagree most with the ranking (a lower-ranked run won, a
    higher-ranked lost), as (upsets, position, wins per run), most upsets first and earlier deals first among
    equals."""
    row_squares = 0
    best: list[tuple[int, int, list[bool]]] = []  # a heap of (upsets, -position, wins): the weakest on top
    start = 0
    for block in zip(*(r.won.blocks() for r in runs), strict=True):
        w = np.column_stack(block) if block else np.zeros((0, 0), dtype=bool)
        row = w.sum(axis=1, dtype=np.int64)
        row_squares += int((row * row).sum())
        against = np.zeros(w.shape[0], dtype=np.int64)
        for i, j in combinations(range(w.shape[1]), 2):
            against += (~w[:, i] & w[:, j])
        pick = np.argsort(-against, kind="stable")[:top]
        for at in pick[against[pick] > 0]:
            item = (int(against[at]), -(start + int(at)), [bool(x) for x in w[at]])
            if len(best) < top:
                heapq.heappush(best, item)
            elif item[:2] > best[0][:2]:
                heapq.heapreplace(best, item)
        start += w.shape[0]
    ordered = sorted(best, key=lambda t: (-t[0], -t[1]))
    return row_squares, [(u, -neg, won) for u, neg, won in ordered]


def _positions_to_deals(spans: Spans, positions: list[int]) -> list[int]:
    """The deal numbers at ``positions`` (0-based) of the deals ``spans`` hold, in order."""
    starts = np.cumsum([0, *(b - a + 1 for a, b in spans)])
    out = []
    for pos in positions:
        i = int(np.searchsorted(starts, pos, side="right")) - 1
        out.append(spans[i][0] + pos - int(starts[i]))
    return out


def running_wins(won: Bits | np.ndarray) -> RunningWins:
    """A run's wins as its deals accumulate (``won``: per deal in deal order), at the deal counts a convergence
    chart draws: a walk over the bits, a block at a time."""
    bits = won if isinstance(won, Bits) else Bits.of(won)
    points = curve_points(bits.size)
    wins = np.zeros(points.size, dtype=np.int64)
    done, before, i = 0, 0, 0
    for block in bits.blocks():
        running = np.cumsum(block, dtype=np.int64)
        end = done + block.size
        j = int(np.searchsorted(points, end, side="right"))
        wins[i:j] = before + running[points[i:j] - done - 1]
        done, before, i = end, before + int(running[-1]), j
    return RunningWins(bits.size, points, wins)


def outcomes(runs: list[RunDigest], deals: list[int]) -> pd.DataFrame:
    """Whether each of ``runs`` (digested on the same deals) won each of a few ``deals``: key, deal, outcome
    (``won`` or ``not won``)."""
    spans = runs[0].spans
    starts = np.cumsum([0, *(b - a + 1 for a, b in spans)])
    out = []
    for deal in deals:
        i = next(i for i, (a, b) in enumerate(spans) if a <= deal <= b)
        pos = int(starts[i]) + deal - spans[i][0]
        for r in runs:
            bit = bool(np.unpackbits(r.won.packed()[pos // 8: pos // 8 + 1])[pos % 8])
            out.append({"key": r.key, "deal": deal, "outcome": "won" if bit else "not won"})
    return pd.DataFrame(out, columns=["key", "deal", "outcome"])
