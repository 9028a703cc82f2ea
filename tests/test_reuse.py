"""Reuse: a run reuses only the stored rows it would have made itself (`studies.reuse`): verified wins for a
verifying run, rows a deal time limit may have ended only under that limit, rows of the tier it names; the
settings that cannot change a row (chunking, jobs, backend) give equal rows."""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from runner_helpers import rows

import studies.store as S
from sim.rules import Rules
from strategies import load_strategy
from strategies.solver.strategy import SolverStrategy
from studies.reading import check_win, read_store
from studies.records import CORRUPT
from studies.rows import _CHUNK_SCHEMAS, ABSENT, CHUNK_VERSION, META_KEY, SCHEMA, ChunkFile
from studies.runner import run
from studies.spec import RunSpec, run_labels
from studies.store import Store

RULES = Rules()
HELPERS = "tests.reuse_helpers"
PLUG = f"{HELPERS}:HeuristicPlug"


def rewrite_chunk(path, change, version: int = CHUNK_VERSION) -> None:
    """Rewrite a chunk file in place with ``change`` applied to its rows (a list of dicts), as a valid file of
    chunk format ``version``: what a forger, or an older toolkit, would leave."""
    table = pq.read_table(path)
    info = json.loads(table.schema.metadata[META_KEY])
    records = table.to_pylist()
    change(records)
    table = pa.Table.from_pylist(records, schema=SCHEMA)
    if version < CHUNK_VERSION:
        table = table.drop_columns([c for c in ABSENT if c not in _CHUNK_SCHEMAS[version].names])
    info["version"] = version
    pq.write_table(table.replace_schema_metadata({META_KEY: json.dumps(info).encode()}), path)


def chunk_of(store, key: str, deal: int) -> ChunkFile:
    return next(c for c in Store(store).chunk_files(key) if c.first <= deal <= c.last)


# --- verification ------------------------------------------------------------------------------

@pytest.mark.parametrize("old_format", [False, True])
def test_an_unverified_store_reused_by_a_verifying_run_has_every_reused_win_checked(tmp_path, monkeypatch, old_format):
    path = tmp_path / "s"
    spec = RunSpec(RULES, PLUG, 40)
    made = run(spec, path, jobs=1, chunk=20, verify=False)
    before = read_store(path)
    wins = sorted(before.loc[before["outcome"] == "won", "deal"])
    assert made.wins == len(wins) > 0 and not before["verified"].any()
    if old_format:  # a store of the toolkit before rows said whether they were verified: read as unverified
        for c in Store(path).chunk_files(made.key):
            rewrite_chunk(c.path, lambda r: None, version=2)
        assert not read_store(path)["verified"].any()
    checked = []
    real = check_win

    def spy(rules, row):
        checked.append(int(row["deal"]))
        return real(rules, row)

    monkeypatch.setattr("studies.reading.check_win", spy)
    again = run(spec, path, jobs=1, chunk=20)  # a plug-in: verified by default
    assert (again.played, again.reused, again.wins, again.damaged) == (0, 40, made.wins, [])
    assert sorted(checked) == wins
    after = read_store(path)
    assert after.loc[after["outcome"] == "won", "verified"].all() and not after.loc[after["outcome"] != "won", "verified"].any()
    assert rows(after).drop(columns="verified").equals(rows(before).drop(columns="verified"))
    checked.clear()
    assert run(spec, path, jobs=1, chunk=20).wins == made.wins and checked == []  # verified now: not checked again


@pytest.mark.parametrize("flag", [False, True])
def test_a_forged_win_in_a_valid_chunk_file_is_not_counted_by_a_verifying_run(tmp_path, flag):
    path, clean = tmp_path / "s", tmp_path / "clean"
    spec = RunSpec(RULES, PLUG, 40)
    made = run(spec, path, jobs=1, chunk=20)
    run(spec, clean, jobs=1, chunk=20)
    df = read_store(path)
    donor = df[df["outcome"] == "won"].iloc[0]
    victim = int(df[(df["outcome"] == "lost") & (df["deal"] != donor["deal"])].iloc[-1]["deal"])

    def forge(records):
        row = next(r for r in records if r["deal"] == victim)
        row.update(outcome="won", termination="won", cards_home=52, error=None, verified=flag,
                   win_moves=[int(m) for m in donor["win_moves"]])

    forged = chunk_of(path, made.key, victim)
    rewrite_chunk(forged.path, forge)
    assert read_store(path)["outcome"].eq("won").sum() == made.wins + 1  # a valid file: readers take it as it is
    again = run(spec, path, jobs=1, chunk=20)
    assert again.wins == made.wins and again.played == 20 and again.reused == 20
    assert len(again.damaged) == 1 and forged.path.name in again.damaged[0] and f"deal {victim}:" in again.damaged[0]
    assert "\n" not in again.damaged[0]
    assert [p.name.split(".parquet")[0] for p in (path / made.key / CORRUPT).iterdir()] == [forged.path.stem]
    assert rows(read_store(path)).equals(rows(read_store(clean)))


def test_a_rewrite_of_an_edited_file_never_vouches_for_a_win_nobody_checked(tmp_path):
    path = tmp_path / "s"
    made = run(RunSpec(RULES, PLUG, 40), path, jobs=1, chunk=20)
    df = read_store(path)
    donor = df[(df["outcome"] == "won") & (df["deal"] <= 30)].iloc[0]
    victim = int(df[(df["outcome"] == "lost") & (df["deal"] > 30)].iloc[-1]["deal"])

    def forge(records):
        next(r for r in records if r["deal"] == victim).update(
            outcome="won", termination="won", cards_home=52, error=None, verified=True,
            win_moves=[int(m) for m in donor["win_moves"]])

    rewrite_chunk(chunk_of(path, made.key, victim).path, forge)
    part = run(RunSpec(RULES, PLUG, 30), path, jobs=1, chunk=20)  # checks deals 21-30 of the file and rewrites it
    assert part.played == 0 and not read_store(path).query(f"deal == {victim}")["verified"].iloc[0]
    whole = run(RunSpec(RULES, PLUG, 40), path, jobs=1, chunk=20)
    assert whole.wins == made.wins and len(whole.damaged) == 1 and f"deal {victim}:" in whole.damaged[0]


def test_the_cli_warns_in_one_line_and_counts_only_checked_wins(tmp_path):
    from click.testing import CliRunner

    from bakers_dozen.cli import main

    store = tmp_path / "s"
    args = ["simulate", "-s", PLUG, "-n", "40", "--chunk", "20", "--jobs", "1", "--store", str(store), "--quiet"]
    first = CliRunner().invoke(main, [*args, "--no-verify"])
    assert first.exit_code == 0, first.output
    key = Store(store).keys()[0]
    df = read_store(store)
    victim = int(df[df["outcome"] == "lost"].iloc[0]["deal"])
    donor = df[(df["outcome"] == "won") & (df["deal"] != victim)].iloc[0]
    rewrite_chunk(chunk_of(store, key, victim).path, lambda records: next(r for r in records if r["deal"] == victim).update(
        outcome="won", termination="won", cards_home=52, win_moves=[int(m) for m in donor["win_moves"]]))
    again = CliRunner().invoke(main, [*args, "--json"])
    assert again.exit_code == 0, again.output
    summary = json.loads(again.output)
    assert summary["wins"] == int((df["outcome"] == "won").sum()) and summary["played"] == 20
    assert len(summary["damaged"]) == 1 and "holds a win the referee rejects" in summary["damaged"][0]
    assert read_store(store).query("outcome == 'won'")["verified"].all()


def test_a_store_of_format_3_is_read_and_upgraded_when_written(tmp_path):
    path = tmp_path / "s"
    spec = RunSpec(RULES, "greedy", 20)
    made = run(spec, path, jobs=1)
    for c in Store(path).chunk_files(made.key):
        rewrite_chunk(c.path, lambda r: None, version=2)
    (path / S.MARKER).write_text(json.dumps({"format": S.FORMAT, "version": 3}))
    assert len(read_store(path)) == 20 and json.loads((path / S.MARKER).read_text())["version"] == 3  # reading: as it is
    assert run(spec, path, jobs=1).played == 0
    assert json.loads((path / S.MARKER).read_text())["version"] == S.FORMAT_VERSION == 4


def test_a_run_that_does_not_verify_counts_stored_wins_as_they_are_and_says_so(tmp_path):
    path = tmp_path / "s"
    spec = RunSpec(RULES, PLUG, 20)
    made = run(spec, path, jobs=1, verify=False)
    again = run(spec, path, jobs=1, verify=False)
    assert (again.played, again.wins) == (0, made.wins)
    assert not read_store(path)["verified"].any()


# --- the deal time limit ---------------------------------------------------------------------------

@pytest.mark.parametrize("catch", [False, True])
def test_rows_a_deal_time_limit_ended_are_reused_only_under_that_limit(tmp_path, catch):
    path, clean = tmp_path / "s", tmp_path / "clean"
    spec = RunSpec(RULES, f"{HELPERS}:SlowOnce:catch={catch}", 8)
    limited = run(spec, path, jobs=1, chunk=4, deal_timeout=1.0)
    df = read_store(path)
    slow = df[df["deal"] == 6].iloc[0]
    # a timeout whatever the strategy made of the timer's interruption (caught it and raised something else)
    assert slow["termination"] == "timeout" and (df["deal_timeout"] == 1.0).all()
    assert limited.outcomes["won"] + limited.outcomes["lost"] == 7
    same = run(spec, path, jobs=1, chunk=4, deal_timeout=1.0)
    assert (same.played, same.refused) == (0, [])
    plain = run(spec, path, jobs=1, chunk=4)
    assert (plain.played, plain.reused) == (4, 4) and len(plain.refused) == 1 and "deals 5-8" in plain.refused[0]
    fresh = run(spec, clean, jobs=1, chunk=4)
    assert rows(read_store(path)).drop(columns="deal_timeout").equals(rows(read_store(clean)).drop(columns="deal_timeout"))
    assert (plain.outcomes, plain.cards_home_sum) == (fresh.outcomes, fresh.cards_home_sum)


def test_a_row_under_another_limit_is_played_again_and_a_finished_game_is_reused_under_any(tmp_path):
    path = tmp_path / "s"
    spec = RunSpec(RULES, f"{HELPERS}:SlowOnce", 8)
    run(spec, path, jobs=1, chunk=4, deal_timeout=1.0)
    other = run(spec, path, jobs=1, chunk=4, deal_timeout=5.0)  # 1.0's timeout is not 5.0's: played again
    assert other.played == 4 and read_store(path).query("deal == 6")["termination"].iloc[0] != "timeout"
    for limit in (None, 1.0, 0.5):  # every row now ended on its own: any run takes them
        assert run(spec, path, jobs=1, chunk=4, deal_timeout=limit).played == 0


def test_timeout_rows_of_an_older_chunk_format_are_played_again_their_limit_unknown(tmp_path):
    path = tmp_path / "s"
    spec = RunSpec(RULES, "greedy", 30)
    made = run(spec, path, jobs=1, chunk=10)
    expected = rows(read_store(path))
    stopped = "greedy ran past the deal time limit of 0.5 s"

    def as_timeout(records):
        records[3].update(outcome="unknown", termination="timeout", error=stopped, win_moves=None)

    for limit in (None, 0.5):
        rewrite_chunk(chunk_of(path, made.key, 15).path, as_timeout, version=2)
        assert read_store(path).query("deal == 14")["termination"].iloc[0] == "timeout"
        again = run(spec, path, jobs=1, chunk=10, deal_timeout=limit)
        assert (again.played, again.reused) == (10, 20)
        assert rows(read_store(path)).drop(columns="deal_timeout").equals(expected.drop(columns="deal_timeout"))


# --- the tier ------------------------------------------------------------------------------------

def test_a_run_that_names_a_tier_plays_again_the_rows_of_the_other(tmp_path):
    path = tmp_path / "s"
    python = RunSpec(RULES, f"{HELPERS}:TwoFaced", 12, tier="python")
    first = run(python, path, jobs=1)
    assert first.outcomes["lost"] == 12 and set(read_store(path)["tier"].astype(str)) == {"python"}
    compiled = run(replace(python, tier="compiled"), path, jobs=1)
    assert compiled.played == 12 and compiled.refused and set(read_store(path)["tier"].astype(str)) == {"compiled"}
    assert read_store(path)["moves"].gt(0).all()  # the compiled tier's own rows, not the Python tier's resignations
    assert run(replace(python, tier="auto"), path, jobs=1).played == 0  # auto takes either tier
    assert run(python, path, jobs=1).played == 12


def test_a_built_in_strategy_gives_equal_rows_in_both_tiers(tmp_path):
    spec = RunSpec(RULES, "greedy", 30)
    run(replace(spec, tier="python"), tmp_path / "py", jobs=1)
    run(replace(spec, tier="compiled"), tmp_path / "nb", jobs=1)
    py, nb = (rows(read_store(tmp_path / name)) for name in ("py", "nb"))
    assert set(py["tier"]) == {"python"} and set(nb["tier"]) == {"compiled"}
    assert py.drop(columns="tier").equals(nb.drop(columns="tier"))


# --- settings that cannot change a row -------------------------------------------------------------

@pytest.mark.parametrize("strategy", ["greedy", PLUG])
def test_chunking_jobs_and_backend_give_equal_rows_and_do_not_stop_reuse(tmp_path, strategy):
    spec = RunSpec(RULES, strategy, 30)
    one = run(spec, tmp_path / "one", jobs=1)
    two = run(spec, tmp_path / "two", jobs=2, chunk=7)
    assert one.in_process == (strategy == "greedy") and not two.in_process and two.jobs == 2
    assert rows(read_store(tmp_path / "one")).equals(rows(read_store(tmp_path / "two")))
    assert run(spec, tmp_path / "one", jobs=2, chunk=7).played == 0
    assert run(spec, tmp_path / "two", jobs=1).played == 0


def test_a_strategy_s_wall_clock_cap_is_part_of_the_run_key():
    spec = RunSpec(RULES, "solver", 1)
    default = SolverStrategy.PARAMETERS["seconds"].default
    keys = {run_labels(spec, load_strategy(f"solver:seconds={s}")).key.hash for s in (1, 2, default)}
    assert len(keys) == 3
    assert run_labels(spec, load_strategy("solver")).key.hash == run_labels(spec, load_strategy(f"solver:seconds={default}")).key.hash


# --- the report --------------------------------------------------------------------------------------

def test_the_report_says_for_every_win_figure_whether_its_wins_were_verified(tmp_path):
    from reports.build import build
    from reports.front import ANSWER, APPENDIX

    path = tmp_path / "s"
    unchecked = run(RunSpec(RULES, "heuristic", 60), path, jobs=1)  # a built-in: not verified by default
    checked = run(RunSpec(RULES, PLUG, 60), path, jobs=1)  # a plug-in: verified
    assert unchecked.wins and checked.wins
    _, md, report = build(path, tmp_path / "out")
    sections = {s.heading: s for s in report.sections}
    appendix = sections[APPENDIX].tables[0][1].set_index("player")["wins verified"]
    assert (appendix["heuristic"], appendix["heuristic-plug"]) == ("none", "all")
    whole = f"Wins verified by the referee: {checked.wins:,} of {checked.wins + unchecked.wins:,}."
    assert any(whole in p for p in sections[ANSWER].paragraphs) and whole in sections[ANSWER].charts[0].facts
    win_charts = [c for s in report.sections if s.heading != "Where strategies lose" for c in s.charts]
    assert len(win_charts) > 1 and all("Wins verified by the referee: " in c.facts for c in win_charts)
    assert whole in md.read_text()
