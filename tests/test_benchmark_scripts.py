"""The benchmark scripts refuse bad input as the command line does: one line naming it, exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args, says", (
    (["prove_deal.py", "--variant", "no-such-game", "--deal", "1"], "error: unknown variant 'no-such-game'"),
    (["solver.py", "--part", "nodes", "--goal", "bakers-dozen:9-3"], "error: --deals '9-3': the first deal"),
    (["solver.py", "--part", "nodes", "--goal", "bakers-dozen:1-2", "--param", "final"], "error: --param 'final'"),
    (["relaxations.py", "--goal", "good-measure:one"], "error: --deals 'one' is not a range"),
))
def test_a_benchmark_script_refuses_bad_input_in_one_line_with_exit_status_2(args, says):
    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / args[0]), *args[1:]], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(says) and run.stderr.count("\n") == 1, run.stderr
    assert "Traceback" not in run.stderr
