"""Wording a reader meets: help, a closed pipe, the tour's output folders, replay titles, the grid's column order."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports import grid
from reports.replays import replay_title
from sim.rules import find_variant

ROOT = Path(__file__).resolve().parent.parent


def test_help_is_a_verb_for_the_command_and_each_verb():
    runner = CliRunner()
    assert "Usage: bakers-dozen [OPTIONS] COMMAND" in runner.invoke(main, ["help"], prog_name="bakers-dozen").output
    done = runner.invoke(main, ["help", "deal"], prog_name="bakers-dozen")
    assert done.exit_code == 0 and "Usage: bakers-dozen deal" in done.output
    assert runner.invoke(main, ["help", "nope"]).exit_code == 2


def test_a_closed_pipe_ends_quietly_with_success():
    p = subprocess.Popen([sys.executable, "-m", "bakers_dozen", "variants"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    p.stdout.close()  # the reader is gone before the first line, as `| head -0`
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and err == ""


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs the git checkout")
def test_what_the_readme_tour_writes_is_ignored_by_git():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    written = set(re.findall(r"--out (\S+)", text)) | set(re.findall(r"> (\S+\.\w+)", text))
    written |= {"bakers-dozen-compare/", "bakers-dozen-tournament/", "bakers-dozen-report/", "bakers-dozen-store/"}
    done = subprocess.run(["git", "check-ignore", "--no-index", *sorted(written)], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    assert set(done.stdout.split()) == written


def test_a_replay_title_says_each_fact_once():
    title = replay_title(find_variant("bakers-dozen"), 12, "heuristic", "lost", 30)
    assert title == "bakers-dozen, deal 12: heuristic (lost, 30 cards home)" and title.count("lost") == 1


def test_the_column_order_claims_no_direction_it_has_not_measured():
    text = grid.column_order({"heuristic": "heuristic", "home-then-random": "home-then-random"})
    assert "heuristic, home-then-random" in text and "climb" not in text and "not a ranking" in text


def test_the_default_study_players_have_human_names():
    from studies.study import player_names

    names = grid.player_names(["random:home_first=True", "sampling:preset=fast", "solver:nodes=200000,seconds=1000000.0"],
                              player_names())
    assert list(names.values()) == ["random (home first)", "honest sampling (fast)", "perfect play (solver)"]
