"""A missing third-party package is named in one line with its install command and exit code 2, not called a bug.

Each case runs the real command (``python -m bakers_dozen``) in a fresh interpreter
in which the named modules cannot be imported (a finder placed first on
``sys.meta_path`` refuses them), as on a machine where they were never installed.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from bakers_dozen.dependencies import DEPENDENCIES, missing_dependency

ROOT = Path(__file__).resolve().parent.parent

WITHOUT = """
import importlib.abc, runpy, sys
BLOCKED = set(sys.argv.pop(1).split(","))
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Absent())
sys.argv[0] = "bakers-dozen"
runpy.run_module("bakers_dozen", run_name="__main__", alter_sys=True)
"""


def command_without(blocked: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m bakers_dozen ARGS`` with the modules ``blocked`` (comma-separated top-level names) absent."""
    return subprocess.run([sys.executable, "-c", WITHOUT, blocked, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)


@pytest.mark.parametrize(("blocked", "args", "named"), [
    ("click", ["--help"], "click"),                        # at start-up, before the command's own error handling
    ("rich", ["deal", "--deal", "1"], "rich"),             # when the verb is imported
    ("pysol_cards", ["deal", "--deal", "24", "--source", "pysol"], "pysol-cards"),  # while the verb runs
])
def test_a_missing_dependency_is_one_line_naming_it_and_how_to_install_it(blocked, args, named):
    done = command_without(blocked, *args)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr and "bug" not in done.stderr, done.stderr
    assert lines[0].startswith("bakers-dozen: error: ") and f"package {named!r} is not installed" in lines[0], lines[0]
    assert f"-m pip install '{named}'" in lines[0], lines[0]


def test_a_missing_module_of_the_toolkit_itself_is_still_a_bug():
    """The wheel that left out ``strategies.sampling`` (issue 62) was a bug in bakers-dozen, and says so."""
    done = command_without("strategies", "play", "--deal", "1")
    assert done.returncode == 1 and "Traceback" in done.stderr and "this is a bug in bakers-dozen" in done.stderr, done.stderr


def test_only_missing_modules_of_dependencies_are_named():
    assert missing_dependency(ModuleNotFoundError("No module named 'numba.core'", name="numba.core")) is not None
    assert missing_dependency(ModuleNotFoundError("No module named 'sim.x'", name="sim.x")) is None
    assert missing_dependency(ImportError("cannot import name 'x' from 'numpy'", name="numpy")) is None
    assert missing_dependency(ValueError("numpy")) is None


def test_the_table_of_dependencies_is_pyprojects_list():
    """Every dependency pyproject.toml declares has its import names in `DEPENDENCIES`, installed under the name
    the table gives (as this environment's installed distributions say), and the table names nothing else."""
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    requirement_names = {re.match(r"[A-Za-z0-9_.\-]+(\[[^\]]*\])?", d).group(0).lower() for d in declared}
    assert set(DEPENDENCIES.values()) == requirement_names
    installed_as = packages_distributions()
    for module, requirement in DEPENDENCIES.items():
        base, _, extras = requirement.rstrip("]").partition("[")
        installed_by = {re.sub(r"[-_.]+", "-", d).lower() for d in installed_as.get(module, [])}
        assert installed_by & {base, *filter(None, extras.split(","))}, (module, requirement, installed_by)
