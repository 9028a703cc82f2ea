"""How `bakers-dozen report` scales with the store: wall time and peak memory over stores of 10^6, 10^7, ... deals
(prints a table; not a test).

For each size N given, the store ``<work>/store-N`` holds N greedy deals of dick-1883 (made by
``bakers-dozen simulate`` when missing, under ``nice``; 10^7 deals take 52 s on 2 quiet cores). Each
measurement runs in a fresh process (``os.wait4``: its own CPU time and peak resident memory):

- ``report``: ``bakers-dozen report STORE --out ...`` of this checkout (or ``--checkout``'s);
- with ``--engines``, the two ways of aggregating a run's counts and cards-home histogram over the store's
  Parquet files, back to back: ``pyarrow`` (`reports.digest.digest_runs`: the checked chunk files one at a time,
  the toolkit's path) and ``duckdb`` (one ``GROUP BY`` over ``read_parquet`` of the same files, without the
  toolkit's checks of each file).

    .venv/bin/python benchmarks/report_scale.py --sizes 1000000 10000000 --work /tmp/report-scale --engines
"""

from __future__ import annotations

import argparse
import datetime
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DUCKDB = """
import duckdb, sys
files = sys.argv[1] + '/*/*.parquet'
con = duckdb.connect()
con.execute("SET threads TO 2")
con.execute(f"SELECT key, count(*), sum((outcome = 'won')::INT), sum(cards_home) FROM read_parquet('{files}') GROUP BY key").fetchall()
con.execute(f"SELECT key, cards_home, count(*) FROM read_parquet('{files}') GROUP BY key, cards_home").fetchall()
"""

PYARROW = """
import sys
from reports.digest import digest_runs, summary
summary(list(digest_runs(sys.argv[1]).values()))
"""


def measure(argv: list[str], checkout: Path, cwd: Path) -> tuple[float, float, float]:
    """(wall s, CPU s, peak MiB) of ``argv`` in a fresh process in ``cwd`` (not a checkout: ``python -m`` puts
    its folder first) with ``checkout`` first on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(checkout), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed: {err.read().strip()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def make_store(path: Path, deals: int) -> None:
    """``deals`` greedy deals of dick-1883 in ``path`` (nothing done when it holds them already: the run is reused)."""
    subprocess.run(["nice", "-n", "10", sys.executable, "-m", "bakers_dozen", "simulate", "-v", "dick-1883", "-s", "greedy",
                    "-n", str(deals), "--store", str(path)], check=True, stdout=subprocess.DEVNULL, cwd=ROOT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000, 100_000_000])
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "report-scale",
                        help="where the stores are kept (made when missing; delete them when done)")
    parser.add_argument("--checkout", type=Path, default=ROOT, help="the bakers-dozen tree whose report is timed")
    parser.add_argument("--engines", action="store_true", help="time pyarrow and DuckDB aggregation too")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    args.work = args.work.resolve()
    print(f"report scale benchmark, {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M} UTC; checkout {args.checkout}; "
          f"cpu count {os.cpu_count()}; load average {os.getloadavg()[0]:.1f}")
    print()
    print("| deals | what | wall | CPU | peak memory |")
    print("|---:|---|---:|---:|---:|")
    for n in args.sizes:
        store = args.work / f"store-{n}"
        make_store(store, n)
        runs = [("report", [sys.executable, "-m", "bakers_dozen", "report", str(store), "--out", str(args.work / f"report-{n}"),
                            "--force"])]
        if args.engines:
            runs += [("pyarrow (digest_runs)", [sys.executable, "-c", PYARROW, str(store)]),
                     ("duckdb (GROUP BY)", [sys.executable, "-c", DUCKDB, str(store)])]
        for what, argv in runs:
            wall, cpu, peak = measure(argv, args.checkout, args.work)
            print(f"| {n:,} | {what} | {wall:.1f} s | {cpu:.1f} s | {peak:,.0f} MiB |", flush=True)


if __name__ == "__main__":
    main()
