"""A named pipe (FIFO) planted where the toolkit reads or overwrites a file is refused in one line within a second.

A plain ``open()`` of a FIFO waits for a writer forever; every file of a store, an atlas folder, a tuning journal,
a variant, a layout and an output is opened non-blocking and checked to be a regular file
(`sim.regular_files`). Each case runs in a child process with a timeout, so a hang fails the test instead of
blocking the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sim.rules import find_variant
from studies.records import KEY_INFO, MANIFESTS
from studies.runner import run
from studies.search_space import search_space
from studies.spec import RunSpec
from studies.store import MARKER, Store
from studies.tuning import TUNING_DIR, TuneSpec

ATLAS = Path(__file__).resolve().parents[1] / "studies" / "atlas" / "data"
RULES = find_variant("bakers-dozen")
CHILD_LIMIT = 120
"""Seconds a child may take in all (imports and a first compile included); the refusal itself must take < 1 s."""
AFTER_WORK = {"atlas not-winnable list": 20.0, "atlas deal file": 20.0, "chunk, simulate resumes": 60.0}
"""Cases that do real work before they reach the FIFO (check every deal file first; play the deals again): the
seconds they may take. A chunk file a run finds is damage to the store: it is set aside and its deals played again,
as a truncated chunk is (`studies.store`), and the run's summary names it; `read_store` warns, naming it."""


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("fifo") / "store"
    summary = run(RunSpec(RULES, "greedy", 40), path, jobs=1, chunk=20)
    return path, summary.key


def _journal(store: Path) -> Path:
    tune = TuneSpec(RULES, search_space("heuristic", ()), 2, 10, confirm=0)
    return store / TUNING_DIR / f"{tune.name}.journal"


# name -> (the path planted, relative to the case's folder: a function of (store, key)), the code that must refuse it
CHECK_ATLAS = "problems = check_atlas(ATLAS)\nif problems: raise UserError(problems[0])"
"""`check_atlas` lists what is wrong with a folder (the command line prints it): its first line is the refusal."""

CASES: dict[str, tuple[object, str]] = {
    "store marker": (lambda s, k: s / MARKER, "Store.open(STORE, create=False)"),
    "store marker, read_store": (lambda s, k: s / MARKER, "read_store(STORE)"),
    "key json": (lambda s, k: s / k / KEY_INFO, "read_store(STORE)"),
    "manifest": (lambda s, k: sorted((s / k / MANIFESTS).glob("*.json"))[0], "read_store(STORE)"),
    "chunk": (lambda s, k: Store(s).chunk_files(k)[0].path, "read_store(STORE)"),
    "chunk, simulate resumes": (lambda s, k: Store(s).chunk_files(k)[0].path,
                                "s = run(RunSpec(RULES, 'greedy', 40), STORE, jobs=1, chunk=20)\n"
                                "if s.corrupt: raise UserError(f'named pipe set aside as {s.corrupt[0]}')"),
    "tuning journal": (lambda s, k: _journal(s),
                       "open_study(TuneSpec(RULES, search_space('heuristic', ()), 2, 10, confirm=0), STORE)"),
    "atlas summary": (lambda s, k: s.parent / "atlas" / "summary.csv", CHECK_ATLAS),
    "atlas summary, report": (lambda s, k: s.parent / "atlas" / "summary.csv", "perfect_play(ATLAS, [RULES.fingerprint])"),
    "atlas summary, overwritten": (lambda s, k: s.parent / "atlas" / "summary.csv",
                                   "write_file_atomically(ATLAS / 'summary.csv', lambda t: t.write_text('x'))"),
    "atlas deal file": (lambda s, k: s.parent / "atlas" / "bakers-dozen.parquet", CHECK_ATLAS),
    "atlas deal file, read": (lambda s, k: s.parent / "atlas" / "bakers-dozen.parquet",
                              "from studies.atlas import read_deals\nread_deals(ATLAS, 'bakers-dozen', 'default')"),
    "atlas not-winnable list": (lambda s, k: s.parent / "atlas" / "pysol-bakers-dozen-not-winnable.csv",
                                CHECK_ATLAS),
    "variant file": (lambda s, k: s.parent / "mine.toml", "load_variant_file(HERE / 'mine.toml')"),
    "layout file": (lambda s, k: s.parent / "layout.txt", "cli(['deal', '--layout', str(HERE / 'layout.txt')])"),
    "output file": (lambda s, k: s.parent / "deal.svg", "cli(['deal', '--deal', '3', '--svg', str(HERE / 'deal.svg')])"),
    "api output": (lambda s, k: s.parent / "game.html", "api.replay(GAME, HERE / 'game.html')"),
}

CHILD = textwrap.dedent("""
    import sys, time, warnings
    from pathlib import Path
    from click.testing import CliRunner
    from bakers_dozen import api
    from bakers_dozen.cli import main
    from reports.atlas import perfect_play
    from reports.output import write_file_atomically
    from sim.errors import UserError
    from sim.rules import find_variant, load_variant_file
    from studies.files import DamagedFileWarning
    from studies.atlas import check_atlas
    from studies.reading import read_store
    from studies.runner import run
    from studies.search_space import search_space
    from studies.spec import RunSpec
    from studies.store import Store
    from studies.tuning import TuneSpec, open_study

    HERE = Path(sys.argv[1])
    STORE, ATLAS, RULES = HERE / "store", HERE / "atlas", find_variant("bakers-dozen")
    GAME = api.deal()

    def cli(args):
        done = CliRunner().invoke(main, args)
        if done.exit_code == 2 and len(done.output.strip().splitlines()) == 1:
            raise UserError(done.output.strip())
        raise AssertionError(f"exit {done.exit_code}: {done.output!r} {done.exception!r}")

    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            exec(sys.argv[2])
        except UserError as exc:
            print(f"refused after {time.perf_counter() - start:.3f} s: {exc}")
        else:
            said = [str(w.message) for w in seen if issubclass(w.category, DamagedFileWarning)]
            print(f"warned after {time.perf_counter() - start:.3f} s: {said[0]}" if said else "not refused")
""")


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_fifo_is_refused_in_one_line_within_a_second(case, pristine, tmp_path):
    store, key = pristine
    shutil.copytree(store, tmp_path / "store")
    shutil.copytree(ATLAS, tmp_path / "atlas")
    where, code = CASES[case]
    fifo = where(tmp_path / "store", key)  # type: ignore[operator]
    fifo.parent.mkdir(parents=True, exist_ok=True)
    fifo.unlink(missing_ok=True)
    os.mkfifo(fifo)
    try:
        done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), code], capture_output=True, text=True,
                              timeout=CHILD_LIMIT, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{case}: hung on the FIFO at {fifo}")
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 0 and len(lines) == 1, done.stdout + done.stderr
    assert lines[0].startswith(("refused after ", "warned after ")), done.stdout + done.stderr
    seconds = float(lines[0].split()[2])
    assert seconds < AFTER_WORK.get(case, 1.0), lines[0]
    assert "named pipe" in lines[0] and fifo.name in lines[0], lines[0]
