"""The rules as data: one frozen `Rules` value per variant, the named presets,
and loading a user's variant from a TOML file.

Every rule of the Baker's Dozen family is a parameter here, so that the engine,
the referee and the reports all read one description of the game and a result
can be tied to the exact rules that produced it (`Rules.fingerprint`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sim.cards import ACE, DECK_SIZE, CardParseError, card_str, parse_card, rank_of, suit_of
from sim.errors import UserError, shortened
from sim.regular_files import read_regular_bytes

BUILDS = ("any-suit", "other-suit", "alternate-colour", "same-suit")
"""How a card builds down on the tableau: one rank lower and ..."""
BUILD_WORDS = {"any-suit": "any suit", "other-suit": "a card of a different suit",
               "alternate-colour": "a card of the other colour", "same-suit": "a card of the same suit"}
"""Each build rule in words, for the reason a build is refused (the referee's and `Game`'s)."""
EMPTY_FILLS = ("none", "kings", "any")
"""What may enter an empty pile."""
FOUNDATIONS = ("suit", "alternate-colour")
"""How foundations build up from the ace."""
BUILD_ANY_SUIT, BUILD_OTHER_SUIT, BUILD_ALTERNATE_COLOUR, BUILD_SAME_SUIT = (BUILDS.index(b) for b in BUILDS)
FILL_NONE, FILL_KINGS, FILL_ANY = (EMPTY_FILLS.index(f) for f in EMPTY_FILLS)
FOUND_SUIT, FOUND_ALTERNATE_COLOUR = (FOUNDATIONS.index(f) for f in FOUNDATIONS)
"""The codes of the rules above in the engine's rule parameters (`sim.engine.P_BUILD`, ``P_FILL``,
``P_FOUND``: each rule's index in its tuple)."""

PARAMETERS = (
    "columns",
    "cards_per_column",
    "kings_to_bottom",
    "face_down",
    "build",
    "empty_fill",
    "foundation",
    "start_home",
    "worrying_back",
)
"""The fields that define the game; the fingerprint covers exactly these."""


class RulesError(UserError):
    """A variant name, file, field or value that is not allowed."""


@dataclass(frozen=True)
class Rules:
    """Every rule parameter of one variant of the Baker's Dozen family.

    Piles are dealt round-robin (card k of the shuffled deck goes to pile
    k mod columns) after the cards in ``start_home`` are put on their
    foundations. Only the exposed card of a pile moves, one at a time.
    """

    name: str = "bakers-dozen"
    columns: int = 13
    cards_per_column: int = 4
    kings_to_bottom: bool = True
    face_down: int = 0
    build: str = "any-suit"
    empty_fill: str = "none"
    foundation: str = "suit"
    start_home: tuple[str, ...] = ()
    worrying_back: bool = False
    description: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _validate(self)

    @property
    def fingerprint(self) -> str:
        """A short hash of the rule parameters: equal iff every parameter is equal."""
        payload = json.dumps({p: _jsonable(getattr(self, p)) for p in PARAMETERS}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]

    @property
    def start_home_cards(self) -> tuple[int, ...]:
        """The codes of the cards that start on the foundations."""
        return tuple(parse_card(c) for c in self.start_home)

    @property
    def dealt_cards(self) -> int:
        """How many cards go to the tableau."""
        return self.columns * self.cards_per_column

    def parameters(self) -> dict[str, Any]:
        """The rule parameters as a plain dict (TOML/JSON friendly)."""
        return {p: _jsonable(getattr(self, p)) for p in PARAMETERS}

    def replace(self, **changes: Any) -> Rules:
        """A copy with some parameters changed (validated)."""
        return dataclasses.replace(self, **changes)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _fail(name: str, value: Any, allowed: str) -> None:
    raise RulesError(f"rule {name!r} has value {_shortened(repr(value))}; allowed: {allowed}")


def _shortened(text: str, limit: int = 60) -> str:
    """``text`` cut to about ``limit`` characters, so that a message stays one readable line (`sim.errors.shortened`)."""
    return shortened(text, limit)


def _label(field: str, value: Any, limit: int) -> str:
    """A variant's name or description: text of 1..``limit`` printable characters on one line."""
    if not isinstance(value, str) or not _is_label(value, limit):
        _fail(field, value, f"text of 1 to {limit} printable characters on one line, without leading or trailing spaces")
    return value


def _validate(r: Rules) -> None:
    for name in ("columns", "cards_per_column", "face_down"):
        value = getattr(r, name)
        if not isinstance(value, int) or isinstance(value, bool):
            _fail(name, value, "a whole number")
    for name in ("kings_to_bottom", "worrying_back"):
        value = getattr(r, name)
        if not isinstance(value, bool):
            _fail(name, value, "true or false")
    if not 1 <= r.columns <= DECK_SIZE:
        _fail("columns", r.columns, "1..52")
    if r.cards_per_column < 1:
        _fail("cards_per_column", r.cards_per_column, "1 or more")
    if not 0 <= r.face_down < r.cards_per_column:
        _fail("face_down", r.face_down, f"0..{r.cards_per_column - 1} (at least the top card of a pile is face up)")
    if r.build not in BUILDS:
        _fail("build", r.build, ", ".join(BUILDS))
    if r.empty_fill not in EMPTY_FILLS:
        _fail("empty_fill", r.empty_fill, ", ".join(EMPTY_FILLS))
    if r.foundation not in FOUNDATIONS:
        _fail("foundation", r.foundation, ", ".join(FOUNDATIONS))
    if not isinstance(r.start_home, tuple) or not all(isinstance(c, str) for c in r.start_home):
        _fail("start_home", r.start_home, "a list of cards such as [\"AC\", \"AD\"]")
    try:
        codes = [parse_card(c) for c in r.start_home]
    except CardParseError as exc:
        raise RulesError(f"rule 'start_home': {exc}") from None
    if len(set(codes)) != len(codes):
        _fail("start_home", list(r.start_home), "each card at most once")
    # Canonical form: upper-case text, ordered by rank then suit. The same set of
    # cards is then the same `Rules` (and fingerprint) whatever order a user wrote,
    # and `start_home_cards` is in an order that can be put home one by one.
    canonical = tuple(card_str(c) for c in sorted(codes, key=lambda c: (rank_of(c), suit_of(c))))
    if canonical != r.start_home:
        object.__setattr__(r, "start_home", canonical)
    _check_start_home_buildable(codes, r.foundation)
    if r.dealt_cards + len(codes) != DECK_SIZE:
        raise RulesError(
            f"columns x cards_per_column = {r.columns} x {r.cards_per_column} = {r.dealt_cards} cards dealt, "
            f"plus {len(codes)} starting home, makes {r.dealt_cards + len(codes)}; allowed: exactly 52 "
            "(one full deck)"
        )


def _check_start_home_buildable(codes: list[int], foundation: str) -> None:
    """Cards home at the start must form legal foundation piles (aces, then successors)."""
    ranks_by_suit: dict[int, list[int]] = {}
    for c in codes:
        ranks_by_suit.setdefault(suit_of(c), []).append(rank_of(c))
    if foundation == "suit":
        for ranks in ranks_by_suit.values():
            if sorted(ranks) != list(range(len(ranks))):
                _fail("start_home", [card_str(c) for c in codes], "for each suit, the ace and the next ranks in order")
    elif any(rank_of(c) != ACE for c in codes) or len(codes) > 4:
        _fail("start_home", [card_str(c) for c in codes], "aces only with alternate-colour foundations")


@dataclass(frozen=True)
class Variant:
    """A named preset: a `Rules` value with aliases and a one-line description."""

    rules: Rules
    aliases: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.rules.name


VARIANTS: tuple[Variant, ...] = (
    Variant(Rules(description="13 piles of 4 face up, kings to the bottom, build down any suit, empty piles stay empty")),
    Variant(
        Rules(
            name="kings-into-empty",
            kings_to_bottom=False,
            empty_fill="kings",
            description="kings stay where dealt; a king (only a king) may move into an empty pile",
        ),
        aliases=("portuguese", "portuguese-solitaire"),
    ),
    Variant(
        Rules(
            name="dick-1883",
            face_down=3,
            description="W. B. Dick 1883: three cards of each pile face down, the top one face up",
        ),
        aliases=("dick",),
    ),
    Variant(
        Rules(
            name="spanish-patience",
            kings_to_bottom=False,
            empty_fill="any",
            description="kings stay where dealt; any card may move into an empty pile",
        ),
        aliases=("spanish",),
    ),
    Variant(
        Rules(
            name="castles-in-spain",
            kings_to_bottom=False,
            face_down=3,
            build="alternate-colour",
            empty_fill="any",
            description="three face down per pile, build down in alternate colour, any card fills an empty pile",
        ),
    ),
    Variant(
        Rules(
            name="good-measure",
            columns=10,
            cards_per_column=5,
            start_home=("AC", "AD"),
            description="10 piles of 5; the aces of clubs and diamonds start home; kings to the bottom",
        ),
    ),
    Variant(
        Rules(
            name="other-suit",
            build="other-suit",
            description="as bakers-dozen, but a card builds only on a card of a different suit",
        ),
    ),
)

DEFAULT_VARIANT = "bakers-dozen"
MAX_NAME = 64
"""Longest variant name (it labels tables, charts and file names)."""
MAX_DESCRIPTION = 300
MAX_VARIANT_FILE = 1 << 16
"""Longest variant file in bytes: a variant is a dozen short fields."""


def variant_names() -> list[str]:
    """Names of the presets, default first."""
    return [v.name for v in VARIANTS]


def _name_key(name: str) -> str:
    """``name`` as presets are looked up: Unicode-normalised (NFKC), case-folded, every run of spaces,
    underscores and dashes made one ``-``, so that names a reader takes for the same name are the same key."""
    folded = unicodedata.normalize("NFKC", name).casefold().strip()
    return "-".join(w for w in "".join("-" if c.isspace() or c == "_" or unicodedata.category(c) == "Pd" else c
                                       for c in folded).split("-") if w)


def preset_named(name: str) -> Rules | None:
    """The preset whose name or one of whose aliases ``name`` is (as `find_variant` reads names), or None."""
    key = _name_key(name)
    return next((v.rules for v in VARIANTS if key == v.name or key in v.aliases), None)


def check_variant_name(rules: Rules) -> Rules:
    """``rules``, refused when their name is a preset's name or alias but they are not that preset's rules.

    A name is a label and the fingerprint the identity; a preset's name is the one label every
    reader takes for those rules, so it may label no other rules (a result stored or shown under it
    would claim the preset's rules).
    """
    preset = preset_named(rules.name)
    if preset is not None and preset.fingerprint != rules.fingerprint:
        called = "" if _name_key(rules.name) == preset.name else f" (a name of the preset {preset.name})"
        raise RulesError(
            f"variant name {_shortened(repr(rules.name))}{called} belongs to a preset, but these rules are not "
            f"the preset's (fingerprint {rules.fingerprint}, the preset's {preset.fingerprint}); allowed: a name "
            "that is no preset's name or alias (a variant file's `name`, else its file name), or the preset's own rules")
    return rules


def find_variant(name: str) -> Rules:
    """The preset called ``name`` or one of its aliases (case-insensitive; spaces, ``_`` and ``-`` alike)."""
    if not isinstance(name, str):
        raise RulesError(f"a variant is named by text; got {type(name).__name__} {_shortened(repr(name))}")
    found = preset_named(name)
    if found is not None:
        return found
    known = ", ".join(f"{v.name}" + (f" ({', '.join(v.aliases)})" if v.aliases else "") for v in VARIANTS)
    raise RulesError(f"unknown variant {_shortened(repr(name))}; known variants: {known}; or a variant file "
                     "(a path ending in .toml or holding a path separator)")


def rules_from_mapping(data: dict[str, Any], *, default_name: str = "custom") -> Rules:
    """Build a `Rules` from a mapping of parameter names (as in a TOML file).

    ``base`` names a preset to start from; ``name`` and ``description`` label
    the variant; every other key must be a rule parameter. A preset's name or
    alias labels only that preset's rules (`check_variant_name`).
    """
    if not isinstance(data, dict):
        raise RulesError(f"a variant is a table of rule fields; got {type(data).__name__}")
    data = dict(data)
    unknown = sorted(set(map(str, data)) - set(PARAMETERS) - {"base", "name", "description"})
    if unknown:
        raise RulesError(
            f"unknown rule field(s) {', '.join(repr(_shortened(k)) for k in unknown[:5])}; allowed fields: "
            + ", ".join(("base", "name", "description") + PARAMETERS)
        )
    base_name = data.pop("base", DEFAULT_VARIANT)
    if not isinstance(base_name, str):
        _fail("base", base_name, "the name of a preset: " + ", ".join(variant_names()))
    base = find_variant(base_name)
    name = _label("name", data.pop("name", default_name), MAX_NAME)
    description = _label("description", data.pop("description", f"custom variant based on {base.name}"), MAX_DESCRIPTION)
    if "start_home" in data:
        value = data["start_home"]
        if not isinstance(value, list | tuple):
            _fail("start_home", value, "a list of cards such as [\"AC\", \"AD\"]")
        data["start_home"] = tuple(value)
    return check_variant_name(dataclasses.replace(base, name=str(name), description=str(description), **data))


def load_variant_file(path: str | Path) -> Rules:
    """Read a user's variant from a TOML file, validated field by field."""
    p = Path(path)
    if "\x00" in str(p):  # no file system takes it in a name
        raise RulesError(f"variant file {str(p)!r} holds a NUL character; give the path of a .toml file")
    if p.is_dir():
        raise RulesError(f"variant file {str(p)!r} is a directory; give a .toml file")
    try:
        raw = read_regular_bytes(p, MAX_VARIANT_FILE)  # a FIFO or a device there is refused, never waited on
    except OSError as exc:
        raise RulesError(f"cannot read variant file {str(p)!r}: {exc.strerror or exc}") from None
    if len(raw) > MAX_VARIANT_FILE:
        raise RulesError(f"variant file {str(p)!r} is longer than {MAX_VARIANT_FILE:,} bytes; a variant is a few short fields")
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise RulesError(f"variant file {str(p)!r} is not UTF-8 text (byte {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise RulesError(f"variant file {str(p)!r} is not valid TOML: {exc}") from None
    except ValueError:  # the one other: an integer longer than Python converts (sys.get_int_max_str_digits)
        raise RulesError(f"variant file {str(p)!r}: {_long_number(raw.decode('utf-8'))}") from None
    except RecursionError:
        raise RulesError(f"variant file {str(p)!r} nests too deeply to be a variant") from None
    # The file's name labels a variant that names itself not; a stem that is a preset's name (spanish.toml)
    # would claim the preset, so the whole file name is the label then.
    stem = next((n for n in (p.stem, p.name) if _is_label(n, MAX_NAME) and preset_named(n) is None), "custom")
    return rules_from_mapping(data, default_name=stem)


LONG_NUMBER = ("a whole number of thousands of digits; allowed: columns 1..52, cards_per_column and face_down a "
               "few digits at most (a full deck is 52 cards)")
"""What is wrong with a rule's number too long for Python to convert, and what the rules allow."""
_LONG_NUMBER = re.compile(r"^\s*([^=\n]{1,60}?)\s*=[^\n]*?[+-]?\d[\d_]{99,}", re.MULTILINE)


def _long_number(text: str) -> str:
    """What to say of a TOML text holding a whole number too long to convert: the field it is in, where
    that can be told, and what the fields allow."""
    found = _LONG_NUMBER.search(text)
    where = f"field {_shortened(found.group(1).strip())!r} holds" if found else "it holds"
    return f"{where} {LONG_NUMBER}"


def _is_label(text: str, limit: int) -> bool:
    return 1 <= len(text) <= limit and text.isprintable() and text == text.strip()


def is_variant_file(spec: str) -> bool:
    """Whether ``spec`` names a variant file: it ends in ``.toml`` or holds a path separator, and is no preset."""
    if not isinstance(spec, str):
        return False
    try:
        find_variant(spec)
    except RulesError:
        return spec.endswith(".toml") or "/" in spec or os.sep in spec
    return False


def resolve_variant(spec: str) -> Rules:
    """A preset name or alias, or else a variant file (text ending in ``.toml`` or holding a path separator).

    A preset name always means the preset, even when a file of that name lies in
    the current directory.
    """
    return load_variant_file(spec) if is_variant_file(spec) else find_variant(spec)
