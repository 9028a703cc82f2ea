"""Progress for long runs: deals done, deals per second, time left, running win rate.

On a terminal, a bar drawn with ``rich`` on standard error. Elsewhere (a log
under ``nohup``, a batch scheduler's output file) a bar would be noise, but a
run of hours that writes nothing cannot be told from a hung one: `LineProgress`
writes the same figures as one plain line every few minutes, and nothing for a
run shorter than that. `NullProgress` is the silent stand-in (``--quiet``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Protocol

from sim.text import printable, text_console


class Progress(Protocol):
    """What the runner reports to while it plays."""

    def start(self, total: int, done: int, wins: int, label: str) -> None: ...

    def advance(self, deals: int, wins: int) -> None: ...

    def note(self, text: str) -> None: ...

    def stop(self) -> None: ...


class NullProgress:
    """Reports nothing."""

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        pass

    def advance(self, deals: int, wins: int) -> None:
        pass

    def note(self, text: str) -> None:
        pass

    def stop(self) -> None:
        pass


class Tally:
    """The figures both progress displays show.

    Deals reused from the store count as done from the start; the rate and the
    time left count only the deals played in this invocation, over the time
    since it started (worker start-up included, so early figures are cautious).
    """

    def __init__(self, total: int, done: int, wins: int, start: float) -> None:
        self.total, self.done, self.wins, self.played, self.start = total, done, wins, 0, start

    def add(self, deals: int, wins: int) -> None:
        self.done += deals
        self.played += deals
        self.wins += wins

    def fields(self, now: float) -> dict[str, str]:
        """Count, rate, time left and win rate, formatted."""
        elapsed = now - self.start
        rate = self.played / elapsed if self.played and elapsed > 0 else 0.0
        if rate:
            secs = int((self.total - self.done) / rate)
            eta = f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        else:
            eta = "-:--:--"
        return {
            "count": f"{self.done:,}/{self.total:,}",
            "rate": (f"{rate:,.0f}/s" if rate >= 10 else f"{rate:.2g}/s") if rate else "-/s",  # hard deals: 0.03/s
            "eta": eta,
            "win_rate": f"{self.wins / self.done:.2%}" if self.done else "-",
        }


BAR_WIDTH = 10
"""Characters of the bar itself; the figures beside it carry the detail."""


class RichProgress:
    """A rich progress bar on standard error (figures as `Tally` counts them)."""

    def __init__(self, file: Any = None) -> None:
        self.console = text_console(file=file or sys.stderr)
        self._progress: Any = None
        self._task: Any = None
        self._tally = Tally(0, 0, 0, 0.0)

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        self._tally = Tally(total, done, wins, time.monotonic())
        # The label on a line of its own and a short bar: the row fits an 80-column terminal even at
        # 100,000,000 deals and a million deals/s (rich would otherwise cut the fields at the end).
        self.console.print(Text(printable(f"{label}: {total:,} deals") + (f" ({done:,} in the store)" if done else "")))
        self._progress = Progress(
            BarColumn(bar_width=BAR_WIDTH),
            TextColumn("{task.fields[count]}"),
            TextColumn("[cyan]{task.fields[rate]}"),
            TimeElapsedColumn(),
            TextColumn("ETA {task.fields[eta]}"),
            TextColumn("win [bold]{task.fields[win_rate]}"),
            console=self.console,
            transient=False,
            refresh_per_second=4,
        )
        self._progress.start()
        self._task = self._progress.add_task(label, total=total, completed=done, **self._tally.fields(time.monotonic()))

    def advance(self, deals: int, wins: int) -> None:
        if self._progress is None:
            return
        self._tally.add(deals, wins)
        self._progress.update(self._task, advance=deals, **self._tally.fields(time.monotonic()))

    def note(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text)
        else:
            self.console.print(text)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


LINE_INTERVAL = 300.0
"""Seconds between `LineProgress` lines: a few a quarter-hour, a dozen an hour of log."""


class LineProgress:
    """One plain line of progress every ``interval`` seconds on standard error, for logs.

    The first line comes only after ``interval`` seconds, so a short run writes
    nothing; ``clock`` is injectable so tests need not wait.
    """

    def __init__(self, file: Any = None, interval: float = LINE_INTERVAL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._file = file or sys.stderr
        self._interval, self._clock = interval, clock
        self._tally: Tally | None = None
        self._label = ""
        self._next = 0.0

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        now = self._clock()
        self._tally, self._label, self._next = Tally(total, done, wins, now), printable(label), now + self._interval

    def advance(self, deals: int, wins: int) -> None:
        if self._tally is None:
            return
        self._tally.add(deals, wins)
        now = self._clock()
        if now >= self._next:
            self._next = now + self._interval
            f = self._tally.fields(now)
            self._write(f"{self._label}: {f['count']} deals, {f['rate']}, ETA {f['eta']}, win {f['win_rate']}")

    def note(self, text: str) -> None:
        """``text`` is rich markup, as the bar takes it; the log gets its plain text."""
        from rich.text import Text

        self._write(printable(Text.from_markup(text).plain))

    def _write(self, line: str) -> None:
        stamp = datetime.now().astimezone().strftime("%Y-%m-%d %H:%M:%S")
        print(f"{stamp} {line}", file=self._file, flush=True)

    def stop(self) -> None:
        self._tally = None


def make_progress(quiet: bool = False, force: bool = False) -> Progress:
    """A bar on standard error when it is a terminal (or ``force``), else a line every few minutes."""
    if quiet:
        return NullProgress()
    if force or sys.stderr.isatty():
        return RichProgress()
    return LineProgress()
