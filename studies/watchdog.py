"""Hangs: the main process's eye on the chunks in play, through the notes their workers keep.

With a per-deal time limit (``deal_timeout``) each deal that runs past it ends as outcome ``unknown``,
termination ``timeout``, inside its worker. A strategy that never returns from one call (a compiled loop, a
Python call that blocks) cannot be stopped inside its process: on loky, each worker notes its pid and since
when it plays its chunk (`studies.chunks.TaskStatus`, in ``<key>/.tasks/``; numba compiling does not count), and the main
process (`Watchdog`) kills a worker whose chunk runs far past its deals' limit (`stall_limit`). The runner
then replays that chunk in smaller pieces until the stuck deal is alone, which it records as a timeout
without playing it again (`Watchdog.timeout_row`). On dask only the limit inside the worker applies.
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from sim.engine import T_TIMEOUT, UNKNOWN
from studies import nofollow
from studies.chunks import ChunkTask

STALL_FACTOR, STALL_SLACK = 2.0, 10.0
"""A chunk of n deals counts as stuck after n x deal_timeout x STALL_FACTOR + STALL_SLACK seconds of
play (numba compiling excluded): far past what deals that honour the limit can take."""
WATCH_INTERVAL = 0.25


def stall_limit(deals: int, deal_timeout: float) -> float:
    """Seconds of play after which a chunk of ``deals`` deals counts as stuck (see `STALL_FACTOR`)."""
    return deals * deal_timeout * STALL_FACTOR + STALL_SLACK


class Watchdog:
    """The main process's eye on chunks in play (loky runs with a deal time limit).

    Workers note their pid and the time they started playing (`studies.chunks.TaskStatus`); a chunk that plays
    past `stall_limit` has its worker killed and is remembered as stuck, for `studies.runner.run` to split.
    """

    def __init__(self, tasks_dir: Path, run_id: str, deal_timeout: float, tier: str) -> None:
        self.dir, self.run_id, self.deal_timeout, self.tier = tasks_dir, run_id, deal_timeout, tier
        self.stuck: set[int] = set()

    def _notes(self) -> Iterator[tuple[Path, int, int, dict[str, Any]]]:
        for path in self.dir.glob(f"{self.run_id}_*.json"):
            try:
                first, last = (int(x) for x in path.stem.split("_")[1:3])
                with nofollow.open_read(self.dir, path) as fh:
                    note = json.loads(fh.read(4096))
                yield path, first, last, note
            except (OSError, ValueError):  # finished and removed meanwhile, or being replaced
                continue

    def check(self) -> None:
        """Kill the worker of every chunk that has played past its limit."""
        now = time.time()
        for _, first, last, note in self._notes():
            if note.get("compiling") or first in self.stuck:
                continue
            if now - float(note["since"]) > stall_limit(last - first + 1, self.deal_timeout):
                self.stuck.add(first)
                _kill(int(note["pid"]))

    def take_stuck(self) -> set[int]:
        """The first deals of the chunks killed as stuck since the last call; forget the rest.

        Every worker of the run is gone by now (loky stops them all when one dies); any that a
        note still names is killed, so that no late chunk of theirs lands while the chunks they
        played are replayed.
        """
        for path, _, _, note in self._notes():
            _kill(int(note["pid"]))
            path.unlink(missing_ok=True)
        stuck, self.stuck = self.stuck, set()
        return stuck

    def timeout_row(self, task: ChunkTask) -> pa.Table:
        """The row of a single deal whose strategy never returned: outcome unknown, termination timeout."""
        from studies import rows

        limit = stall_limit(1, self.deal_timeout)
        text = (f"stopped after {limit:g} s: the strategy did not return within the {self.deal_timeout:g} s "
                "deal time limit, so its worker process was killed")
        one = np.ones(1, dtype=np.int64)
        return rows.chunk_table(task.labels, self.tier, one * task.first, one * UNKNOWN, one * T_TIMEOUT,
                             one * len(task.rules.start_home_cards), one * 0, one * 0, one * int(limit * 1e6), False,
                             {0: text}, np.zeros(2, dtype=np.int64), np.zeros(0, dtype=np.int16),
                             deal_timeout=self.deal_timeout)


def _kill(pid: int) -> None:
    if pid != os.getpid():
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
