"""The base class of every error that a user's input or environment can cause.

The command line turns these, and only these, into one line and exit code 2:
they name what was wrong and what is allowed. Any other exception is a bug in
the toolkit and keeps its traceback.
"""

from __future__ import annotations

import reprlib
import sys
from collections.abc import Callable
from typing import Any

QUOTE_LIMIT = 40
"""About the most characters of a user's value that an error message quotes: no allowed value is longer, and
a message stays one short line however long the value was (a 10 MB move text, a 60,000-digit number)."""


class UserError(ValueError):
    """Bad input or an environment the toolkit cannot work in; the message says what and what to do.

    A ``ValueError`` so that callers of the Python API that caught ``ValueError``
    before keep working.
    """


def shortened(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as a message shows it: whole up to ``limit`` characters, else its start and its length."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


_REPR = reprlib.Repr()  # its limits set one by one: Python 3.11's takes no arguments
_REPR.maxlevel, _REPR.maxlist, _REPR.maxtuple, _REPR.maxdict, _REPR.maxset = 2, 4, 4, 4, 4
_REPR.maxstring = _REPR.maxother = QUOTE_LIMIT


def quoted(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """``value``, a user's input, as an error message quotes it: text in quotes, other values by ``repr``, cut to
    about ``limit`` characters (text with its length; a huge whole number by its count of digits, which ``repr``
    itself refuses past 4,300). Every message that quotes what a user typed or a file held goes through here."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else f"{value[:limit]!r}... ({len(value):,} characters)"
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 4 * limit:
        return f"a number of about {int(value.bit_length() * 0.30103) + 1:,} digits"
    if isinstance(value, int | float | bool | type(None)):
        return repr(value)
    try:
        text = _REPR.repr(value)
    except ValueError:  # a huge whole number inside a container
        text = f"a {type(value).__name__} holding a huge number"
    return shortened(text, limit)


def json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, as messages about a file's fields say what they found."""
    names = {bool: "true/false", int: "a number", float: "a number with a fraction", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def run_script(main: Callable[[], None]) -> None:
    """Run a script's ``main`` as the command line runs a verb: a `UserError` becomes one line on
    standard error and exit status 2 (the benchmark scripts use it; argparse refuses bad options the same way)."""
    try:
        main()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
