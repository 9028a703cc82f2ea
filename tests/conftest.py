"""Shared pytest configuration for the bakers-dozen test suite.

Kept minimal on purpose: fixtures used by a single test module live in that
module. The ``slow`` marker is registered in pyproject.toml: ``make test`` runs
``-m 'not slow'``, ``make test-slow`` runs ``-m slow``, and CI runs both.
"""
