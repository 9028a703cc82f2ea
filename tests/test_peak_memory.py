"""tests/peak_memory.py: the suite's peak resident memory is said per process and bounded by ``--max-rss-gib``,
naming the test that reached it, with pytest-xdist workers and without (``make test`` uses them)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from peak_memory import PeakMemory, add_option

def pytest_addoption(parser):
    add_option(parser)

def pytest_configure(config):
    config.pluginmanager.register(PeakMemory(config), "peak-memory")
"""

SUITE = """
import os, subprocess, sys

BIG = int(os.environ["PEAK_TEST_BIG_MIB"]) * 2**20

def test_small():
    assert True

def test_big():
    held = bytearray(b"x") * BIG  # written, so resident
    assert len(held) == BIG

def test_big_child():
    subprocess.run([sys.executable, "-c", f"held = bytearray(b'x') * {BIG}"], check=True)
"""

MIB = 2**20


def limit_gib() -> str:
    """The limit the inner suite runs under: 1.2 GiB, or more above what this process has already held.

    A process started by this one starts with its peak (Linux carries the peak resident size across fork and exec),
    so after a big test in the same xdist worker every process of the inner suite would be over a fixed limit."""
    inherited = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return f"{max(1.2, round(inherited / 2**30 + 0.3, 1)):g}"


def run_suite(folder: Path, limit: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the inner suite under ``--max-rss-gib limit``; its big tests hold half a GiB above the limit."""
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_suite.py").write_text(SUITE)
    env = {**os.environ, "PEAK_TEST_BIG_MIB": str(int(float(limit) * 1024) + 512)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           "--max-rss-gib", limit, *args, str(folder / "test_suite.py")],
                          capture_output=True, text=True, timeout=300, cwd=folder, env=env)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_peak_over_the_limit_fails_the_run_and_names_the_test(tmp_path, workers):
    limit = limit_gib()
    done = run_suite(tmp_path, limit, *workers, "-k", "test_small or test_big and not child")
    assert done.returncode == 1, done.stdout
    assert "peak resident memory" in done.stdout and "2 passed" in done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAILED peak memory")]
    assert " process: " in line and "test_suite.py::test_big" in line and f"> {limit} GiB" in line, line


def test_a_child_process_over_the_limit_is_caught_too(tmp_path):
    done = run_suite(tmp_path, limit_gib(), "-k", "test_small or test_big_child")
    assert done.returncode == 1, done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAILED peak memory")]
    assert "children" in line and "test_suite.py::test_big_child" in line, line


def test_under_the_limit_the_run_passes_and_says_its_peaks(tmp_path):
    done = run_suite(tmp_path, "4", "-k", "test_small")
    assert done.returncode == 0, done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("pytest: tests ")]
    assert "GiB" in line and "child processes" in line
