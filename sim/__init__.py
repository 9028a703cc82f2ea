"""bakers-dozen: the game of Baker's Dozen and its family, and the machinery that plays it."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("bakers-dozen")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0.0.0+source"

from sim.compile_cache import use_project_cache  # noqa: E402 - after the version, before any numba import

use_project_cache()
