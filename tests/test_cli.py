"""The `bakers-dozen` command: verbs, JSON records, layouts from files, and bad input."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from vectors import PYSOL_DEAL_24 as DEAL_24

from bakers_dozen.cli import main
from sim.deals import make_deal
from sim.rules import find_variant


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def test_variants_lists_every_preset():
    out = run("variants").output
    for name in ("bakers-dozen", "kings-into-empty", "portuguese", "dick-1883", "spanish-patience", "castles-in-spain",
                 "good-measure", "other-suit"):
        assert name in out


def test_deal_prints_piles_bottom_to_top_and_hides_face_down_cards():
    r = run("deal", "--deal", "24", "--source", "pysol")
    assert r.exit_code == 0
    assert r.output.split("\n", 1)[1] == DEAL_24
    hidden = run("deal", "--variant", "dick-1883", "--deal", "3").output.splitlines()[1:]
    revealed = run("deal", "--variant", "dick-1883", "--deal", "3", "--reveal").output.splitlines()[1:]
    assert all(line.startswith("?? ?? ?? ") for line in hidden)
    assert all(line.count("<") == 3 for line in revealed)
    assert [line.split()[-1] for line in hidden] == [line.split()[-1] for line in revealed]


def test_layout_from_standard_input_equals_the_deal(tmp_path):
    a = run("play", "--deal", "24", "--source", "pysol", "--json")
    b = run("play", "--layout", "-", "--json", input=DEAL_24)
    ja, jb = json.loads(a.output), json.loads(b.output)
    assert ja["moves"] == jb["moves"] and ja["layout"] == jb["layout"]
    assert jb["source"] == "layout" and jb["deal"] is None


def test_play_json_has_the_documented_keys_and_verifies(tmp_path):
    r = run("play", "--variant", "dick-1883", "--deal", "5", "--strategy", "random:home_first=true", "--json")
    record = json.loads(r.output)
    for key in ("variant", "rules_fingerprint", "deal", "seed", "source", "strategy", "layout", "outcome", "cards_home", "moves"):
        assert key in record
    assert record["layout"] == [[("A23456789TJQK"[c % 13] + "CDHS"[c // 13]) for c in p]
                                for p in make_deal(find_variant("dick-1883"), 5).position.piles]
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record))
    v = run("verify", str(path))
    assert v.exit_code == 0, v.output
    assert "legal" in v.output


def test_verify_finds_a_won_game_and_an_illegal_move(tmp_path):
    won = None
    for number in range(1, 400):
        record = json.loads(run("play", "--variant", "spanish-patience", "--deal", str(number), "--strategy", "random:home_first=1",
                                "--json").output)
        if record["outcome"] == "won":
            won = record
            break
    assert won is not None
    path = tmp_path / "won.json"
    path.write_text(json.dumps(won))
    assert "the game is won" in run("verify", str(path)).output
    bad = dict(won, moves=won["moves"][:3] + ["KD 1>2"] + won["moves"][3:])
    path.write_text(json.dumps(bad))
    v = run("verify", str(path))
    assert v.exit_code == 1 and "move 4" in v.output
    short = dict(won, moves=won["moves"][:-1])
    path.write_text(json.dumps(short))
    v = run("verify", str(path))
    assert v.exit_code == 1 and "claims a win" in v.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("deal", "--variant", "nope", "--deal", "1"), "unknown variant 'nope'"),
        (("deal", "--deal", "0"), "deal number 0 is out of range; allowed: 1.."),
        (("deal", "--deal", "1", "--source", "pysol", "--seed", "4"), "takes no seed"),
        (("play", "--deal", "1", "--strategy", "nope"), "unknown strategy 'nope'"),
        (("play", "--deal", "1", "--strategy", "random:home_first=maybe"), "is not a bool"),
    ],
)
def test_bad_input_is_one_clear_line_with_exit_code_2(args, message):
    r = run(*args)
    assert r.exit_code == 2, r.output
    assert message in r.output
    assert "Traceback" not in r.output


def test_bad_variant_files(tmp_path):
    bad_toml = tmp_path / "broken.toml"
    bad_toml.write_text("columns = [\n")
    r = run("deal", "--variant", str(bad_toml), "--deal", "1")
    assert r.exit_code == 2 and "is not valid TOML" in r.output
    impossible = tmp_path / "big.toml"
    impossible.write_text('base = "bakers-dozen"\ncolumns = 14\n')
    r = run("deal", "--variant", str(impossible), "--deal", "1")
    assert r.exit_code == 2 and "allowed: exactly 52" in r.output
    negative = tmp_path / "neg.toml"
    negative.write_text("face_down = -1\n")
    r = run("deal", "--variant", str(negative), "--deal", "1")
    assert r.exit_code == 2 and "'face_down'" in r.output and "allowed: 0..3" in r.output
    unknown = tmp_path / "unknown.toml"
    unknown.write_text("colour = 'red'\n")
    r = run("deal", "--variant", str(unknown), "--deal", "1")
    assert r.exit_code == 2 and "unknown rule field(s) 'colour'" in r.output
    wide = tmp_path / "wide.toml"
    wide.write_text('columns = 8\ncards_per_column = 6\nstart_home = ["AC", "AD", "AH", "AS"]\n')
    r = run("deal", "--variant", str(wide), "--deal", "1", "--source", "pysol")
    assert r.exit_code == 2 and "the pysol source deals 13 piles of 4" in r.output and "8 x 6" in r.output
    good = tmp_path / "mine.toml"
    good.write_text('base = "spanish-patience"\nname = "mine"\nworrying_back = true\n')
    r = run("play", "--variant", str(good), "--deal", "2", "--json")
    assert r.exit_code == 0 and json.loads(r.output)["rules"]["worrying_back"] is True
    path = tmp_path / "rec.json"
    path.write_text(r.output)
    assert run("verify", str(path)).exit_code == 0


def test_bad_layouts_and_records(tmp_path):
    r = run("play", "--layout", "-", input=DEAL_24.replace("4C\n", "4C 4C\n"))
    assert r.exit_code == 2 and "appears twice" in r.output
    r = run("play", "--layout", "-", input="\n".join(DEAL_24.splitlines()[:12]))
    assert r.exit_code == 2 and "has 12 piles" in r.output
    r = run("play", "--layout", "-", input=DEAL_24.replace("KD", "XX"))
    assert r.exit_code == 2 and "not a card" in r.output
    rec = tmp_path / "r.json"
    rec.write_text("{not json")
    r = run("verify", str(rec))
    assert r.exit_code == 2 and "is not JSON" in r.output
    record = json.loads(run("play", "--deal", "9", "--json").output)
    rec.write_text(json.dumps(dict(record, layout=record["layout"][::-1])))
    r = run("verify", str(rec))
    assert r.exit_code == 1 and "is not deal 9" in r.output  # a false claim, not an unreadable record
    rec.write_text(json.dumps(dict(record, rules_fingerprint="0123456789ab")))
    r = run("verify", str(rec))
    assert r.exit_code == 1 and "rules_fingerprint '0123456789ab' is not that of its rules" in r.output
    rec.write_text(json.dumps(dict(record, moves=["9H 3-7"])))
    r = run("verify", str(rec))
    assert r.exit_code == 1 and "not a move" in r.output


def test_the_console_script_and_python_dash_m_work():
    exe = shutil.which("bakers-dozen", path=str(Path(sys.executable).parent))
    assert exe, "the console script is installed next to the interpreter"
    out = subprocess.run([exe, "deal", "--deal", "24", "--source", "pysol"], capture_output=True, text=True, check=True).stdout
    assert out.split("\n", 1)[1] == DEAL_24
    out = subprocess.run([sys.executable, "-m", "bakers_dozen", "deal", "--deal", "0"], capture_output=True, text=True)
    assert out.returncode == 2 and "out of range" in out.stderr and "Traceback" not in out.stderr
