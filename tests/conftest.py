"""Shared pytest configuration for the bakers-dozen test suite.

Kept minimal on purpose: fixtures used by a single test module live in that
module. The ``slow`` marker is registered in pyproject.toml: ``make test`` runs
``-m 'not slow'``, ``make test-slow`` runs ``-m slow``, and CI runs both. The
one shared fixture gives every module fresh runner workers.
"""

import sys

import pytest

import sim  # noqa: F401 - before any test module imports numba: sim sets numba's cache folder (sim.compile_cache)


@pytest.fixture(autouse=True, scope="module")
def _fresh_workers_per_module():
    """Each test module starts with fresh runner workers (`studies.runner.close_pools`): a kept worker holds
    the compiled code of every strategy it has played, and across the suite's many modules it would grow past
    loky's 300 MB check and be retired with a "memory leak" warning that says nothing about the code."""
    yield
    runner = sys.modules.get("studies.runner")
    if runner is not None:
        runner.close_pools()
