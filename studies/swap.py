"""A forced run's swap, as operations of `studies.store.Store` (`Swaps`).

A forced run (``--force``) replays deals the store holds. It writes its chunks into a staging
folder of the key (`Store.begin_swap`) and puts them in place of the old files only when all are
written (`Store.finish_swap`), so that a reader sees the old rows or the new, never a hole: readers
list and read a key's files holding the commit lock shared (`Store.reading`), and the swap happens
inside the commit section. The swap is committed by a note in the staging folder; from then on
readers take the staged files in place of those they replace (`Store.chunk_files`), and a crash part
way is completed by the next run of the key (`Store.hold_key`), while a run that stops before the note
leaves the old files as they were and its staging folder is removed.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

from studies import nofollow
from studies.files import RunGone, atomic_write_bytes, failure, fsync_dir
from studies.rows import chunk_name

SWAP_PREFIX = ".swap-"
STAGED = ".staged"
SWAP_READY = "_ready.json"
"""In a forced run's staging folder (`Store.begin_swap`): its chunks (names ending in `STAGED`) and, once all are
written, the note that commits their swap into place."""


class Swaps:
    """The `studies.store.Store` operations of a forced run's swap (see the module docs)."""

    # a forced run's swap -------------------------------------------------------------
    def _swap_dir(self, key: str, run_id: str) -> Path:
        return self.key_dir(key) / f"{SWAP_PREFIX}{run_id}"

    def begin_swap(self, key: str, run_id: str) -> None:
        """Have run ``run_id``, which holds ``key``, write its chunks into a staging folder (`studies.store.Store.write_chunk`) until
        `finish_swap` puts them in place all at once: a forced run, whose new files would otherwise replace the
        old ones chunk by chunk while readers read."""
        try:
            nofollow.make_folder(self.path, self._swap_dir(key, run_id))
        except OSError as exc:
            raise failure(f"cannot create a staging folder in {self.key_dir(key)}", exc) from None

    def finish_swap(self, key: str, run_id: str) -> None:
        """Put run ``run_id``'s staged chunks in place of the files they overlap, in the commit section (readers
        wait, `studies.store.Store.reading`). A note written first commits the swap: a crash after it is completed by the next run
        of the key (`studies.store.Store.hold_key`), and readers meanwhile take the staged files (`studies.store.Store.chunk_files`)."""
        folder = self._swap_dir(key, run_id)
        try:
            with self._commit_section(key):
                if not self._run_holds_key(key, run_id):
                    raise RunGone(f"run {run_id} no longer holds key {key}; its chunks were not put in place")
                atomic_write_bytes(self.path, folder / SWAP_READY, json.dumps({"run": run_id}).encode())
                self._complete_swap(key, folder)
        except OSError as exc:
            raise failure(f"cannot put the new chunks of run {run_id} in place in {self.key_dir(key)}", exc) from None

    def drop_swap(self, key: str, run_id: str) -> None:
        """Remove run ``run_id``'s staging folder unless its swap is committed: a run that stopped before all its
        chunks were written leaves the key's files as they were. Called while the run holds the key; a folder
        that cannot be removed is left for the next run of the key (`studies.store.Store.hold_key`)."""
        folder = self._swap_dir(key, run_id)
        with contextlib.suppress(OSError):
            if nofollow.is_folder(self.path, folder) and not nofollow.exists(self.path, folder / SWAP_READY):
                self._drop_folder(folder)

    def _complete_swap(self, key: str, folder: Path) -> None:
        """Remove the key's files that the staged files of ``folder`` overlap, then move those in and remove the
        folder. Every step can be repeated after a crash: a staged file still there replaces what it overlaps."""
        d = self.key_dir(key)
        staged = self._listed(folder, key, STAGED)
        for old in self._listed(d, key):
            if any(old.first <= s.last and s.first <= old.last for s in staged):
                nofollow.unlink(self.path, old.path)
        fsync_dir(d)
        for s in staged:
            nofollow.replace(self.path, s.path, d / chunk_name(key, s.first, s.last))
        fsync_dir(d)
        self._drop_folder(folder)

    def _drop_folder(self, folder: Path) -> None:
        """Remove a staging folder: its files (links are removed, not followed), its note last, then the folder."""
        names = sorted(os.listdir(folder), key=lambda name: name == SWAP_READY)
        for name in names:
            if nofollow.is_folder(self.path, folder / name):  # not one the toolkit makes; its links are not followed
                shutil.rmtree(folder / name)
            else:
                nofollow.unlink(self.path, folder / name)
        folder.rmdir()

    def _recover_swaps(self, key: str) -> None:
        """Complete the committed swaps of forced runs that died part way, and remove the staging folders of
        those that died before committing (called by the run that now holds the key)."""
        d = self.key_dir(key)
        for name in sorted(os.listdir(d)):
            if not name.startswith(SWAP_PREFIX):
                continue
            folder = d / name
            if not nofollow.is_folder(self.path, folder):
                nofollow.unlink(self.path, folder)
            elif nofollow.exists(self.path, folder / SWAP_READY):
                with self._commit_section(key):
                    self._complete_swap(key, folder)
            else:
                self._drop_folder(folder)
