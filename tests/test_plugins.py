"""Plug-in strategies that fail in every way a third party's code can: one line and exit 2, never a
traceback or a silent exit, and the built-ins keep working whatever a broken plug-in does."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint

import pytest
from click.testing import CliRunner

import strategies as registry
from bakers_dozen.cli import main
from sim.rules import Rules
from strategies import StrategyError, load_strategy

RULES = Rules()

_names = itertools.count()

GOOD = """
from strategies.greedy import GreedyStrategy

class Plug(GreedyStrategy):
    name = "plug"
"""

BROKEN = {
    # case: (module text, spec suffix, what the one line must say)
    "import raises": ("raise RuntimeError('no config file')\n", ":Plug",
                      "importing strategy module {m!r} failed: RuntimeError: no config file"),
    "syntax": ("def broken(:\n", ":Plug", "syntax error in"),
    "indentation": ("x = 1\n  y = 2\n", ":Plug", "syntax error in"),
    "exit at import": ("import sys\nsys.exit(3)\n", ":Plug", "called sys.exit(3)"),
    "exit(None) at import": ("raise SystemExit\n", ":Plug", "called sys.exit(None)"),
    "missing dependency": ("import no_such_dependency_xyz\n", ":Plug",
                           "the plug-in needs module 'no_such_dependency_xyz', which is not installed"),
    "missing dependency at init": (GOOD + "    def __init__(self, **kw):\n        import no_such_dep_xyz\n", ":Plug",
                                   "needs module 'no_such_dep_xyz', which is not installed"),
    "missing dependency in a package": ("import plug_absent_pkg_xyz.sub\n", ":Plug", "needs module 'plug_absent_pkg_xyz'"),
    "keyboard interrupt at import": ("raise KeyboardInterrupt\n", ":Plug", None),
    "missing sub-dependency": ("from strategies import no_such_sub_xyz\n", ":Plug", "no_such_sub_xyz"),
    "init raises": (GOOD + "    def __init__(self, **kw):\n        raise KeyError('k')\n", ":Plug", "creating strategy"),
    "init exits": (GOOD + "    def __init__(self, **kw):\n        raise SystemExit(5)\n", ":Plug", "called sys.exit(5)"),
    "init other signature": (GOOD + "    def __init__(self):\n        super().__init__()\n", ":Plug:x=1", "TypeError"),
    "init skips the base": (GOOD + "    def __init__(self, **kw):\n        pass\n", ":Plug", "did not run Strategy.__init__"),
    "no such class": (GOOD, ":Nope", "has no class 'Nope'"),
    "not a class": (GOOD + "thing = 42\n", ":thing", "is not a Strategy subclass"),
    "not a strategy": (GOOD + "class Other:\n    pass\n", ":Other", "is not a Strategy subclass"),
    "bad PARAMETERS": (GOOD + "    PARAMETERS = 5\n", ":Plug", "'PARAMETERS' must map"),
    "bad name attribute": (GOOD + "    name = 3\n", ":Plug", "'name' must be 1 to 64 letters"),
    "name with a path": (GOOD + "    name = '../../x'\n", ":Plug", "'name' must be 1 to 64 letters"),
    "name with a newline": (GOOD + "    name = 'a\\nb'\n", ":Plug", "'name' must be 1 to 64 letters"),
    "a built-in's name": (GOOD + "    name = 'greedy'\n", ":Plug", "('greedy', '1') are a built-in strategy's"),
    "a built-in's name, set in a subclass": ("from strategies.heuristic import HeuristicStrategy as Plug\n"
                                             "class Mine(Plug):\n    name = 'heuristic'\n", ":Mine",
                                             "('heuristic', '2') are a built-in strategy's"),
    "bad version": (GOOD + "    version = 2\n", ":Plug", "'version' must be 1 to 64 letters"),
    "bad Param kind": (GOOD + "    PARAMETERS = {'n': __import__('strategies').Param(list, [], 'x')}\n", ":Plug", "TypeError"),
    "bad peeks": (GOOD + "    peeks = 'yes'\n", ":Plug", "'peeks' must be True or False"),
    "module __getattr__ raises": (GOOD + "def __getattr__(name):\n    raise ValueError('lazy')\n", ":Lazy", "ValueError: lazy"),
    "hostile __str__": ("class E(Exception):\n    def __str__(self):\n        raise RuntimeError\nraise E()\n", ":Plug",
                        "cannot be shown"),
    "BaseException subclass": ("class Stop(BaseException):\n    pass\nraise Stop('halt')\n", ":Plug", "Stop: halt"),
    "recursion": ("def f():\n    return f()\nf()\n", ":Plug", "RecursionError"),
    "compiled raises": (GOOD + "    def compiled(self, rules):\n        raise ZeroDivisionError('x')\n", ":Plug", "compiled() failed"),
    "compiled exits": (GOOD + "    def compiled(self, rules):\n        raise SystemExit(0)\n", ":Plug", "called sys.exit(0)"),
    "compiled wrong type": (GOOD + "    def compiled(self, rules):\n        return (1, 2)\n", ":Plug", "returned tuple"),
}


def run(*args: str):
    return CliRunner().invoke(main, list(args))


def assert_one_line_error(result, *needles: str) -> None:
    """Exit 2, nothing but one `bakers-dozen: error:` line on stderr, mentioning each needle."""
    assert result.exit_code == 2, (result.exit_code, result.output, result.exception)
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])


@pytest.fixture
def plugin_dir(tmp_path, monkeypatch):
    """The current directory is an empty folder for plug-in files; sys.path and sys.modules are restored."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = set(sys.modules)
    yield tmp_path
    for name in set(sys.modules) - before:
        if name.startswith("plug_"):
            del sys.modules[name]


def write_plugin(folder, text: str) -> str:
    """A module file with a fresh name in ``folder``; returns the module name."""
    name = f"plug_{next(_names)}"
    (folder / f"{name}.py").write_text(textwrap.dedent(text))
    return name


@pytest.mark.parametrize("case", sorted(c for c in BROKEN if BROKEN[c][2] is not None))
def test_a_broken_plugin_is_one_line_and_exit_2(plugin_dir, case):
    text, suffix, needle = BROKEN[case]
    module = write_plugin(plugin_dir, text)
    path_before = list(sys.path)
    r = run("play", "--deal", "1", "--strategy", module + suffix)
    assert_one_line_error(r, needle.format(m=module))
    assert sys.path == path_before, "loading a plug-in must not leave the current directory on sys.path"


BUILTIN_NAMES = ("random", "greedy", "heuristic", "lookahead", "solver", "sampling")


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_after_any_broken_plugin_the_builtins_load_and_sys_path_is_as_it_was(plugin_dir, case):
    text, suffix, needle = BROKEN[case]
    module = write_plugin(plugin_dir, text)
    path_before = list(sys.path)
    with pytest.raises((StrategyError, KeyboardInterrupt)) as info:
        registry.compiled_policy(load_strategy(module + suffix), RULES)
    assert (info.type is KeyboardInterrupt) == (needle is None)
    assert sys.path == path_before and os.getcwd() not in sys.path
    for name in BUILTIN_NAMES:
        assert type(load_strategy(name)) is registry.BUILTINS[name]
    assert set(BUILTIN_NAMES) <= set(registry.available())


def test_a_missing_dependency_is_told_apart_from_a_missing_plugin(plugin_dir):
    dependent = write_plugin(plugin_dir, "import notinstalled_xyz\n" + GOOD)
    with pytest.raises(StrategyError, match=f"importing strategy module '{dependent}' failed: the plug-in needs module "
                                            "'notinstalled_xyz', which is not installed"):
        load_strategy(f"{dependent}:Plug")
    with pytest.raises(StrategyError, match="cannot import strategy module 'plug_nowhere_xyz': not found") as info:
        load_strategy("plug_nowhere_xyz:Plug")
    assert "needs module" not in str(info.value)


def test_plugins_load_from_a_package_in_the_current_directory_and_leave_sys_path_alone(plugin_dir):
    package = plugin_dir / "plug_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "players.py").write_text(GOOD)
    path_before = list(sys.path)
    strategy = load_strategy("plug_pkg.players:Plug")
    assert strategy.name == "plug"
    assert sys.path == path_before
    r = run("play", "--deal", "2", "--strategy", "plug_pkg.players:Plug")
    assert r.exit_code == 0, r.output
    assert "outcome:" in r.output


def test_a_top_level_plugin_module_needs_no_dot(plugin_dir):
    module = write_plugin(plugin_dir, GOOD)
    assert load_strategy(f"{module}:Plug").name == "plug"


def test_a_top_level_module_is_loaded_from_its_file_without_the_current_directory_on_the_path(plugin_dir):
    module = write_plugin(plugin_dir, "import os, sys\nCWD_ON_PATH = os.getcwd() in sys.path\n" + GOOD
                          + "    PARAMETERS = {'n': __import__('strategies').Param(int, 1, 'how many')}\n")
    path_before = list(sys.path)
    assert load_strategy(f"{module}:Plug:n=5").params == {"n": 5}
    loaded = sys.modules[module]
    assert loaded.CWD_ON_PATH is False and loaded.__file__ == str(plugin_dir / f"{module}.py")
    assert sys.path == path_before


def test_a_module_spec_with_parameters_is_a_registered_name_not_a_module(plugin_dir):
    module = write_plugin(plugin_dir, GOOD)  # NAME:key=value: '=' is never in a class name, so no module is loaded
    with pytest.raises(StrategyError, match=f"unknown strategy '{module}'.*module:ClassName"):
        load_strategy(f"{module}:n=5")
    assert module not in sys.modules


FIRST_MOVE = """
from strategies.greedy import GreedyStrategy


class FirstMove(GreedyStrategy):
    name = "firstmove"
"""


@pytest.mark.slow  # three fresh processes and two workers: about 30 s on a loaded 2-core machine
def test_the_installed_command_loads_a_module_file_of_the_current_directory(tmp_path):
    """As a user types it: ``bakers-dozen play --strategy firstmove:FirstMove`` beside firstmove.py, in a fresh
    process whose path does not hold the current directory (``-P``, as for the installed script), and a
    simulate whose worker processes load it again."""
    (tmp_path / "firstmove.py").write_text(FIRST_MOVE)
    cli = "import sys\nfrom bakers_dozen.cli import main\nsys.argv[0] = 'bakers-dozen'\nmain()\n"

    def command(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-c", cli, *args], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600, check=False)

    played = command("play", "--deal", "7", "--strategy", "firstmove:FirstMove")
    assert played.returncode == 0 and "strategy firstmove" in played.stdout and "outcome:" in played.stdout, played.stderr
    run_ = command("simulate", "--strategy", "firstmove:FirstMove", "--deals", "40", "--chunk", "20", "--jobs", "2",
                   "--tier", "python", "--store", str(tmp_path / "store"))
    assert run_.returncode == 0, run_.stderr
    missing = command("play", "--deal", "7", "--strategy", "secondmove:FirstMove")
    assert missing.returncode == 2 and "not found on the Python path or in the current directory" in missing.stderr


@pytest.mark.parametrize("spec", [".mod:Plug", "..mod:Plug", "../x:Y", "/abs/path:Y", "a/b:C", "pkg..mod:C", "pkg.mod.:C",
                                  "pkg.1mod:C", "C:\\x\\y:Z", "pkg.mod:Not A Name", "pkg.mod:1x", "pkg.mod:"])
def test_relative_and_path_like_module_specs_are_refused_in_one_line(plugin_dir, spec):
    with pytest.raises(StrategyError):
        load_strategy(spec)
    assert_one_line_error(run("play", "--deal", "1", "--strategy", spec))


def test_a_missing_module_is_not_reported_as_a_missing_dependency(plugin_dir):
    r = run("play", "--deal", "1", "--strategy", "plug_absent_xyz.players:Plug")
    assert_one_line_error(r, "cannot import strategy module 'plug_absent_xyz.players'", "not found")
    assert "dependency" not in r.stderr


def test_builtin_names_with_parameters_still_work(plugin_dir):
    assert load_strategy("random:home_first=true").params == {"home_first": True}
    assert load_strategy(" heuristic : preset=builder ").params["preset"] == "builder"


def test_a_file_named_like_a_builtin_in_the_current_directory_does_not_replace_it(plugin_dir):
    (plugin_dir / "greedy.py").write_text("raise SystemExit(9)\n")
    assert type(load_strategy("greedy")) is registry.BUILTINS["greedy"]
    assert run("play", "--deal", "1", "--strategy", "greedy").exit_code == 0


# --- entry points ------------------------------------------------------------------------------------


def _fake_entry_points(monkeypatch, *eps: EntryPoint) -> None:
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: list(eps) if group == registry.ENTRY_POINT_GROUP else [])


def _ep(name: str, value: str) -> EntryPoint:
    return EntryPoint(name=name, value=value, group=registry.ENTRY_POINT_GROUP)


@pytest.mark.parametrize("value", ["plug_absent_xyz:Thing", "strategies.base:NoSuchThing", "strategies.base:Param",
                                   "strategies.base", "{module}:Plug"])
def test_a_broken_entry_point_does_not_stop_the_builtins(plugin_dir, monkeypatch, value):
    module = write_plugin(plugin_dir, "import sys\nsys.exit(4)\n")
    sys.path.insert(0, str(plugin_dir))
    _fake_entry_points(monkeypatch, _ep("good", "examples.lowest_first:LowestFirst"), _ep("bad", value.format(module=module)))
    r = run("play", "--deal", "1", "--strategy", "greedy")
    assert r.exit_code == 0 and "outcome:" in r.output, r.output
    listing = run("strategies")
    assert listing.exit_code == 0
    for name in ("random", "greedy", "heuristic", "lookahead", "solver", "sampling", "good"):
        assert name in listing.stdout
    warnings = listing.stderr.splitlines()
    assert len(warnings) == 1 and "entry point 'bad'" in warnings[0], listing.stderr
    assert_one_line_error(run("play", "--deal", "1", "--strategy", "bad"), "entry point 'bad'")
    assert run("play", "--deal", "1", "--strategy", "good:max_moves=5").exit_code == 0


HOSTILE_OBJECTS = """
from strategies.greedy import GreedyStrategy


class _Hostile:
    @property
    def __class__(self):
        raise RuntimeError("no class for you")


thing = _Hostile()


class Meta(type):
    def __subclasscheck__(cls, sub):
        raise RuntimeError("no subclass check")

    def __getattribute__(cls, name):
        if name == "name":
            raise RuntimeError("no name")
        return type.__getattribute__(cls, name)


class Plug(GreedyStrategy, metaclass=Meta):
    pass
"""


@pytest.mark.parametrize("attr", ["thing", "Plug"])
def test_an_entry_point_whose_object_fails_when_looked_at_does_not_stop_the_builtins(plugin_dir, monkeypatch, attr):
    module = write_plugin(plugin_dir, HOSTILE_OBJECTS)
    sys.path.insert(0, str(plugin_dir))
    _fake_entry_points(monkeypatch, _ep("hostile", f"{module}:{attr}"))
    assert set(BUILTIN_NAMES) <= set(registry.available())
    assert len(registry.broken_plugins()) == 1 and "entry point 'hostile'" in registry.broken_plugins()[0]
    listing = run("strategies")
    assert listing.exit_code == 0 and all(name in listing.stdout for name in BUILTIN_NAMES), listing.output
    assert_one_line_error(run("play", "--deal", "1", "--strategy", "hostile"), "entry point 'hostile'", "RuntimeError")


def test_an_entry_point_of_a_module_not_installed_is_not_a_missing_dependency(plugin_dir, monkeypatch):
    dependent = write_plugin(plugin_dir, "import notinstalled_xyz\n" + GOOD)
    sys.path.insert(0, str(plugin_dir))
    _fake_entry_points(monkeypatch, _ep("gone", "plug_uninstalled_xyz.players:Plug"), _ep("needy", f"{dependent}:Plug"))
    broken = registry.broken_plugins()
    assert any("entry point 'gone'" in b and "names module 'plug_uninstalled_xyz.players', which is not installed" in b
               and "needs" not in b for b in broken), broken
    assert any("entry point 'needy'" in b and "needs module 'notinstalled_xyz', which is not installed" in b
               for b in broken), broken
    assert_one_line_error(run("play", "--deal", "1", "--strategy", "needy"), "needs module 'notinstalled_xyz'")


def test_an_entry_point_cannot_shadow_a_builtin(monkeypatch):
    _fake_entry_points(monkeypatch, _ep("greedy", "examples.lowest_first:LowestFirst"))
    assert type(load_strategy("greedy")) is registry.BUILTINS["greedy"]
    assert registry.available()["greedy"] is registry.BUILTINS["greedy"]
    assert any("built-in" in line for line in registry.broken_plugins())


def test_unreadable_entry_point_metadata_does_not_stop_the_builtins(monkeypatch):
    def broken(group):
        raise OSError("metadata unreadable")

    monkeypatch.setattr(registry, "entry_points", broken)
    assert run("play", "--deal", "1", "--strategy", "greedy").exit_code == 0
    assert "greedy" in registry.available()
    assert len(registry.broken_plugins()) == 1


def test_entry_points_of_a_real_distribution_on_the_path(plugin_dir, monkeypatch):
    """A tiny installed distribution (a dist-info folder on sys.path) registering a good and a broken plug-in."""
    module = write_plugin(plugin_dir, GOOD + "\nraise_it = 1\n")
    broken = write_plugin(plugin_dir, "raise ImportError('half installed')\n")
    info = plugin_dir / "plugdist-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugdist\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[bakers_dozen.strategies]\nplugged = {module}:Plug\nhalf = {broken}:Plug\n")
    monkeypatch.syspath_prepend(str(plugin_dir))
    assert load_strategy("plugged").name == "plug"
    assert "plugged" in registry.available() and "half" not in registry.available()
    assert run("play", "--deal", "1", "--strategy", "plugged").exit_code == 0
    assert_one_line_error(run("play", "--deal", "1", "--strategy", "half"), "half installed")
    listing = run("strategies")
    assert listing.exit_code == 0 and "plugged" in listing.stdout
    assert listing.stderr.count("\n") == 1 and "'half'" in listing.stderr


def test_a_compiled_policy_numba_cannot_compile_is_the_plugins_error(plugin_dir):
    module = write_plugin(plugin_dir, GOOD.replace("class Plug", """
import numba as nb
import numpy as np
from strategies.base import CompiledPolicy


@nb.njit
def untyped(st, prm, moves, n, pparams, rng, scratch):
    return undefined_name_xyz(n)


class Plug""") + """
    def compiled(self, rules):
        return CompiledPolicy(untyped, np.zeros(1, dtype=np.int64))
""")
    assert_one_line_error(run("play", "--deal", "1", "--strategy", f"{module}:Plug"),
                          "its compiled policy does not compile", "undefined_name_xyz")
    assert run("play", "--deal", "1", "--tier", "python", "--strategy", f"{module}:Plug").exit_code == 0


def test_forcing_the_compiled_tier_of_a_python_only_strategy_is_one_line(plugin_dir):
    module = write_plugin(plugin_dir, GOOD + "    def compiled(self, rules):\n        return None\n")
    assert_one_line_error(run("play", "--deal", "1", "--tier", "compiled", "--strategy", f"{module}:Plug"),
                          "has no compiled tier")


def test_a_plugin_may_reuse_a_builtin_name_under_another_version(plugin_dir):
    module = write_plugin(plugin_dir, GOOD + "    name = 'greedy'\n    version = '2'\n")
    assert re.fullmatch(r"greedy@2#[0-9a-f]{12}", load_strategy(f"{module}:Plug").identity)  # its code digest too
