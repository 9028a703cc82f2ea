"""Shared pytest configuration for the bakers-dozen test suite.

Kept minimal on purpose: fixtures used by a single test module live in that
module. The ``slow`` marker is registered in pyproject.toml: ``make test`` runs
``-m 'not slow'``, ``make test-slow`` runs ``-m slow``, and CI runs both. The
shared fixtures give every module fresh runner workers, and every test a current
folder of its own, so that no test can write into the folder the suite was started
from (the repository, or a user's folder holding their stores and reports).
"""

import os
import sys
from pathlib import Path

import pytest
from peak_memory import PeakMemory, add_option

import sim  # noqa: F401 - before any test module imports numba: sim sets numba's cache folder (sim.compile_cache)


def pytest_addoption(parser):
    add_option(parser)


def pytest_configure(config):
    """Every process running tests measures its peak resident memory (tests/peak_memory.py; ``--max-rss-gib``)."""
    config.pluginmanager.register(PeakMemory(config), "peak-memory")


@pytest.fixture(autouse=True, scope="module")
def _fresh_workers_per_module():
    """Each test module starts with fresh runner workers (`studies.backends.close_pools`): a kept worker holds
    the compiled code of every strategy it has played, and across the suite's many modules it would grow past
    loky's 300 MB check and be retired with a "memory leak" warning that says nothing about the code."""
    yield
    backends = sys.modules.get("studies.backends")
    if backends is not None:
        backends.close_pools()


STARTED_IN = Path.cwd()
"""The folder the suite was started from: no test may leave anything new in it."""

IGNORED = frozenset({"__pycache__", ".pytest_cache", ".hypothesis", ".ruff_cache"})
"""Entries the interpreter and the test tools themselves keep beside the code."""


def new_entries(before: set[str], folder: Path = STARTED_IN) -> list[str]:
    """What is in ``folder`` now and was not in ``before``, ignoring the tools' own caches."""
    return sorted(set(os.listdir(folder)) - before - IGNORED)


@pytest.fixture(autouse=True)
def _own_current_folder(tmp_path_factory, monkeypatch):
    """Every test runs in a fresh empty folder of its own, and fails if anything new appears in the folder the
    suite was started from while it runs (a command run with its default paths, such as ``solve`` without
    ``--store``, would otherwise create ``bakers-dozen-store`` there)."""
    before = set(os.listdir(STARTED_IN))
    monkeypatch.chdir(tmp_path_factory.mktemp("cwd"))
    yield
    left = new_entries(before)
    assert not left, f"this test wrote {left} into {STARTED_IN}; tests must write only in their own temporary folders"
