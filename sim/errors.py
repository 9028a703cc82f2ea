"""The base class of every error that a user's input or environment can cause.

The command line turns these, and only these, into one line and exit code 2:
they name what was wrong and what is allowed. Any other exception is a bug in
the toolkit and keeps its traceback.
"""

from __future__ import annotations


class UserError(ValueError):
    """Bad input or an environment the toolkit cannot work in; the message says what and what to do.

    A ``ValueError`` so that callers of the Python API that caught ``ValueError``
    before keep working.
    """
