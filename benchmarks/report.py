"""How long a report takes to rebuild when every deal is reused (prints a table; not a test).

The goal: ``bakers-dozen demo`` run a second time (every deal reused from
the store) and ``bakers-dozen report`` of the same store take under 10 s wall on the
project's 2-core machine. Each command runs in a fresh process (``python -m
bakers_dozen ...``, this checkout first on ``PYTHONPATH``), as a user runs it:

- cold: the first build into an empty report folder (every chart drawn, every
  listed game replayed and analysed);
- warm: the rebuild into the same folder (charts, replay pages and loss analyses
  carried over from the previous build), best and median of ``--repeat`` runs.

For each: wall seconds, CPU seconds (user + system) and peak memory (maximum
resident set size). The store must hold the study already: run ``bakers-dozen demo``
once first (about 6 minutes of CPU), then
``.venv/bin/python benchmarks/report.py --store bakers-dozen-store [--demo]``.
With ``--demo``, ``bakers-dozen demo`` itself is timed the same way (its runs reuse
every deal of the store); reports go to a temporary folder, the store is only read
(the runs of ``demo`` add a manifest per run to it, as any run does).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Timing:
    """One run: wall and CPU seconds, peak memory in MiB."""

    wall: float
    cpu: float
    peak_mib: float


def run_once(args: list[str], cwd: Path, checkout: Path = ROOT) -> Timing:
    """``python -m bakers_dozen ARGS`` of ``checkout`` in a fresh process; raise SystemExit with its error output
    if it fails."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryFile("w+") as err:  # a file, not a pipe: a long error output cannot stall the child
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "bakers_dozen", *args], cwd=cwd, env=env,
                                stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own CPU time and peak memory
        wall = time.perf_counter() - start
        proc.returncode = code = os.waitstatus_to_exitcode(status)
        if code != 0:
            err.seek(0)
            raise SystemExit(f"bakers-dozen {' '.join(args)} failed (exit {code}): {err.read().strip()[-2000:]}")
    return Timing(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def row(what: str, cold: Timing, warm: list[Timing]) -> str:
    """A Markdown table row: cold, then the best and median warm wall time, CPU and peak memory of the best."""
    best = min(warm, key=lambda t: t.wall)
    median = statistics.median(t.wall for t in warm)
    return (f"| `{what}` | {cold.wall:.1f} s ({cold.peak_mib:,.0f} MiB) | {best.wall:.1f} s | {median:.1f} s | "
            f"{best.cpu:.1f} s | {best.peak_mib:,.0f} MiB |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("bakers-dozen-store"),
                        help="a results store that holds the default study (made by bakers-dozen demo)")
    parser.add_argument("--repeat", type=int, default=3, help="warm rebuilds timed (best and median shown)")
    parser.add_argument("--demo", action="store_true", help="time bakers-dozen demo (every deal reused) as well")
    parser.add_argument("--checkout", type=Path, default=ROOT,
                        help="the bakers-dozen source tree to time (default: this one), e.g. an older one for a before/after")
    args = parser.parse_args()
    store = args.store.resolve()
    if not store.is_dir():
        parser.error(f"no store at {store}: run `bakers-dozen demo` first (it writes bakers-dozen-store)")
    print(f"report rebuild benchmark: fresh process per run; store {store}; checkout {args.checkout}; "
          f"cpu count {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print()
    print("| command | cold: first build (peak memory) | warm: best | warm: median | warm CPU | warm peak memory |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp)
        commands = [("report STORE", ["report", str(store), "--out", str(work / "report")])]
        if args.demo:
            commands.append(("demo", ["demo", "--quiet", "--store", str(store), "--out", str(work / "demo")]))
        for what, command in commands:
            cold = run_once(command, work, args.checkout)
            warm = [run_once(command, work, args.checkout) for _ in range(args.repeat)]
            print(row(what, cold, warm), flush=True)
        html = work / "report" / "report.html"
        print()
        print(f"report.html: {html.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
