"""The atlas's figures in the guide made from the atlas itself: the table of ``docs/atlas.md``, its chart, and the
README's list of what each variant's deals are worth.

``make atlas-docs`` (``python -m reports.atlas_page``) checks the atlas (`studies.atlas.check_atlas`: every summary row
against its deal file), then rewrites the block of the page between `START` and `END` with the summary as a table,
draws the chart of winnability by variant (`reports.charts.winnability`) as a PNG, and rewrites the README's
`README_BLOCK` with a line a variant (`summary_markdown`), so the guide shows whatever rows the atlas holds after a
longer run, in one command, and no atlas figure is typed by hand. An atlas that does not agree with itself changes
nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import pandas as pd

from reports import charts
from reports.formats import count, exact_pct, interval, pct
from reports.output import write_file_atomically
from reports.study_figures import Block, FiguresError
from sim.errors import UserError
from sim.regular_files import open_regular
from studies.atlas import SUMMARY, TIMEOUT, check_atlas, read_summary

START = "<!-- atlas-table: made by `make atlas-docs` from studies/atlas/data/summary.csv; edits inside are replaced -->"
END = "<!-- /atlas-table -->"
PAGE = Path("docs") / "atlas.md"
README = Path("README.md")
README_BLOCK = Block("atlas-summary", "studies/atlas/data/summary.csv", "make atlas-docs")
CHART = Path("docs") / "atlas-winnability.png"
TITLE = "Deals winnable with perfect play, by variant (the winnability atlas, studies/atlas/data/summary.csv)"


class AtlasPageError(UserError):
    """An atlas or a page the guide's atlas table cannot be made from."""


def numbering(row: dict[str, Any]) -> str:
    """Whose deal numbers a row is on: the toolkit's (with its seed) or PySolFC's."""
    return "PySolFC" if row["source"] == "pysol" else f"toolkit (seed {row['seed']})"


def rungs_run(budgets: str) -> str:
    """The rungs of the ladder a row ran, from its ``budgets`` (``0: ...; 1: ...``): "0" or "0-2"."""
    last = max(int(m) for m in re.findall(r"(?:^|; )(\d+): ", budgets))
    return "0" if last == 0 else f"0-{last}"


def _table(head: list[str], right: set[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table: the header ``head``, its columns named in ``right`` aligned right, one line per row."""
    return ["| " + " | ".join(head) + " |", "|" + "|".join("---:" if h in right else "---" for h in head) + "|",
            *("| " + " | ".join(cells) + " |" for cells in rows)]


def table_markdown(rows: list[dict[str, Any]]) -> str:
    """The summary rows as two Markdown tables, the first narrow enough for a 1,024 px page: each row's variant,
    numbering, deals, win rate (the share proven won) and its interval, "clairvoyant" where the solver saw face-down
    cards; then the counts behind it: each verdict's count and the ladder's rungs run. A column of the unknown deals
    the seconds cap stopped appears in the second when a row records that count ("–" where one does not)."""
    clock = any(r.get(TIMEOUT) is not None for r in rows)
    answer = _table(["variant", "numbering", "deals", "win rate", "95% interval", ""], {"win rate"},
                    [[f"`{r['variant']}`", numbering(r), f"{count(r['first'])}-{count(r['last'])}", pct(r["win_rate"]),
                      interval(r["ci_low"], r["ci_high"]).replace(" – ", " - "),
                      "clairvoyant" if r["clairvoyant"] == "True" else ""] for r in rows])
    counts = _table(["variant", "numbering", "deals", "won", "lost", "unknown",
                     *(["stopped by the clock"] if clock else []), "rungs"],
                    {"deals", "won", "lost", "unknown", "stopped by the clock"},
                    [[f"`{r['variant']}`", numbering(r), count(r["deals"]), count(r["won"]), count(r["lost"]),
                      count(r["unknown"]), *([("–" if r.get(TIMEOUT) is None else count(r[TIMEOUT]))] if clock else []),
                      rungs_run(r["budgets"])] for r in rows])
    return "\n".join([*answer, "", "The counts behind each row, and how far up the ladder it went:", "", *counts])


def winnable(row: dict[str, Any]) -> str:
    """The share of a row's deals proven winnable, as a range up to the share not proven lost where deals are
    unknown, with the decimals (two or more) that tell its ends apart: "99.88%", "99.71-99.74%", "99.725-99.733%"."""
    if row["unknown"] == 0:
        return exact_pct(row["won"], row["deals"])
    places = 2
    while (low := exact_pct(row["won"], row["deals"], places)) == (
            high := exact_pct(row["won"] + row["unknown"], row["deals"], places)):
        places += 1
    return f"{low[:-1]}-{high}"


def _row_words(row: dict[str, Any]) -> str:
    unknown = "none unknown" if row["unknown"] == 0 else f"{count(row['unknown'])} unknown"
    return (f"{winnable(row)} of deals {count(row['first'])}-{count(row['last'])} ({count(row['lost'])} proven lost, "
            f"{unknown})")


def summary_markdown(rows: list[dict[str, Any]]) -> str:
    """The README's list: a line a variant, in the summary's order, with its toolkit-numbered rows and then its
    PySolFC-numbered ones (`winnable` and the counts), and where the solver saw the face-down cards, so."""
    lines = []
    for variant in dict.fromkeys(r["variant"] for r in rows):
        mine = [r for r in rows if r["variant"] == variant]
        parts = [("PySolFC's numbering: " if r["source"] == "pysol" else "") + _row_words(r)
                 for r in sorted(mine, key=lambda r: r["source"] == "pysol")]
        seeing = ", for a player who sees the face-down cards" if any(r["clairvoyant"] == "True" for r in mine) else ""
        lines.append(f"- `{variant}`: {'; '.join(parts)}{seeing}.")
    return "\n".join(lines)


def chart_table(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """The rows as `reports.charts.winnability` draws them, labelled by variant and numbering."""
    return pd.DataFrame({
        "label": [f"{r['variant']} ({'PySolFC' if r['source'] == 'pysol' else 'toolkit'} deals)" for r in rows],
        "win_rate": [r["win_rate"] for r in rows], "ci_low": [r["ci_low"] for r in rows],
        "ci_high": [r["ci_high"] for r in rows], "deals": [r["deals"] for r in rows],
        "clairvoyant": [r["clairvoyant"] == "True" for r in rows]})


def with_block(page: str, block: str) -> str:
    """``page`` with the text between its `START` and `END` lines replaced by ``block``."""
    start, end = page.find(START), page.find(END)
    if start < 0 or end < start:
        raise AtlasPageError(f"the page has no block from {START!r} to {END!r} to put the table in")
    return page[: start + len(START)] + "\n\n" + block + "\n\n" + page[end:]


def refresh(folder: Path, page: Path, chart: Path, readme: Path | None = None) -> int:
    """Check the atlas at ``folder``, put its table into ``page``, draw its chart to ``chart`` (PNG) and, with
    ``readme``, put its list into that page's `README_BLOCK`; the rows shown."""
    if not (folder / SUMMARY).is_file():
        raise AtlasPageError(f"{folder / SUMMARY} does not exist; give the atlas folder with --atlas")
    problems = check_atlas(folder)
    if problems:
        raise AtlasPageError(f"the atlas at {folder} does not agree with itself ({len(problems)} problem(s)), "
                             f"e.g. {problems[0]}; nothing was changed")
    rows = read_summary(folder / SUMMARY)
    if not rows:
        raise AtlasPageError(f"{folder / SUMMARY} holds no rows")
    new = with_block(_read(page), table_markdown(rows))
    new_readme = None
    if readme is not None:
        try:
            new_readme = README_BLOCK.put(_read(readme), summary_markdown(rows))
        except FiguresError as exc:
            raise AtlasPageError(f"{readme}: {exc}") from None
    fig = charts.winnability(chart_table(rows), TITLE)
    write_file_atomically(chart, lambda tmp: fig.savefig(tmp, format="png", bbox_inches="tight", dpi=150,
                                                         metadata={"Software": None}))
    charts.pyplot().close(fig)
    write_file_atomically(page, lambda tmp: tmp.write_text(new, encoding="utf-8"))
    if readme is not None:
        write_file_atomically(readme, lambda tmp: tmp.write_text(new_readme, encoding="utf-8"))
    return len(rows)


def _read(page: Path) -> str:
    try:
        with open_regular(page, "r") as fh:
            return fh.read()
    except OSError as exc:
        raise AtlasPageError(f"{page}: {exc.strerror or exc}") from None


def main(argv: list[str] | None = None) -> int:
    """``python -m reports.atlas_page``: refresh the guide's atlas table and chart; a problem is one line, exit 2."""
    parser = argparse.ArgumentParser(prog="python -m reports.atlas_page", description=__doc__.splitlines()[0])
    parser.add_argument("--atlas", type=Path, default=Path("studies") / "atlas" / "data", help="the atlas folder [studies/atlas/data]")
    parser.add_argument("--page", type=Path, default=PAGE, help=f"the page holding the table [{PAGE}]")
    parser.add_argument("--chart", type=Path, default=CHART, help=f"the chart to write [{CHART}]")
    parser.add_argument("--readme", type=Path, help=f"a page whose atlas-summary block gets the list of variants "
                        f"(`make atlas-docs`: {README}) [none]")
    args = parser.parse_args(argv)
    try:
        shown = refresh(args.atlas, args.page, args.chart, args.readme)
    except UserError as exc:
        print(f"atlas_page: error: {exc}", file=sys.stderr)
        return 2
    readme = f"; {args.readme}: their list" if args.readme is not None else ""
    print(f"{args.page}: the table of {shown} atlas row(s); {args.chart}: their chart{readme}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
