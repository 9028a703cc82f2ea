"""The report's figures aggregated over the store's files (reports.digest) equal those computed from all rows in
pandas (reports.tables), to the last bit, on a store small enough for both."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from reports import charts, digest, tables
from sim.rules import find_variant
from studies.reading import read_store, scan_store
from studies.runner import run
from studies.spec import RunSpec

N = 301
CHUNK = 37  # not a multiple of 8: a run's wins are packed across chunk boundaries


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """greedy and random on bakers-dozen and greedy on dick-1883, deals 1..N; key per name."""
    path = tmp_path_factory.mktemp("digest") / "store"
    keys = {}
    for name, variant, strategy in (("greedy", "bakers-dozen", "greedy"), ("random", "bakers-dozen", "random"),
                                    ("dick", "dick-1883", "greedy")):
        keys[name] = run(RunSpec(find_variant(variant), strategy, N), path, jobs=1, chunk=CHUNK).key
    return path, keys


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(a.reset_index(drop=True), b.reset_index(drop=True), check_exact=True,
                                  check_dtype=False)


def test_run_summaries_are_those_of_all_rows(store):
    path, _ = store
    rows = read_store(path)
    _frames_equal(digest.summary(list(digest.digest_runs(path).values())), tables.summary(rows))


def test_the_paired_tests_of_a_tournament_and_a_comparison_are_those_of_all_rows(store):
    path, keys = store
    rows = read_store(path)
    runs = digest.digest_runs(path)
    every = digest.intersect(runs[keys["greedy"]].spans, runs[keys["random"]].spans)
    t_rows = tables.tournament(rows, [keys["random"], keys["greedy"]])
    t_digest = digest.tournament(digest.on_deals(path, runs, [keys["random"], keys["greedy"]], every))
    for part in ("ranking", "pairwise", "disagreements"):
        _frames_equal(getattr(t_digest, part), getattr(t_rows, part))
    pd.testing.assert_frame_equal(t_digest.wins_over, t_rows.wins_over, check_exact=True)
    pd.testing.assert_frame_equal(t_digest.adjusted_p, t_rows.adjusted_p, check_exact=True)
    assert (t_digest.cochran_q, t_digest.cochran_df, t_digest.cochran_p, t_digest.deals) == \
        (t_rows.cochran_q, t_rows.cochran_df, t_rows.cochran_p, t_rows.deals)
    assert len(t_rows.disagreements) > 0 and t_rows.pairwise["only_first"].iloc[0] > 0  # the test compares something
    pair = [keys["greedy"], keys["dick"]]
    _frames_equal(digest.variant_comparison(digest.on_deals(path, runs, pair, every)),
                  tables.variant_comparison(rows, pair))


def test_figures_on_part_of_a_runs_deals_are_those_of_its_rows_there(store):
    """A group shown on some of its runs' deals (a damaged file, another invocation's deals) is digested again on
    exactly those, holes included."""
    path, keys = store
    part = [(5, 40), (74, 74), (100, 260)]
    pair = [keys["greedy"], keys["random"]]
    runs = digest.on_deals(path, digest.digest_runs(path), pair, part)
    rows = read_store(path)
    inside = np.zeros(len(rows), dtype=bool)
    for a, b in part:
        inside |= rows["deal"].between(a, b).to_numpy()
    rows = rows[inside]
    assert all(r.deals == digest.spans_size(part) for r in runs)
    _frames_equal(digest.variant_comparison(runs), tables.variant_comparison(rows, pair))
    for r, k in zip(runs, pair, strict=True):
        won = (rows.loc[rows["key"] == k, "outcome"] == "won").to_numpy()
        home = rows.loc[rows["key"] == k, "cards_home"].to_numpy(dtype=np.int64)
        curve = digest.running_wins(r.won)
        n = charts.curve_points(len(won))
        assert (curve.at(n) == np.cumsum(won)[n - 1]).all()
        assert (r.home[:53] == np.bincount(home, minlength=53)).all()
        assert digest.outcomes([r], [74])["outcome"].iloc[0] == ("won" if won[part[0][1] - part[0][0] + 1] else "not won")


def test_bits_pack_and_walk_any_lengths():
    rng = np.random.default_rng(1)
    values = rng.random(10_003) < 0.3
    bits = digest.Bits()
    for piece in np.split(values, [5, 13, 14, 1000, 9999]):
        bits.append(piece)
    assert bits.size == values.size and np.array_equal(np.concatenate(list(bits.blocks(64))), values)
    other = digest.Bits.of(~values)
    assert digest.pair_counts(bits, other) == (0, int(values.sum()), int((~values).sum()), 0)


def test_a_scan_holds_one_chunk_at_a_time(store):
    path, keys = store
    sizes = [t.num_rows for t in scan_store(path, key=keys["greedy"], columns=["outcome"])]
    assert max(sizes) <= CHUNK and sum(sizes) == N


def test_the_api_summarises_a_store_and_read_store_refuses_a_big_one_saying_what_to_use(store):
    from bakers_dozen import api
    from studies.files import StoreError

    path, keys = store
    rows = read_store(path)
    _frames_equal(api.summarise(path), tables.summary(rows))
    with pytest.raises(StoreError, match=r"holds 903 rows.*summarise.*store_relation.*store_dataset"):
        read_store(path, max_rows=900)
    assert len(read_store(path, key=keys["greedy"], max_rows=N)) == N  # a selection within the limit reads
    assert api.store_dataset(path).count_rows() == 3 * N
    pytest.importorskip("duckdb")
    counted = api.store_relation(path).aggregate("key, count(*) AS deals, sum((outcome = 'won')::INT) AS wins").df()
    assert dict(zip(counted["key"], zip(counted["deals"], counted["wins"], strict=True), strict=True)) == \
        {k: (N, int((rows.loc[rows["key"] == k, "outcome"] == "won").sum())) for k in keys.values()}


def test_api_simulate_refuses_more_rows_than_it_can_return_before_playing(tmp_path):
    from bakers_dozen import api
    from sim.errors import UserError
    from studies.reading import READ_LIMIT

    with pytest.raises(UserError, match="summarise"):
        api.simulate("bakers-dozen", "greedy", deals=READ_LIMIT + 1, store=tmp_path / "s")
    assert not (tmp_path / "s").exists()  # nothing was played
