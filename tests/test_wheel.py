"""The wheel holds every file of the source tree's packages: an installed copy imports and reads what the editable install does.

The suite runs on an editable install, which reads the source tree directly and so
hides a package that the wheel leaves out (issue 62: ``strategies.sampling`` was
missing from pyproject.toml's package list, and an installed ``bakers-dozen --help``
failed). This test builds the wheel from a copy of the tree, as a user's ``python -m
build`` does, and compares its files with the tree's. CI (`.ci/package_check`)
goes further: it installs the wheel in a fresh environment and runs every verb.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
NOT_SHIPPED = frozenset({"tests", "benchmarks", "examples"})
"""Folders of the repository that hold Python code but are not part of the installed toolkit."""
BUILD_FILES = ("pyproject.toml", "README.md")


def shipped_packages() -> list[str]:
    """The top-level packages of the source tree (each folder beside pyproject.toml with an ``__init__.py``)."""
    return sorted(p.parent.name for p in ROOT.glob("*/__init__.py") if p.parent.name not in NOT_SHIPPED)


CACHES = ("*.pyc", "*.nbi", "*.nbc", "__pycache__")
"""What the interpreter and numba may leave beside the sources: not part of the package."""


def source_files(packages: list[str]) -> set[str]:
    """Every file under ``packages`` at any depth: the modules (``__init__.py`` or not), the ``py.typed`` markers
    and any data a package reads from itself (the shipped atlas), less the `CACHES`."""
    found = set()
    for package in packages:
        for path in (ROOT / package).rglob("*"):
            if path.is_file() and not any(path.match(c) or c in path.parts for c in CACHES):
                found.add(path.relative_to(ROOT).as_posix())
    return found


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A wheel built from a copy of the source tree (so the build's own folders stay out of the repository),
    with the build backend installed here (``--no-isolation``: no download while testing)."""
    pytest.importorskip("build", reason="the `build` package (in the test extra) builds the wheel")
    src, dist = tmp_path_factory.mktemp("src"), tmp_path_factory.mktemp("dist")
    for package in shipped_packages():
        shutil.copytree(ROOT / package, src / package, ignore=shutil.ignore_patterns(*CACHES))
    for name in BUILD_FILES:
        shutil.copy2(ROOT / name, src / name)
    done = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (built,) = dist.glob("*.whl")
    return built


def test_every_file_of_the_source_tree_is_in_the_wheel(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        shipped = set(z.namelist())
    missing = sorted(source_files(shipped_packages()) - shipped)
    assert missing == [], (f"the wheel leaves out {missing}: pyproject.toml's [tool.setuptools.packages.find] (modules) "
                           "or [tool.setuptools.package-data] (data files) must include them")


def test_the_wheel_ships_only_the_toolkit(wheel: Path) -> None:
    """No test, benchmark or example code is installed as a top-level package of its own."""
    with zipfile.ZipFile(wheel) as z:
        tops = {name.split("/")[0] for name in z.namelist() if not name.split("/")[0].endswith(".dist-info")}
    assert tops == set(shipped_packages())


def test_the_source_tree_has_the_five_layers() -> None:
    """The packages this test compares are the toolkit's layers (so an empty list cannot pass it)."""
    assert shipped_packages() == sorted(["bakers_dozen", "reports", "studies", "strategies", "sim"])
