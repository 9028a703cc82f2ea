"""Light verbs stay light: a verb imports only the libraries it uses.

`bakers_dozen.cli` imports a verb's module when that verb runs, and `sim.deals`
loads the numba engine only when a deal is made, so ``bakers-dozen variants``
answers without numba, numpy's heavy users, or any of the libraries of the
study and report verbs. Each check runs in a fresh interpreter, since this
test process has imported everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from bakers_dozen.cli import VERBS, main

HEAVY = ("pandas", "pyarrow", "scipy", "matplotlib", "dask", "distributed", "joblib")
"""Libraries that only the study, solve and report verbs need."""


def _loaded_after(*args: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after importing the CLI and running ``args``."""
    code = (
        "import json, sys\n"
        "from click.testing import CliRunner\n"
        "from bakers_dozen.cli import main\n"
        f"result = CliRunner().invoke(main, {list(args)!r})\n"
        "assert result.exit_code == 0, result.output\n"
        "print(json.dumps(sorted({name.partition('.')[0] for name in sys.modules})))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_variants_loads_neither_numba_nor_the_study_libraries():
    loaded = _loaded_after("variants")
    assert loaded.isdisjoint({*HEAVY, "numba"}), loaded & {*HEAVY, "numba"}


@pytest.mark.parametrize("args", [("deal", "--deal", "7"), ("play", "--deal", "7", "--strategy", "greedy")])
def test_deal_and_play_load_no_study_library(args):
    # numba itself imports scipy (to check its version), so scipy comes with every verb that plays
    heavy = set(HEAVY) - {"scipy"}
    loaded = _loaded_after(*args)
    assert "numba" in loaded
    assert loaded.isdisjoint(heavy), loaded & heavy


@pytest.mark.parametrize("args", [("atlas", "show", "-v", "bakers-dozen", "--deal", "417"),
                                  ("atlas", "show", "-v", "good-measure", "--unknown", "--json")])
def test_an_atlas_look_up_reads_two_files_and_loads_no_solver(args):
    # pyarrow reads the files; pandas alone would cost a look-up a second, numba and the runner more
    loaded = _loaded_after(*args)
    assert "pyarrow" in loaded
    assert loaded.isdisjoint({*HEAVY, "numba"} - {"pyarrow"}), loaded & ({*HEAVY, "numba"} - {"pyarrow"})


def test_the_cli_module_imports_no_verb():
    loaded = _loaded_after("--version")
    assert loaded.isdisjoint({*HEAVY, "numba", "numpy"})


def test_every_verb_is_found_under_its_name():
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(VERBS)
    for name in VERBS:
        command = main.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name
    assert main.get_command(ctx, "no-such-verb") is None
