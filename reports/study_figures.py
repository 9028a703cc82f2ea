"""The default study's figures in the README and the guide, made from one pinned run so that none goes stale.

``data/default-study.json`` (`PINNED`) holds the counts of one run of the default study (`studies.study.default_study`):
per run its variant, player, deals, wins, unknown verdicts, errors and verified wins, and the date and toolkit
version it was played with. ``make docs-figures`` (``python -m reports.study_figures``) writes from it:

- the README's win-rate table and the finding paragraph under it (`reports.finding`), between the `Block` markers;
- the same table and finding in docs/reports.md ("What the default study finds"), the finding in docs/index.md;
- the sentence on face-down cards per pile in docs/strategies-findings.md (`sweep_text`);
- the chart docs/demo-win-rates.png (`reports.charts.grouped`, the report's first chart), with the digest of what
  it draws in its metadata, so a test can tell a chart drawn from other figures.

``python -m reports.study_figures --pin STORE`` first replaces the pinned counts with the default study's runs in
STORE (after ``bakers-dozen demo --store STORE``). The test `tests/test_study_figures.py` regenerates every block
and the chart's digest from the pinned file and fails on any difference, and checks every prose claim about a
figure's direction against the same counts.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reports import charts, grid
from reports.atlas import Figure, perfect_play
from reports.finding import finding
from reports.formats import count, exact_pct
from reports.output import write_file_atomically
from sim.errors import UserError
from studies.stats import win_rate_interval
from studies.study import player_names

PINNED = Path("data") / "default-study.json"
README = Path("README.md")
REPORTS_PAGE = Path("docs") / "reports.md"
INDEX = Path("docs") / "index.md"
CHART = Path("docs") / "demo-win-rates.png"
ATLAS = Path("studies") / "atlas" / "data"
"""The shipped atlas, as a path from the repository root (the pages are made in a checkout)."""
CHART_TITLE = "Win rate by variant and player, from random play to perfect play (the default study)"
DIGEST_TAG = "bakers-dozen default-study chart "


class FiguresError(UserError):
    """A pinned file or a page the default study's figures cannot be made from or put into."""


@dataclass(frozen=True)
class Block:
    """Generated text in a page, between two HTML comments that say what makes it."""

    name: str
    source: str = "data/default-study.json"
    maker: str = "make docs-figures"

    @property
    def start(self) -> str:
        return f"<!-- {self.name}: made by `{self.maker}` from {self.source}; edits inside are replaced -->"

    @property
    def end(self) -> str:
        return f"<!-- /{self.name} -->"

    def put(self, page: str, text: str) -> str:
        """``page`` with the text between the markers replaced by ``text``."""
        start, end = page.find(self.start), page.find(self.end)
        if start < 0 or end < start:
            raise FiguresError(f"the page has no block from {self.start!r} to {self.end!r}")
        return page[: start + len(self.start)] + "\n" + text + "\n" + page[end:]

    def get(self, page: str) -> str:
        """The text between the markers ('' when the page has none)."""
        start, end = page.find(self.start), page.find(self.end)
        return page[start + len(self.start): end].strip("\n") if 0 <= start < end else ""


TABLE = Block("default-study-table")
FINDING = Block("default-study-finding")
SWEEP = Block("default-study-face-down")
STRATEGIES_PAGE = Path("docs") / "strategies-findings.md"


def load(path: Path = PINNED) -> dict[str, Any]:
    """The pinned run: ``made``, ``toolkit``, ``command``, ``twins`` and ``runs`` (one dict a run)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise FiguresError(f"{path}: {exc}") from None


def cells(pinned: dict[str, Any]) -> pd.DataFrame:
    """The pinned runs as the report's grid cells (`reports.grid.cells` columns: rates and intervals from counts)."""
    runs = pd.DataFrame(pinned["runs"])
    lows, highs = zip(*(win_rate_interval(int(w), int(n)) for w, n in zip(runs["wins"], runs["deals"], strict=True)),
                      strict=True)
    return runs.assign(win_rate=runs["wins"] / runs["deals"], ci_low=lows, ci_high=highs)


def _figure(r: pd.Series) -> str:
    """A README cell: "32.31% (31.67-32.97)", a range with its unknown verdicts, ", clairvoyant" where it saw
    face-down cards."""
    wins, unknown, deals = int(r["wins"]), int(r["unknown"]), int(r["deals"])
    low = win_rate_interval(wins, deals)[0]
    high = win_rate_interval(wins + unknown, deals)[1]
    rate = exact_pct(wins, deals)
    if unknown:
        rate = f"{rate.removesuffix('%')}-{exact_pct(wins + unknown, deals)}"
    text = f"{rate} ({low * 100:.2f}-{high * 100:.2f})" + (f", {count(unknown)} unknown" if unknown else "")
    return text + (", clairvoyant" if r["clairvoyant"] else "")


def _atlas_text(f: Figure) -> str:
    rate = exact_pct(f.won, f.deals)
    if f.unknown:
        rate = f"{rate.removesuffix('%')}-{exact_pct(f.won + f.unknown, f.deals)}"
    text = f"{rate} ({f.ci_low * 100:.2f}-{f.ci_high * 100:.2f}) of {count(f.deals)}"
    text += f", {count(f.unknown)} unknown" if f.unknown else ""
    return text + (", clairvoyant" if f.clairvoyant else "")


def table_markdown(pinned: dict[str, Any], atlas: dict[str, Figure] | None = None) -> str:
    """The grid as a Markdown table: a row per variant, a column per player (named as the report names them),
    and the atlas's perfect play where ``atlas`` (figures by rules fingerprint) has the variant's rules."""
    c = cells(pinned)
    names = grid.player_names(list(c["strategy"]), player_names())
    table, _ = grid.table(c, names)
    by = c.set_index(["variant", "strategy"])
    players = grid.player_order(list(c["strategy"]))
    fingerprints = dict(zip(c["variant"], c["rules_fingerprint"], strict=False))
    head = ["variant", *(names[p] for p in players)] + (["perfect play (atlas)"] if atlas else [])
    lines = ["| " + " | ".join(head) + " |", "|---|" + "|".join("---:" for _ in head[1:]) + "|"]
    for v in table["variant"]:
        row = [v] + [_figure(by.loc[(v, p)]) if (v, p) in by.index else "-" for p in players]
        if atlas:
            f = atlas.get(fingerprints[v])
            row.append(_atlas_text(f) if f is not None else "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def finding_text(pinned: dict[str, Any]) -> str:
    """The report's finding (`reports.finding`) for the pinned run, as the README shows it."""
    c = cells(pinned)
    return finding(c, grid.player_names(list(c["strategy"]), player_names()), pinned.get("twins", {}))


def sweep_text(pinned: dict[str, Any]) -> str:
    """The sentence of docs/strategies-findings.md on face-down cards per pile: the heuristic's win rate on the face-up deal
    and on each face-down variant whose face-up twin it is, in order of the cards dealt face down."""
    runs = [r for r in pinned["runs"] if r["spec"] == "heuristic"]
    twins = pinned.get("twins", {})
    by = {r["variant"]: r for r in runs}
    up = next(iter(set(twins.values())), None)
    if up is None or up not in by:
        return ""
    down = sorted((v for v, t in twins.items() if t == up and v in by), key=lambda v: (by[v]["face_down"], v))
    parts = [f"{exact_pct(by[v]['wins'], by[v]['deals'])} with {by[v]['face_down']} ({v})" for v in down]
    rates = [by[v]["wins"] / by[v]["deals"] for v in [up, *down]]
    trend = ("each face-down card lowers it" if all(a > b for a, b in zip(rates, rates[1:], strict=False))
             else "each face-down card raises it" if all(a < b for a, b in zip(rates, rates[1:], strict=False))
             else "face-down cards move it both ways")
    return (f"In the default study's pinned run ({pinned['made']}, deals 1-{count(by[up]['deals'])}), heuristic version 2 "
            f"wins {exact_pct(by[up]['wins'], by[up]['deals'])} of {up} dealt face up and "
            + ", ".join(parts) + f" cards of each pile face down: {trend}.")


def chart_data(pinned: dict[str, Any]) -> pd.DataFrame:
    """What the chart draws: the report's first chart's table (`reports.grid.chart_data`) for the pinned run."""
    c = cells(pinned)
    return grid.chart_data(c, grid.player_names(list(c["strategy"]), player_names()))


def chart_digest(pinned: dict[str, Any]) -> str:
    """A digest of what the chart shows (its table and title): the shipped chart carries it in its metadata."""
    text = chart_data(pinned).to_csv(index=False, float_format="%.12g") + CHART_TITLE
    return hashlib.sha256(text.encode()).hexdigest()


def draw(pinned: dict[str, Any], path: Path) -> None:
    """Draw the chart as a PNG at ``path``, its digest (`chart_digest`) in the PNG's Description."""
    fig = charts.grouped(chart_data(pinned), f"{CHART_TITLE}, {pinned['made']}")
    meta = {"Software": None, "Description": DIGEST_TAG + chart_digest(pinned)}
    write_file_atomically(path, lambda tmp: fig.savefig(tmp, format="png", bbox_inches="tight", dpi=110, metadata=meta))
    charts.pyplot().close(fig)


def shown_digest(path: Path) -> str:
    """The digest a chart at ``path`` was drawn from ('' when it carries none)."""
    from PIL import Image

    with Image.open(path) as image:
        text = str(getattr(image, "text", {}).get("Description", ""))
    return text.removeprefix(DIGEST_TAG) if text.startswith(DIGEST_TAG) else ""


def atlas_figures(pinned: dict[str, Any], folder: Path = ATLAS) -> dict[str, Figure]:
    """The atlas's perfect play for the pinned run's rules (none when there is no atlas)."""
    return perfect_play(folder if (folder / "summary.csv").is_file() else None,
                        sorted({r["rules_fingerprint"] for r in pinned["runs"]}))


def pages(pinned: dict[str, Any], root: Path = Path()) -> dict[Path, str]:
    """Each page with its blocks made from ``pinned``: the README (table with the atlas column and finding) and
    the reports page (the table of the study's own figures)."""
    readme = (root / README).read_text(encoding="utf-8")
    readme = TABLE.put(readme, table_markdown(pinned, atlas_figures(pinned, root / ATLAS)))
    readme = FINDING.put(readme, finding_text(pinned))
    report_page = TABLE.put((root / REPORTS_PAGE).read_text(encoding="utf-8"), table_markdown(pinned))
    report_page = FINDING.put(report_page, finding_text(pinned))
    index = FINDING.put((root / INDEX).read_text(encoding="utf-8"), finding_text(pinned))
    strategies = SWEEP.put((root / STRATEGIES_PAGE).read_text(encoding="utf-8"), sweep_text(pinned))
    return {root / README: readme, root / REPORTS_PAGE: report_page, root / INDEX: index,
            root / STRATEGIES_PAGE: strategies}


def pin(store: Path, path: Path = PINNED) -> int:
    """Replace the pinned run with the default study's runs in ``store``; how many runs were pinned. A run of the
    study that the store lacks in full (every deal) is refused, and nothing changes."""
    from reports.build import COLUMNS
    from reports.tables import summary
    from strategies import load_strategy
    from studies.reading import read_store
    from studies.study import PLAYER_NAMES, default_study, twins

    rows = read_store(store, columns=COLUMNS)
    runs, seen = [], set()
    for spec in default_study():
        if (spec.rules.fingerprint, spec.strategy) in seen:  # the sweep's face_down=3 is dick-1883's rules
            continue
        seen.add((spec.rules.fingerprint, spec.strategy))
        player = load_strategy(spec.strategy)
        mine = rows[(rows["rules_fingerprint"] == spec.rules.fingerprint) & (rows["strategy_identity"] == player.identity)
                    & (rows["seed"] == spec.seed) & (rows["source"] == spec.source)
                    & rows["deal"].between(spec.first, spec.first + spec.deals - 1)].drop_duplicates("deal")
        if len(mine) != spec.deals:
            raise FiguresError(f"{store} holds {len(mine)} of the {spec.deals} deals of {spec.strategy} on "
                               f"{spec.rules.name}; run `bakers-dozen demo --store {store}` first")
        s = summary(mine.assign(key="run")).iloc[0]
        runs.append({"variant": spec.rules.name, "rules_fingerprint": spec.rules.fingerprint,
                     "strategy": player.label_for(spec.rules).removesuffix(grid.CLAIRVOYANT),
                     "spec": spec.strategy, "clairvoyant": player.sees_hidden(spec.rules), "seed": spec.seed,
                     "face_down": spec.rules.face_down,
                     "first_deal": spec.first, "last_deal": spec.first + spec.deals - 1, "deals": spec.deals,
                     **{k: int(s[k]) for k in ("wins", "unknown", "errors", "verified_wins")}})
    assert {r["spec"] for r in runs} <= set(PLAYER_NAMES), "a player of the default study has no name"
    pinned = {"made": dt.date.today().isoformat(), "command": "bakers-dozen demo",
              "toolkit": str(s["toolkit_version"]), "runs": runs,
              "twins": {k: v for k, v in twins().items() if k in {r["variant"] for r in runs}}}
    write_file_atomically(path, lambda tmp: tmp.write_text(json.dumps(pinned, indent=1) + "\n", encoding="utf-8"))
    return len(runs)


def main(argv: list[str] | None = None) -> int:
    """``python -m reports.study_figures [--pin STORE]``: write the README's and the guide's default-study figures."""
    parser = argparse.ArgumentParser(prog="python -m reports.study_figures", description=__doc__.splitlines()[0])
    parser.add_argument("--pin", type=Path, default=None, metavar="STORE",
                        help="first pin the default study's runs in STORE (made by bakers-dozen demo --store STORE)")
    args = parser.parse_args(argv)
    try:
        if args.pin is not None:
            print(f"{PINNED}: {pin(args.pin)} runs pinned from {args.pin}")
        pinned = load()
        for page, text in pages(pinned).items():
            write_file_atomically(page, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
            print(f"{page}: the default study's figures")
        draw(pinned, CHART)
        print(f"{CHART}: the chart")
    except UserError as exc:
        print(f"study_figures: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
