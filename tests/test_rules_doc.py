"""docs/rules.md and the code in step.

The rules document is what the code and the tests cite, so it must say what the
code does: every preset has its section and a row of the preset table with the
code's values, every parameter is explained with the values `Rules` allows,
every layout printed there is what `bakers-dozen deal` prints, every count is the
one the perft tests pin, every section cited from the code exists, and nothing
cites the rules in a file outside the repository any more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_perft import GOLDEN_DEALS, GOLDEN_MID
from vectors import PYSOL_DEAL_24

from bakers_dozen.cli import main
from sim.cards import KING, card_str, parse_card, rank_of
from sim.rules import BUILDS, EMPTY_FILLS, FOUNDATIONS, PARAMETERS, VARIANTS, Rules, find_variant
from studies.stats import win_rate_interval

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "rules.md"
CITING = ("sim", "strategies", "studies", "reports", "bakers_dozen", "tests", "benchmarks", "examples", "README.md")
"""Where citations of the rules document may appear."""
CITATION = re.compile(r'docs/rules\.md, sections? ("[^"\n]+"(?:(?:, |,? and )"[^"\n]+")*)')
"""The document's name, ``, section`` (or ``, sections``) and the quoted headings, as its introduction asks to be cited."""


@dataclass(frozen=True)
class Section:
    level: int
    title: str
    body: tuple[str, ...]
    """The lines up to the next heading of any level."""


def sections(text: str) -> list[Section]:
    """The document's headings in order, with the lines under each; ``#`` lines inside code fences are not headings."""
    found: list[tuple[int, str, list[str]]] = []
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = None if fenced else re.match(r"^(#{1,6}) (.+?)\s*$", line)
        if heading:
            found.append((len(heading.group(1)), heading.group(2), []))
        elif found:
            found[-1][2].append(line)
    assert not fenced, "a code fence is not closed"
    return [Section(level, title, tuple(body)) for level, title, body in found]


DOC_TEXT = DOC.read_text(encoding="utf-8")
SECTIONS = sections(DOC_TEXT)
TITLES = [s.title for s in SECTIONS]


def section(title: str) -> Section:
    matches = [s for s in SECTIONS if s.title == title]
    assert len(matches) == 1, f"docs/rules.md has {len(matches)} sections titled {title!r}"
    return matches[0]


def subsections(title: str) -> list[Section]:
    """The sections one level below ``title``, up to the next section of its level or above."""
    start = TITLES.index(title)
    level = SECTIONS[start].level
    below = []
    for s in SECTIONS[start + 1 :]:
        if s.level <= level:
            break
        if s.level == level + 1:
            below.append(s)
    return below


def table(lines: tuple[str, ...]) -> list[dict[str, str]]:
    """The first Markdown table in ``lines``: one dict per row, header -> cell, backticks dropped."""
    rows = [line for line in lines if line.startswith("|")]
    assert len(rows) >= 3, "no table found"
    cells = [[c.strip().strip("`") for c in row.strip().strip("|").split("|")] for row in rows]
    header, rule, body = cells[0], cells[1], cells[2:]
    assert all(set(c) <= set("-:") for c in rule), "the second line of a table is its rule"
    for row in body:
        assert len(row) == len(header), row
    return [dict(zip(header, row, strict=True)) for row in body]


# --- the presets ------------------------------------------------------------------------------------


def _cell(field: str, text: str) -> object:
    """A cell of the preset table as the value `Rules.parameters` gives."""
    if field == "start_home":
        return [] if text == "-" else text.split()
    if text in ("true", "false"):
        return text == "true"
    return int(text) if text.isdigit() else text


PRESET_ROWS = table(section("The presets").body)


def test_every_preset_has_its_own_section_and_no_other():
    assert [s.title for s in subsections("The presets")] == [v.name for v in VARIANTS]
    for s in subsections("The presets"):
        assert any(line.strip() for line in s.body), f"section {s.title!r} says nothing"


def test_the_preset_table_has_one_row_per_preset_in_order():
    assert [row["variant"] for row in PRESET_ROWS] == [v.name for v in VARIANTS]
    assert set(PARAMETERS) <= set(PRESET_ROWS[0]), "every parameter is a column"


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_preset_row_has_the_code_values(variant):
    row = next(r for r in PRESET_ROWS if r["variant"] == variant.name)
    rules = variant.rules
    assert {p: _cell(p, row[p]) for p in PARAMETERS} == rules.parameters()
    assert row["fingerprint"] == rules.fingerprint
    assert row["aliases"] == (", ".join(variant.aliases) or "-")


def test_the_parameter_glossary_covers_every_parameter_with_its_allowed_values():
    rows = {row["parameter"]: row for row in table(section("Rule parameters").body)}
    assert list(rows) == list(PARAMETERS)
    for field, choices in (("build", BUILDS), ("empty_fill", EMPTY_FILLS), ("foundation", FOUNDATIONS)):
        assert [c.strip("` ") for c in rows[field]["allowed values"].split(",")] == list(choices)
    assert {p: _cell(p, rows[p]["bakers-dozen"]) for p in PARAMETERS} == Rules().parameters()


# --- citations --------------------------------------------------------------------------------------


def _citing_files() -> list[Path]:
    files: list[Path] = []
    for name in CITING:
        path = ROOT / name
        if path.is_file():
            files.append(path)
        elif path.is_dir():
            files += [p for p in path.rglob("*") if p.suffix in (".py", ".md", ".toml", ".txt") and p.is_file()]
    return sorted(files)


def _citations() -> list[tuple[str, str]]:
    """(file, cited section) for every citation of the document in the code, the tests and the README."""
    found = []
    for path in _citing_files():
        text = " ".join(path.read_text(encoding="utf-8", errors="replace").split())  # a citation may wrap
        for match in CITATION.finditer(text):
            for title in re.findall(r'"([^"]+)"', match.group(1)):
                found.append((str(path.relative_to(ROOT)), title))
    return found


def test_every_cited_section_exists():
    citations = _citations()
    assert {"sim/referee.py", "tests/test_perft.py", "tests/test_rules.py"} <= {f for f, _ in citations}
    missing = [(f, title) for f, title in citations if title not in TITLES]
    assert not missing, f"cited sections that docs/rules.md does not have: {missing}"


def test_no_file_cites_rules_outside_the_repository():
    outside = "shared/" + "rules.md"
    offenders = [str(p.relative_to(ROOT)) for p in _citing_files() if outside in p.read_text(encoding="utf-8", errors="replace")]
    assert not offenders, f"these files cite {outside}; cite docs/rules.md and a section instead"


def test_the_readme_links_the_rules_document():
    assert "(docs/rules.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


def _anchor(title: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def test_links_inside_the_document_lead_to_a_heading():
    anchors: set[str] = set()
    for title in TITLES:
        anchor = _anchor(title)
        n = 0
        while (f"{anchor}-{n}" if n else anchor) in anchors:
            n += 1
        anchors.add(f"{anchor}-{n}" if n else anchor)
    links = re.findall(r"\]\(#([^)]+)\)", DOC_TEXT)
    assert links
    assert sorted(set(links) - anchors) == []


# --- test vectors -----------------------------------------------------------------------------------

HEADER = re.compile(
    r"^# (?P<variant>\S+) \((?P<fingerprint>[0-9a-f]{12})\), deal (?P<deal>\d+), seed (?P<seed>\d+), source (?P<source>\w+)$"
)
"""The first line `bakers-dozen deal` prints: variant, fingerprint, deal number, seed, source."""


def layout_blocks() -> list[str]:
    """Every fenced block of the document that starts with a `deal` header line."""
    blocks = re.findall(r"^```text\n(.*?)^```$", DOC_TEXT, flags=re.MULTILINE | re.DOTALL)
    return [b for b in blocks if HEADER.match(b.splitlines()[0])]


BLOCKS = layout_blocks()


def _key(block: str) -> tuple[str, str, int, int]:
    m = HEADER.match(block.splitlines()[0])
    assert m
    return m["variant"], m["source"], int(m["deal"]), int(m["seed"])


@pytest.mark.parametrize("block", BLOCKS, ids=["{}-{}-{}-seed{}".format(*_key(b)) for b in BLOCKS])
def test_printed_layout_is_what_the_command_deals(block):
    variant, source, deal, seed = _key(block)
    result = CliRunner().invoke(main, ["deal", "--variant", variant, "--deal", str(deal), "--seed", str(seed),
                                       "--source", source, "--reveal"])
    assert result.exit_code == 0, result.output
    assert result.output == block


def test_the_vectors_cover_every_preset_and_the_shared_pysol_deal():
    keys = {_key(b) for b in BLOCKS}
    assert {(v.name, "default", 1, 0) for v in VARIANTS} <= keys
    assert ("bakers-dozen", "pysol", 24, 0) in keys
    deal_24 = next(b for b in BLOCKS if _key(b) == ("bakers-dozen", "pysol", 24, 0))
    assert deal_24.split("\n", 1)[1] == PYSOL_DEAL_24


def test_the_pysol_king_swap_example_is_the_dealt_pile_four():
    said = " ".join(" ".join(section("PySol compatibility").body).split())
    piles = {_key(b)[0]: b.splitlines()[1:] for b in BLOCKS if _key(b)[1:] == ("pysol", 1, 0)}
    dealt = piles["kings-into-empty"][3]
    assert f"dealt `{dealt}` and becomes `{piles['bakers-dozen'][3]}`" in said
    cards = [parse_card(w) for w in dealt.split()]
    kings_first = [c for c in cards if rank_of(c) == KING] + [c for c in cards if rank_of(c) != KING]  # rule 2
    stable = " ".join(card_str(c) for c in kings_first)
    assert f"rule 2 would give `{stable}`" in said


def test_reachable_counts_are_the_pinned_ones():
    rows = table(section("Reachable positions").body)
    printed = {(r["variant"], r["source"], int(r["deal"])): tuple(int(r[f"k = {k}"]) for k in range(1, 5)) for r in rows}
    pinned = {(variant, "default", deal): counts for (variant, deal), counts in GOLDEN_DEALS.items()}
    pinned["bakers-dozen", "pysol", 24] = GOLDEN_MID["pysol-24"]
    assert printed == pinned
    for variant, _, _ in printed:
        find_variant(variant)


def test_the_published_interval_is_the_toolkits():
    said = " ".join(" ".join(section("Published figures").body).split())
    low, high = win_rate_interval(997, 1000)
    assert f"997 of 1000 has a Wilson 95% interval of {low:.2%}–{high:.2%}" in said
