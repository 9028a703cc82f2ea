"""Runner scaling: deals/s of compiled greedy for 1, 2, ... jobs, bare and end to end.

For each job count it measures, over the same deals and chunks:

- bare: the engine loop alone (`strategies.batch.play_batch` per chunk, joblib loky
  processes for more than one job), keeping only the counts;
- end to end: `studies.runner.run` into a fresh store, so dealing, playing,
  building the Parquet rows, writing and fsyncing every chunk, and the
  bookkeeping of the main process are all included.

It prints deals/s, the speed-up and parallel efficiency against one job, and
end to end against bare. Then (``--big``) it runs 10,000,000 deals end to end in
a fresh process, as `bakers-dozen simulate` does, and reports the wall time and
the peak resident memory of that main process.

    .venv/bin/python benchmarks/scaling.py                  # 1,000,000 deals; 10,000,000 end to end
    .venv/bin/python benchmarks/scaling.py --big 0          # skip the 10,000,000-deal run
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from sim.errors import run_script  # noqa: E402
from sim.rules import Rules  # noqa: E402


def _bare_chunk(first: int, last: int) -> tuple[int, int]:
    from strategies import load_strategy
    from strategies.batch import play_batch

    r = play_batch(Rules(), load_strategy("greedy"), np.arange(first, last + 1, dtype=np.int64))
    return int((r.outcome == 1).sum()), last - first + 1


def bare(deals: int, jobs: int, chunk: int) -> float:
    """Deals/s of the engine loop alone."""
    from joblib import Parallel, delayed, parallel_config

    chunks = [(a, min(a + chunk - 1, deals)) for a in range(1, deals + 1, chunk)]
    start = time.perf_counter()
    if jobs == 1:
        done = sum(_bare_chunk(a, b)[1] for a, b in chunks)
    else:
        with parallel_config(backend="loky", inner_max_num_threads=1):
            done = sum(n for _, n in Parallel(n_jobs=jobs, return_as="generator_unordered", batch_size=1)(
                delayed(_bare_chunk)(a, b) for a, b in chunks))
    assert done == deals
    return deals / (time.perf_counter() - start)


def end_to_end(deals: int, jobs: int, chunk: int, where: Path) -> float:
    """Deals/s of the runner writing a fresh store."""
    from studies.runner import run
    from studies.spec import RunSpec

    shutil.rmtree(where, ignore_errors=True)
    start = time.perf_counter()
    s = run(RunSpec(Rules(), "greedy", deals), where, jobs=jobs, chunk=chunk)
    elapsed = time.perf_counter() - start
    assert s.played == deals
    shutil.rmtree(where, ignore_errors=True)
    return deals / elapsed


def warm(jobs: int, where: Path) -> None:
    """Compile the engine in this process and in the worker processes (not measured)."""
    from joblib import Parallel, delayed, parallel_config

    _bare_chunk(1, 100)
    if jobs > 1:
        with parallel_config(backend="loky", inner_max_num_threads=1):
            list(Parallel(n_jobs=jobs, batch_size=1)(delayed(_bare_chunk)(1, 100) for _ in range(jobs * 2)))
    end_to_end(2000, jobs, 100, where)


# Peak RSS is read as VmHWM (kB), which starts afresh at exec; ru_maxrss would carry over the
# resident size of the parent that forked this process.
BIG_SCRIPT = """
import time
start = time.perf_counter()
from studies.runner import run
from studies.spec import RunSpec
from sim.rules import Rules
s = run(RunSpec(Rules(), "greedy", {deals}), {store!r}, jobs={jobs})
wall = time.perf_counter() - start
rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM"))
print(s.deals, s.wins, s.played, round(wall, 2), round(s.seconds, 2), rss)
"""


def big(deals: int, jobs: int, where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)
    code = BIG_SCRIPT.format(deals=deals, store=str(where), jobs=jobs)
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    total = time.perf_counter() - t
    n, wins, played, wall, play_s, rss_kib = out.stdout.split()
    size = sum(f.stat().st_size for f in where.rglob("*.parquet"))
    files = len(list(where.rglob("*.parquet")))
    print(f"\n{int(n):,} greedy deals end to end, {jobs} jobs, default chunks ({files} chunk files, {size / 2**20:.0f} MiB):")
    print(f"  wall time, process start to summary: {total:.1f} s (inside run(): {float(wall):.1f} s; "
          f"playing and writing: {float(play_s):.1f} s = {int(played) / float(play_s):,.0f} deals/s)")
    print(f"  wins: {int(wins):,}; peak resident memory of the main process: {int(rss_kib) / 1024:.0f} MB")
    print(f"  targets: under 120 s -> {'met' if total < 120 else 'NOT met'}; "
          f"under 500 MB -> {'met' if int(rss_kib) < 500 * 1024 else 'NOT met'}")
    shutil.rmtree(where, ignore_errors=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deals", type=int, default=1_000_000, help="deals per measurement (default 1,000,000)")
    ap.add_argument("--chunk", type=int, default=50_000, help="deals per chunk (default 50,000)")
    ap.add_argument("--jobs", default=None, help="job counts to measure, e.g. 1,2,4 (default 1, 2, ..., all cores)")
    ap.add_argument("--repeat", type=int, default=2, help="best of this many measurements (default 2)")
    ap.add_argument("--big", type=int, default=10_000_000, help="deals of the end-to-end run in a fresh process (0: skip)")
    ap.add_argument("--dir", default=None, help="where to write the stores (default: a temporary directory)")
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    if args.jobs and not all(j.strip().isdigit() and int(j) >= 1 for j in args.jobs.split(",")):
        ap.error(f"--jobs {args.jobs!r}: allowed: job counts of at least 1 joined by commas, e.g. 1,2,4")
    job_counts = [int(j) for j in args.jobs.split(",")] if args.jobs else sorted({1, 2, *range(4, cores + 1, 2), cores})
    base = Path(args.dir or tempfile.mkdtemp(prefix="bd-scaling-"))
    base.mkdir(parents=True, exist_ok=True)
    print(f"runner scaling: compiled greedy, bakers-dozen, {args.deals:,} deals, chunks of {args.chunk:,}, "
          f"best of {args.repeat}; {cores} cores; store in {base}")
    results: dict[int, tuple[float, float]] = {}
    for jobs in job_counts:
        warm(jobs, base / "warm")
        b = e = 0.0
        for _ in range(args.repeat):  # interleaved, so that load from elsewhere hits both alike
            b = max(b, bare(args.deals, jobs, args.chunk))
            e = max(e, end_to_end(args.deals, jobs, args.chunk, base / f"e2e-{jobs}"))
        results[jobs] = (b, e)
    b1, e1 = results[job_counts[0]] if job_counts[0] == 1 else (None, None)
    print(f"{'jobs':>4} {'bare deals/s':>14} {'speed-up':>9} {'efficiency':>10} {'end-to-end/s':>14} {'speed-up':>9}"
          f" {'efficiency':>10} {'e2e / bare':>10}")
    for jobs, (b, e) in results.items():
        su_b = f"{b / b1:.2f}x" if b1 else "-"
        ef_b = f"{b / b1 / jobs:.0%}" if b1 else "-"
        su_e = f"{e / e1:.2f}x" if e1 else "-"
        ef_e = f"{e / e1 / jobs:.0%}" if e1 else "-"
        print(f"{jobs:>4} {b:>14,.0f} {su_b:>9} {ef_b:>10} {e:>14,.0f} {su_e:>9} {ef_e:>10} {e / b:>10.2f}")
    if 2 in results and b1:
        print(f"targets: 2 jobs >= 1.8x one job (end to end: {results[2][1] / e1:.2f}x); "
              f"end to end within 15% of the bare loop (1 job: {e1 / b1:.2f}, 2 jobs: {results[2][1] / results[2][0]:.2f})")
    if args.big:
        big(args.big, cores, base / "big")
    print(f"(peak RSS of this benchmark process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    run_script(main)
