"""Fuzzing the command line with hostile input: typed layouts, variant files, strategy specs and game records.

Every case goes through the real entry point (`bakers_dozen.cli.main` under click's
CliRunner) and must end in one of the documented ways: exit 0; exit 1 only
for `verify`'s "a claim of the record is false"; or exit 2 with exactly one
line on standard error starting ``bakers-dozen: error:``. Never a traceback,
never another exception. Hypothesis shrinks any failure to a small reproducer.
"""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bakers_dozen.cli import main
from sim.cards import card_str
from sim.rules import PARAMETERS, VARIANTS
from strategies import BUILTINS

FUZZ = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

CARDS = [card_str(c) for c in range(52)]
WON_LAYOUT = "\n".join(" ".join(CARDS[r + 13 * s] for s in range(4)) for r in reversed(range(13))) + "\n"
"""Every pile holds one rank, aces on top: any strategy wins it in 52 moves, so playing it stays cheap."""


def invoke(*args: str, input: str | bytes | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def assert_clean_end(result, *, claims: bool = False) -> None:
    """Exit 0; exit 1 only where a record's claim is false (``claims``); else exit 2 and one error line."""
    exc = result.exception
    detail = f"exit {result.exit_code}\nstdout: {result.stdout[-2000:]}\nstderr: {result.stderr[-3000:]}"
    assert exc is None or isinstance(exc, SystemExit), f"{type(exc).__name__}: {exc}\n{detail}"
    assert "Traceback" not in result.stderr and "bug in bakers-dozen" not in result.stderr, detail
    if result.exit_code == 0:
        return
    if result.exit_code == 1 and claims:
        assert result.stderr == "", detail
        return
    assert result.exit_code == 2, detail
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("bakers-dozen: error: "), detail


# --- typed layouts --------------------------------------------------------------------------------------------

JUNK = st.sampled_from(["??", "<>", "<4C", "4C>", "<<4C>>", "10H", "1S", "ZZ", "K♠", "♥", "-", "--", "home:", "#", ":",
                        "1:", "/", "F", "\x00", "\u200b", "ﬀ", "ß", "ŉ", "Ⅻ", "١٢", "9" * 50, "x" * 300])
TOKEN = st.one_of(st.sampled_from(CARDS), st.sampled_from(CARDS).map(lambda c: f"<{c}>"), JUNK)


@st.composite
def layouts(draw) -> str:
    """A deck split into piles of any height, then mutated: duplicates, missing cards, junk, markers, home lines."""
    deck = [CARDS[c] for c in draw(st.permutations(range(52)))]
    if draw(st.booleans()):  # dealt as the variant deals: 13 piles of 4 or 10 of 5 (good-measure's aces left over)
        n_piles = draw(st.sampled_from([13, 10]))
        piles = [deck[i : 52 - 52 % n_piles : n_piles] for i in range(n_piles)]
    else:  # any number of piles of any height
        n_piles = draw(st.sampled_from([13, 10]) | st.integers(1, 60))
        cuts = sorted(draw(st.lists(st.integers(0, 52), min_size=n_piles - 1, max_size=n_piles - 1)))
        piles = [deck[a:b] for a, b in zip([0, *cuts], [*cuts, 52], strict=True)]
    for _ in range(draw(st.integers(0, 4))):
        if not piles:
            break
        i = draw(st.integers(0, len(piles) - 1))
        action = draw(st.sampled_from(["dup", "drop", "junk", "down", "split", "merge"]))
        pile = piles[i]
        if action == "dup":
            pile.append(draw(st.sampled_from(CARDS)))
        elif action == "drop" and pile:
            pile.pop(draw(st.integers(0, len(pile) - 1)))
        elif action == "junk":
            pile.insert(draw(st.integers(0, len(pile))), draw(TOKEN))
        elif action == "down" and pile:
            k = draw(st.integers(0, len(pile) - 1))
            pile[: k + 1] = [f"<{c}>" for c in pile[: k + 1]]
        elif action == "split" and len(pile) > 1:
            k = draw(st.integers(1, len(pile) - 1))
            piles[i : i + 1] = [pile[:k], pile[k:]]
        elif action == "merge" and i + 1 < len(piles):
            piles[i : i + 2] = [pile + piles[i + 1]]
    lines = [" ".join(p) or "-" for p in piles]
    if draw(st.integers(0, 3)) == 0:
        home = draw(st.lists(st.lists(st.sampled_from(CARDS), max_size=4), max_size=5))
        lines.insert(draw(st.integers(0, len(lines))), "home: " + " / ".join(" ".join(f) or "-" for f in home))
    if draw(st.booleans()):
        lines.insert(draw(st.integers(0, len(lines))), "# " + draw(st.text(max_size=20)))
    return "\n".join(lines) + draw(st.sampled_from(["\n", "", "\r\n", "\n\n"]))


RANDOM_TEXT = st.lists(TOKEN | st.sampled_from([" ", "\n", "\t"]) | st.text(max_size=3), max_size=80).map("".join)


@FUZZ
@given(text=layouts() | RANDOM_TEXT, variant=st.sampled_from(["bakers-dozen", "dick-1883", "good-measure", "spanish"]),
       verb=st.sampled_from(["deal", "play"]))
def test_fuzz_typed_layouts(text, variant, verb):
    args = [verb, "--variant", variant, "--layout", "-"]
    if verb == "play":
        args += ["--strategy", "greedy"]
    assert_clean_end(invoke(*args, input=text))


@pytest.mark.parametrize("text", [
    "\n".join(["AC 2C 4C 5C 6C 8C 9C TC QC KC AD 3D 4D 5D 7D 8D KS"] + ["-"] * 12) + "\n",  # tall and incomplete
    " ".join(CARDS) + "\n" + "-\n" * 12,  # every card in one pile
    WON_LAYOUT * 2,  # every card twice
    ("AC " * 400_000) + "\n",  # megabytes of one card
    "x" * 3_000_000,  # longer than any layout
    b"\xff\xfe\x00AC\n",  # not UTF-8
    "\x00" * 100,
])
def test_adversarial_layouts(text):
    for verb in ("deal", "play"):
        assert_clean_end(invoke(verb, "--layout", "-", input=text))


# --- variant files --------------------------------------------------------------------------------------------

def _toml_value(value) -> str:
    """``value`` written as TOML (the standard library reads TOML but does not write it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(map(_toml_value, value)) + "]"
    return "{" + ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items()) + "}"


TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=30)
"""Text TOML can hold (no lone surrogates)."""
TOML_VALUES = st.recursive(
    st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats() | TEXT
    | st.sampled_from(["any-suit", "other-suit", "alternate-colour", "same-suit", "none", "kings", "any", "suit",
                       "AC", "bakers-dozen", "dick", "../../x", "/etc/x"] + [v.name for v in VARIANTS]),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=8,
)
KNOWN_FIELD = st.sampled_from(("base", "name", "description", *PARAMETERS))
FIELD = KNOWN_FIELD | KNOWN_FIELD | KNOWN_FIELD | TEXT
"""Mostly the real fields (so that values are what gets tested), sometimes any key."""
SHAPES = [(1, 52), (2, 26), (4, 13), (13, 4), (26, 2), (52, 1)]
SMALL = {"columns": st.integers(1, 52), "cards_per_column": st.integers(1, 52), "face_down": st.integers(0, 5)}


@st.composite
def variant_files(draw) -> str:
    fields = draw(st.dictionaries(FIELD, TOML_VALUES, max_size=6))
    for key, values in SMALL.items():  # often a plausible size, so that valid shapes are reached too
        if draw(st.booleans()):
            fields[key] = draw(values)
    if draw(st.booleans()):  # a full deck: every shape the rules allow, 1 to 52 piles
        fields["columns"], fields["cards_per_column"] = draw(st.sampled_from(SHAPES))
        fields.pop("start_home", None)
    text = "".join(f"{_toml_value(k)} = {_toml_value(v)}\n" for k, v in fields.items())
    if draw(st.integers(0, 9)) == 0:  # damaged TOML
        cut = draw(st.integers(0, len(text)))
        text = text[:cut] + draw(st.sampled_from(["[", "=", "\"", "]]", "\x00", "[[a]]\n", "a.b.c = 1\n"])) + text[cut:]
    return text


@FUZZ
@given(text=variant_files(), verb=st.sampled_from(["deal", "play"]), number=st.integers(1, 500) | st.integers(-3, 2**64))
def test_fuzz_variant_files(tmp_path_factory, text, verb, number):
    path = tmp_path_factory.mktemp("variant") / "fuzzed.toml"
    path.write_text(text, encoding="utf-8")
    args = [verb, "--variant", str(path), "--deal", str(number)]
    if verb == "play":
        args += ["--strategy", "greedy"]
    assert_clean_end(invoke(*args))


@FUZZ
@given(spec=st.sampled_from([name for v in VARIANTS for name in (v.name, *v.aliases)]).map(str.upper)
       | st.text(max_size=30) | st.sampled_from(["/", ".", "..", "./", "/dev/null", "/dev/zero", "x.toml", ".toml", "a/b",
                                                 "/nonexistent/v.toml", "BAKERS_DOZEN", " dick ", "\x00"]))
def test_fuzz_variant_names(spec):
    assert_clean_end(invoke("deal", "--variant", spec, "--deal", "1"))


# --- strategy specs -------------------------------------------------------------------------------------------

PARAM_NAMES = sorted({k for cls in BUILTINS.values() for k in cls.PARAMETERS})
VALUES = st.sampled_from(["nan", "-nan", "inf", "-inf", "1e20", "1e400", "-1", "0", "1", "2", "1e3", "0.5", "true", "no",
                          "99999999999999999999999", "9" * 5000, "１", "²", "", "=", "rollout", "search", "cautious",
                          "home/dig", "x,y", "\u200b"]) | st.text(max_size=8)
MODULES = st.sampled_from([".mod", "..mod", "../x", "/abs", "a/b", "pkg.mod", "os.path", "sys", "strategies.base",
                           "strategies.greedy", "examples.lowest_first", "__main__", "builtins", "pkg..x", "ä.ö", "a b",
                           "strategies", "bakers_dozen.cli"])
CLASSES = st.sampled_from(["GreedyStrategy", "Strategy", "Param", "LowestFirst", "path", "exit", "main", "", "1x", "A B"])


@st.composite
def strategy_specs(draw) -> str:
    kind = draw(st.sampled_from(["builtin", "builtin", "builtin", "text", "module"]))
    if kind == "module":
        head = f"{draw(MODULES)}:{draw(CLASSES)}"
    else:
        head = draw(st.sampled_from(sorted(BUILTINS)) if kind == "builtin" else st.text(max_size=8))
    name = st.sampled_from(PARAM_NAMES) | st.sampled_from(PARAM_NAMES) | st.text(max_size=6)
    params = draw(st.lists(st.tuples(name, VALUES), max_size=3))
    text = ",".join(f"{k}={v}" for k, v in params)
    return head + (":" + text if text or draw(st.booleans()) else "")


CHEAP = ("random", "greedy", "heuristic", "lookahead:mode=rollout", "examples.lowest_first")


@FUZZ
@given(spec=strategy_specs(), seed=st.sampled_from(["0", "1", str(2**62 - 1)]))
def test_fuzz_strategy_specs(spec, seed):
    """A cheap strategy plays a layout won in 52 moves; any other is loaded, then stopped by an empty layout
    (a search strategy with a huge in-range budget would take minutes and gigabytes to play)."""
    cheap = spec.startswith(CHEAP) and "mode=search" not in spec
    result = invoke("play", "--strategy", spec, "--strategy-seed", seed, "--layout", "-",
                    input=WON_LAYOUT if cheap else "")
    assert_clean_end(result)


@pytest.mark.parametrize("seed", ["-1", "1e23", str(2**62), str(2**64), "x", "", "9" * 5000, "0x10", "nan"])
@pytest.mark.parametrize("verb", ["play", "deal"])
def test_seeds_and_deal_numbers_outside_their_range(seed, verb):
    option = "--strategy-seed" if verb == "play" else "--seed"
    assert_clean_end(invoke(verb, "--deal", "1", option, seed))
    assert_clean_end(invoke(verb, "--deal", seed))
    assert_clean_end(invoke(verb, "--deal", seed, "--source", "pysol"))


# --- game records for verify ----------------------------------------------------------------------------------

JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
                    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=10), children, max_size=4),
                    max_leaves=12)


@pytest.fixture(scope="module")
def records() -> list[dict]:
    """Valid records to mutate: a few variants and strategies, won and lost games, a typed layout."""
    out = []
    for args in (("--deal", "3", "-s", "greedy"), ("--variant", "dick-1883", "--deal", "5", "-s", "random:home_first=true"),
                 ("--variant", "good-measure", "--deal", "2", "-s", "heuristic"), ("--layout", "-", "-s", "greedy")):
        r = invoke("play", *args, "--json", input=WON_LAYOUT)
        assert r.exit_code == 0, r.output
        out.append(json.loads(r.stdout))
    return out


@st.composite
def mutated(draw, record: dict) -> object:
    record = json.loads(json.dumps(record))
    for _ in range(draw(st.integers(1, 3))):
        key = draw(st.sampled_from(sorted(record)) | st.text(max_size=6))
        action = draw(st.sampled_from(["delete", "replace", "retype", "moves", "number"]))
        if action == "delete":
            record.pop(key, None)
        elif action == "replace":
            record[key] = draw(JSON)
        elif action == "retype" and key in record:
            record[key] = draw(st.sampled_from([str(record[key]), [record[key]], {"v": record[key]}, None, 0]))
        elif action == "moves" and record.get("moves") and isinstance(record["moves"], list):
            moves = record["moves"]
            i = draw(st.integers(0, len(moves) - 1))
            op = draw(st.sampled_from(["drop", "dup", "swap", "text", "cut"]))
            if op == "drop":
                moves.pop(i)
            elif op == "dup":
                moves.insert(i, moves[i])
            elif op == "swap" and i + 1 < len(moves):
                moves[i], moves[i + 1] = moves[i + 1], moves[i]
            elif op == "text":
                moves[i] = draw(st.text(max_size=12) | st.sampled_from(["9H 99>1", "AS 5>F9", "KD 1>2", "3D F>2", "AS 1>1"]))
            else:
                del moves[i:]
        elif action == "number":
            record[draw(st.sampled_from(["deal", "seed", "cards_home", "face_down"]))] = draw(
                st.sampled_from([-1, 0, 2**62, 2**64, 10**30, 1.5, True]))
    return record


@FUZZ
@given(data=st.data())
def test_fuzz_verify_records(records, tmp_path_factory, data):
    kind = data.draw(st.sampled_from(["mutated", "mutated", "random", "text"]))
    if kind == "mutated":
        text = json.dumps(data.draw(mutated(data.draw(st.sampled_from(records)))))
    elif kind == "random":
        text = json.dumps(data.draw(JSON))
    else:
        text = data.draw(st.sampled_from(["", "{", "[" * 100_000, '{"a": ' * 50_000, "null", "1e999999", "\ufeff{}",
                                          '{"moves": "' + "x" * 100 + '"}'])) + data.draw(st.text(max_size=5))
    path = tmp_path_factory.mktemp("record") / "game.json"
    path.write_text(text, encoding="utf-8")
    assert_clean_end(invoke("verify", str(path)), claims=True)


# --- the contract itself --------------------------------------------------------------------------------------

@pytest.mark.parametrize("error", [KeyError("internal"), ValueError("a bare ValueError"), OverflowError("big"),
                                   AssertionError("inconsistent"), RecursionError()])
def test_any_other_exception_is_a_bug_with_its_traceback(monkeypatch, error):
    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("bakers_dozen.options.resolve_variant", broken)
    result = invoke("deal", "--deal", "1")
    assert result.exit_code == 1
    assert "Traceback" in result.stderr and type(error).__name__ in result.stderr
    assert result.stderr.splitlines()[-1].startswith("bakers-dozen: this is a bug in bakers-dozen")
    with pytest.raises(AssertionError):
        assert_clean_end(result)


@pytest.mark.parametrize("args", [["deal", "--deal", "x"], ["deal", "--deal", "1", "--source", "nope"], ["nosuchverb"],
                                  ["play", "--bogus"], ["deal", "--layout", "/nonexistent/x"], ["verify"]])
def test_clicks_usage_errors_are_one_line_too(args):
    result = invoke(*args)
    assert_clean_end(result)
    assert result.exit_code == 2


def test_help_and_version_still_exit_0():
    for args in (["--help"], ["play", "--help"], ["--version"]):
        assert invoke(*args).exit_code == 0
