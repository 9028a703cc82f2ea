"""How the `bakers-dozen` command starts: a missing third-party package is named in one line, not called a bug.

The console script and ``python -m bakers_dozen`` enter here rather than in
`bakers_dozen.cli`, because `cli` itself imports click: without click (or with
any dependency missing) the import fails before the command's own error
handling exists. This module uses the standard library only; a package missing
later, when a verb imports what it needs (rich, numba, pandas, ...), is reported
the same way by `cli` (both through `bakers_dozen.dependencies`).
"""

from __future__ import annotations

import sys

from bakers_dozen.dependencies import EXIT_BAD_INPUT, missing_dependency


def main() -> None:
    """Run the `bakers-dozen` command (`bakers_dozen.cli.main`), or say in one line which package is missing."""
    try:
        from bakers_dozen.cli import main as command
    except ModuleNotFoundError as exc:
        message = missing_dependency(exc)
        if message is None:
            raise
        print(f"bakers-dozen: error: {message}", file=sys.stderr)
        sys.exit(EXIT_BAD_INPUT)
    command()
