"""The rules as data (sim.rules): presets, lookup, fingerprints, validation, TOML variant files."""

from __future__ import annotations

import dataclasses

import pytest

import sim.rules
from sim.rules import (
    BUILDS,
    DEFAULT_VARIANT,
    EMPTY_FILLS,
    FOUNDATIONS,
    PARAMETERS,
    VARIANTS,
    Rules,
    RulesError,
    find_variant,
    load_variant_file,
    resolve_variant,
    rules_from_mapping,
    variant_names,
)

# --- the presets, row by row from docs/rules.md, section "The presets" ----------------------

BAKERS_DOZEN = {
    "columns": 13,
    "cards_per_column": 4,
    "kings_to_bottom": True,
    "face_down": 0,
    "build": "any-suit",
    "empty_fill": "none",
    "foundation": "suit",
    "start_home": (),
    "worrying_back": False,
}

EXPECTED_PRESETS = {
    "bakers-dozen": {},
    # kings are NOT moved at the deal; a king (only a king) may move into an empty pile
    "kings-into-empty": {"kings_to_bottom": False, "empty_fill": "kings"},
    # first three cards of each pile face down; kings still go to the bottom
    "dick-1883": {"face_down": 3},
    # kings NOT moved; ANY card may move into an empty pile
    "spanish-patience": {"kings_to_bottom": False, "empty_fill": "any"},
    # kings NOT moved; three face down; build in alternate colour; any card fills
    "castles-in-spain": {"kings_to_bottom": False, "face_down": 3, "build": "alternate-colour", "empty_fill": "any"},
    # 10 piles of 5; AC and AD start home; kings to the bottom; empty piles never filled
    "good-measure": {"columns": 10, "cards_per_column": 5, "start_home": ("AC", "AD")},
    # build down on a card of a different suit only
    "other-suit": {"build": "other-suit"},
}

GOLDEN_FINGERPRINTS = {
    "bakers-dozen": "bf62c6d47d1a",
    "kings-into-empty": "e08e252fbc68",
    "dick-1883": "9b8c70c042f2",
    "spanish-patience": "557d47e9ea61",
    "castles-in-spain": "3d0e3c3ccb6b",
    "good-measure": "0f103bbacb22",
    "other-suit": "3fbaac3c21d0",
}


def test_parameter_names_are_the_documented_ones():
    assert set(PARAMETERS) == set(BAKERS_DOZEN)
    assert BUILDS == ("any-suit", "other-suit", "alternate-colour", "same-suit")
    assert EMPTY_FILLS == ("none", "kings", "any")
    assert FOUNDATIONS == ("suit", "alternate-colour")


def test_the_presets_are_exactly_the_table():
    assert variant_names() == list(EXPECTED_PRESETS)
    assert variant_names()[0] == DEFAULT_VARIANT == "bakers-dozen"


@pytest.mark.parametrize("name", list(EXPECTED_PRESETS))
def test_preset_parameters(name):
    rules = find_variant(name)
    assert rules.name == name
    expected = {**BAKERS_DOZEN, **EXPECTED_PRESETS[name]}
    for field in PARAMETERS:
        assert getattr(rules, field) == expected[field], f"{name}.{field}"
    assert rules.description, f"{name} has no description"
    assert rules.dealt_cards + len(rules.start_home) == 52


def test_default_rules_are_bakers_dozen():
    assert Rules() == find_variant("bakers-dozen")
    for field, value in BAKERS_DOZEN.items():
        assert getattr(Rules(), field) == value


def test_good_measure_start_home_cards():
    assert find_variant("good-measure").start_home_cards == (0, 13)  # AC, AD
    assert find_variant("good-measure").dealt_cards == 50
    assert Rules().start_home_cards == ()


# --- lookup --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "name"),
    [
        ("bakers-dozen", "bakers-dozen"),
        ("Bakers_Dozen", "bakers-dozen"),
        ("  BAKERS-DOZEN ", "bakers-dozen"),
        ("bakers dozen", "bakers-dozen"),
        ("portuguese", "kings-into-empty"),
        ("Portuguese", "kings-into-empty"),
        ("portuguese-solitaire", "kings-into-empty"),
        ("Portuguese Solitaire", "kings-into-empty"),
        ("portuguese_solitaire", "kings-into-empty"),
        ("kings_into_empty", "kings-into-empty"),
        ("dick", "dick-1883"),
        ("DICK_1883", "dick-1883"),
        ("spanish", "spanish-patience"),
        ("Spanish-Patience", "spanish-patience"),
        ("castles_in_spain", "castles-in-spain"),
        ("GOOD-MEASURE", "good-measure"),
        ("other_suit", "other-suit"),
    ],
)
def test_find_variant_names_aliases_and_spelling(spec, name):
    assert find_variant(spec).name == name
    assert resolve_variant(spec).name == name


@pytest.mark.parametrize("spec", ["bakers", "portugese", "", "kings", "spanish-patience-2"])
def test_unknown_variant_lists_the_known_ones(spec):
    with pytest.raises(RulesError) as info:
        find_variant(spec)
    msg = str(info.value)
    assert f"unknown variant {spec!r}" in msg
    for v in VARIANTS:
        assert v.name in msg
        for alias in v.aliases:
            assert alias in msg
    assert ".toml" in msg


def test_rules_error_is_a_value_error():
    assert issubclass(RulesError, ValueError)


# --- fingerprints --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(GOLDEN_FINGERPRINTS))
def test_fingerprint_golden(name):
    fp = find_variant(name).fingerprint
    assert fp == GOLDEN_FINGERPRINTS[name]
    assert len(fp) == 12 and all(ch in "0123456789abcdef" for ch in fp)


def test_fingerprints_of_presets_are_distinct():
    fps = [v.rules.fingerprint for v in VARIANTS]
    assert len(set(fps)) == len(fps)


def test_fingerprint_ignores_name_and_description():
    base = find_variant("kings-into-empty")
    twin = Rules(name="my-portuguese", description="something else", kings_to_bottom=False, empty_fill="kings")
    assert twin.fingerprint == base.fingerprint
    assert twin != base  # the name is part of equality...
    assert twin.replace(name=base.name) == base  # ...the description is not
    assert base.replace(name="x", description="y").fingerprint == base.fingerprint


def test_fingerprint_is_stable_across_instances():
    assert Rules().fingerprint == Rules().fingerprint == Rules(name="other").fingerprint
    assert find_variant("good-measure").fingerprint == Rules(columns=10, cards_per_column=5, start_home=("AC", "AD")).fingerprint


def test_start_home_spelling_and_order_do_not_change_the_rules():
    gm = find_variant("good-measure")
    for home in [("ad", "ac"), ("AD", "AC"), ("A♣", "A♦"), ("1c", "ad")]:
        r = Rules(columns=10, cards_per_column=5, start_home=home)
        assert r.start_home == ("AC", "AD")
        assert r.fingerprint == gm.fingerprint


def test_start_home_is_kept_in_rank_order():
    r = Rules(columns=16, cards_per_column=3, start_home=("2C", "AD", "AC", "AH"))
    assert r.start_home == ("AC", "AD", "AH", "2C")
    assert r.start_home_cards == (0, 13, 26, 1)


# One valid alternative value for every parameter, from the default rules.
_ALTERNATIVES = {
    "columns": 26,
    "cards_per_column": 2,
    "kings_to_bottom": False,
    "face_down": 1,
    "build": "same-suit",
    "empty_fill": "kings",
    "foundation": "alternate-colour",
    "start_home": ("AC",),
    "worrying_back": True,
}


def test_alternatives_cover_every_parameter():
    assert set(_ALTERNATIVES) == set(PARAMETERS)


@pytest.mark.parametrize("field", PARAMETERS)
def test_fingerprint_covers_each_parameter(field):
    """Changing exactly one field (bypassing validation) changes the fingerprint."""
    base = Rules()
    changed = Rules()
    object.__setattr__(changed, field, _ALTERNATIVES[field])
    assert changed.fingerprint != base.fingerprint
    assert changed.parameters()[field] != base.parameters()[field]


@pytest.mark.parametrize("field", [f for f in PARAMETERS if f not in ("columns", "cards_per_column", "start_home")])
def test_fingerprint_changes_with_each_single_valid_change(field):
    base = Rules()
    changed = base.replace(**{field: _ALTERNATIVES[field]})
    assert changed.fingerprint != base.fingerprint
    assert changed != base


def test_fingerprint_changes_with_the_shape_of_the_deal():
    shapes = [
        Rules(),
        Rules(columns=26, cards_per_column=2),
        Rules(columns=4, cards_per_column=13),
        Rules(columns=17, cards_per_column=3, start_home=("AC",)),
        Rules(columns=17, cards_per_column=3, start_home=("AD",)),
        Rules(columns=10, cards_per_column=5, start_home=("AC", "AD")),
        Rules(columns=10, cards_per_column=5, start_home=("AC", "AH")),
        Rules(columns=10, cards_per_column=5, start_home=("AC", "2C")),
    ]
    fps = [r.fingerprint for r in shapes]
    assert len(set(fps)) == len(fps)


def test_every_value_of_every_choice_gives_its_own_fingerprint():
    fps = set()
    count = 0
    for build in BUILDS:
        for fill in EMPTY_FILLS:
            for foundation in FOUNDATIONS:
                for ktb in (False, True):
                    for worry in (False, True):
                        for down in (0, 3):
                            r = Rules(
                                build=build,
                                empty_fill=fill,
                                foundation=foundation,
                                kings_to_bottom=ktb,
                                worrying_back=worry,
                                face_down=down,
                            )
                            fps.add(r.fingerprint)
                            count += 1
    assert len(fps) == count


def test_parameters_dict_is_plain():
    p = find_variant("good-measure").parameters()
    assert list(p) == list(PARAMETERS)
    assert p["start_home"] == ["AC", "AD"]
    assert p["columns"] == 10 and p["kings_to_bottom"] is True


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().columns = 12  # type: ignore[misc]


# --- validation ---------------------------------------------------------------------------------


def _error(**kw) -> str:
    with pytest.raises(RulesError) as info:
        Rules(**kw)
    return str(info.value)


@pytest.mark.parametrize(
    ("kw", "fragments"),
    [
        ({"columns": 12}, ["columns x cards_per_column", "12 x 4 = 48", "exactly 52"]),
        ({"columns": 13, "cards_per_column": 5}, ["13 x 5 = 65", "makes 65", "exactly 52"]),
        ({"columns": 10, "cards_per_column": 5}, ["10 x 5 = 50", "plus 0 starting home", "exactly 52"]),
        ({"columns": 13, "cards_per_column": 4, "start_home": ("AC",)}, ["plus 1 starting home", "makes 53"]),
        ({"columns": 0}, ["'columns'", "value 0", "1..52"]),
        ({"columns": 53, "cards_per_column": 1}, ["'columns'", "value 53", "1..52"]),
        ({"columns": -13}, ["'columns'", "-13", "1..52"]),
        ({"cards_per_column": 0}, ["'cards_per_column'", "value 0", "1 or more"]),
        ({"face_down": -1}, ["'face_down'", "value -1", "0..3"]),
        ({"face_down": 4}, ["'face_down'", "value 4", "0..3", "top card"]),
        ({"face_down": 5, "columns": 10, "cards_per_column": 5, "start_home": ("AC", "AD")}, ["'face_down'", "value 5", "0..4"]),
        ({"build": "down"}, ["'build'", "'down'", "any-suit, other-suit, alternate-colour, same-suit"]),
        ({"build": "Any-Suit"}, ["'build'", "'Any-Suit'", "any-suit"]),
        ({"empty_fill": "king"}, ["'empty_fill'", "'king'", "none, kings, any"]),
        ({"empty_fill": None}, ["'empty_fill'", "None", "none, kings, any"]),
        ({"foundation": "colour"}, ["'foundation'", "'colour'", "suit, alternate-colour"]),
        ({"kings_to_bottom": 1}, ["'kings_to_bottom'", "value 1", "true or false"]),
        ({"kings_to_bottom": "yes"}, ["'kings_to_bottom'", "'yes'", "true or false"]),
        ({"worrying_back": 0}, ["'worrying_back'", "value 0", "true or false"]),
        ({"columns": True}, ["'columns'", "True", "whole number"]),
        ({"columns": 13.0}, ["'columns'", "13.0", "whole number"]),
        ({"cards_per_column": "4"}, ["'cards_per_column'", "'4'", "whole number"]),
        ({"face_down": False}, ["'face_down'", "False", "whole number"]),
    ],
)
def test_validation_names_field_value_and_allowed(kw, fragments):
    msg = _error(**kw)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)


GM = {"columns": 10, "cards_per_column": 5}


@pytest.mark.parametrize(
    ("home", "fragments"),
    [
        (("AC", "AC"), ["'start_home'", "['AC', 'AC']", "each card at most once"]),
        (("AC", "ac"), ["'start_home'", "each card at most once"]),
        (("2C", "AD"), ["'start_home'", "2C", "the ace and the next ranks in order"]),
        (("AC", "3C"), ["'start_home'", "3C", "the ace and the next ranks in order"]),
        (("KS", "AD"), ["'start_home'", "KS", "the ace"]),
        (("XX", "AD"), ["'start_home'", "'XX' is not a card"]),
        (("A", "AD"), ["'start_home'", "'A' is not a card"]),
        (("AC", 13), ["'start_home'", "a list of cards"]),
    ],
)
def test_start_home_validation(home, fragments):
    msg = _error(start_home=home, **GM)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)


def test_start_home_must_be_a_tuple():
    msg = _error(start_home=["AC", "AD"], **GM)
    assert "'start_home'" in msg and "a list of cards" in msg


def test_start_home_with_alternate_colour_foundations_is_aces_only():
    ok = Rules(foundation="alternate-colour", start_home=("AC", "AD"), **GM)
    assert ok.start_home == ("AC", "AD")
    msg = _error(foundation="alternate-colour", start_home=("AC", "2C"), **GM)
    assert "'start_home'" in msg and "aces only" in msg


def test_valid_unusual_shapes_are_accepted():
    assert Rules(columns=52, cards_per_column=1).dealt_cards == 52
    assert Rules(columns=1, cards_per_column=52, face_down=51).face_down == 51
    assert Rules(columns=12, cards_per_column=4, start_home=("AC", "AD", "AH", "AS")).dealt_cards == 48
    assert Rules(columns=12, cards_per_column=4, start_home=("AC", "2C", "3C", "4C")).start_home_cards == (0, 1, 2, 3)


def test_replace_validates():
    with pytest.raises(RulesError, match="face_down"):
        Rules().replace(face_down=9)
    assert Rules().replace(worrying_back=True).worrying_back is True


# --- TOML variant files --------------------------------------------------------------------------


def _write(tmp_path, text: str, name: str = "mine.toml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_load_file_based_on_a_preset(tmp_path):
    p = _write(tmp_path, 'base = "spanish-patience"\nworrying_back = true\n', "solvitaire.toml")
    r = load_variant_file(p)
    assert r.name == "solvitaire"  # the file's stem
    assert r.kings_to_bottom is False and r.empty_fill == "any" and r.worrying_back is True
    assert r.build == "any-suit" and r.face_down == 0
    assert "spanish-patience" in r.description
    assert r.fingerprint == find_variant("spanish-patience").replace(worrying_back=True).fingerprint
    assert resolve_variant(str(p)) == r


def test_load_file_default_base_and_labels(tmp_path):
    p = _write(tmp_path, 'name = "my-game"\ndescription = "faces down"\nface_down = 2\n')
    r = load_variant_file(p)
    assert (r.name, r.description) == ("my-game", "faces down")
    assert r == Rules(name="my-game", face_down=2)


def test_load_file_base_by_alias_and_full_shape(tmp_path):
    p = _write(
        tmp_path,
        'base = "Portuguese"\ncolumns = 10\ncards_per_column = 5\nstart_home = ["ad", "AC"]\nfoundation = "suit"\n',
    )
    r = load_variant_file(p)
    assert r.empty_fill == "kings" and r.kings_to_bottom is False
    assert (r.columns, r.cards_per_column, r.start_home) == (10, 5, ("AC", "AD"))


def test_load_file_same_as_preset_has_preset_fingerprint(tmp_path):
    p = _write(tmp_path, 'columns = 10\ncards_per_column = 5\nstart_home = ["AC", "AD"]\n')
    assert load_variant_file(p).fingerprint == GOLDEN_FINGERPRINTS["good-measure"]


def test_rules_from_mapping():
    r = rules_from_mapping({"base": "dick", "build": "other-suit"}, default_name="x")
    assert (r.name, r.face_down, r.build) == ("x", 3, "other-suit")


def test_resolve_variant_prefers_presets_for_names():
    assert resolve_variant("dick") == find_variant("dick-1883")


def _load_error(tmp_path, text: str) -> str:
    p = _write(tmp_path, text)
    with pytest.raises(RulesError) as info:
        load_variant_file(p)
    with pytest.raises(RulesError):
        resolve_variant(str(p))
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        ("colums = 13\n", ["unknown rule field", "'colums'", "allowed fields", "columns", "worrying_back", "base"]),
        ("colour = 'red'\nzeal = 1\n", ["'colour'", "'zeal'", "allowed fields"]),
        ("[rules]\nbuild = 'any-suit'\n", ["unknown rule field", "'rules'"]),
        ('base = "nope"\n', ["unknown variant 'nope'", "bakers-dozen", "good-measure"]),
        ("base = 3\n", ["'base'", "value 3", "bakers-dozen"]),
        ('build = "down"\n', ["'build'", "'down'", "any-suit"]),
        ('empty_fill = "kings-only"\n', ["'empty_fill'", "'kings-only'", "none, kings, any"]),
        ('foundation = "colour"\n', ["'foundation'", "alternate-colour"]),
        ("kings_to_bottom = 1\n", ["'kings_to_bottom'", "value 1", "true or false"]),
        ('worrying_back = "yes"\n', ["'worrying_back'", "'yes'", "true or false"]),
        ("face_down = 7\n", ["'face_down'", "value 7", "0..3"]),
        ("face_down = 1.5\n", ["'face_down'", "1.5", "whole number"]),
        ('columns = "13"\n', ["'columns'", "'13'", "whole number"]),
        ("columns = 12\n", ["12 x 4 = 48", "exactly 52"]),
        ('start_home = "AC"\n', ["'start_home'", "'AC'", "a list of cards"]),
        ('columns = 10\ncards_per_column = 5\nstart_home = ["AC", "XX"]\n', ["'start_home'", "'XX' is not a card"]),
        ('columns = 10\ncards_per_column = 5\nstart_home = ["AC", "AC"]\n', ["'start_home'", "at most once"]),
        ('columns = 10\ncards_per_column = 5\nstart_home = ["2C", "AD"]\n', ["'start_home'", "the ace"]),
        ('columns = 10\ncards_per_column = 5\nstart_home = ["AC", 5]\n', ["'start_home'", "a list of cards"]),
    ],
)
def test_bad_variant_files(tmp_path, text, fragments):
    msg = _load_error(tmp_path, text)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)


@pytest.mark.parametrize("text", ["build = \n", "columns = 13\ncolumns = 12\n", "[unclosed\n", "face_down = 'x\n"])
def test_malformed_toml(tmp_path, text):
    msg = _load_error(tmp_path, text)
    assert "not valid TOML" in msg
    assert "mine.toml" in msg


def test_missing_file(tmp_path):
    missing = tmp_path / "nowhere.toml"
    for call in (lambda: load_variant_file(missing), lambda: resolve_variant(str(missing))):
        with pytest.raises(RulesError) as info:
            call()
        msg = str(info.value)
        assert "cannot read variant file" in msg and "nowhere.toml" in msg
        assert "No such file" in msg


def test_a_directory_is_not_a_variant_file(tmp_path):
    d = tmp_path / "dir.toml"
    d.mkdir()
    for call in (lambda: load_variant_file(d), lambda: resolve_variant(str(d))):
        with pytest.raises(RulesError, match="is a directory"):
            call()



@pytest.mark.parametrize("path", ("/\x00", "a/b\x00.toml", "\x00.toml"))
def test_a_path_with_a_nul_character_is_refused_as_bad_input(path):
    """No file system takes a NUL in a name: the open would raise ValueError, a traceback for bad input."""
    for call in (lambda: load_variant_file(path), lambda: resolve_variant(path)):
        with pytest.raises(RulesError, match="NUL character"):
            call()

# --- hostile variant input ------------------------------------------------------------------------------

_PRESET_SPELLINGS = [name for v in VARIANTS for name in (v.name, *v.aliases)]


@pytest.mark.parametrize("spec", _PRESET_SPELLINGS)
def test_a_file_named_like_a_preset_never_replaces_it(tmp_path, monkeypatch, spec):
    monkeypatch.chdir(tmp_path)
    (tmp_path / spec).write_text("face_down = 2\nname = 'trap'\n")
    assert resolve_variant(spec) == find_variant(spec)
    assert resolve_variant(spec).name != "trap"


def test_a_variant_file_is_text_ending_in_toml_or_holding_a_path_separator(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").write_text("face_down = 2\n")
    (tmp_path / "mine.toml").write_text("face_down = 1\n")
    with pytest.raises(RulesError, match="unknown variant 'mine'.*ending in .toml or holding a path separator"):
        resolve_variant("mine")
    assert resolve_variant("./mine").face_down == 2
    assert resolve_variant("mine.toml").face_down == 1
    assert resolve_variant(str(tmp_path / "mine")).face_down == 2
    (tmp_path / "spanish.toml").write_text("face_down = 1\n")
    assert resolve_variant("spanish.toml").face_down == 1 and resolve_variant("spanish") == find_variant("spanish")


_INT_FIELDS = ("columns", "cards_per_column", "face_down")
_BOOL_FIELDS = ("kings_to_bottom", "worrying_back")
_CHOICE_FIELDS = ("build", "empty_fill", "foundation")
_HOSTILE_VALUES = ["10000000000000000000000000", "-1", "-9223372036854775809", "nan", "inf", "-inf", "1.0", '"4"', "true",
                   "[4]", "{a = 1}", "1979-05-27", '""', '"x"']


@pytest.mark.parametrize("field", _INT_FIELDS + _BOOL_FIELDS + _CHOICE_FIELDS + ("start_home", "base", "name", "description"))
@pytest.mark.parametrize("value", _HOSTILE_VALUES)
def test_hostile_field_values_name_the_field(tmp_path, field, value):
    """Every field, any TOML type or size: either valid, or a RulesError that names the field."""
    p = tmp_path / "v.toml"
    p.write_text(f"{field} = {value}\n")
    try:
        rules = load_variant_file(p)
    except RulesError as exc:
        msg = str(exc)
        assert f"'{field}'" in msg or "exactly 52" in msg or "unknown variant" in msg, msg
        assert "\n" not in msg and len(msg) < 600
    else:
        assert isinstance(rules, Rules)


@pytest.mark.parametrize("value", ["{a = 1}", "5", '""', '"a\\nb"', '" padded"', '"' + "n" * 65 + '"', '"\\u0007bell"'])
def test_a_variant_name_is_one_short_printable_line(tmp_path, value):
    msg = _load_error(tmp_path, f"name = {value}\n")
    assert "'name'" in msg and "printable" in msg


def test_variant_files_that_cannot_be_read(tmp_path):
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"name = '\xff\xfe'\n")
    with pytest.raises(RulesError, match="is not UTF-8 text"):
        resolve_variant(str(binary))
    huge = tmp_path / "huge.toml"
    huge.write_text("# " + "x" * 100_000 + "\n")
    with pytest.raises(RulesError, match="longer than"):
        resolve_variant(str(huge))
    deep = tmp_path / "deep.toml"
    deep.write_text("columns = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(RulesError, match="columns|nests too deeply|not valid TOML"):
        resolve_variant(str(deep))


def test_an_unknown_field_message_stays_short(tmp_path):
    text = "".join(f"field{i} = {i}\n" for i in range(500)) + ("k" * 5000) + " = 1\n"
    msg = _load_error(tmp_path, text)
    assert "unknown rule field" in msg and len(msg) < 600


def test_a_mapping_that_is_not_a_table(tmp_path):
    with pytest.raises(RulesError, match="table of rule fields"):
        rules_from_mapping([("columns", 13)])  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [5, None, ["bakers-dozen"], {"base": "dick"}, b"dick"])
def test_a_variant_name_that_is_not_text(name):
    for call in (find_variant, resolve_variant):
        with pytest.raises(RulesError, match="a variant is named by text"):
            call(name)


def test_an_unreadable_variant_file(tmp_path, monkeypatch):
    p = _write(tmp_path, "face_down = 1\n")

    def refused(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(sim.rules, "read_regular_bytes", refused)  # how the file is opened (never a FIFO)
    with pytest.raises(RulesError, match="cannot read variant file .*mine.toml.*: Permission denied"):
        resolve_variant(str(p))
