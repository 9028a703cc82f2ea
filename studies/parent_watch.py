"""A worker process that ends when the process that started it dies.

A run's loky workers are its own children. When the run is killed outright (``kill -9``, the OOM killer) it can tell
them nothing, and a worker still starting, or waiting for work, would otherwise live on until loky's idle timeout,
holding its memory. `exit_with_parent` runs first in each worker (the pool's initializer): it ends the worker at once
when its parent is already gone, and starts a daemon thread that ends it within `POLL_SECONDS` once the parent dies
(the worker is then re-parented, so ``os.getppid()`` changes). The check is a system call, so it works while the
worker's main thread is busy in compiled code that releases the GIL, and it needs no help from the dying parent.
"""

from __future__ import annotations

import os
import threading
import time

POLL_SECONDS = 0.5
"""How often a worker looks whether its parent still lives."""
EXIT_ORPHANED = 3
"""A worker's exit status when it ended because its parent died (no one reads it: the parent is gone)."""


def exit_with_parent(parent: int) -> None:
    """In a worker started by process ``parent``: end now if that process is gone, else watch it and end with it."""
    if os.getppid() != parent:
        os._exit(EXIT_ORPHANED)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(POLL_SECONDS)
        os._exit(EXIT_ORPHANED)  # no cleanup to wait for: the run that would read our results is gone

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
