"""Compile once per machine: a policy's game loops come from numba's disk cache in every process after the first.

`strategies.loops` generates, per compiled policy, a module holding the
engine's loops with the policy as a module attribute. The proof that a second
process does not compile is numba's own count of cache hits and misses in that
process, not its wall time.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import numba as nb
import pytest

from sim.compile_cache import cache_folder
from strategies import loops
from strategies.greedy import greedy_policy

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''
"""A plug-in policy for the cache test ({tag})."""
import numba as nb
import numpy as np

from sim.engine import FOUNDATION, move_to
from strategies.base import CompiledPolicy, Strategy


@nb.njit(cache=True)
def home_or_first(st, prm, moves, n, pparams, rng, scratch):
    for i in range(n):
        if move_to(moves[i]) >= FOUNDATION:
            return i
    return 0 if n > 0 else -1


class HomeOrFirst(Strategy):
    name = "home-or-first"

    def compiled(self, rules):
        return CompiledPolicy(home_or_first, np.zeros(1, dtype=np.int64))
'''

PLAY = '''
import json
import numpy as np
from sim.rules import resolve_variant
from strategies.batch import play_batch
from strategies.loops import loops_for
from strategies import load_strategy

strategy = load_strategy({spec!r})
rules = resolve_variant("bakers-dozen")
result = play_batch(rules, strategy, np.arange(1, 41))
stats = loops_for(strategy.compiled(rules).function).play_deals.stats
print(json.dumps({{"hits": sum(stats.cache_hits.values()), "misses": sum(stats.cache_misses.values()),
                   "won": int((result.outcome == 1).sum()), "moves": int(result.moves.sum())}}))
'''


def run_play(spec: str, env: dict[str, str]) -> dict[str, int]:
    """Play 40 deals with ``spec`` in a fresh process; numba's cache counts of the loop there."""
    out = subprocess.run([sys.executable, "-c", PLAY.format(spec=spec)], env=env, capture_output=True, text=True,
                         timeout=600, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["builtin", "plugin"])
def test_a_second_process_loads_the_loop_from_the_cache(kind: str, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    if kind == "plugin":  # a policy no process has compiled: the first process must compile, the second not
        (tmp_path / "cachepkg").mkdir()
        (tmp_path / "cachepkg" / "__init__.py").write_text("")
        # a tag no earlier session used: the loop's cache file is named by the module's text, and tmp_path's
        # name repeats from one pytest session to the next on the same machine
        (tmp_path / "cachepkg" / "plug.py").write_text(PLUGIN.format(tag=uuid.uuid4().hex))
        spec = "cachepkg.plug:HomeOrFirst"
    else:  # the machine's cache may be warm already: then both load
        spec = "greedy"
    first = run_play(spec, env)
    second = run_play(spec, env)
    if kind == "plugin":
        assert first["misses"] == 1 and first["hits"] == 0
    assert second["misses"] == 0 and second["hits"] == 1
    assert (first["won"], first["moves"]) == (second["won"], second["moves"])


def test_the_generated_loops_are_the_engines_with_the_policy_as_a_global() -> None:
    text = loops._source("strategies.greedy", "greedy_policy")
    tree = ast.parse(text)
    functions = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    assert set(functions) == {"play_game", "play_deals"}
    for f in functions.values():
        assert "policy" not in [a.arg for a in f.args.args]
    assert ast.unparse(functions["play_deals"].decorator_list[0]) == "nb.njit(cache=True, nogil=True)"
    assert ast.unparse(functions["play_game"].decorator_list[0]) == "nb.njit(cache=True, nogil=True, inline='always')"
    assert "from strategies.greedy import greedy_policy as policy" in text
    calls = [n for n in ast.walk(functions["play_deals"]) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "play_game"]
    assert len(calls) == 1 and "policy" not in ast.unparse(calls[0])


def test_a_change_of_the_policy_source_gives_a_new_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "digestplug.py"
    path.write_text(PLUGIN.format(tag="one"))
    monkeypatch.syspath_prepend(str(tmp_path))
    import digestplug  # noqa: PLC0415 - made by this test

    before = loops._digest("digestplug")
    assert loops._digest("digestplug") == before
    path.write_text(PLUGIN.format(tag="two"))
    assert loops._digest("digestplug") != before
    monkeypatch.delitem(sys.modules, "digestplug")
    assert digestplug.home_or_first is not None


def test_the_loop_folder_is_in_numbas_cache_folder_for_these_sources(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path) -> None:
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "numba"))
    assert loops.loop_folder() == cache_folder() / "bakers-dozen-loops"
    assert loops.loop_folder().parent.parent == tmp_path / "numba"
    monkeypatch.delenv("NUMBA_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert loops.loop_folder().parent.parent == tmp_path / "xdg" / "bakers-dozen"


def test_a_policy_that_is_not_a_module_attribute_gets_the_engines_loops() -> None:
    @nb.njit
    def local_policy(st, prm, moves, n, pparams, rng, scratch):  # noqa: ANN001, ANN202
        return 0

    assert loops._module_name(local_policy) is None
    assert loops._module_name(greedy_policy) == ("strategies.greedy", "greedy_policy")
    assert loops.loops_for(local_policy).play_game.__module__ == loops.__name__  # the wrapper of the engine's own
