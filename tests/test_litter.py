"""Nothing left behind: a store opened on a full disk leaves no probe file, and the workers of a run killed outright
(``kill -9``, while its pool starts) end with it instead of living on until loky's idle timeout."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import time

import pytest

from studies import nofollow
from studies.files import StoreFullError
from studies.store import Store


def test_a_store_opened_on_a_full_disk_leaves_no_probe_file(tmp_path, monkeypatch):
    Store.open(tmp_path / "store", create=True)
    real_create = nofollow.create

    class Full:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()
            return False

        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def flush(self):
            pass

    monkeypatch.setattr(nofollow, "create", lambda root, path: Full(real_create(root, path)))
    for _ in range(3):
        with pytest.raises(StoreFullError, match="disk full"):
            Store.open(tmp_path / "store", create=True)
    assert [p.name for p in (tmp_path / "store").iterdir() if p.name.startswith(".tmp-")] == []


STARTS_A_POOL = """
import os, time
from studies.backends import worker_pool
def pid_after(seconds):
    time.sleep(seconds)  # both tasks run at once, one in each worker
    return os.getpid()
pool = worker_pool(2)
print(" ".join(str(f.result()) for f in [pool.submit(pid_after, 1.0) for _ in range(2)]), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_workers_end_when_their_run_is_killed(tmp_path):
    child = subprocess.Popen([sys.executable, "-c", STARTS_A_POOL], cwd=tmp_path, stdout=subprocess.PIPE, text=True)
    try:
        workers = [int(p) for p in child.stdout.readline().split()]
        assert len(workers) == 2 and all(_alive(p) for p in workers)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(p) for p in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [p for p in workers if _alive(p)]
    for p in left:  # never leave them to the machine, even when the test fails
        os.kill(p, signal.SIGKILL)
    assert left == [], f"workers {left} outlived their killed parent"
