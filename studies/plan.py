"""Which deals of a run still need playing, and in what chunks.

`missing_ranges` are the deals of a range that the stored chunks do not cover. With a fixed chunk size the
deals are cut on a grid (`plan_chunks`), so that a repeated command plans the same chunk files; otherwise a
`Chunker` cuts them as workers ask for work, sized by the speed measured on finished chunks (about
`TARGET_CHUNK_SECONDS` of work each). Rows never depend on the chunking, only the file layout does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

TARGET_CHUNK_SECONDS = 3.0
"""Adaptive chunks aim at about this much work each: long enough that per-task
overhead (a few milliseconds) vanishes, short enough that a kill loses little."""
CHUNK_BOUNDS = {True: (100, 100_000), False: (5, 10_000)}
"""(smallest, largest) adaptive chunk for compiled (True) and Python-tier (False) play; fast
strategies get thousands of deals a chunk from the time target, slow ones (searches) fewer."""
FIRST_CHUNK = {True: 500, False: 20}


def missing_ranges(lo: int, hi: int, covered: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The deals of lo..hi outside ``covered`` (sorted by first deal), as (first, last) ranges."""
    missing: list[tuple[int, int]] = []
    cursor = lo
    for a, b in sorted(covered):
        if a > cursor:
            missing.append((cursor, min(a - 1, hi)))
        cursor = max(cursor, b + 1)
        if cursor > hi:
            break
    if cursor <= hi:
        missing.append((cursor, hi))
    return missing


def plan_chunks(lo: int, hi: int, covered: Sequence[tuple[int, int]], chunk: int) -> list[tuple[int, int]]:
    """Fixed-size chunks (first, last) that play the deals of lo..hi not in ``covered``.

    Chunk boundaries lie on the grid lo, lo+chunk, lo+2*chunk, ..., so a repeated
    command plans the same chunk files.
    """
    out = []
    for a, b in missing_ranges(lo, hi, covered):
        k = (a - lo) // chunk
        while True:
            start = max(a, lo + k * chunk)
            if start > b:
                break
            out.append((start, min(b, lo + (k + 1) * chunk - 1)))
            k += 1
    return out


class Chunker:
    """Cuts the deals still to play into chunks, one at a time, as workers ask for work.

    With a fixed ``chunk`` size, ``ranges`` are the chunks (`plan_chunks`) and
    it hands them out whole. Otherwise the size
    adapts: it starts small (`FIRST_CHUNK`), then follows the speed measured on
    finished chunks so that each takes about `TARGET_CHUNK_SECONDS`, within
    `CHUNK_BOUNDS`, and near the end, with several jobs, shrinks so that every job gets a share of
    what is left. Rows never depend on the chunking, only the file layout does.
    Thread-safe: joblib pulls tasks from a callback thread.
    """

    def __init__(self, ranges: Sequence[tuple[int, int]], jobs: int, compiled: bool, chunk: int | None = None) -> None:
        self.fixed = chunk
        self.jobs = max(jobs, 1)
        self.low, self.high = CHUNK_BOUNDS[compiled]
        self.size = chunk or FIRST_CHUNK[compiled]
        self._ranges: list[tuple[int, int]] = []
        self._lock = threading.Lock()
        self.give_back(ranges)

    def give_back(self, ranges: Sequence[tuple[int, int]]) -> None:
        """Put deal ranges (back) among those still to play."""
        with self._lock:
            self._ranges = sorted(self._ranges + list(ranges))

    @property
    def remaining(self) -> int:
        with self._lock:
            return sum(b - a + 1 for a, b in self._ranges)

    def observe(self, deals: int, seconds: float) -> None:
        """A chunk of ``deals`` took ``seconds`` in its worker: adjust the size of the next chunks."""
        if self.fixed or deals <= 0 or seconds <= 0:
            return
        with self._lock:
            self.size = int(min(self.high, max(self.low, deals / seconds * TARGET_CHUNK_SECONDS)))

    def next(self) -> tuple[int, int] | None:
        """The next chunk to play, or None when nothing is left."""
        with self._lock:
            if not self._ranges:
                return None
            a, b = self._ranges.pop(0)
            if self.fixed:
                return a, b
            left = sum(y - x + 1 for x, y in self._ranges) + (b - a + 1)
            # with several jobs, the tail shrinks so that every job gets a share; one job would only pay
            # for more chunk files (each a Parquet write, fsync and rename) for nothing
            share = -(-left // (2 * self.jobs)) if self.jobs > 1 else left
            size = max(self.low, min(self.size, share))
            if 1000 < size < b - a + 1:  # round chunk ends, but never leave a sliver of a range for a chunk of its own
                size = size // 1000 * 1000
            if a + size - 1 < b:
                self._ranges.insert(0, (a + size, b))
                b = a + size - 1
            return a, b


def useful_jobs(todo: Sequence[tuple[int, int]], chunk: int | None, compiled: bool) -> int:
    """The most chunks that can be in play at once for ``todo`` (at least 1): more workers would idle."""
    if chunk:
        return max(1, len(todo))
    low = CHUNK_BOUNDS[compiled][0]
    return max(1, sum(-(-(b - a + 1) // low) for a, b in todo))


def planned(spans: Sequence[tuple[int, int]], chunk: int | None) -> list[tuple[int, int]]:
    """A run's deal ``spans`` as `studies.runner.run` plans them on an empty store (fixed chunks, or the spans
    whole)."""
    return [c for a, b in spans for c in plan_chunks(a, b, [], chunk)] if chunk else list(spans)


def split_range(first: int, last: int, pieces: int = 8) -> list[tuple[int, int]]:
    """first..last cut into at most ``pieces`` consecutive ranges of near-equal size."""
    n = last - first + 1
    size = -(-n // pieces)
    return [(a, min(a + size - 1, last)) for a in range(first, last + 1, size)]
