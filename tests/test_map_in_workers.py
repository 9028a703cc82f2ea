"""Work shared with the runner's workers (`studies.backends.map_in_workers`: a report's charts) is over when an
error reaches the caller: a failing item leaves no worker still writing into a folder the caller then removes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from studies.backends import close_pools, map_in_workers


def _write_late(task: tuple[Path, int]) -> int:
    """Fails at once for item 0; every other item writes its file after a pause."""
    folder, i = task
    if i == 0:
        raise OSError(28, "No space left on device")
    time.sleep(0.5)
    (folder / f"{i}.txt").write_text("late")
    return i


def test_items_in_order_and_a_failure_waits_for_the_items_in_play(tmp_path):
    late = tmp_path / "late"
    try:
        assert map_in_workers(_write_late, [(tmp_path, i) for i in (1, 2, 3)], 2) == [1, 2, 3]
        with pytest.raises(OSError, match="No space left"):
            map_in_workers(_write_late, [(late, i) for i in (0, 1, 2, 3)], 2)
        late.mkdir()  # a worker still playing its item would now write into it
        time.sleep(1.5)
        assert list(late.iterdir()) == []
    finally:
        close_pools()
