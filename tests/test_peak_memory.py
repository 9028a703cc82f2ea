"""tests/peak_memory.py: the suite's peak resident memory is said per process and bounded by ``--max-rss-gib``,
naming the test that reached it, with pytest-xdist workers and without (``make test`` uses them)."""

from __future__ import annotations

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
import subprocess, sys

def test_small():
    assert True

def test_big():
    held = bytearray(b"x") * (1536 * 2**20)  # written, so resident
    assert len(held) == 1536 * 2**20

def test_big_child():
    subprocess.run([sys.executable, "-c", "held = bytearray(b'x') * (1536 * 2**20)"], check=True)
"""


LIMIT = "1.2"
"""Above what a test process of this suite holds (a process started by an xdist worker starts with the worker's peak:
Linux carries the peak resident size across fork and exec), below what the big tests hold."""


def run_suite(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "test_suite.py").write_text(SUITE)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(folder),
                           *args, str(folder / "test_suite.py")], capture_output=True, text=True, timeout=300, cwd=folder)


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["one process", "xdist"])
def test_a_peak_over_the_limit_fails_the_run_and_names_the_test(tmp_path, workers):
    done = run_suite(tmp_path, *workers, "-k", "test_small or test_big and not child", "--max-rss-gib", LIMIT)
    assert done.returncode == 1, done.stdout
    assert "peak resident memory" in done.stdout and "2 passed" in done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAILED peak memory")]
    assert " process: " in line and "test_suite.py::test_big" in line and f"> {LIMIT} GiB" in line, line


def test_a_child_process_over_the_limit_is_caught_too(tmp_path):
    done = run_suite(tmp_path, "-k", "test_small or test_big_child", "--max-rss-gib", LIMIT)
    assert done.returncode == 1, done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("FAILED peak memory")]
    assert "children" in line and "test_suite.py::test_big_child" in line, line


def test_under_the_limit_the_run_passes_and_says_its_peaks(tmp_path):
    done = run_suite(tmp_path, "-k", "test_small", "--max-rss-gib", "4")
    assert done.returncode == 0, done.stdout
    (line,) = [x for x in done.stdout.splitlines() if x.startswith("pytest: tests ")]
    assert "GiB" in line and "child processes" in line
