"""The honest player's games kept with the atlas: copied from a store, read strictly (a forged count or a damaged file
is one line, never a figure), set beside the clairvoyant verdicts on exactly their deals, and shown by `atlas show`
and by the report after its grid."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from bakers_dozen import api
from bakers_dozen.cli import main
from reports.atlas import HONEST_CAPTION
from sim.rules import find_variant
from studies import atlas as files
from studies.atlas import honest
from studies.stats import win_rate_interval

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = files.shipped()
DICK = "dick-1883"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A store with greedy's dick-1883 deals 3-8 and the clairvoyant solver's 3-6 (which the atlas leaves out)."""
    path = tmp_path_factory.mktemp("honest") / "store"
    api.simulate(DICK, "greedy", 6, first=3, store=path, jobs=1)
    api.simulate(DICK, "solver", 4, first=3, store=path, jobs=1)
    return path


@pytest.fixture
def atlas(tmp_path, store) -> Path:
    """A copy of the shipped atlas's dick-1883 row (and its related rows) with the store's honest games shipped
    into it."""
    folder = tmp_path / "atlas"
    folder.mkdir()
    for name in (files.SUMMARY, *(files.deals_file(v, "default") for v in (DICK, "bakers-dozen", "other-suit"))):
        shutil.copy(SHIPPED / name, folder / name)
    honest.ship(store, folder)
    return folder


def _rewrite_summary(folder: Path, **changes) -> None:
    path = folder / honest.HONEST_SUMMARY
    rows = list(csv.DictReader(path.open()))
    rows[0].update({k: str(v) for k, v in changes.items()})
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def test_the_store_s_honest_games_are_copied_and_set_beside_the_atlas_on_exactly_their_deals(atlas, store):
    (row,) = honest.read_honest(atlas).values()
    games = api.read_store(store, variant=DICK, strategy="greedy")
    assert (row.variant, row.first, row.last, row.deals) == (DICK, 3, 8, 6)
    assert row.won == int((games["outcome"] == "won").sum()) and row.player.startswith("greedy@")
    assert row.fingerprint == find_variant(DICK).fingerprint
    assert row.command == f"bakers-dozen simulate -v {DICK} -s greedy -n 6 -k 3 --store data/honest-store"
    beside = honest.beside_atlas(atlas, row)
    table = files.read_deals(atlas, DICK, "default", ("deal", "verdict"))
    verdicts = dict(zip(files.deal_numbers(table), table.column("verdict").to_pylist(), strict=True))
    assert beside.clairvoyant_won == sum(verdicts[d] == "won" for d in range(3, 9))
    assert beside.clairvoyant_unknown == sum(verdicts[d] == "unknown" for d in range(3, 9))


def test_shipping_again_replaces_the_variant_s_row_and_keeps_the_others(atlas, tmp_path):
    other = tmp_path / "other"
    api.simulate("castles-in-spain", "greedy", 2, store=other, jobs=1)
    honest.ship(other, atlas)
    assert set(honest.read_honest(atlas)) == {DICK, "castles-in-spain"}
    assert honest.beside_atlas(atlas, honest.read_honest(atlas)["castles-in-spain"]) is None  # the copy lacks its row


def test_a_variant_with_two_honest_players_is_refused(store, tmp_path):
    two = tmp_path / "two"
    shutil.copytree(store, two)
    api.simulate(DICK, "heuristic", 2, store=two, jobs=1)
    with pytest.raises(files.AtlasFileError, match="games of 2 players"):
        honest.from_store(two)


@pytest.mark.parametrize("change, said", [
    ({"won": "one more"}, "holds deals 3-8, 6 deals"),  # a row that adds up by itself, forged against its file
    ({"win_rate": 0.99}, "its win rate or interval is not that of its counts"),
    ({"won": 7}, "do not add up"),
    ({"deals": "six"}, "not a number"),
    ({"variant": "../escape"}, "not a name a deal file can have"),
])
def test_a_forged_summary_row_is_one_line_naming_the_file(atlas, change, said):
    if change.get("won") == "one more":
        won = honest.read_honest(atlas)[DICK].won + 1
        change = {"won": won, "win_rate": won / 6, **dict(zip(("ci_low", "ci_high"), win_rate_interval(won, 6), strict=True))}
    _rewrite_summary(atlas, **change)
    with pytest.raises(files.AtlasFileError, match=said):
        honest.read_honest(atlas)


def test_a_summary_that_disagrees_with_its_deal_file_is_refused(atlas):
    path = atlas / honest.honest_file(DICK)
    table = pq.read_table(path)
    pq.write_table(table.set_column(1, "won", pa.array([not w for w in table.column("won").to_pylist()])), path)
    with pytest.raises(files.AtlasFileError, match=f"{honest.honest_file(DICK)}: holds deals 3-8"):
        honest.read_honest(atlas)
    pq.write_table(pa.concat_tables([table, table.slice(0, 1)]), path)
    with pytest.raises(files.AtlasFileError, match="not sorted and unique"):
        honest.read_honest(atlas)
    path.write_bytes(b"PAR1 not parquet")
    with pytest.raises(files.AtlasFileError, match="cannot be read"):
        honest.read_honest(atlas)


def test_atlas_show_gives_the_honest_games_and_this_deal_s_outcome(atlas):
    shown = CliRunner().invoke(main, ["atlas", "show", "-v", DICK, "--deal", "4", "--atlas", str(atlas), "--json"])
    assert shown.exit_code == 0, shown.output
    answer = json.loads(shown.output)["honest"]
    (row,) = honest.read_honest(atlas).values()
    deals, won = honest.honest_deals(atlas, DICK)
    assert answer["deal"] == ("won" if won[list(deals).index(4)] else "lost")
    assert (answer["won"], answer["deals"], answer["command"]) == (row.won, 6, row.command)
    text = CliRunner().invoke(main, ["atlas", "show", "-v", DICK, "--deal", "99", "--atlas", str(atlas)])
    assert "honest player (greedy@" in text.output and "did not play this deal" in text.output
    plain = CliRunner().invoke(main, ["atlas", "show", "-v", "bakers-dozen", "--atlas", str(atlas), "--json"])
    assert json.loads(plain.output)["honest"] is None


def test_a_damaged_honest_file_is_one_line_and_exit_2_for_atlas_show(atlas):
    (atlas / honest.honest_file(DICK)).write_bytes(b"garbage")
    shown = CliRunner().invoke(main, ["atlas", "show", "-v", DICK, "--atlas", str(atlas)])
    assert shown.exit_code == 2 and len(shown.output.strip().splitlines()) == 1, shown.output
    assert honest.honest_file(DICK) in shown.output


def test_the_report_shows_the_honest_games_after_its_grid_and_a_damaged_file_is_one_warning(atlas, store, tmp_path):
    done = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep"), "--atlas", str(atlas)])
    assert done.exit_code == 0, done.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert md.index(HONEST_CAPTION) > md.index("| variant |")
    line = next(x for x in md.splitlines() if x.startswith(f"| {DICK} | greedy@"))
    assert "6 (3–8)" in line
    (atlas / honest.HONEST_SUMMARY).write_text("not,a,summary\n")
    done = CliRunner().invoke(main, ["report", str(store), "--out", str(tmp_path / "rep2"), "--atlas", str(atlas)])
    assert done.exit_code == 0, done.output
    warned = [x for x in done.output.splitlines() if x.startswith("bakers-dozen: warning:")]
    assert len(warned) == 1 and "honest.csv is not the atlas's honest summary" in warned[0]
    assert HONEST_CAPTION not in (tmp_path / "rep2" / "report.md").read_text()


def test_the_shipped_honest_games_are_those_of_the_committed_store():
    found = honest.from_store(ROOT / "data" / "honest-store")
    shipped = honest.read_honest(SHIPPED)
    assert set(shipped) == set(found), "make docs-figures copies data/honest-store into the atlas"
    for variant, (row, table) in found.items():
        assert pd.Series(row).astype(str).to_dict() == {k: str(getattr(shipped[variant], k)) for k in honest.COLUMNS}, \
            f"{variant}: the shipped honest row is not the store's: make docs-figures"
        assert pq.read_table(SHIPPED / honest.honest_file(variant)).equals(table)
        assert honest.beside_atlas(SHIPPED, shipped[variant]) is not None
