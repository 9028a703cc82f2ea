"""A page of the guide or the README reads as a guide: no paragraph (or list item) over `LIMIT` words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LIMIT = 120
_ITEM = re.compile(r"^([-*]|\d+\.)\s")


def paragraphs(text: str) -> list[str]:
    """The prose of a Markdown page in paragraphs and list items, leaving out code blocks, tables, headings and
    HTML comments."""
    out: list[str] = []
    current: list[str] = []
    fence = False

    def close() -> None:
        if current:
            out.append(" ".join(current))
            current.clear()

    for line in text.splitlines():
        s = line.strip()
        if s.startswith("```"):
            fence = not fence
            close()
        elif fence:
            continue
        elif not s or s.startswith(("|", "#", "<!--")):
            close()
        elif _ITEM.match(s):
            close()
            current.append(s)
        else:
            current.append(s)
    close()
    return out


PAGES = sorted(p.name for p in (ROOT / "docs").glob("*.md")) + ["README.md"]


@pytest.mark.parametrize("name", PAGES)
def test_no_paragraph_is_over_the_limit(name):
    path = ROOT / name if name == "README.md" else ROOT / "docs" / name
    long = [f"{len(p.split())} words: {p[:70]}" for p in paragraphs(path.read_text(encoding="utf-8"))
            if len(p.split()) > LIMIT]
    assert not long, long


def test_a_long_paragraph_is_found():
    assert paragraphs("intro\n\n" + "word " * 130 + "\n\n```\ncode\n```\n- item\n  more\n") == [
        "intro", ("word " * 130).strip(), "- item more"]
