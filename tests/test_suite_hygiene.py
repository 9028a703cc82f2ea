"""The suite itself: a test that writes into the folder the suite was started from fails, naming what it wrote."""

import shutil
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")

WRITES_HERE = '''
from pathlib import Path

import conftest


def test_writes_where_the_suite_started():
    (conftest.STARTED_IN / "bakers-dozen-store").mkdir()


def test_writes_in_its_own_current_folder():
    Path("bakers-dozen-report").mkdir()
'''


def test_a_test_that_writes_into_the_starting_folder_fails(tmp_path):
    shutil.copy(CONFTEST, tmp_path / "conftest.py")
    shutil.copy(CONFTEST.with_name("peak_memory.py"), tmp_path)  # the conftest's own plugin
    (tmp_path / "test_writer.py").write_text(WRITES_HERE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "test_writer.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 passed, 1 error" in done.stdout, done.stdout  # the check fails the writer at its teardown
    assert "this test wrote ['bakers-dozen-store']" in done.stdout
    assert not (tmp_path / "bakers-dozen-report").exists()  # the other test wrote in a folder of its own
