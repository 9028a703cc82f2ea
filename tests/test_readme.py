"""The README's commands run as written, with the environment `make run` builds.

Every fenced ``sh`` block preceded by ``<!-- readme-test -->`` is run line by
line with bash, in a fresh folder, with the test's own ``bin`` folder (``.venv/bin``
under `make test-slow`) first on the PATH, as after ``. .venv/bin/activate``. In a
block written as a terminal session (lines starting with ``$ ``) only those lines
run. The folder holds a link to the repository's ``examples/`` only, which the
plug-in commands name as a module of the current folder.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MARK = "<!-- readme-test -->"
BLOCK = re.compile(re.escape(MARK) + r"\s*\n```sh\n(.*?)\n```", re.S)
TIMEOUT = 900


def readme_commands(text: str) -> list[str]:
    """The command lines of the README's marked blocks, in order."""
    commands = []
    for body in BLOCK.findall(text):
        lines = [line.strip() for line in body.splitlines()]
        if any(line.startswith("$ ") for line in lines):
            lines = [line[2:] for line in lines if line.startswith("$ ")]
        commands += [line for line in lines if line and not line.startswith("#")]
    return commands


def test_every_marked_block_is_found():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert text.count(MARK) == len(BLOCK.findall(text)), "a readme-test mark that is not right above a ```sh block"
    commands = readme_commands(text)
    assert any(c.startswith("bakers-dozen variants") for c in commands)
    assert any(c.startswith("bakers-dozen verify game.json") for c in commands)
    assert any(c.startswith("bakers-dozen check-strategy") for c in commands)
    assert any(c.startswith("bakers-dozen report ") for c in commands)


@pytest.mark.slow
def test_the_readme_commands_run_as_written(tmp_path):
    bin_dir = Path(sys.executable).parent
    assert shutil.which("bakers-dozen", path=str(bin_dir)), f"bakers-dozen is not installed in {bin_dir} (run make test-slow)"
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "VIRTUAL_ENV": str(bin_dir.parent)}
    (tmp_path / "examples").symlink_to(ROOT / "examples", target_is_directory=True)
    for command in readme_commands((ROOT / "README.md").read_text(encoding="utf-8")):
        r = subprocess.run(["bash", "-c", command], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
        assert r.returncode == 0, f"{command}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
    assert (tmp_path / "bakers-dozen-store").is_dir()
    for folder in ("bakers-dozen-compare", "bakers-dozen-tournament", "my-report"):
        assert (tmp_path / folder / "report.html").is_file(), folder
