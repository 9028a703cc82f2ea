"""Sizes a user may set are weighed against the machine's memory, for all workers together, before any work.

The machine's memory is faked (`strategies.memory.machine_mib`), so the checks do not depend on the machine
the tests run on: with 1,000 MiB, every setting below asks for more, alone or times its workers.
"""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.rules import resolve_variant
from strategies import load_strategy
from strategies.memory import MemoryLimitError, check_memory

FAKE_MIB = 1000.0


@pytest.fixture
def small_machine(monkeypatch, tmp_path):
    """A machine of `FAKE_MIB` MiB, and a working folder that must stay empty (nothing is played or stored)."""
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: FAKE_MIB)
    monkeypatch.chdir(tmp_path)
    return tmp_path


TOO_BIG = [
    # (command line, the setting the message names, the workers counted)
    (["simulate", "-s", "solver:tt_mb=600", "--jobs", "2", "-n", "100", "-q"], "tt_mb=600", 2),
    (["simulate", "-s", "solver:capacity_states=100000000", "--jobs", "1", "-n", "10", "-q"], "capacity_states=100000000",
     1),
    (["simulate", "-s", "solver:prover_seconds=1,prover_mb=5000", "-n", "10", "-q", "--jobs", "1"], "prover_mb=5000", 1),
    (["simulate", "-s", "sampling:tt_mb=2000", "-n", "10", "-q", "--jobs", "1"], "tt_mb=2000", 1),
    (["simulate", "-s", "solver:relax_states=10000000", "-n", "10", "-q", "--jobs", "1"], "relax_states=10000000", 1),
    (["compare", "--variants", "bakers-dozen,dick-1883", "-s", "solver:tt_mb=700", "-n", "100", "--jobs", "2", "-q",
      "--out", "rep"], "tt_mb=700", 2),
    (["tournament", "--strategies", "greedy;solver:tt_mb=1024", "-n", "100", "--jobs", "1", "-q", "--out", "rep"],
     "tt_mb=1024", 1),
    (["solve", "--deals", "1-100", "--tt-mb", "600", "--jobs", "2", "-q"], "tt_mb=600", 2),
    (["solve", "--deals", "1", "--param", "capacity_states=1000000000", "--jobs", "1", "-q"], "capacity_states=1000000000",
     1),
    (["play", "-d", "1", "-s", "solver:tt_mb=2000"], "tt_mb=2000", 1),
]


@pytest.mark.parametrize(("args", "setting", "workers"), TOO_BIG, ids=[" ".join(a[:3]) for a, _, _ in TOO_BIG])
def test_a_size_the_machine_cannot_hold_is_refused_before_any_work(small_machine, args, setting, workers):
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and "Traceback" not in line
    assert setting in line and f"this machine has {FAKE_MIB:,.0f} MiB" in line, line
    per_worker, total = (float(x.replace(",", "")) for x in re.findall(r"([\d,]+) MiB (?:a worker|in all)", line))
    assert total == pytest.approx(per_worker * workers, abs=workers) and total > FAKE_MIB, line
    assert f"for {workers} worker(s)" in line
    assert list(small_machine.iterdir()) == []  # no store, no report folder: nothing started


def test_analyse_counts_the_tables_beside_its_own(monkeypatch, tmp_path):
    """``--tt-mb`` is within the machine's memory, but not with the solver's other tables beside it."""
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: 600.0)
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["analyse", "--deal", "1", "--moves", "", "--tt-mb", "600"])
    assert r.exit_code == 2 and "tt_mb=600" in r.output and "this machine has 600 MiB" in r.output, r.output


def test_the_workers_multiply_the_size(monkeypatch):
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: FAKE_MIB)
    rules = resolve_variant("bakers-dozen")
    one = load_strategy("solver:tt_mb=300,capacity_states=0,relax_states=0")
    check_memory(one, rules, 3)  # 3 x about 304 MiB fits 1,000
    with pytest.raises(MemoryLimitError, match=r"in all for 4 worker\(s\).*lower tt_mb or --jobs"):
        check_memory(one, rules, 4)


@pytest.mark.parametrize("spec", ["greedy", "heuristic", "lookahead", "random", "solver", "sampling"])
def test_the_defaults_fit_a_small_machine(monkeypatch, spec):
    monkeypatch.setattr("strategies.memory.machine_mib", lambda: 2048.0)
    for variant in ("bakers-dozen", "dick-1883", "spanish-patience"):
        check_memory(load_strategy(spec), resolve_variant(variant), 4)


def test_every_size_parameter_of_the_solver_is_counted():
    """Raising any setting that sizes an allocation raises the figure: none is forgotten."""
    rules = resolve_variant("bakers-dozen")
    base = load_strategy("solver:prover_seconds=1")
    before = sum(base.memory_use(rules).values())
    for setting in ("tt_mb=4096", "depth=1000000", "relax_states=10000000", "capacity_states=1000000000",
                    "prover_mb=100000"):
        grown = load_strategy(f"solver:prover_seconds=1,{setting}")
        assert sum(grown.memory_use(rules).values()) > before + 2**28, setting
    sampling = load_strategy("sampling")
    for setting in ("tt_mb=4096", "samples=10000"):
        assert sum(load_strategy(f"sampling:{setting}").memory_use(rules).values()) > \
            sum(sampling.memory_use(rules).values()) + 2**25, setting


def _record(tmp_path, **change) -> str:
    played = CliRunner().invoke(main, ["play", "--json", "-d", "3", "-s", "greedy"])
    record = {**json.loads(played.output), **change}
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


LONG = "x" * 1_000_000


@pytest.mark.parametrize("change", [
    {"moves": ["9H 3>7" + LONG]}, {"moves": [LONG]}, {"moves": ["9H " + " " * 1_000_000 + "3>7"]},
    {"rules_fingerprint": LONG}, {"termination": LONG}, {"outcome": LONG}, {"source": LONG},
    {"face_down": [LONG] * 13}, {"variant": LONG}, {"strategy": LONG, "outcome": "won"},
], ids=range(10))
def test_verify_quotes_a_long_value_shortened(tmp_path, change):
    r = CliRunner().invoke(main, ["verify", _record(tmp_path, **change)])
    assert r.exit_code in (1, 2), r.output
    assert max(len(line) for line in r.output.splitlines()) < 400, r.output[:1000]
    assert "characters)" in r.output or "x" not in r.output, r.output[:1000]


@pytest.mark.parametrize(("value", "shown"), [
    ("short", "'short'"), ("y" * 50, "'" + "y" * 40 + "'... (50 characters)"), (10**60000, "a number of about 60,001 digits"),
    (3, "3"), (True, "True"), (None, "None"), ([1] * 1000, "[1, 1, 1, 1, ...]"), ({"k": "v" * 100}, "{'k': 'vvvvvvvvvvvvvvvvv..."),
    ([10**60000], "a list holding a huge number"),
], ids=range(9))
def test_quoted_shortens_any_value(value, shown):
    from sim.errors import quoted

    assert quoted(value).startswith(shown.removesuffix("..."))
    assert len(quoted(value)) < 80


def test_check_strategy_weighs_the_two_instances_it_plays(small_machine):
    r = CliRunner().invoke(main, ["check-strategy", "solver:tt_mb=600", "--deals", "1"])  # one fits, two do not
    assert r.exit_code == 2 and "for 2 worker(s)" in r.output and "tt_mb=600" in r.output, r.output


PLUGIN = '''
from strategies.base import Strategy


class Hungry(Strategy):
    name = "hungry"

    def memory_use(self, rules):
        return {{"table=huge": {value}}}

    def choose(self, view, moves):
        return moves[0]
'''


@pytest.mark.parametrize(("n", "value", "said"), [(1, "2**40", "this machine has 1,000 MiB"),
                                                  (2, "'a lot'", "memory_use failed: TypeError"),
                                                  (3, "1 // 0", "memory_use failed: ZeroDivisionError")])
def test_a_plugins_own_memory_figure_is_weighed_and_its_failure_is_one_line(small_machine, n, value, said):
    (small_machine / f"hungry_plugin{n}.py").write_text(PLUGIN.format(value=value), encoding="utf-8")
    r = CliRunner().invoke(main, ["simulate", "-s", f"hungry_plugin{n}:Hungry", "-n", "10", "-j", "1", "-q"])
    assert r.exit_code == 2 and said in r.output and len(r.output.strip().splitlines()) == 1, r.output
    assert sorted(p.name for p in small_machine.iterdir() if p.name != "__pycache__") == [f"hungry_plugin{n}.py"]
