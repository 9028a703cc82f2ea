"""Verdicts through related rules: the inclusions the module states hold (the same layout for every deal number, a
stricter game's win never a looser game's loss, checked with the solver on presets and random rule sets), and the
atlas's related rows decide unknown deals and never contradict each other."""

from __future__ import annotations

import itertools
import json
import random
import shutil

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from sim.deals import check_pysol_shape, make_deal
from sim.rules import BUILDS, EMPTY_FILLS, VARIANTS, find_variant, rules_from_mapping
from strategies.solver.strategy import SolverStrategy
from studies import atlas as files
from studies.atlas import related

PRESETS = [v.rules for v in VARIANTS]


def test_the_presets_are_related_as_the_module_says():
    pairs = {(a.name, b.name) for a, b in itertools.permutations(PRESETS, 2) if related.includes(a, b)}
    assert pairs == {("bakers-dozen", "dick-1883"), ("dick-1883", "bakers-dozen"), ("bakers-dozen", "other-suit"),
                     ("dick-1883", "other-suit"), ("spanish-patience", "castles-in-spain"),
                     ("spanish-patience", "kings-into-empty")}
    assert all(related.includes(r, r) for r in PRESETS)


def test_inclusions_follow_the_building_and_empty_pile_orders():
    base = find_variant("bakers-dozen")
    ranked = {"same-suit": 1, "alternate-colour": 1, "other-suit": 2, "any-suit": 3}
    for loose, strict in itertools.product(BUILDS, BUILDS):
        holds = related.includes(base.replace(build=loose), base.replace(build=strict))
        assert holds == (loose == strict or loose == "any-suit" or (loose, strict) == ("other-suit", "alternate-colour")), (loose, strict)
        assert not holds or ranked[loose] >= ranked[strict]
    for i, loose in enumerate(EMPTY_FILLS):
        for j, strict in enumerate(EMPTY_FILLS):
            assert related.includes(base.replace(empty_fill=loose), base.replace(empty_fill=strict)) == (i >= j)
    assert related.includes(base.replace(worrying_back=True), base)
    assert not related.includes(base, base.replace(worrying_back=True))
    assert not related.includes(base.replace(kings_to_bottom=False), base)


@pytest.mark.parametrize("source", ["default", "pysol"])
def test_related_presets_deal_the_same_layout_from_every_number(source):
    for loose, strict in itertools.permutations(PRESETS, 2):
        if not related.includes(loose, strict):
            continue
        if source == "pysol":
            check_pysol_shape(loose)
        for number in (*range(1, 40), 99_999, 1_000_000 if source == "default" else 32_000):
            a, b = make_deal(loose, number, 0, source).position, make_deal(strict, number, 0, source).position
            assert (a.piles, a.foundations) == (b.piles, b.foundations), (loose.name, strict.name, number)


def _random_pair(rng: random.Random):
    """Two rule sets of one random layout, the first including the second."""
    layout = rng.choice([{"columns": 13, "cards_per_column": 4}, {"columns": 10, "cards_per_column": 5, "start_home": ["AC", "AD"]},
                         {"columns": 8, "cards_per_column": 6, "start_home": ["AC", "AD", "AH", "AS"]}])
    layout["kings_to_bottom"] = rng.random() < 0.5
    while True:
        loose = {"build": rng.choice(BUILDS), "empty_fill": rng.choice(EMPTY_FILLS), "worrying_back": rng.random() < 0.3}
        strict = {"build": rng.choice(BUILDS), "empty_fill": rng.choice(EMPTY_FILLS),
                  "worrying_back": loose["worrying_back"] and rng.random() < 0.5}
        a = rules_from_mapping({**layout, **loose}, default_name="loose")
        b = rules_from_mapping({**layout, **strict}, default_name="strict")
        if related.includes(a, b) and a.fingerprint != b.fingerprint:
            return a, b


def _name(r) -> str:
    return r.name if r.name not in ("loose", "strict") else \
        f"{r.build}/{r.empty_fill}/{'worrying' if r.worrying_back else '-'}/{r.columns}x{r.cards_per_column}"


def test_a_win_under_stricter_rules_is_never_a_loss_under_looser_ones():
    rng = random.Random(2026)
    pairs = [(a, b) for a, b in itertools.permutations(PRESETS, 2) if related.includes(a, b) and not a.face_down]
    pairs += [_random_pair(rng) for _ in range(10)]
    solver = SolverStrategy(nodes=60_000, tt_mb=16.0, capacity_states=60_000)
    bites = {}
    for loose, strict in pairs:
        bites[(_name(loose), _name(strict))] = 0
        for number in range(1, 31):
            v_strict = solver.solve_position(strict, make_deal(strict, number).position)[0]
            v_loose = solver.solve_position(loose, make_deal(loose, number).position)[0]
            assert not (v_strict == "won" and v_loose == "lost"), (number, _name(loose), _name(strict))
            bites[(_name(loose), _name(strict))] += v_strict == "won" or v_loose == "lost"
    # a deal the stricter rules win, or the looser lose, is one where a wrong inclusion would show
    assert sum(b > 0 for b in bites.values()) >= len(bites) * 2 // 3, bites


def test_the_shipped_atlas_s_related_rows_never_contradict_and_decide_unknown_deals():
    folder = files.shipped()
    assert related.contradictions(folder) == [] and related.contradictions(folder, "pysol") == []
    decided = related.decided_by_relatives(folder, "other-suit")
    table = files.read_deals(folder, "bakers-dozen", "default", ("deal", "verdict"))
    bakers = dict(zip(files.deal_numbers(table).tolist(), table.column("verdict").to_pylist(), strict=True))
    assert decided and all(v == ("lost", "bakers-dozen") and bakers[d] == "lost" for d, v in decided.items())


def test_a_forged_contradiction_is_named_and_verify_exits_1(tmp_path):
    folder = tmp_path / "atlas"
    folder.mkdir()
    for name in (files.SUMMARY, "bakers-dozen.parquet", "other-suit.parquet"):
        shutil.copy(files.shipped() / name, folder / name)
    rows = [r for r in files.read_summary(folder / files.SUMMARY) if r["variant"] in ("bakers-dozen", "other-suit")
            and r["source"] == "default"]
    table = files.read_deals(folder, "bakers-dozen", "default")
    lost = [r for r in table.to_pylist() if r["verdict"] == "lost"]
    won_there = files.read_deals(folder, "other-suit", "default", ("deal", "verdict")).to_pylist()
    target = next(r["deal"] for r in won_there if r["verdict"] == "won")
    forged = [({**r, "verdict": "lost"} if r["deal"] == target else r) for r in table.to_pylist()]
    forged = [{**r, "termination": "exhausted"} for r in forged]
    new = files.deal_table(forged)
    files.write_deals(new, folder / "bakers-dozen.parquet")
    bakers_row = next(r for r in rows if r["variant"] == "bakers-dozen")
    rows = [files.summary_row(new, **{k: bakers_row[k] for k in ("variant", "fingerprint", "source", "seed",
                                                                   "solver_version", "budgets", "clairvoyant",
                                                                   "command")}) if r is bakers_row else r
            for r in rows]
    files.write_summary(rows, folder / files.SUMMARY)
    assert len(lost) + 1 == files.counts(new)["lost"]
    (said,) = related.contradictions(folder)
    assert "bakers-dozen, whose moves include every move of its, proves lost" in said and str(target) in said
    done = CliRunner().invoke(main, ["atlas", "verify", str(folder), "--sample", "1", "-q"])
    assert done.exit_code == 1 and "related rules: other-suit wins deal(s)" in done.output, done.output


def test_atlas_show_says_what_related_rows_decide():
    shown = CliRunner().invoke(main, ["atlas", "show", "-v", "other-suit", "--json"])
    assert shown.exit_code == 0, shown.output
    kin = json.loads(shown.output)["related"]
    assert kin["relatives"] == [{"variant": "bakers-dozen", "looser": True, "stricter": False},
                                {"variant": "dick-1883", "looser": True, "stricter": False}]
    assert kin["lost"] and not kin["won"] and set(kin["via"].values()) == {"bakers-dozen"}
    deal = kin["lost"][0]
    text = CliRunner().invoke(main, ["atlas", "show", "-v", "other-suit", "--deal", str(deal)]).output
    assert f"deal {deal:,} proven lost through bakers-dozen's row" in text
    face_up = CliRunner().invoke(main, ["atlas", "show", "-v", "spanish-patience", "--json"])
    assert json.loads(face_up.output)["related"] is None  # no unknown deal to decide
