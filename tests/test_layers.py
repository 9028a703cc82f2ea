"""The import contract: the packages are layers, each imports only the ones below it, and no module is in a cycle.

From the top: the command line (`bakers_dozen`), the reports (`reports`), the
studies (`studies`: the runner and the store, each cut into modules of one idea, statistics), the players (`strategies`,
with the arena that plays them, `strategies.play` and `strategies.batch`), and
the game itself (`sim`). Imports inside functions count as much as those at
the top of a file: a late import hides a dependency, it does not remove it.
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = ("bakers_dozen", "reports", "studies", "strategies", "sim")
"""Top to bottom; a module may import its own package and those after it."""
PLUGINS = "examples"
"""Example plug-ins: user code, which may use the players and the game and nothing above them."""
ARENA = ("strategies.play", "strategies.batch", "strategies.check")
"""Inside `strategies`: the modules that play a strategy; no player imports them."""
RUN_LAYERS = (
    ("studies.runner",),
    ("studies.backends",),
    ("studies.reuse", "studies.watchdog", "studies.manifests"),
    ("studies.chunks", "studies.spec", "studies.reading"),
    ("studies.plan", "studies.store"),
    ("studies.records", "studies.swap"),
    ("studies.rows",),
    ("studies.files",),
)
"""Inside `studies`, top to bottom, the modules a run goes through once each: its orchestration, the backends that
play its chunks, what it reuses of the store, watches and records, the worker's side of a chunk, the run's spec
and reading rows back, the plan and the store (its folders, keys and locks), the store's own operations on a
key's records and a forced run's swap, the chunk file format, and the files; none imports one of its own tier
or above."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules() -> dict[str, Path]:
    return {module_name(p): p for package in (*LAYERS, PLUGINS) for p in sorted((ROOT / package).rglob("*.py"))}


def imported(path: Path, modules: dict[str, Path]) -> set[str]:
    """The project modules ``path`` imports, anywhere in it (``from pkg import mod`` counts as ``pkg.mod``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return {name for name in found if name in modules}


def layer_of(module: str) -> int:
    """The layer's place from the top; a plug-in sits with the players."""
    package = module.split(".")[0]
    return LAYERS.index("strategies" if package == PLUGINS else package)


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = project_modules()
    return {name: imported(path, modules) - {name} for name, path in modules.items()}


def test_every_package_is_a_layer():
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "benchmarks", PLUGINS}
    assert on_disk == set(LAYERS), f"packages not placed in a layer: {sorted(on_disk - set(LAYERS))}"


def test_each_layer_imports_only_the_layers_below_it(graph):
    upward = [f"{m} imports {t}" for m, targets in graph.items() for t in targets if layer_of(t) < layer_of(m)]
    assert upward == []


def test_players_do_not_import_the_arena(graph):
    players = [m for m in graph if m.startswith("strategies.") and not m.startswith(ARENA)]
    wrong = [f"{m} imports {t}" for m in players for t in graph[m] if t.startswith(ARENA)]
    assert wrong == []


def test_a_runs_modules_import_only_the_tiers_below_them(graph):
    tier = {m: i for i, modules in enumerate(RUN_LAYERS) for m in modules}
    assert set(tier) <= set(graph), sorted(set(tier) - set(graph))
    wrong = [f"{m} imports {t}" for m in tier for t in graph[m] if t in tier and tier[t] <= tier[m]]
    assert wrong == []


def test_each_module_of_studies_reads_in_one_sitting():
    long = {p.name: n for p in sorted((ROOT / "studies").glob("*.py")) if (n := len(p.read_text().splitlines())) > 550}
    assert long == {}


def test_no_module_is_in_an_import_cycle(graph):
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_the_contract_sees_an_upward_import(tmp_path):
    """The checker itself: an import of the command line from the game is found."""
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from bakers_dozen.cli import main\n    from sim import engine\n")
    found = imported(module, {"bakers_dozen.cli": module, "sim.engine": module, "sim": module})
    assert found == {"bakers_dozen.cli", "sim", "sim.engine"}
    assert layer_of("bakers_dozen.cli") < layer_of("sim.engine")
