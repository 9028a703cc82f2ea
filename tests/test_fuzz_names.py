"""Hostile strings and names: markup and control characters in everything a user or a plug-in supplies are
shown as written, never obeyed; a preset's name labels only the preset's rules; output that cannot be written
is one line; the Python API keeps the command line's checks."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import EntryPoint
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

import strategies as registry
from bakers_dozen import api
from bakers_dozen.cli import main
from reports.names import rules_labels
from sim.errors import UserError
from sim.rules import VARIANTS, Rules, RulesError, find_variant, load_variant_file, rules_from_mapping
from sim.text import printable
from studies.reading import read_store
from studies.runner import run
from studies.spec import RunSpec

ESC = "\x1b[31mred\x1b]0;title\x07"
"""An ESC colour sequence and a window-title sequence: a terminal would obey both."""
HOSTILE = ["[/]oops", "[bold]st2", "[link=file:///etc]x[/link]", ":smile:", "a\\[b]"]
"""Rich markup (closing tags, styles, links), an emoji code and an escaped bracket."""
ROOT = Path(__file__).resolve().parent.parent


def one_line_error(result, *needles: str) -> str:
    """The single error line of a refused command, holding each needle as written."""
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), result.output
    assert "Traceback" not in result.output and "\x1b" not in result.output
    for needle in needles:
        assert needle in lines[0], (needle, lines[0])
    return lines[0]


def variant_file(folder: Path, stem: str, **fields: object) -> Path:
    def toml(v: object) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
        return str(v)

    path = folder / f"{stem}.toml"
    path.write_text("".join(f"{k} = {toml(v)}\n" for k, v in fields.items()), encoding="utf-8")
    return path


# --- markup and control characters ---------------------------------------------------

def test_printable_escapes_every_control_and_keeps_the_rest():
    assert printable(ESC) == "\\x1b[31mred\\x1b]0;title\\x07"
    assert printable("a\u202eb\u2028c") == "a\\u202eb\\u2028c"  # a bidi override, a line separator
    assert printable("x\ny\tz", lines=True) == "x\ny\tz" and printable("x\ny") == "x\\x0ay"
    for text in HOSTILE + ["dé ǅ 日本"]:
        assert printable(text) == text


@pytest.mark.parametrize("name", HOSTILE)
def test_variant_names_and_descriptions_with_markup_print_as_written(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    path = variant_file(tmp_path, "v", base="bakers-dozen", name=name, description=f"{name} desc", face_down=1)
    r = CliRunner().invoke(main, ["solve", "-v", str(path), "--deals", "1", "--nodes", "2000", "--store", "st", "-q"])
    assert r.exit_code == 0, r.output
    assert name in r.output and "Traceback" not in r.output
    for args in (["deal", "-v", str(path), "-d", "1"], ["play", "-v", str(path), "-d", "2", "--tier", "python"]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 0, r.output
        assert f"# {name} (file {path})" in r.output.splitlines()[0]  # the file, not a preset of its name


@pytest.mark.parametrize("store", ["[/]st", "[bold]st2", "st" + ESC.replace("\x07", "")])
def test_store_paths_with_markup_or_escapes_print_as_written(tmp_path, monkeypatch, store):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["solve", "--deals", "1", "--nodes", "2000", "--store", store, "-q"])
    assert r.exit_code == 0, r.output
    assert f"store: {printable(store)} (key" in r.output and "\x1b" not in r.output
    r = CliRunner().invoke(main, ["simulate", "-n", "3", "--store", store, "-q", "-j", "1"])
    assert r.exit_code == 0, r.output
    assert f"store            {printable(store)} (key" in r.output and "\x1b" not in r.output


def _plugin(tmp_path: Path, monkeypatch, description: str) -> None:
    module = "plug_names_desc"
    (tmp_path / f"{module}.py").write_text(
        "from strategies.greedy import GreedyStrategy\n\n"
        f"class Plug(GreedyStrategy):\n    name = 'plugdesc'\n    description = {description!r}\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, module, raising=False)
    ep = EntryPoint(name="plugdesc", value=f"{module}:Plug", group=registry.ENTRY_POINT_GROUP)
    monkeypatch.setattr(registry, "entry_points", lambda group: [ep] if group == registry.ENTRY_POINT_GROUP else [])


@pytest.mark.parametrize("description", ["[/]desc", "[red]x", "desc" + ESC])
def test_a_plugin_description_with_markup_does_not_break_the_strategy_list(tmp_path, monkeypatch, description):
    _plugin(tmp_path, monkeypatch, description)
    r = CliRunner().invoke(main, ["strategies"], env={"COLUMNS": "400"})
    assert r.exit_code == 0, r.output
    assert printable(description) in r.output and "greedy" in r.output and "\x1b" not in r.output


@pytest.mark.parametrize("value", ["[/]x", "[bold]y", "z" + ESC])
def test_parameter_values_with_markup_or_escapes_are_one_plain_line(value):
    r = CliRunner().invoke(main, ["play", "-d", "1", "-s", f"heuristic:preset={value}"])
    one_line_error(r, printable(value))


def test_strategy_names_read_from_a_store_reach_the_terminal_escaped(tmp_path):
    from bakers_dozen.options import console
    from bakers_dozen.report import _terminal_table

    screen = console()
    with screen.capture() as out:
        screen.print(_terminal_table(printable("t"), pd.DataFrame({"strategy": ["[/]s" + ESC], "n": [1]}), 200))
    assert "[/]s\\x1b[31mred" in out.get() and "\x1b" not in out.get()


# --- preset names ----------------------------------------------------------------------

def _spellings(name: str) -> list[str]:
    return [name, name.upper(), name.title().replace("-", " "), name.replace("-", "_"), f" {name} ".strip(),
            name.replace("-", " - "), name.replace("-", "\u2013"), "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c
                                                                         for c in name)]


@pytest.mark.parametrize("preset", VARIANTS, ids=[v.name for v in VARIANTS])
def test_a_variant_file_may_not_take_a_preset_name_for_other_rules(tmp_path, preset):
    for taken in (preset.name, *preset.aliases):
        for spelling in _spellings(taken):
            assert find_variant(spelling) is preset.rules, spelling
            with pytest.raises(RulesError, match="belongs to a preset"):
                rules_from_mapping({"base": "bakers-dozen" if preset.name != "bakers-dozen" else "other-suit",
                                    "name": spelling})
            with pytest.raises(RulesError, match="belongs to a preset"):
                rules_from_mapping({"base": preset.name, "name": spelling, "worrying_back": True})
            same = rules_from_mapping({"base": preset.name, "name": spelling})  # the preset's own rules: allowed
            assert same.fingerprint == preset.rules.fingerprint
    stem = preset.aliases[0] if preset.aliases else preset.name
    unnamed = load_variant_file(variant_file(tmp_path, stem, base=preset.name, worrying_back=True))
    assert unnamed.name == f"{stem}.toml"  # the file names it, and not as the preset


def test_the_command_line_refuses_a_file_named_like_a_preset(tmp_path):
    path = variant_file(tmp_path, "v", base="bakers-dozen", name="Spanish Patience")
    for verb in (["deal", "-d", "1"], ["simulate", "-n", "5", "--store", str(tmp_path / "st")]):
        r = CliRunner().invoke(main, [*verb, "-v", str(path)])
        one_line_error(r, "'Spanish Patience'", "belongs to a preset")
    assert not (tmp_path / "st").exists()


def test_the_runner_refuses_a_preset_name_on_other_rules(tmp_path):
    with pytest.raises(RulesError, match="belongs to a preset"):
        run(RunSpec(Rules(worrying_back=True), "greedy", 5), tmp_path / "st", jobs=1)
    assert not (tmp_path / "st").exists()


def test_a_preset_name_selects_the_preset_rules_whatever_name_the_rows_carry(tmp_path):
    run(RunSpec(Rules(name="mine"), "greedy", 20), tmp_path, jobs=1)  # the preset's rules under another name
    rows = read_store(tmp_path, variant="bakers-dozen")
    assert len(rows) == 20 and set(rows["variant"]) == {"mine"}
    assert len(read_store(tmp_path, variant="Bakers Dozen")) == 20 and len(read_store(tmp_path, variant="mine")) == 20


def test_report_labels_rules_by_fingerprint():
    bd, sp = find_variant("bakers-dozen").fingerprint, find_variant("spanish").fingerprint
    pairs = pd.DataFrame({"variant": ["spanish-patience", "mine", "mine", "mine", "x"],
                          "rules_fingerprint": [bd, "f" * 12, "e" * 12, bd, sp]})
    labels = rules_labels(pairs)
    assert labels[bd] == "bakers-dozen" and labels[sp] == "spanish-patience"
    assert labels["f" * 12] == f"mine (rules {'f' * 12})" and labels["e" * 12] == f"mine (rules {'e' * 12})"
    other = rules_labels(pd.DataFrame({"variant": ["spanish"], "rules_fingerprint": ["a" * 12]}))
    assert other == {"a" * 12: f"spanish (rules {'a' * 12})"}  # a preset's alias on other rules


def test_a_report_shows_two_rules_under_one_name_apart(tmp_path):
    from reports.build import build

    store = tmp_path / "st"
    run(RunSpec(Rules(name="mine", face_down=1), "greedy", 30), store, jobs=1)
    run(RunSpec(Rules(name="mine", face_down=2), "greedy", 30), store, jobs=1)
    _, md, report = build(store, tmp_path / "out")
    fps = {Rules(name="mine", face_down=k).fingerprint for k in (1, 2)}
    text = md.read_text(encoding="utf-8")
    assert all(f"mine (rules {fp})" in text for fp in fps)


# --- output that cannot be written -----------------------------------------------------

def _cli(*args: str, stdout: object) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bakers_dozen", *args], stdout=stdout, stderr=subprocess.PIPE,
                          text=True, env=env, timeout=600)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["variants"], ["strategies"], ["deal", "-d", "1"],
                                  ["play", "-d", "1", "--json", "--tier", "python"]])
def test_a_full_standard_output_is_one_line(args):
    with open("/dev/full", "w") as full:
        r = _cli(*args, stdout=full)
    assert r.returncode == 2, r.stderr
    assert r.stderr.splitlines() == ["bakers-dozen: error: cannot write standard output: No space left on device"]


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_a_full_output_file_is_one_line():
    r = CliRunner().invoke(main, ["deal", "-d", "1", "--svg", "/dev/full"])
    one_line_error(r, "cannot write '/dev/full': No space left on device")


def test_a_closed_pipe_ends_quietly(tmp_path):
    read, write = os.pipe()
    os.close(read)
    with os.fdopen(write, "w") as closed:
        r = _cli("deal", "-d", "1", "--svg", "-", stdout=closed)
    assert r.returncode == 0 and r.stderr == ""  # a reader that stopped reading is not a failure (as `| head` expects)


def test_an_svg_file_is_not_touched_when_the_deal_is_refused(tmp_path):
    svg = tmp_path / "d.svg"
    svg.write_text("kept", encoding="utf-8")
    r = CliRunner().invoke(main, ["deal", "-d", "0", "--svg", str(svg)])
    assert r.exit_code == 2 and svg.read_text(encoding="utf-8") == "kept"


@pytest.mark.parametrize(("text", "field"), [("columns = {n}\n", "columns"),
                                             ('name = "x"\nstart_home = ["AC", {n}]\n', "start_home")])
def test_a_huge_integer_in_a_variant_file_is_one_line(tmp_path, text, field):
    path = tmp_path / "big.toml"
    path.write_text(text.format(n="1" * 60_000), encoding="utf-8")
    one_line_error(CliRunner().invoke(main, ["deal", "-v", str(path), "-d", "1"]), f"field {field!r}", "allowed")
    one_line_error(CliRunner().invoke(main, ["solve", "--set", "columns=" + "9" * 5000, "--deals", "1"]),
                   "--set columns", "allowed")


# --- the Python API keeps the command line's checks ------------------------------------

@pytest.mark.parametrize("seed", ["a", 1.5, -1, 2**62, 2**64 + 5, True])
def test_api_play_refuses_strategy_seeds_the_command_line_refuses(seed):
    r = CliRunner().invoke(main, ["play", "-d", "1", "--strategy-seed", str(seed)])
    assert r.exit_code == 2
    with pytest.raises(UserError, match="strategy seed"):
        api.play("bakers-dozen", 1, "random", strategy_seed=seed)


@pytest.mark.parametrize(("deals", "message"), [("1-5", "is not a range"), ((10, 1), "is after the last"),
                                                ((0, 3), "start at 1"), ((1, "x"), "is not a range"),
                                                ((1, 2, 3), "is not a range"), ((1.5, 2), "is not a range")])
def test_api_read_store_refuses_the_ranges_the_command_line_refuses(tmp_path, deals, message):
    run(RunSpec(Rules(), "greedy", 5), tmp_path, jobs=1)
    with pytest.raises(UserError, match=message):
        api.read_store(tmp_path, deals=deals)
    assert len(api.read_store(tmp_path, deals=(2, 3))) == 2
    if isinstance(deals, tuple) and len(deals) == 2 and deals != (1.5, 2):
        r = CliRunner().invoke(main, ["solve", "--deals", f"{deals[0]}-{deals[1]}", "--store", str(tmp_path / "s")])
        one_line_error(r, message)


def test_api_simulate_takes_and_checks_a_strategy_seed(tmp_path):
    rows = api.simulate("bakers-dozen", "random", 3, strategy_seed=7, store=tmp_path / "st", jobs=1)
    assert set(rows["strategy_seed"]) == {7}
    with pytest.raises(UserError, match="strategy_seed"):
        api.simulate("bakers-dozen", "random", 3, strategy_seed="a", store=tmp_path / "st", jobs=1)


def test_the_progress_bar_shows_a_run_label_as_written():
    import io

    from studies.progress import RichProgress

    out = io.StringIO()
    bar = RichProgress(file=out)
    bar.start(10, 0, 0, "[/]v" + ESC + " / [bold]s")
    bar.note("note [/]" + ESC)
    bar.stop()
    assert "[/]v\\x1b[31mred" in out.getvalue() and "note [/]\\x1b" in out.getvalue() and "\x1b" not in out.getvalue()
