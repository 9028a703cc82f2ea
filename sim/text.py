"""Data strings as terminal text: shown as they are written, never obeyed.

A variant's name, a store's path, a plug-in's description or a strategy name read
back from a store is data, and may hold what a terminal or rich would act on:
rich markup (``[/]``, ``[bold]``), or control characters (an ESC sequence that
recolours, moves the cursor or retitles the window; a carriage return that hides
what came before). Everything the command line prints passes through here:
`printable` writes each control character as its Python escape (``\\x1b``), so the
reader sees every character that is there; `text_console` is a rich console that
takes no string as markup or emoji code and passes every string it renders
(table cells and titles included) through `printable`.
"""

from __future__ import annotations

import unicodedata
from typing import Any

_CONTROL = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
"""Unicode categories a terminal may act on or cannot show: controls, format characters (bidirectional
overrides), surrogates, private-use and unassigned code points, line and paragraph separators."""


def _escape(c: str) -> str:
    code = ord(c)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(value: object, *, lines: bool = False) -> str:
    """``value`` as text with every control character written as its escape (``ESC`` as ``\\x1b``);
    with ``lines``, newlines (and tabs) are kept, for text of several lines."""
    text = str(value)
    if text.isprintable():
        return text
    keep = "\n\t" if lines else ""
    return "".join(_escape(c) if c not in keep and unicodedata.category(c) in _CONTROL else c for c in text)


def one_line(message: object) -> str:
    """``message`` on one line: whitespace runs (newlines included) made one space, controls escaped."""
    return printable(" ".join(str(message).split()))


def text_console(**options: Any) -> Any:
    """A rich ``Console`` (``options`` as rich's) that shows every string literally: no markup, no emoji
    codes, every control character escaped (`printable`, newlines kept), in whatever it renders."""
    from rich.console import Console

    class TextConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(printable(text, lines=True), **kwargs)

    return TextConsole(markup=False, emoji=False, **options)
