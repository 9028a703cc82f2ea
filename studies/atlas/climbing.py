"""Climbing one atlas row and writing it as it climbs: what `atlas run` and the API's `atlas_run` do for a variant.

A climb of the default ladder takes 5-16 core-hours a row, more than many machines are kept, and the store that
lets a run resume stays behind on the machine. So the row is written partway (`RowWriter`): after rung 0 and after
every rung that solved something, on Ctrl-C or a plain ``kill`` (SIGTERM, taken as Ctrl-C by `terms_interrupt`)
once the deals the interrupted rung had finished are read back from the store, and when the time given runs out
(``deadline``). Each deal then records the highest rung it has been through, the row's budgets name the rungs its
climb began and its ``climbed`` how far every unknown deal has gone, so `atlas run --reuse FOLDER` goes on from
there on any machine, and the folder can be committed as data between runs.

A write runs with Ctrl-C and SIGTERM held back until it ends (`_signals_deferred`), so that a signal never leaves a
deal file written and its summary row not.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sim.rules import Rules
from studies import atlas as files
from studies.atlas.ladder import Rung, RungReport, budgets, escalate, reached
from studies.atlas.reuse import Taken, climb_reused
from studies.atlas.writing import write_variant


@dataclass
class RowWriter:
    """Writes one variant's row of the atlas at ``out`` as its climb goes, each time with the rungs begun so far (at
    least the ``ran`` rungs of the atlases reused). Called as a climb's checkpoint; ``say`` gets a line per write."""

    out: Path
    rules: Rules
    source: str
    seed: int
    rungs: tuple[Rung, ...]
    base: dict[str, Any]
    solver_version: str
    command: str
    ran: int = 0
    reused: str | None = None
    force: bool = False
    say: Callable[[str], None] | None = None

    def __call__(self, rows: list[dict[str, Any]], top: int) -> None:
        """A checkpoint: write ``rows``, climbed as far as rung ``top`` began, unless that would replace a row knowing
        more (the final write says so) or a deal has no verdict (nor does the final write write it)."""
        row = self.write(rows, top, checkpoint=True)
        if row is not None and self.say is not None:
            self.say(f"{self.rules.name}: wrote {self.out} partway: rungs 0-{files.top_rung(row['budgets'])} begun, "
                     f"every unknown deal through rung {row[files.CLIMBED]}")

    def write(self, rows: list[dict[str, Any]], top: int, checkpoint: bool = False) -> dict[str, Any] | None:
        """Write ``rows`` with the budgets of rungs 0-``top`` (or of those the reused atlases began, if more); the
        row written, or None where a deal has no verdict or (a ``checkpoint``) the row there knows more."""
        if any(r["verdict"] not in files.VERDICTS for r in rows):
            return None
        line = budgets(self.rungs[:max(self.ran, top + 1)], self.base)
        with _signals_deferred():
            return write_variant(self.out, self.rules, self.source, self.seed, rows, line, self.solver_version,
                                 self.command, self.reused, self.force, checkpoint)


def climb_row(writer: RowWriter, first: int, last: int, taken: Taken | None = None, deadline: float | None = None,
              **options: Any) -> tuple[list[dict[str, Any]], list[RungReport], dict[str, Any] | None]:
    """Climb deals first..last of ``writer``'s variant up its ladder (from the atlases ``taken`` where given, else
    from rung 0), writing the row as it goes and when the climb ends or ``deadline`` (`time.monotonic`) stops it;
    the rows, what each rung did, and the row written last (None where a deal has no verdict: nothing is written).
    ``options`` go to `studies.solving.solve_deals`."""
    w = writer
    if taken is not None:
        rows, reports = climb_reused(w.rules, w.base, taken.rows, taken.ran, first, last, w.rungs, w.seed, w.source,
                                     writer, deadline, **options)
    else:
        rows, reports, _ = escalate(w.rules, w.base, first, last, w.seed, w.source, w.rungs, writer, deadline,
                                    **options)
    return rows, reports, writer.write(rows, reached(reports))


@contextmanager
def _signals_deferred() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM back within the block and raise KeyboardInterrupt after it if one came (main thread
    only: Python runs signal handlers there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)
    if caught:
        raise KeyboardInterrupt


@contextmanager
def terms_interrupt() -> Iterator[None]:
    """Within the block, a SIGTERM (a plain ``kill``, ``timeout``, a batch system's end of job) interrupts as Ctrl-C
    does, so that a climb stopped so writes what it climbed."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)
