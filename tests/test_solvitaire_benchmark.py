"""benchmarks/solvitaire.py's side of the comparison, without Solvitaire: the deal and rules files it writes
follow Solvitaire's stated format (piles bottom to top, ``10`` for ten, cards home in ``"foundations"``), and
its reading of a classification (checked against a stand-in binary)."""

from __future__ import annotations

import importlib.util
import json
import stat
import sys
from pathlib import Path

import pytest

from sim.cards import DECK_SIZE, parse_card
from sim.deals import make_deal
from sim.rules import find_variant, resolve_variant

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():  # noqa: ANN201
    spec = importlib.util.spec_from_file_location("benchmark_solvitaire", ROOT / "benchmarks" / "solvitaire.py")
    module = importlib.util.module_from_spec(spec)
    path = list(sys.path)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = path
    yield module
    sys.modules.pop(spec.name, None)


def test_card_names_write_ten_as_10_and_read_back_as_the_same_card(bench):
    assert [bench.card_name(parse_card(t)) for t in ("AC", "TD", "KS", "9H")] == ["AC", "10D", "KS", "9H"]
    names = [bench.card_name(c) for c in range(DECK_SIZE)]
    assert len(set(names)) == DECK_SIZE and not any("T" in n for n in names)
    assert [parse_card(n) for n in names] == list(range(DECK_SIZE))


@pytest.mark.parametrize("variant, deal", [("bakers-dozen", 1), ("bakers-dozen", 977), ("spanish-patience", 5)])
def test_a_deal_file_lists_each_pile_bottom_to_top_as_the_deal_lays_it_out(bench, variant, deal):
    rules = find_variant(variant)
    position = make_deal(rules, deal).position
    doc = bench.deal_document(position)
    assert set(doc) == {"tableau piles"}  # nothing starts home
    lines = [line.split() for line in position.to_text().splitlines() if line and not line.startswith("#")]
    assert doc["tableau piles"] == [[n.replace("T", "10") for n in line] for line in lines]  # the text form: bottom to top
    piles = [[parse_card(n) for n in pile] for pile in doc["tableau piles"]]
    assert piles == [list(p) for p in position.piles]
    assert sorted(c for p in piles for c in p) == list(range(DECK_SIZE))
    if rules.kings_to_bottom:  # the layout after the kings went down: no king above a non-king
        for pile in doc["tableau piles"]:
            kings = [n.startswith("K") for n in pile]
            assert kings == sorted(kings, reverse=True)


def test_the_eight_by_six_deal_file_puts_the_aces_home_in_foundations(bench):
    rules = resolve_variant(str(ROOT / "benchmarks" / "variants" / "eight-by-six.toml"))
    doc = bench.deal_document(make_deal(rules, 1529).position)
    assert doc["foundations"] == ["AC", "AD", "AH", "AS"]
    assert [len(p) for p in doc["tableau piles"]] == [6] * 8
    cards = doc["foundations"] + [n for p in doc["tableau piles"] for n in p]
    assert sorted(parse_card(n) for n in cards) == list(range(DECK_SIZE))


def test_the_rules_files_say_what_the_toolkit_plays(bench):
    assert bench.solvitaire_rules(find_variant("bakers-dozen")) == {  # the workplace's hand-written file for it
        "tableau piles": {"count": 13, "build policy": "any-suit", "spaces policy": "no-build", "diagonal deal": False,
                          "move built group": "no", "face up cards": "all"},
        "foundations": {"present": True, "initial cards": "none", "base card": "A", "removable": False,
                        "only complete pile moves": False},
    }
    spanish = bench.solvitaire_rules(resolve_variant(bench.GAMES["spanish-worrying-back"]))
    assert spanish["foundations"]["removable"] is True and spanish["tableau piles"]["spaces policy"] == "any"
    castle = bench.solvitaire_rules(resolve_variant(bench.GAMES["eight-by-six"]))
    assert castle["tableau piles"]["count"] == 8 and castle["tableau piles"]["spaces policy"] == "any"
    kings = bench.solvitaire_rules(find_variant("kings-into-empty"))
    assert kings["tableau piles"]["spaces policy"] == "kings"


@pytest.mark.parametrize("variant, says", [("dick-1883", "face down"), ("other-suit", "other-suit"),
                                           ("castles-in-spain", "face down")])
def test_rules_solvitaire_cannot_say_are_refused(bench, variant, says):
    with pytest.raises(bench.SolvitaireError, match=says):
        bench.solvitaire_rules(find_variant(variant))


def _stand_in(tmp_path: Path, output: str, status: int = 0) -> Path:
    binary = tmp_path / "stand-in"
    binary.write_text(f"#!/bin/sh\nprintf '%s\\n' '[info] Attempting to solve...' '{output}'\nexit {status}\n")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    return binary


@pytest.mark.parametrize("final, verdict", [("solved", "won"), ("unsolvable", "lost"), ("timed-out", "unknown"),
                                            ("memory-limit-reached", "unknown")])
def test_the_last_field_of_the_classification_is_the_verdict(bench, tmp_path, final, verdict):
    rules_file, files = bench.write_files(find_variant("bakers-dozen"), range(3, 5), tmp_path / "files")
    assert json.loads(rules_file.read_text())["tableau piles"]["count"] == 13
    assert sorted(p.name for p in files.values()) == ["bakers-dozen-3.json", "bakers-dozen-4.json"]
    binary = _stand_in(tmp_path, f", unsolvable, 12, 3, 3, 0, 0, 0, 8, 8, 2, 2, , , , , , , , , , , , {final}")
    side = bench.solve_solvitaire(binary, rules_file, files, 1.0, 1000)
    assert side.verdicts == {3: verdict, 4: verdict} and set(side.cpu) == {3, 4}


def test_a_binary_that_prints_no_classification_is_an_error_not_an_unknown(bench, tmp_path):
    rules_file, files = bench.write_files(find_variant("bakers-dozen"), range(1, 2), tmp_path / "files")
    with pytest.raises(bench.SolvitaireError, match="without a classification"):
        bench.solve_solvitaire(_stand_in(tmp_path, "Segmentation fault", 139), rules_file, files, 1.0, 1000)


@pytest.mark.parametrize("args, says", [
    (["--games", "nope"], "error: --games 'nope': choose among bakers-dozen"),
    (["--deals", "5-2"], "error: --deals '5-2': the first deal (5) is after"),
    (["--solvitaire", "/no/such/solvitaire"], "error: --solvitaire '/no/such/solvitaire' is not an executable file"),
])
def test_the_script_refuses_bad_input_in_one_line_with_exit_status_2(args, says):
    import subprocess

    run = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "solvitaire.py"), *args], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 2 and run.stderr.startswith(says) and run.stderr.count("\n") == 1, run.stderr


def test_the_report_splits_each_sides_cpu_by_the_verdict_both_reached(bench, capsys):
    ours = bench.Side({1: "won", 2: "lost", 3: "won", 4: "unknown"}, {1: 1.0, 2: 0.5, 3: 2.0, 4: 9.0})
    theirs = bench.Side({1: "won", 2: "lost", 3: "unknown", 4: "unknown"}, {1: 4.0, 2: 0.25, 3: 20.0, 4: 20.0})
    bench.report("game", find_variant("bakers-dozen"), range(1, 5), ours, theirs)
    out = capsys.readouterr().out
    assert "3.5x over all 4 deals, 2.8x over the 2 both decide" in out
    assert "on the 1 won deals: toolkit 1.00 s, Solvitaire 4.00 s (4.0x)" in out
    assert "on the 1 lost deals: toolkit 0.50 s, Solvitaire 0.25 s (0.5x)" in out
