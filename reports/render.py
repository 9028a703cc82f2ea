"""Writing a report: one Markdown file with chart files beside it, and one
self-contained HTML file (charts inlined as SVG, no scripts, no network).

A report is a list of sections, each with paragraphs, tables and figures;
`reports.build` decides what goes in them. Text can hold names from data
(variant and strategy names): it is escaped for HTML, and for Markdown
(`md_escape`) except the `backtick` code spans of paragraphs, whose content is
literal anyway.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from reports.output import contained


@dataclass
class Chart:
    """A saved chart and the facts a reader needs to trust it."""

    title: str
    paths: dict[str, Path]
    facts: str
    reproduce: list[str]


@dataclass
class Section:
    heading: str
    paragraphs: list[str] = field(default_factory=list)
    """What the tables show and how to read them (before the tables, or after them when the section has a lead)."""
    lead: list[str] = field(default_factory=list)
    """The answer in words, shown under the heading before the tables; a section with a lead shows its
    ``paragraphs`` (method, legend) after its tables, and the first such section takes the report's intro there
    too, so a reader meets the answer first."""
    tables: list[tuple[str, pd.DataFrame]] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    colours: dict[str, pd.DataFrame] = field(default_factory=dict)
    """Background colours (CSS, '' for none) of a table's cells, by the table's caption; HTML only."""
    small_print: list[str] = field(default_factory=list)
    """Notes in smaller type after the tables (what a short name in them stands for)."""
    tooltip: str = ""
    """What the heading abbreviates (a strategy's full specification), shown on hover in HTML."""


@dataclass(frozen=True)
class Cell:
    """A table cell with a headline figure and its details: HTML shows ``main`` large and ``detail`` small
    beneath it, the terminal shows them on two lines, and Markdown shows ``text`` (the cell in one line)."""

    main: str
    detail: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Links:
    """A table cell of links to files the report wrote beside itself: (text, path) pairs."""

    items: tuple[tuple[str, Path], ...]

    def __str__(self) -> str:
        return ", ".join(text for text, _ in self.items)


@dataclass
class Report:
    title: str
    intro: list[str]
    sections: list[Section]
    notes: list[str] = field(default_factory=list)
    """What the report could not use (also a section of it), for the command line to say too."""


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!~])")


def md_escape(text: str) -> str:
    """``text`` as literal Markdown inline text: every character that could start markup
    (emphasis, links, images, HTML, code, table cells, headings) is backslash-escaped and
    line breaks become spaces, so a name from data shows as written and can inject nothing."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).splitlines()))


def _md_paragraph(text: str) -> str:
    """A paragraph whose `backtick` spans are code (kept literal) and whose other text is escaped."""
    pieces = " ".join(text.splitlines()).split("`")
    if len(pieces) % 2 == 0:  # an unpaired backtick (from a name): no code spans at all
        return md_escape(text)
    return "".join(_md_code(p) if i % 2 else md_escape(p) for i, p in enumerate(pieces))


def _md_code(text: str) -> str:
    """An inline code span holding ``text`` literally (it holds no backtick: see `_md_paragraph`)."""
    return f"`{text}`" if text.strip() else md_escape(text)


def _md_fence(text: str, info: str = "") -> str:
    """A fenced code block holding ``text`` literally: the fence is longer than any backtick run in it."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{info}\n{text}\n{fence}"


def _md_table(df: pd.DataFrame, out_dir: Path) -> str:
    cols = [md_escape(str(c)) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]

    def cell(v: object) -> str:
        if isinstance(v, Links):
            return ", ".join(f"[{md_escape(t)}]({_href(p, out_dir)})" for t, p in v.items)
        return md_escape(str(v))

    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(cell(v) for v in row) + " |")
    return "\n".join(lines)


def _href(path: Path, out_dir: Path) -> str:
    """A link to a file of the report, relative to the report."""
    return quote(path.relative_to(out_dir).as_posix())


def to_markdown(report: Report, out_dir: Path) -> Path:
    """Write ``report.md`` (charts linked as SVG files relative to it)."""
    intro = list(report.intro)
    parts = [f"# {md_escape(report.title)}"]
    if not any(s.lead for s in report.sections):
        parts.extend(map(_md_paragraph, intro))
    for s in report.sections:
        parts.append(f"## {md_escape(s.heading)}")
        parts.extend(map(_md_paragraph, s.lead))
        if not s.lead:
            parts.extend(map(_md_paragraph, s.paragraphs))
        for caption, df in s.tables:
            parts.append(f"**{md_escape(caption)}**\n\n{_md_table(df, out_dir)}" if len(df) else _md_paragraph(_none(caption)))
        if s.lead:
            parts.extend(map(_md_paragraph, [*s.paragraphs, *intro]))
            intro = []
        parts.extend(f"<sub>{_md_paragraph(n)}</sub>" for n in s.small_print)
        for c in s.charts:
            rel = quote(c.paths["svg"].relative_to(out_dir).as_posix())
            commands = _md_fence("\n".join(c.reproduce), "sh")
            parts.append(f"![{md_escape(c.title)}]({rel})\n\n*{md_escape(c.facts)}* Reproduce:\n\n{commands}")
    path = contained(out_dir, out_dir / "report.md")
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


def _none(caption: str) -> str:
    """What an empty table says instead of printing its headers alone."""
    return f"{caption}: none."


_CSS = """
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1400px;margin:0 auto;padding:0 1em;
color:#222;line-height:1.45}
main{min-width:0}
h1{border-bottom:2px solid #4c78a8;padding-bottom:.2em;font-size:1.6em;margin:.4em 0 .2em}
h2{margin-top:2em;color:#2c4f7c;scroll-margin-top:.5em}
nav.toc{font-size:.85em;background:#f6f8fb;border:1px solid #dde;padding:.2em .8em;margin:.5em 0}
nav.toc summary{cursor:pointer;color:#2c4f7c}
nav.toc ol{margin:.2em 0;padding-left:1.4em;columns:2}nav.toc a{color:#2c4f7c;text-decoration:none}
nav.toc a:hover{text-decoration:underline}
p.lead{margin:.3em 0}nav.toc+h2{margin:.4em 0 .2em;font-size:1.35em}
.wide{max-width:100%;overflow-x:auto}
table{border-collapse:collapse;margin:.6em 0 1.4em;font-size:.85em;width:100%;table-layout:auto}
th,td{border:1px solid #ccd;padding:.25em .45em;text-align:right;overflow-wrap:break-word;vertical-align:top}
th{background:#eef2f8;font-weight:600}td:nth-child(-n+2),th:nth-child(-n+2){text-align:left}
caption{caption-side:top;text-align:left;font-weight:600;padding:.3em 0}
table.grid{table-layout:fixed;line-height:1.2}table.grid td,table.grid th{padding:.15em .3em}table.grid th:first-child{width:9em}
table.grid td,table.grid th{text-align:center}table.grid td:first-child,table.grid th:first-child{text-align:left}
.rate{display:block;font-size:1.2em;font-weight:600}
.detail{display:block;font-size:.78em;color:#444}
figure{margin:1em 0 2em}figure svg{max-width:100%;height:auto}figcaption{font-size:.85em;color:#444}
code{background:#f3f3f3;padding:.1em .3em;border-radius:3px;font-size:.9em;overflow-wrap:anywhere}
.note{font-size:.82em;color:#555;margin-top:-.8em}
pre{background:#f3f3f3;padding:.5em;white-space:pre-wrap;overflow-wrap:anywhere}
"""


_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")


def _html_table(caption: str, df: pd.DataFrame, out_dir: Path, colours: pd.DataFrame | None = None) -> str:
    """A table that wraps its cells to the page's width (long names break anywhere); the box around it scrolls
    sideways only as a last resort, so nothing is ever cut off."""
    head = "".join(f"<th>{_breakable(str(c))}</th>" for c in df.columns)

    def cell(i: int, j: int, v: object) -> str:
        hue = "" if colours is None else str(colours.iat[i, j])
        style = f" style='background:{hue}'" if _COLOUR.fullmatch(hue) else ""
        if isinstance(v, Links):
            return f"<td{style}>" + ", ".join(f"<a href='{html.escape(_href(p, out_dir))}'>{html.escape(t)}</a>"
                                              for t, p in v.items) + "</td>"
        if isinstance(v, Cell):
            return (f"<td{style} title='{html.escape(v.text)}'><span class='rate'>{html.escape(v.main)}</span>"
                    f"<span class='detail'>{html.escape(v.detail)}</span></td>")
        return f"<td{style}>{_breakable(str(v))}</td>"

    body = "".join("<tr>" + "".join(cell(i, j, v) for j, v in enumerate(row)) + "</tr>"
                   for i, row in enumerate(df.itertuples(index=False)))
    kind = " class='grid'" if colours is not None else ""
    return (f"<div class='wide'><table{kind}><caption>{html.escape(caption)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table></div>")


_BREAK_AFTER = re.compile(r"([,:=/\[_])")


def _breakable(text: str) -> str:
    """``text`` escaped for HTML, with a line break allowed after each separator of a strategy's or variant's
    specification (``heuristic:preset=balanced,allow_dig=False``), so a narrow column wraps a long name
    there instead of widening the table or breaking a word."""
    return _BREAK_AFTER.sub(r"\1<wbr>", html.escape(text))


def _inline_svg(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    start = text.find("<svg")
    return text[start:] if start >= 0 else text


def _para_html(text: str, kind: str = "") -> str:
    out, code = [], False
    for piece in html.escape(text).split("`"):
        out.append(f"<code>{piece}</code>" if code else piece)
        code = not code
    return (f"<p class='{kind}'>" if kind else "<p>") + "".join(out) + "</p>"


def section_ids(report: Report) -> list[str]:
    """An HTML id for each section, from its heading: letters, digits and '-', unique in the page."""
    ids: list[str] = []
    for s in report.sections:
        base = re.sub(r"[^a-z0-9]+", "-", s.heading.lower()).strip("-") or "section"
        name, n = base, 2
        while name in ids:
            name, n = f"{base}-{n}", n + 1
        ids.append(name)
    return ids


def _toc(report: Report, ids: list[str]) -> str:
    """The table of contents: a link to every section, folded into one line until opened (no script needed),
    so that the answer, not the list of sections, fills the first screen."""
    items = "".join(f"<li><a href='#{i}'>{html.escape(s.heading)}</a></li>" for s, i in zip(report.sections, ids,
                                                                                           strict=True))
    return (f"<nav class='toc' aria-label='Contents'><details><summary>Contents: {len(ids)} sections</summary>"
            f"<ol>{items}</ol></details></nav>")


def to_html(report: Report, out_dir: Path) -> Path:
    """Write ``report.html``: one file, charts inlined, opens with no server and no network; a table of
    contents links every section."""
    ids = section_ids(report)
    intro = list(report.intro)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
             "<meta name='viewport' content='width=device-width, initial-scale=1'>"
             f"<title>{html.escape(report.title)}</title><style>{_CSS}</style></head><body>",
             f"<main><h1>{html.escape(report.title)}</h1>", _toc(report, ids)]
    if not any(s.lead for s in report.sections):
        parts.extend(_para_html(p) for p in intro)
    for s, anchor in zip(report.sections, ids, strict=True):
        hint = f" title='{html.escape(s.tooltip)}'" if s.tooltip else ""
        parts.append(f"<h2 id='{anchor}'{hint}>{html.escape(s.heading)}</h2>")
        parts.extend(_para_html(p, "lead") for p in s.lead)
        if not s.lead:
            parts.extend(_para_html(p) for p in s.paragraphs)
        parts.extend(_html_table(caption, df, out_dir, s.colours.get(caption)) if len(df) else _para_html(_none(caption))
                     for caption, df in s.tables)
        if s.lead:
            parts.extend(_para_html(p) for p in [*s.paragraphs, *intro])
            intro = []
        parts.extend(_para_html(n, "note") for n in s.small_print)
        for c in s.charts:
            commands = html.escape("\n".join(c.reproduce))
            parts.append(f"<figure>{_inline_svg(c.paths['svg'])}<figcaption>{html.escape(c.facts)} Reproduce:"
                         f"<pre><code>{commands}</code></pre></figcaption></figure>")
    parts.append("</main></body></html>")
    path = contained(out_dir, out_dir / "report.html")
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
