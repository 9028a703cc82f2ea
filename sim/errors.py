"""The base class of every error that a user's input or environment can cause.

The command line turns these, and only these, into one line and exit code 2:
they name what was wrong and what is allowed. Any other exception is a bug in
the toolkit and keeps its traceback.
"""

from __future__ import annotations

import sys
from collections.abc import Callable


class UserError(ValueError):
    """Bad input or an environment the toolkit cannot work in; the message says what and what to do.

    A ``ValueError`` so that callers of the Python API that caught ``ValueError``
    before keep working.
    """


def run_script(main: Callable[[], None]) -> None:
    """Run a script's ``main`` as the command line runs a verb: a `UserError` becomes one line on
    standard error and exit status 2 (the benchmark scripts use it; argparse refuses bad options the same way)."""
    try:
        main()
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)
