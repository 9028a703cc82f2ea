"""Numeric command-line options with an allowed range, refused in one line before any work.

`Bounded` is the one click parameter type for numbers: a value that is not a
number, is NaN or infinite, or lies outside its range raises `OptionRangeError`
(a `UserError`), which the command line prints as one line naming the option,
the value and the allowed range, with exit code 2. Every verb's numeric options
use it. The limits of the study and solve verbs are here, each with the reason
for its bound; a limit the library checks too (the per-deal time limit,
`strategies.play.MAX_DEAL_TIMEOUT`) is defined there, once.
"""

from __future__ import annotations

import math
from typing import Any

import click

from sim.errors import UserError

MAX_RUN_DEALS = 10**9
"""Deals per run of `compare`, `tournament` and `demo`: a run's rows are read back whole to make its report
(a few dozen bytes each), so a billion deals is as far as a report can go on a large machine."""

MAX_SOLVE_DEALS = 1_000_000
"""Deals per `solve` command: every deal's row (about 1 KiB) is held in memory until the summary."""

MAX_SOLVE_NODES = 10**12
"""Node budget per deal: the solver's counters are 64-bit, and 10^12 nodes are days of search for one deal."""

MAX_SOLVE_SECONDS = 86_400.0
"""Time budget per deal: one day."""


class OptionRangeError(UserError):
    """A numeric command-line option that is not a number, or is outside its allowed range."""


def memory_mib() -> float:
    """The memory this process may use in MiB (`strategies.memory.machine_mib`, read when an option is checked)."""
    from strategies.memory import machine_mib

    return machine_mib()


def _show(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


class Bounded(click.ParamType):
    """A whole number (``kind=int``) or a finite number (``kind=float``) in ``low..high``; with ``above``,
    above ``low`` and at most ``high`` (a time limit of 0 seconds is no limit).

    Whole numbers may be written ``20000``, ``20_000`` or ``2e4`` (an exact whole
    value). ``high`` may be a function, evaluated when the option is read (for
    bounds that depend on the machine, such as its cores).
    """

    def __init__(self, kind: type, low: float, high: float | Any, *, above: bool = False) -> None:
        self.kind, self.low, self._high, self.above = kind, low, high, above
        self.name = "integer" if kind is int else "number"

    @property
    def high(self) -> float:
        return self._high() if callable(self._high) else self._high

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        option = param.opts[0] if param is not None and param.opts else "value"
        high = self.high
        allowed = f"allowed: above {_show(self.low)}, at most {_show(high)}" if self.above \
            else f"allowed: {_show(self.low)}..{_show(high)}"
        text = str(value).strip()
        shown = text if len(text) <= 40 else text[:37] + "..."
        if text.lstrip("+-").isdigit() and len(text) > 40:  # longer than any allowed value; not worth converting
            raise OptionRangeError(f"{option} {shown} is out of range; {allowed}")
        number = self._number(value)
        if number is None:
            what = "a whole number" if self.kind is int else "a finite number"
            raise OptionRangeError(f"{option} {shown!r} is not {what}; {allowed}")
        if not (self.low < number if self.above else self.low <= number) or number > high:
            raise OptionRangeError(f"{option} {shown} is out of range; {allowed}")
        return number

    def _number(self, value: Any) -> int | float | None:
        """``value`` as this type's number, or None when it is not one (text, NaN, infinity, a fraction for int)."""
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value if self.kind is int else float(value)
        text = str(value).strip()
        if self.kind is int:
            try:
                return int(text)
            except ValueError:
                pass
        try:
            number = float(text)
        except (ValueError, OverflowError):
            return None
        if not math.isfinite(number):
            return None
        if self.kind is int:
            return int(number) if number.is_integer() else None
        return number
