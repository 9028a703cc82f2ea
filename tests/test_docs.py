"""The documentation as a product: a short README whose links work, a site whose navigation holds every page,
a performance page of current figures, and no work log anywhere.

The site's own links and anchors are checked by ``mkdocs build --strict`` (`make docs`, run by CI); these
checks cover what mkdocs does not see: the Markdown files outside ``docs/``, and the limits on length.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README_LINES = 300
PERFORMANCE_LINES = 400
OUTSIDE_DOCS = ("README.md", "CHANGELOG.md", "benchmarks/README.md")
"""The Markdown files a reader meets in the repository that the site does not build."""
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
WORK_LOG = re.compile(r"\b(session|branch(es)?|worktree|the lead|helper [a-z]+\d+|issue \d+|this (morning|afternoon|evening))\b",
                      re.I)
"""What a diary says and a guide does not: who worked on what, in which session or branch, for which issue."""


def markdown_files() -> list[Path]:
    """Every Markdown file of the project: the pages of the site and the files outside it."""
    return sorted([*(ROOT / "docs").glob("*.md"), *(ROOT / name for name in OUTSIDE_DOCS)])


def test_the_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_LINES, f"README.md has {lines} lines; the rest belongs on the site (docs/)"


def test_the_performance_page_holds_current_figures_not_a_diary():
    lines = (ROOT / "docs" / "performance.md").read_text(encoding="utf-8").count("\n")
    assert lines <= PERFORMANCE_LINES, f"docs/performance.md has {lines} lines"


@pytest.mark.parametrize("name", OUTSIDE_DOCS)
def test_every_relative_link_outside_the_site_reaches_a_file(name):
    path = ROOT / name
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        assert (path.parent / target.partition("#")[0]).exists(), f"{name} links to {target}, which does not exist"


def test_the_readme_links_every_page_of_the_site():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    linked = {target.partition("#")[0] for target in LINK.findall(text)}
    pages = {f"docs/{page.name}" for page in (ROOT / "docs").glob("*.md")} - {"docs/index.md", "docs/changelog.md"}
    assert pages <= linked, f"pages the README does not link: {sorted(pages - linked)}"


def test_the_site_navigation_holds_every_page_and_only_pages_that_exist():
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = set(re.findall(r"^\s+- [^:\n]+: (\S+\.md)\s*$", config, re.M))
    pages = {page.name for page in (ROOT / "docs").glob("*.md")}
    assert nav == pages, f"in the nav only: {sorted(nav - pages)}; pages not in the nav: {sorted(pages - nav)}"


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_markdown_file_is_a_work_log(path):
    found = [(n, line) for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if WORK_LOG.search(line)]
    assert not found, f"{path.relative_to(ROOT)} reads like a work log: {found[:3]}"
