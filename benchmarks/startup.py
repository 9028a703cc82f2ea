"""How long the command line takes to answer, as a new user meets it (prints a table; not a test).

For each command a new user meets first, every run a fresh process (``python -m
bakers_dozen ...``, wall time from start to exit):

- first run: as after an install, with an empty numba cache (``NUMBA_CACHE_DIR``
  set to a new empty folder), so every compiled function the command uses is
  compiled on the user's clock;
- warm: best of ``--repeat`` runs with that same cache, after the first run
  (which is the warm-up); the CPU seconds (user + system) of the best run are
  shown too, since on a shared machine they vary less than the wall time.

Each command keeps its temporary directory, so a warm ``solve`` finds its deal
in the store the first run filled (it reads the row back, as a user who runs it
again does); the ``--force`` row solves the deal again every time.

Usage: ``.venv/bin/python benchmarks/startup.py [--repeat 3] [--no-first] [--only variants]``.
The commands run in a temporary directory, with this checkout (or ``--checkout
DIR``, to time an older tree back to back) first on ``PYTHONPATH``. The throughput check is ``benchmarks/perf_check.py``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Command:
    """One row of the table: the verb's arguments and the goal for the warm run."""

    args: tuple[str, ...]
    goal: str

    @property
    def text(self) -> str:
        return " ".join(self.args)


COMMANDS = (
    Command(("variants",), "<= 0.5 s"),
    Command(("play", "--deal", "7", "--strategy", "greedy"), "<= 1.0 s"),
    Command(("play", "--deal", "7", "--strategy", "heuristic"), "<= 1.0 s"),
    Command(("solve", "--deals", "12"), "<= 1.5 s"),
    Command(("solve", "--deals", "12", "--force"), "- (solved again; the row above is the one timed)"),
    Command(("play", "--variant", "dick-1883", "--deal", "12", "--strategy", "sampling"), "a few seconds"),
)


@dataclass(frozen=True)
class Timing:
    """One run: wall seconds, CPU seconds of the process, and the last line of its error output if it failed."""

    wall: float
    cpu: float
    error: str | None


def run_once(command: Command, checkout: Path, cache: Path, cwd: Path, timeout: float) -> Timing:
    """Run ``bakers-dozen ARGS`` of ``checkout`` once in a fresh process with numba's cache in ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache),
           "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-m", "bakers_dozen", *command.args], cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return Timing(timeout, float("nan"), f"no answer within {timeout:g} s")
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    error = None if done.returncode == 0 else f"exit {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1]}"
    return Timing(wall, cpu, error)


def measure(command: Command, checkout: Path, repeat: int, first: bool, timeout: float,
            ) -> tuple[Timing | None, Timing | None]:
    """The first run (None unless ``first``) and the best warm run of ``command``, each cache a new folder."""
    with tempfile.TemporaryDirectory(prefix="startup-") as tmp:
        cache, cwd = Path(tmp) / "numba-cache", Path(tmp) / "cwd"
        cache.mkdir()
        cwd.mkdir()
        if not first:  # warm up into the empty cache, untimed
            warmup = run_once(command, checkout, cache, cwd, timeout)
            if warmup.error:
                return None, warmup
        cold = run_once(command, checkout, cache, cwd, timeout) if first else None
        if cold is not None and cold.error:
            return cold, None
        warm = [run_once(command, checkout, cache, cwd, timeout) for _ in range(repeat)]
    failed = [t for t in warm if t.error]
    return cold, failed[0] if failed else min(warm, key=lambda t: t.wall)


def seconds(t: Timing | None) -> str:
    if t is None:
        return "-"
    return "failed" if t.error else f"{t.wall:.2f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="warm runs per command (the best is shown)")
    parser.add_argument("--no-first", dest="first", action="store_false",
                        help="skip the timed first run (empty cache); it is still run, untimed, as the warm-up")
    parser.add_argument("--only", action="append", default=[],
                        help="only the commands whose text contains this (repeatable)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before a run counts as failed")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the bakers-dozen source tree to time (default: this one), e.g. an older one for a before/after")
    args = parser.parse_args()
    commands = [c for c in COMMANDS if not args.only or any(o in c.text for o in args.only)]
    print(f"start-up benchmark: fresh process per run, python -m bakers_dozen; warm = best of {args.repeat}; "
          f"first = empty numba cache; checkout {args.checkout}; cpu count {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print()
    print(f"| command | warm (best of {args.repeat}) | warm CPU | first run (empty cache) | goal (warm) |")
    print("|---|---:|---:|---:|---|")
    problems = []
    for command in commands:
        cold, warm = measure(command, args.checkout, args.repeat, args.first, args.timeout)
        cpu = "-" if warm is None or warm.error else f"{warm.cpu:.2f} s"
        print(f"| `{command.text}` | {seconds(warm)} | {cpu} | {seconds(cold)} | {command.goal} |", flush=True)
        problems += [f"{command.text}: {t.error}" for t in (cold, warm) if t is not None and t.error]
    for line in problems:
        print(f"failed: {line}", file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
