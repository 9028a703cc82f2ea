"""`tune`: the search space a strategy declares, resuming a study after a kill, pruning, and the confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import studies.paired as paired
import studies.tuning as tuning
from bakers_dozen.cli import main
from sim.errors import UserError
from sim.rules import Rules
from strategies import load_strategy
from studies.runner import run
from studies.search_space import search_space
from studies.spec import RunInterrupted, RunSpec

SMALL = ["--deals", "200", "--confirm", "200", "--jobs", "1", "--store", "st", "--out", "rep"]


def tune(*args: str):
    return CliRunner().invoke(main, ["tune", *args])


def last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def trials_in(journal: str) -> list:
    import optuna
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend, JournalFileOpenLock

    storage = JournalStorage(JournalFileBackend(journal, lock_obj=JournalFileOpenLock(journal)))
    (name,) = optuna.get_all_study_names(storage)
    return optuna.load_study(study_name=name, storage=storage).trials


# --- the search space ----------------------------------------------------------------------------


def test_declared_choices_and_ranges_are_searched():
    space = search_space("lookahead")
    dims = {d.name: d for d in space.dimensions}
    assert dims["depth"].low == 1 and dims["depth"].high == 6 and not dims["depth"].log
    assert dims["mode"].choices == ("rollout", "search")
    assert dims["reveal_bonus"].low == 0  # 0..1,000,000: linear, as a log scale cannot hold 0
    assert space.default_spec == "lookahead"


def test_spec_parameters_are_held_and_param_narrows_or_fixes():
    space = search_space("heuristic:allow_dig=false,guard=cycle", ["preset=builder,cautious"])
    assert space.fixed == {"allow_dig": False, "guard": "cycle"}
    (dim,) = space.dimensions
    assert dim.name == "preset" and dim.choices == ("builder", "cautious")
    assert space.spec({"preset": "builder"}) == "heuristic:allow_dig=false,guard=cycle,preset=builder"
    load_strategy(space.spec({"preset": "builder"}))  # what simulate -s accepts
    narrowed = search_space("lookahead", ["depth=2..3", "mode=search"])
    assert {d.name: (d.low, d.high) for d in narrowed.dimensions}["depth"] == (2, 3)
    assert narrowed.fixed == {"mode": "search"}  # a single value holds it


@pytest.mark.parametrize("spec, params, words", [
    ("greedy", [], "declares no parameters"),
    ("heuristic", ["nosuch=1..2"], "has no parameter 'nosuch'"),
    ("lookahead", ["depth=4..2"], "low end must be below"),
    ("lookahead", ["depth=0..3"], "out of range"),
    ("lookahead", ["depth=1..x"], "not a whole number"),
    ("heuristic", ["preset=a..b"], "not a number"),
    ("heuristic", ["preset=nosuch"], "not allowed"),
    ("heuristic", ["preset"], "is not NAME=LOW..HIGH"),
    ("random:home_first=true", [], "none of its parameters"),
])
def test_bad_input_is_one_line_and_exit_2(spec, params, words):
    result = tune(spec, *[a for p in params for a in ("--param", p)], *SMALL)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error:") and words in lines[0], result.output
    assert not Path("st").exists() and not Path("rep").exists()  # refused before anything is played or written
    with pytest.raises(UserError):
        search_space(spec, params)


# --- the study -----------------------------------------------------------------------------------


def test_a_killed_tune_resumes_where_it_stopped(monkeypatch):
    first = tune("heuristic", "--trials", "2", "--json", *SMALL)
    assert first.exit_code == 0, first.output
    journal = last_json(first.output)["study"]
    before = [(t.number, t.state.name, t.value, t.user_attrs["spec"]) for t in trials_in(journal)]
    assert len(before) == 2

    calls = {"n": 0}
    real_run = paired.run

    def killed(spec: RunSpec, *args, **kw):
        calls["n"] += 1
        if calls["n"] == 2:  # the second round of the next trial: the run is killed part way
            raise RunInterrupted(0, spec.deals, Path("st"))
        return real_run(spec, *args, **kw)

    monkeypatch.setattr(paired, "run", killed)
    stopped = tune("heuristic", "--trials", "5", "--json", *SMALL)
    assert stopped.exit_code == 130, stopped.output
    assert "run the same command again to resume" in stopped.output
    monkeypatch.setattr(paired, "run", real_run)

    again = tune("heuristic", "--trials", "5", "--json", *SMALL)
    assert again.exit_code == 0, again.output
    assert last_json(again.output)["study"] == journal  # the same study, continued
    trials = trials_in(journal)
    assert [(t.number, t.state.name, t.value, t.user_attrs["spec"]) for t in trials[:2]] == before  # kept as they were
    assert trials[2].state.name not in ("COMPLETE", "PRUNED")  # the killed trial: recorded, not counted
    assert sum(t.state.name in ("COMPLETE", "PRUNED") for t in trials) == 5
    assert len(trials) == 6  # 2 before the kill, the killed one, then only the 3 still missing
    assert trials[3].params == trials[2].params  # the setting the kill cut short is tried again, first


def test_the_first_trial_is_the_strategys_own_setting():
    result = tune("heuristic:preset=builder", "--param", "allow_dig=false,true", "--trials", "1", "--json", *SMALL)
    assert result.exit_code == 0, result.output
    (trial,) = trials_in(last_json(result.output)["study"])
    assert trial.user_attrs["spec"] == "heuristic:allow_dig=true,guard=cycle,preset=builder"


def test_trials_that_fall_behind_are_pruned():
    result = tune("heuristic", "--trials", "8", "--json", *SMALL)
    assert result.exit_code == 0, result.output
    out = last_json(result.output)
    assert out["trials"].get("pruned", 0) >= 1, out["trials"]
    trials = trials_in(out["study"])
    pruned = [t for t in trials if t.state.name == "PRUNED"]
    assert all(len(t.intermediate_values) < tuning.STEPS for t in pruned)  # stopped before the last round
    complete = [t for t in trials if t.state.name == "COMPLETE"]
    assert all(len(t.intermediate_values) == tuning.STEPS for t in complete)
    report = Path("rep/report.md").read_text()
    assert "## Optimisation history" in report and "## Confirmation on fresh deals" in report
    assert Path("rep/report.html").is_file() and Path("rep/charts/tuning-history.svg").is_file()


def test_confirmation_plays_fresh_deals_and_reports_a_paired_test():
    result = tune("heuristic", "--trials", "3", "--first", "11", "--json", *SMALL)
    assert result.exit_code == 0, result.output
    out = last_json(result.output)
    load_strategy(out["best"])
    c = out["confirm"]
    assert c["first"] == 11 + 200 and c["deals"] == 200  # after the tuning deals 11-210
    for side, spec in (("tuned", out["best"]), ("default", "heuristic")):
        assert c[side]["spec"] == spec
        stored = run(RunSpec(Rules(), spec, 200, c["first"]), "st", jobs=1)
        assert stored.played == 0  # the confirmation's rows are in the store, where simulate finds them
        assert c[side]["wins"] == stored.wins and c[side]["win_rate"] == pytest.approx(stored.wins / 200)
        assert c[side]["ci_low"] <= c[side]["win_rate"] <= c[side]["ci_high"]
    assert 0 <= c["p_value"] <= 1
    assert c["difference"] == pytest.approx(c["tuned"]["win_rate"] - c["default"]["win_rate"])


def test_confirm_zero_skips_it():
    result = tune("heuristic", "--trials", "1", "--json", "--confirm", "0", *SMALL[:2], *SMALL[4:])
    assert result.exit_code == 0, result.output
    assert last_json(result.output)["confirm"] is None


def test_a_plug_in_is_tuned_over_the_range_given_for_an_unbounded_parameter():
    plug_in = "examples.lowest_first:LowestFirst"
    refused = tune(plug_in, *SMALL)  # max_moves declares no maximum: nothing to search unless --param gives a range
    assert refused.exit_code == 2 and "none of its parameters" in refused.output, refused.output
    result = tune(plug_in, "--param", "max_moves=20..300", "--trials", "3", "--json", *SMALL)
    assert result.exit_code == 0, result.output
    out = last_json(result.output)
    assert out["best"].startswith(plug_in + ":max_moves=")
    assert 20 <= out["params"]["max_moves"] <= 300
    assert load_strategy(out["best"]).params["max_moves"] == out["params"]["max_moves"]
    assert out["confirm"]["default"]["spec"] == plug_in
