"""A progress bar for long runs: deals done, deals per second, time left, running win rate.

Drawn with ``rich`` on standard error, and only when that is a terminal (or
when forced); `NullProgress` is the silent stand-in with the same methods.
"""

from __future__ import annotations

import sys
import time
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


BAR_WIDTH = 10
"""Characters of the bar itself; the figures beside it carry the detail."""


class RichProgress:
    """A rich progress bar on standard error.

    Deals reused from the store show as done from the start; the rate and the
    time left count only the deals played in this invocation, over the time
    since it started (worker start-up included, so early figures are cautious).
    """

    def __init__(self, file: Any = None) -> None:
        self.console = text_console(file=file or sys.stderr)
        self._progress: Any = None
        self._task: Any = None
        self._total = self._done = self._wins = self._played = 0
        self._start = 0.0

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
        from rich.text import Text

        self._total, self._done, self._wins, self._played = total, done, wins, 0
        self._start = time.monotonic()
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
        self._task = self._progress.add_task(label, total=total, completed=done, **self._fields())

    def _fields(self) -> dict[str, str]:
        elapsed = time.monotonic() - self._start
        rate = self._played / elapsed if self._played and elapsed > 0 else 0.0
        left = self._total - self._done
        if rate:
            secs = int(left / rate)
            eta = f"{secs // 3600}:{secs // 60 % 60:02d}:{secs % 60:02d}"
        else:
            eta = "-:--:--"
        return {
            "count": f"{self._done:,}/{self._total:,}",
            "rate": f"{rate:,.0f}/s" if rate else "-/s",
            "eta": eta,
            "win_rate": f"{self._wins / self._done:.2%}" if self._done else "-",
        }

    def advance(self, deals: int, wins: int) -> None:
        if self._progress is None:
            return
        self._done += deals
        self._played += deals
        self._wins += wins
        self._progress.update(self._task, advance=deals, **self._fields())

    def note(self, text: str) -> None:
        if self._progress is not None:
            self._progress.console.print(text)
        else:
            self.console.print(text)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def make_progress(quiet: bool = False, force: bool = False) -> Progress:
    """A bar on standard error when it is a terminal (or ``force``), else silence."""
    if quiet:
        return NullProgress()
    if force or sys.stderr.isatty():
        return RichProgress()
    return NullProgress()
