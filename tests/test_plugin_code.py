"""A plug-in's stored results are its code's (issue 60): an edited plug-in is played again, a restored one reuses
its rows, through `simulate`, `tournament`, `compare`, `tune` and the API; nameless classes are players of their
own; a tournament of one player twice is refused; rows without a digest are still read and told apart.

The plug-ins are files in the test's own folder (its current folder), loaded as ``module:Class`` by the main
process and by runner workers that are kept between the runs of a test, so that both a module imported before
its file changed (the main process) and a worker holding the old code are met.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.render import md_escape
from sim.rules import Rules
from strategies import load_strategy
from strategies.check import check_strategy
from studies.reading import read_store

REPO = Path(__file__).resolve().parents[1]

WINS = """
from strategies.heuristic import HeuristicStrategy


class Player(HeuristicStrategy):
    '''The built-in heuristic under a plug-in's name: it wins some of a few dozen deals.'''
"""

RESIGNS = """
from strategies import Strategy
from strategies.heuristic import HeuristicStrategy


class Player(Strategy):
    '''Edited: resigns at once (Python tier only), so it wins nothing; the heuristic's parameters, so that it can be tuned.'''

    PARAMETERS = HeuristicStrategy.PARAMETERS

    def choose(self, view, moves):
        return None
"""


@pytest.fixture(autouse=True)
def _fresh_workers():
    """Workers started in this test's folder (a worker loads a module file from its own current folder), kept
    between the test's runs, stopped after it."""
    from studies.backends import close_pools

    close_pools()
    yield
    close_pools()


def plugin(text: str) -> str:
    """Write ``text`` as a module file of a new name in the current folder; return the module's name."""
    name = f"plug_{uuid.uuid4().hex[:10]}"
    Path(f"{name}.py").write_text(text, encoding="utf-8")
    return name


def edit(module: str, text: str) -> None:
    Path(f"{module}.py").write_text(text, encoding="utf-8")


def cli(*args: str) -> str:
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, (result.output, result.exception)
    return result.output


def last_json(output: str) -> dict:
    return json.loads(output.strip().splitlines()[-1])


def digest(module: str, cls: str = "Player") -> str:
    return load_strategy(f"{module}:{cls}").code_digest


@pytest.mark.slow
def test_simulate_plays_an_edited_plugin_again_and_reuses_the_restored_code(tmp_path):
    m = plugin(WINS)
    spec = f"{m}:Player"
    first = last_json(cli("simulate", "-s", spec, "-n", "40", "--store", "st", "-j", "1", "-q", "--json"))
    assert first["played"] == 40 and first["wins"] > 0
    assert first["strategy"] == spec and first["code_digest"] == digest(m)
    edit(m, RESIGNS)
    second = last_json(cli("simulate", "-s", spec, "-n", "40", "--store", "st", "-j", "1", "-q", "--json"))
    assert (second["played"], second["reused"], second["wins"]) == (40, 0, 0)  # the new code's figure
    assert second["code_digest"] != first["code_digest"] and second["key"] != first["key"]
    edit(m, WINS)
    text = cli("simulate", "-s", spec, "-n", "40", "--store", "st", "-j", "1", "-q")
    assert "(played 0, reused 40)" in text
    assert f"code             {first['code_digest']} (the plug-in's code digest; the 40 reused deals were played by " \
           "this code)" in text
    assert re.search(rf"wins\s+{first['wins']}\n", text)
    cli("report", "st", "--out", "r")  # the restored run only reused rows, so no manifest says it came last
    report = (Path("r") / "report.md").read_text(encoding="utf-8")
    for label in (f"{spec} [code {first['code_digest']}, current]", f"{spec} [code {second['code_digest']}]"):
        assert md_escape(label) in report


@pytest.mark.slow
def test_the_api_plays_an_edited_plugin_again_in_the_same_process(tmp_path):
    from bakers_dozen import api

    m = plugin(WINS)
    spec = f"{m}:Player"
    one = api.simulate("bakers-dozen", spec, deals=30, store="st", jobs=1).attrs["summary"]
    edit(m, RESIGNS)
    two = api.simulate("bakers-dozen", spec, deals=30, store="st", jobs=1).attrs["summary"]
    edit(m, WINS)
    three = api.simulate("bakers-dozen", spec, deals=30, store="st", jobs=1).attrs["summary"]
    assert one["played"] == 30 and one["wins"] > 0
    assert (two["played"], two["wins"]) == (30, 0) and two["code_digest"] != one["code_digest"]
    assert (three["played"], three["reused"], three["wins"], three["code_digest"]) == (0, 30, one["wins"], one["code_digest"])


@pytest.mark.slow
def test_tournament_and_compare_play_an_edited_plugin_again(tmp_path):
    m = plugin(WINS)
    spec = f"{m}:Player"
    runs = []
    for text in (WINS, RESIGNS, WINS):
        edit(m, text)
        out = last_json(cli("tournament", "--strategies", f"{spec};greedy", "-n", "30", "--store", "st", "--out", "t",
                            "-j", "1", "-q", "--json"))
        runs.append({r["spec"]: r for r in out["runs"]})
        assert sorted(out["ranking"]) == sorted([spec, "greedy"])  # labels, as in the report's tables
    one, two, three = (r[spec] for r in runs)
    assert one["played"] == 30 and one["wins"] > 0
    assert (two["played"], two["wins"]) == (30, 0) and runs[1]["greedy"]["reused"] == 30
    assert (three["played"], three["reused"], three["wins"]) == (0, 30, one["wins"])
    assert three["code_digest"] == one["code_digest"] != two["code_digest"]

    compared = []
    for text in (RESIGNS, WINS):
        edit(m, text)
        output = cli("compare", "--variants", "bakers-dozen,kings-into-empty", "-s", spec, "-n", "30", "--store", "st",
                     "--out", "c", "-j", "1", "-q", "--json")
        compared.append(last_json(output))
        assert f"{spec} on bakers-dozen: code {compared[-1]['runs'][0]['code_digest']} played its 30 deals, 30 of them " \
               "reused from the store" in output
    assert compared[0]["strategy"] == spec
    assert all(r["reused"] == 30 and r["played"] == 0 for c in compared for r in c["runs"] if r["variant"] == "bakers-dozen")
    assert {r["variant"]: r["played"] for r in compared[0]["runs"]} == {"bakers-dozen": 0, "kings-into-empty": 30}
    assert {r["variant"]: r["played"] for r in compared[1]["runs"]} == {"bakers-dozen": 0, "kings-into-empty": 30}
    assert {r["code_digest"] for r in compared[1]["runs"]} == {one["code_digest"]}

    cli("report", "st", "--out", "r")  # the store holds both codes of the plug-in: two players, never pooled
    text = (Path("r") / "report.md").read_text(encoding="utf-8")
    for label in (f"{spec} [code {one['code_digest']}, current]", f"{spec} [code {two['code_digest']}]"):
        assert md_escape(label) in text
    assert f"| {md_escape(spec)} |" not in text


@pytest.mark.slow
def test_tune_starts_a_study_of_its_own_for_edited_code_and_continues_the_restored_one(tmp_path):
    m = plugin(WINS)
    spec = f"{m}:Player"
    args = ("tune", spec, "--param", "preset=builder,balanced", "--trials", "2", "--deals", "20", "--confirm", "0",
            "--store", "st", "--out", "tu", "-j", "1", "-q", "--json")
    first = last_json(cli(*args))
    old = set(read_store("st")["key"].astype(str))
    edit(m, RESIGNS)
    second = last_json(cli(*args))
    rows = read_store("st")
    new = rows[~rows["key"].astype(str).isin(old)]
    assert second["study"] != first["study"] and second["best_value"] == 0.0
    assert len(new) >= 20 and new["strategy_identity"].astype(str).str.contains(f"#{digest(m)}").all()
    edit(m, WINS)
    output = cli(*args)
    assert last_json(output)["study"] == first["study"] and last_json(output)["best_value"] == first["best_value"]
    assert len(read_store("st")) == len(rows)  # nothing played: the restored code's rows and trials are reused
    assert f"code {digest(m)}" in output


def test_two_nameless_classes_of_one_file_are_two_players(tmp_path):
    m = plugin("from strategies.greedy import GreedyStrategy\n\n\n"
               "class First(GreedyStrategy):\n    pass\n\n\nclass Second(GreedyStrategy):\n    pass\n")
    a, b = load_strategy(f"{m}:First"), load_strategy(f"{m}:Second")
    assert (a.name, b.name) == (f"{m}:First", f"{m}:Second")
    assert a.code_digest == b.code_digest and a.identity != b.identity
    assert a.label == f"{m}:First"


@pytest.mark.slow
def test_a_tournament_of_two_nameless_classes_ranks_both(tmp_path):
    m = plugin("from strategies.greedy import GreedyStrategy\nfrom strategies.heuristic import HeuristicStrategy\n\n\n"
               "class First(GreedyStrategy):\n    pass\n\n\nclass Second(HeuristicStrategy):\n    pass\n")
    output = cli("tournament", "--strategies", f"{m}:First;{m}:Second", "-n", "30", "--store", "st", "--out", "t",
                 "-j", "1", "-q", "--json")
    out = last_json(output)
    assert sorted(out["ranking"]) == [f"{m}:First", f"{m}:Second"] and len(out["runs"]) == 2
    ranking = (Path("t") / "report.md").read_text(encoding="utf-8")
    assert f"{m}:First" in ranking and f"{m}:Second" in ranking


@pytest.mark.parametrize("pair", ["greedy;greedy", "heuristic;heuristic:preset=cautious", "{m}:Player;{m}:Player",
                                  "{m}:Player;{m}:Alias"])
def test_a_tournament_of_one_player_twice_is_refused_in_one_line(tmp_path, pair):
    m = plugin(WINS + "\n\nAlias = Player\n")
    result = CliRunner().invoke(main, ["tournament", "--strategies", pair.format(m=m), "-n", "10", "--store", "st",
                                       "--out", "t"])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "are the same player" in lines[0] and "a tournament needs different players" in lines[0]
    assert not Path("st").exists() or not list(Path("st").rglob("*.parquet"))


def test_a_plugin_built_from_a_base_in_another_file_is_keyed_by_both_files(tmp_path):
    package = f"pkg_{uuid.uuid4().hex[:10]}"
    Path(package).mkdir()
    (Path(package) / "__init__.py").write_text("", encoding="utf-8")
    base = Path(package) / "base.py"
    base.write_text("from strategies.greedy import GreedyStrategy\n\n\nclass Base(GreedyStrategy):\n    name = 'based'\n",
                    encoding="utf-8")
    (Path(package) / "player.py").write_text(f"from {package}.base import Base\n\n\nclass Player(Base):\n    pass\n",
                                             encoding="utf-8")
    before = load_strategy(f"{package}.player:Player")
    assert before.name == f"{package}.player:Player"  # its own name, not its base's
    base.write_text(base.read_text(encoding="utf-8") + "\n# a comment is code too: the digest is of the source\n",
                    encoding="utf-8")
    after = load_strategy(f"{package}.player:Player")
    assert before.code_digest != after.code_digest and after.name == before.name


def test_an_edited_helper_module_of_the_plugins_package_changes_its_digest_and_its_play(tmp_path):
    package = f"pkg_{uuid.uuid4().hex[:10]}"
    Path(package).mkdir()
    (Path(package) / "__init__.py").write_text("", encoding="utf-8")
    helper = Path(package) / "helper.py"
    helper.write_text("def which():\n    return 0\n", encoding="utf-8")
    (Path(package) / "player.py").write_text(
        f"from strategies.greedy import GreedyStrategy\nfrom {package}.helper import which\n\n\n"
        "class Player(GreedyStrategy):\n    def pick(self):\n        return which()\n", encoding="utf-8")
    before = load_strategy(f"{package}.player:Player")
    assert before.pick() == 0
    helper.write_text("def which():\n    return 1  # edited\n", encoding="utf-8")
    after = load_strategy(f"{package}.player:Player")
    assert after.pick() == 1 and after.code_digest != before.code_digest  # the helper ran again before its user


def test_an_edited_module_is_loaded_again_before_it_plays(tmp_path):
    m = plugin("from strategies.greedy import GreedyStrategy\n\n\nclass Player(GreedyStrategy):\n    MARK = 1\n")
    assert type(load_strategy(f"{m}:Player")).MARK == 1
    edit(m, "from strategies.greedy import GreedyStrategy\n\n\nclass Player(GreedyStrategy):\n    MARK = 2\n")
    assert type(load_strategy(f"{m}:Player")).MARK == 2  # the code played is the code the digest names


def test_rows_without_a_code_digest_are_read_and_kept_apart(tmp_path):
    """A plug-in's rows stored before digests were (their identity is ``name@version``, as a plug-in that opts out
    with ``code_in_key = False`` still stores) are read, never reused by a run whose digest is known, and shown
    in the report as another player, "code not recorded"."""
    opted_out = "from strategies.greedy import GreedyStrategy\n\n\nclass Player(GreedyStrategy):\n    name = 'oldie'\n"
    m = plugin(opted_out + "    code_in_key = False\n")
    old = last_json(cli("simulate", "-s", f"{m}:Player", "-n", "20", "--store", "st", "-j", "1", "-q", "--json"))
    assert old["strategy_identity"] == "oldie@1" and old["code_digest"] is None
    edit(m, opted_out)
    new = last_json(cli("simulate", "-s", f"{m}:Player", "-n", "20", "--store", "st", "-j", "1", "-q", "--json"))
    assert new["played"] == 20 and new["strategy_identity"] == f"oldie@1#{new['code_digest']}"
    rows = read_store("st", allow_mixed=True)
    assert sorted(rows["strategy_identity"].astype(str).unique()) == ["oldie@1", new["strategy_identity"]]
    output = cli("report", "st", "--out", "r")
    text = (Path("r") / "report.md").read_text(encoding="utf-8")
    for label in ("oldie [code not recorded]", f"oldie [code {new['code_digest']}, current]"):
        assert md_escape(label) in text and label in output
    Path(f"{m}.py").unlink()  # the plug-in is gone: its latest run's code is marked, as a guess said as one
    cli("report", "st", "--out", "r2")
    text = (Path("r2") / "report.md").read_text(encoding="utf-8")
    assert md_escape(f"oldie [code {new['code_digest']}, latest run]") in text and "current" not in text


def test_check_strategy_says_what_results_are_keyed_by(tmp_path):
    m = plugin("from strategies.greedy import GreedyStrategy\n\n\nclass Player(GreedyStrategy):\n    pass\n\n\n"
               "class Fixed(GreedyStrategy):\n    name = 'fixed'\n    code_in_key = False\n")
    one = [Rules()]
    keyed = check_strategy(f"{m}:Player", deals=1, variants=one).result("code")
    fixed = check_strategy(f"{m}:Fixed", deals=1, variants=one).result("code")
    assert keyed.status == fixed.status == "pass"
    assert f"digest {digest(m)} of {m}" in keyed.detail
    assert "code_in_key = False" in fixed.detail and "bump version" in fixed.detail
    bad = plugin("from strategies.greedy import GreedyStrategy\n\n\nclass Player(GreedyStrategy):\n    code_in_key = 1\n")
    with pytest.raises(Exception, match="'code_in_key' must be True or False"):
        load_strategy(f"{bad}:Player")


@pytest.mark.parametrize("spec", ["examples.home_then_random:HomeThenRandom", "examples.lowest_first:LowestFirst"])
def test_both_examples_pass_check_strategy(spec, monkeypatch):
    monkeypatch.chdir(REPO)
    report = check_strategy(spec, deals=1)
    assert report.failed == [], report.text()
    assert report.result("code").detail.startswith(f"digest {load_strategy(spec).code_digest} of examples.")


def _blocks(markdown: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", markdown, flags=re.S)


@pytest.mark.slow
def test_the_guides_minimal_plugin_runs_exactly_as_printed(tmp_path):
    """The guide's first code block is examples/home_then_random.py, and its first console block, run in a folder
    holding that file, prints what the guide shows (all but the speed, which is the machine's)."""
    guide = (REPO / "docs" / "writing-strategies.md").read_text(encoding="utf-8")
    code = _blocks(guide, "python")[0]
    assert code == (REPO / "examples" / "home_then_random.py").read_text(encoding="utf-8")
    assert len(code.splitlines()) <= 15
    Path("home_then_random.py").write_text(code, encoding="utf-8")
    console = _blocks(guide, "console")[0].splitlines()
    command, shown = console[0].removeprefix("$ "), console[1:]
    bin_dir = Path(sys.executable).parent
    run = subprocess.run([str(bin_dir / command.split()[0]), *command.split()[1:]], capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 0, run.stderr
    printed = run.stdout.splitlines()

    def steady(lines: list[str]) -> list[str]:
        return [line for line in lines if not line.lstrip().startswith("speed")]

    assert steady(printed) == steady(shown)


def test_a_player_has_one_name_in_the_terminal_json_and_report(tmp_path):
    """A spec whose label differs from its text (a default written out) is named by its label in the JSON
    ranking, the sequential tests (terminal, JSON and report) and the report's tables."""
    r = CliRunner().invoke(main, ["tournament", "--strategies", "greedy;heuristic:preset=cautious", "--sequential",
                                  "--deals", "400", "--round-deals", "100", "--delta", "3", "-j", "1", "-q", "--store",
                                  "st", "--out", "rep", "--json"])
    assert r.exit_code == 0, r.output
    out = last_json(r.output)
    assert sorted(out["ranking"]) == ["greedy", "heuristic"]
    (pair,) = out["sequential"]["pairs"]
    assert {pair["first"], pair["second"]} == {"greedy", "heuristic"}
    shown = "\n".join([r.output, (Path("rep") / "report.md").read_text(encoding="utf-8"),
                       (Path("rep") / "sequential.md").read_text(encoding="utf-8")])
    spec = "heuristic:preset=cautious"  # only the commands that reproduce the study may show it
    for as_a_name in (f"| {spec} |", f"`{spec}`", f"{spec} vs", f"vs {spec}", f"{spec} better", md_escape(spec) + " |"):
        assert as_a_name not in shown
    assert "`heuristic` vs `greedy`" in shown or "`greedy` vs `heuristic`" in shown
