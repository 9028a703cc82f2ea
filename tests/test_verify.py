"""`bakers-dozen verify` checks every claim of a game record.

Exit 0 when every claim holds; 1 with one `mismatch:`/`illegal:` line per false claim
(legality, outcome, cards home, termination, layout, face-down counts and home cards
against the named deal, rules fingerprint); 2 with one `bakers-dozen: error:` line when
the record cannot be read (not JSON, nested too deeply, huge numbers, wrong types,
missing fields). Records are played by the real `play --json`, then altered.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import bakers_dozen.record
from bakers_dozen.cli import main
from sim.referee import legal_moves, replay
from sim.rules import find_variant, rules_from_mapping

WON_DEALS = [("bakers-dozen", 8), ("bakers-dozen", 14), ("spanish-patience", 2), ("spanish-patience", 3), ("dick-1883", 6)]
LOST_DEALS = [("bakers-dozen", 1), ("bakers-dozen", 4), ("dick-1883", 7), ("spanish-patience", 4), ("good-measure", 1)]


def _play(variant: str, deal: int) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["play", "--variant", variant, "--deal", str(deal), "--strategy", "heuristic", "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.output)


@pytest.fixture(scope="module")
def won() -> list[dict[str, Any]]:
    records = [_play(v, d) for v, d in WON_DEALS]
    assert all(r["outcome"] == "won" and r["cards_home"] == 52 for r in records)
    return records


@pytest.fixture(scope="module")
def lost() -> list[dict[str, Any]]:
    records = [_play(v, d) for v, d in LOST_DEALS]
    assert all(r["outcome"] == "lost" and r["cards_home"] < 52 for r in records)
    return records


def verify_text(text: str | bytes, tmp_path: Path) -> Any:
    path = tmp_path / "record.json"
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return CliRunner().invoke(main, ["verify", str(path)])


def verify(record: Any, tmp_path: Path) -> Any:
    return verify_text(json.dumps(record), tmp_path)


def false_claims(r: Any) -> list[str]:
    assert r.exit_code == 1, r.output
    assert "Traceback" not in r.output and isinstance(r.exception, SystemExit)
    return [line for line in r.output.splitlines() if line.startswith(("mismatch:", "illegal:"))]


def unreadable(r: Any) -> str:
    """The record was refused as unreadable: exit 2 and exactly one line, no traceback."""
    assert r.exit_code == 2, r.output
    assert isinstance(r.exception, SystemExit), r.exception
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), r.output
    return lines[0]


def _rules(record: dict[str, Any]):
    return rules_from_mapping({**record["rules"], "name": record["variant"]})


def _final(record: dict[str, Any]) -> Any:
    rules = _rules(record)
    start = bakers_dozen.record._record_start(record, rules)
    return rules, replay(rules, start, record["moves"]).final


# --- genuine records pass -------------------------------------------------------------------


def test_genuine_records_pass(won, lost, tmp_path):
    for record in won + lost:
        r = verify(record, tmp_path)
        assert r.exit_code == 0, r.output
        assert r.output.startswith("legal: ") and "mismatch" not in r.output


def test_genuine_terminations_pass(won, lost, tmp_path):
    for record in won:
        assert verify(dict(record, termination="won"), tmp_path).exit_code == 0
    for record in lost:
        rules, final = _final(record)
        termination = "resigned" if legal_moves(rules, final) else "no_moves"
        r = verify(dict(record, termination=termination), tmp_path)
        assert r.exit_code == 0, r.output


# --- each kind of false claim ----------------------------------------------------------------


@pytest.mark.parametrize("claim", ["lost", "unknown", "error"])
def test_a_won_game_claimed_as_not_won(won, tmp_path, claim):
    for record in won:
        lines = false_claims(verify(dict(record, outcome=claim), tmp_path))
        assert lines == [f"mismatch: the record claims outcome {claim!r} but the moves win the game"]


def test_a_lost_game_claimed_as_won(lost, won, tmp_path):
    for record in lost:
        lines = false_claims(verify(dict(record, outcome="won"), tmp_path))
        assert any("claims a win but the moves do not win" in line for line in lines)
    for record in won:  # a winning line cut short
        lines = false_claims(verify(dict(record, moves=record["moves"][:-3]), tmp_path))
        assert any("claims a win but the moves do not win (49/52 cards home)" in line for line in lines)


def test_false_cards_home(won, lost, tmp_path):
    for record in lost:
        for claim in {52, record["cards_home"] + 1, 0, max(record["cards_home"] - 1, 0)} - {record["cards_home"]}:
            lines = false_claims(verify(dict(record, cards_home=claim), tmp_path))
            assert lines == [f"mismatch: the record claims {claim} cards home; the moves leave {record['cards_home']} home"]
    for record in won:
        lines = false_claims(verify(dict(record, cards_home=51), tmp_path))
        assert lines == ["mismatch: the record claims 51 cards home; the moves leave 52 home"]


def test_illegal_moves(won, lost, tmp_path):
    for record in won + lost:
        moves = record["moves"]
        for k in (0, len(moves) // 2, len(moves)):
            bad = dict(record, moves=moves[:k] + ["KD 1>2"] + moves[k:])
            lines = false_claims(verify(bad, tmp_path))
            assert len(lines) == 1 and lines[0].startswith(f"illegal: move {k + 1} ")
        lines = false_claims(verify(dict(record, moves=moves[1:]), tmp_path)) if len(moves) > 1 else []
        assert not lines or lines[0].startswith("illegal: move ")


def test_false_terminations(won, lost, tmp_path):
    for record in won:
        for termination in ("no_moves", "resigned", "no_progress"):
            lines = false_claims(verify(dict(record, termination=termination), tmp_path))
            assert any(f"termination is {termination!r} but the game is won" in line for line in lines)
        lines = false_claims(verify(dict(record, termination="timeout"), tmp_path))
        assert any("termination 'timeout' counts as outcome 'unknown', not 'won'" in line for line in lines)
    checked_no_moves = 0
    for record in lost:
        lines = false_claims(verify(dict(record, termination="won"), tmp_path))
        assert any("termination is 'won' but the game is not won" in line for line in lines)
        lines = false_claims(verify(dict(record, termination="undecided"), tmp_path))
        assert lines == ["mismatch: the record's termination 'undecided' counts as outcome 'unknown', not 'lost'"]
        rules, final = _final(record)
        if legal_moves(rules, final):
            lines = false_claims(verify(dict(record, termination="no_moves"), tmp_path))
            assert any("termination is 'no_moves' but" in line and "legal move(s) remain" in line for line in lines)
            checked_no_moves += 1
    # a lost game cut short always leaves a legal move (the one that was played next)
    for record in lost:
        lines = false_claims(verify(dict(record, moves=record["moves"][:-1], termination="no_moves",
                                         cards_home=_cards_after(record, -1)), tmp_path))
        assert any("legal move(s) remain" in line for line in lines)
        checked_no_moves += 1
    assert checked_no_moves >= len(lost)


def _cards_after(record: dict[str, Any], cut: int) -> int:
    rules = _rules(record)
    return replay(rules, bakers_dozen.record._record_start(record, rules), record["moves"][:cut]).cards_home


def test_a_layout_that_is_not_the_named_deal(won, lost, tmp_path):
    for record in won + lost:
        swapped = copy.deepcopy(record)
        layout = swapped["layout"]
        layout[0][-1], layout[1][-1] = layout[1][-1], layout[0][-1]
        lines = false_claims(verify(swapped, tmp_path))
        assert any("layout is not deal" in line and "pile 1 is" in line for line in lines)
        assert any("layout is not deal" in line and "pile 2 is" in line for line in lines)
        # the same layout under another deal number or seed
        other = dict(record, deal=record["deal"] + 1)
        assert any(f"is not deal {record['deal'] + 1} (seed 0" in line for line in false_claims(verify(other, tmp_path)))
        reseeded = dict(record, seed=7)
        assert any("(seed 7, source default)" in line for line in false_claims(verify(reseeded, tmp_path)))


def test_false_face_down_counts_and_home_cards(won, lost, tmp_path):
    records = [r for r in won + lost if r["variant"] == "dick-1883"]
    assert records
    for record in records:
        for pile in (0, 5, 12):
            downs = list(record["face_down"])
            downs[pile] -= 1
            lines = false_claims(verify(dict(record, face_down=downs), tmp_path))
            assert any("face_down" in line and "is not that of deal" in line for line in lines)
    good = next(r for r in lost if r["variant"] == "good-measure")
    assert good["home"][:2] == [["AC"], ["AD"]]
    faked = copy.deepcopy(good)
    pile, at = next((p, i) for p, cards in enumerate(faked["layout"]) for i, c in enumerate(cards) if c == "AH")
    faked["layout"][pile][at] = "AD"
    faked["home"] = [["AC"], [], ["AH"], []]
    lines = false_claims(verify(faked, tmp_path))
    assert any("home cards are not those deal 1" in line for line in lines)
    assert any("layout is not deal 1" in line for line in lines)


def test_false_rules_fingerprint(won, lost, tmp_path):
    for record in won + lost:
        for fake in ("0123456789ab", "", find_variant("other-suit").fingerprint):
            lines = false_claims(verify(dict(record, rules_fingerprint=fake), tmp_path))
            assert lines == [f"mismatch: the record's rules_fingerprint {fake!r} is not that of its rules "
                             f"({_rules(record).fingerprint})"]


def test_several_false_claims_are_each_named(won, tmp_path):
    record = won[0]
    lines = false_claims(verify(dict(record, outcome="lost", cards_home=3, rules_fingerprint="x", termination="no_moves"),
                                tmp_path))
    assert len(lines) >= 4


# --- records that cannot be read: one line, exit 2 -------------------------------------------


@pytest.mark.parametrize("text", [
    "{not json", "", "[]", "3", '"won"', "null",
    "[" * 100_000 + "]" * 100_000,
    '{"a":' * 50_000 + "1" + "}" * 50_000,
])
def test_unreadable_json(tmp_path, text):
    unreadable(verify_text(text, tmp_path))


def test_not_utf8_and_too_large(won, tmp_path, monkeypatch):
    assert "not UTF-8" in unreadable(verify_text(b'{"variant": "\xff\xfe"}', tmp_path))
    monkeypatch.setattr(bakers_dozen.record, "MAX_RECORD_CHARS", 100)
    assert "larger than 100 characters" in unreadable(verify(won[0], tmp_path))


def test_huge_numbers_and_non_numbers(won, tmp_path):
    record = won[0]
    text = json.dumps(record)
    for field in ("cards_home", "seed", "deal"):
        huge = text.replace(f'"{field}": {record[field]}', f'"{field}": ' + "9" * 5000)
        assert huge != text
        unreadable(verify_text(huge, tmp_path))
        for value in ("NaN", "Infinity", "-Infinity"):
            line = unreadable(verify_text(text.replace(f'"{field}": {record[field]}', f'"{field}": {value}'), tmp_path))
            assert f"holds {value}, which is not a JSON number" in line and "is not JSON" not in line
        for value in ("1e400", "52.0", "10000000000000000000000000000000"):
            unreadable(verify_text(text.replace(f'"{field}": {record[field]}', f'"{field}": {value}'), tmp_path))


@pytest.mark.parametrize("field", ["variant", "layout", "moves", "outcome", "cards_home"])
def test_missing_fields(won, tmp_path, field):
    record = dict(won[0])
    del record[field]
    assert f"no {field!r} field" in unreadable(verify(record, tmp_path))


WRONG = [
    ("variant", 3), ("variant", None), ("rules", []), ("rules", "bakers-dozen"), ("rules_fingerprint", 12),
    ("deal", "8"), ("deal", 8.0), ("deal", True), ("deal", -1), ("deal", 0), ("seed", "0"), ("seed", -5), ("seed", 2**70),
    ("source", "nope"), ("source", 1), ("strategy", ["x"]), ("layout", "AC 2C"), ("layout", [["AC", 2]]),
    ("layout", [[["AC"]]]), ("layout", [["AC 2C"]]), ("layout", [["AC\n2C"]]), ("layout", [["XX"]]), ("layout", []),
    ("face_down", "0"), ("face_down", [0]), ("face_down", [-1] * 13), ("face_down", [99] * 13), ("face_down", [True] * 13),
    ("home", "AC"), ("home", [[], [], [], [], []]), ("home", [[1]]), ("outcome", "victory"), ("outcome", True),
    ("cards_home", 53), ("cards_home", -1), ("cards_home", "52"), ("cards_home", False), ("moves", "9H 3>7"),
    ("moves", [1, 2]), ("moves", [["9H 3>7"]]), ("moves", None), ("termination", "bored"), ("termination", 0),
    ("error", 5),
]


@pytest.mark.parametrize(("field", "value"), WRONG)
def test_fields_of_the_wrong_type_or_range(won, tmp_path, field, value):
    line = unreadable(verify(dict(won[0], **{field: value}), tmp_path))
    assert "Traceback" not in line


def test_a_layout_that_does_not_fit_the_rules(won, tmp_path):
    record = won[0]
    for layout in (record["layout"][:-1], record["layout"] + [[]], [record["layout"][0] * 2] + record["layout"][1:]):
        unreadable(verify(dict(record, layout=layout, face_down=[0] * len(layout)), tmp_path))


def test_records_without_optional_fields_still_verify(won, lost, tmp_path):
    for record in won + lost:
        bare = {k: record[k] for k in ("variant", "layout", "moves", "outcome", "cards_home")}
        if record["variant"] in ("dick-1883", "good-measure"):
            bare.update(face_down=record["face_down"], home=record["home"])
        r = verify(bare, tmp_path)
        assert r.exit_code == 0, r.output
