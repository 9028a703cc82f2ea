"""The suite's peak resident memory in every process, said at the end of each run and bounded with ``--max-rss-gib``.

A test suite that needs a large machine fails on a laptop by being killed, with
no word of which test did it (issue 62: one process of ``make test`` peaked at
17.4 GiB). Each process running tests (pytest itself, or each pytest-xdist
worker) reads its own peak (``getrusage(RUSAGE_SELF).ru_maxrss``) and the
largest peak of the child processes it has waited for (``RUSAGE_CHILDREN``: the
runner's worker processes once their pool is closed, the commands tests run with
`subprocess`), after every test, and remembers the test during which each peak
last rose. The run ends with one line per process; with ``--max-rss-gib N``
(``make test`` passes 4) a peak above N GiB fails the run, naming the test.
"""

from __future__ import annotations

import resource
from typing import Any

import pytest

GIB = 2**30
KINDS = ("process", "children")
"""The two peaks of a process: its own, and the largest of its waited-for child processes."""


def peaks() -> dict[str, int]:
    """This process's peak resident memory and its largest child's, in bytes (Linux counts ``ru_maxrss`` in KiB)."""
    return {"process": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024}


def add_option(parser: pytest.Parser) -> None:
    parser.addoption("--max-rss-gib", type=float, default=None, metavar="N",
                     help="fail the run when any process running the tests, or a child process it waited for, "
                          "peaked above N GiB resident (tests/peak_memory.py)")


class PeakMemory:
    """The plugin: one per pytest process (the controller and each xdist worker)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.limit: float | None = config.getoption("max_rss_gib")
        self.last = peaks()
        self.raised_by: dict[str, str] = dict.fromkeys(KINDS, "(before the first test)")
        self.reports: dict[str, dict[str, Any]] = {}
        """Each process's peaks and the tests that raised them, by name ("pytest" or the xdist worker's id)."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        yield
        now = peaks()
        for kind in KINDS:
            if now[kind] > self.last[kind]:
                self.raised_by[kind] = item.nodeid
        self.last = now

    def own_report(self) -> dict[str, Any]:
        now = peaks()
        return {kind: {"bytes": now[kind], "test": self.raised_by[kind]} for kind in KINDS}

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        workeroutput = getattr(self.config, "workeroutput", None)
        if workeroutput is not None:  # an xdist worker: the controller reports for it
            workeroutput["peak_memory"] = self.own_report()
            return
        if not self.reports:  # not distributed: this process ran the tests
            self.reports["pytest"] = self.own_report()
        if self.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """An xdist worker finished: keep the peaks it sent."""
        report = getattr(node, "workeroutput", {}).get("peak_memory")
        if report is not None:
            self.reports[node.gateway.id] = report

    def over(self) -> list[str]:
        """Each peak above the limit, as a line naming the process and the test."""
        if self.limit is None:
            return []
        return [f"{name} {kind}: {r[kind]['bytes'] / GIB:.2f} GiB > {self.limit:g} GiB, reached in {r[kind]['test']}"
                for name, r in sorted(self.reports.items()) for kind in KINDS if r[kind]["bytes"] > self.limit * GIB]

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if getattr(self.config, "workeroutput", None) is not None or not self.reports:
            return
        terminalreporter.write_sep("-", "peak resident memory")
        for name, r in sorted(self.reports.items()):
            terminalreporter.write_line(
                f"{name}: tests {r['process']['bytes'] / GIB:.2f} GiB (rose last in {r['process']['test']}); "
                f"child processes {r['children']['bytes'] / GIB:.2f} GiB (rose last in {r['children']['test']})")
        for line in self.over():
            terminalreporter.write_line(f"FAILED peak memory: {line}", red=True)
