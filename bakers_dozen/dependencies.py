"""The third-party packages the toolkit imports, and the one-line message when one of them is missing.

A missing package is the environment's fault, not a bug in the toolkit: the
command (`bakers_dozen.start` at start-up, `bakers_dozen.cli` while a verb
imports what it needs) names it and the command that installs it, with the exit
code of bad input. Standard library only, so that it works when nothing else is
installed.
"""

from __future__ import annotations

import shlex
import sys

DEPENDENCIES = {
    "click": "click",
    "dask": "dask[distributed]",
    "distributed": "dask[distributed]",
    "joblib": "joblib",
    "matplotlib": "matplotlib",
    "numba": "numba",
    "numpy": "numpy",
    "optuna": "optuna",
    "pandas": "pandas",
    "pyarrow": "pyarrow",
    "pysol_cards": "pysol-cards",
    "rich": "rich",
    "scipy": "scipy",
}
"""Each third-party package the toolkit imports (its import name) and what pip installs it as; the same list as
pyproject.toml's ``dependencies`` (tests/test_start.py checks the two agree)."""
EXIT_BAD_INPUT = 2
"""A missing package is the environment's fault, not the toolkit's: the exit code of bad input."""


def missing_dependency(exc: BaseException) -> str | None:
    """The one-line message for ``exc`` when it is a ``ModuleNotFoundError`` of one of the `DEPENDENCIES` (or of a
    module inside one), with the command that installs it into this interpreter; None for any other exception
    (a module of the toolkit itself that cannot be found is a bug, and keeps its traceback)."""
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:
        return None
    top = exc.name.partition(".")[0]
    if top not in DEPENDENCIES:
        return None
    return (f"the Python package {DEPENDENCIES[top]!r} is not installed (bakers-dozen needs it; no module named {exc.name!r}); "
            f"install it with: {shlex.quote(sys.executable)} -m pip install '{DEPENDENCIES[top]}'")

