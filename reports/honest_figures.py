"""The face-down question's figures - what hiding cards costs an honest player - made from committed data.

Two sources, both in the repository:

- ``data/honest-store`` (`HONEST_STORE`): a store of the honest `sampling` player's games, one row per deal,
  grown by a resumable ``bakers-dozen simulate`` (the command is in each run's manifest and on the findings page).
  Its games are copied into the shipped atlas (`studies.atlas.honest.ship`), and each row there is set beside the
  atlas's clairvoyant verdicts on exactly the same deals (`honest_table`), as an installed report sets it.
- ``data/honest-curve.csv`` (`CURVE`): rows appended by ``benchmarks/honest.py --csv``, one per setting measured:
  win rate against CPU seconds a deal on one core. Drawn as docs/honest-curve.png (`draw_curve`) with the clairvoyant
  ceiling of each variant on the same deals (from the atlas), and listed on the findings page.

``make docs-figures`` (``python -m reports.honest_figures``) writes the README's and docs/strategies-findings.md's
blocks and the chart; `tests/test_honest_figures.py` fails when a page no longer matches the data.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pandas as pd

from reports import charts
from reports.formats import count
from reports.output import write_file_atomically
from reports.study_figures import ATLAS, README, STRATEGIES_PAGE, Block, FiguresError
from sim.errors import UserError
from studies import atlas as atlas_files
from studies.atlas import honest
from studies.stats import win_rate_interval

HONEST_STORE = Path("data") / "honest-store"
CURVE = Path("data") / "honest-curve.csv"
CURVE_CHART = Path("docs") / "honest-curve.png"
HONEST = Block("honest-beside-atlas", "data/honest-store and the shipped atlas")
CURVE_TABLE = Block("honest-budget-curve", "data/honest-curve.csv")
DIGEST_TAG = "bakers-dozen honest curve "


def _interval(won: int, deals: int) -> str:
    low, high = win_rate_interval(won, deals)
    return f"{won / deals:.1%} ({low:.1%}-{high:.1%})"


def honest_table(atlas: Path = ATLAS) -> pd.DataFrame:
    """One line per honest row of the atlas at ``atlas`` (`studies.atlas.honest`): its variant, player, deal range
    and count, wins, and on the same deals the atlas's clairvoyant wins and unknown verdicts (None where the atlas
    lacks any of its deals)."""
    lines = []
    for row in honest.read_honest(atlas).values():
        beside = honest.beside_atlas(atlas, row)
        lines.append({"variant": row.variant, "player": row.player, "first": row.first, "last": row.last,
                      "deals": row.deals, "won": row.won,
                      "atlas_won": beside.clairvoyant_won if beside else None,
                      "atlas_unknown": beside.clairvoyant_unknown if beside else None})
    return pd.DataFrame(lines)


def honest_markdown(table: pd.DataFrame) -> str:
    """The honest runs beside the atlas, as a Markdown table with the share of clairvoyant wins kept."""
    head = ("| variant | deals | honest player (version) | honest win rate (95%) | clairvoyant on the same deals (atlas) "
            "| honest / clairvoyant |\n|---|---:|---|---:|---:|---:|")
    out = [head]
    for r in table.itertuples():
        span = f"{r.first:,}-{r.last:,}" if r.last - r.first + 1 == r.deals else f"{count(r.deals)} of {r.first:,}-{r.last:,}"
        player = str(r.player).split(":")[0]
        if r.atlas_won is None or pd.isna(r.atlas_won):
            clair, ratio = "not in the atlas", "-"
        else:
            clair = _interval(int(r.atlas_won), r.deals)
            clair += f", {count(int(r.atlas_unknown))} unknown" if r.atlas_unknown else ""
            ratio = f"{r.won / r.atlas_won:.2f}" if r.atlas_won else "-"
        out.append(f"| {r.variant} | {span} | `{player}` | {_interval(r.won, r.deals)} | {clair} | {ratio} |")
    return "\n".join(out)


def load_curve(path: Path = CURVE) -> pd.DataFrame:
    """The budget curve's rows (honest settings only): the variants in the order first measured, each from its
    cheapest setting to its dearest."""
    try:
        table = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise FiguresError(f"{path}: {exc}") from None
    table = table[table["honest"].astype(str) == "True"]
    order = {v: i for i, v in enumerate(dict.fromkeys(table["variant"]))}
    return table.sort_values(["variant", "cpu_s_per_deal"], key=lambda c: c.map(order) if c.name == "variant" else c,
                             kind="stable").reset_index(drop=True)


def curve_markdown(curve: pd.DataFrame) -> str:
    """The curve's points as a Markdown table: variant, deals, setting, win rate with its interval, CPU s a deal."""
    out = ["| variant | deals | setting | win rate (95%) | CPU s a deal | measured |", "|---|---|---|---:|---:|---|"]
    for r in curve.itertuples():
        out.append(f"| {r.variant} | {r.first:,}-{r.last:,} | `{r.spec}` | {_interval(int(r.won), int(r.deals))} "
                   f"| {r.cpu_s_per_deal:.3f} | {r.measured} |")
    return "\n".join(out)


def ceilings(curve: pd.DataFrame, atlas: Path = ATLAS) -> dict[str, float]:
    """The clairvoyant win rate on the curve's own deals, by variant, from the atlas (the chart's dashed lines;
    a variant the atlas lacks has none)."""
    top = {}
    for (variant, first, last), _ in curve.groupby(["variant", "first", "last"], sort=False):
        try:
            table = atlas_files.read_deals(atlas, str(variant), "default", ("deal", "verdict"))
        except (UserError, OSError):
            continue
        deals = atlas_files.deal_numbers(table)
        on = (deals >= first) & (deals <= last)
        if on.sum() == last - first + 1:
            codes, labels = atlas_files.verdict_codes(table)
            top[str(variant)] = float((codes[on] == labels.index("won")).mean()) if "won" in labels else 0.0
    return top


def curve_digest(curve: pd.DataFrame, top: dict[str, float]) -> str:
    """A digest of what the chart draws, kept in the PNG so that a test can tell a chart drawn from other data."""
    text = curve[["variant", "cpu_s_per_deal", "won", "deals"]].to_csv(index=False) + repr(sorted(top.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def draw_curve(curve: pd.DataFrame, top: dict[str, float], path: Path) -> None:
    """The budget curve as a PNG at ``path``, its digest in the PNG's Description."""
    frame = curve.assign(win_rate=curve["won"] / curve["deals"])
    fig = charts.budget_curve(frame, top, "The honest player's win rate against its budget, beside clairvoyant play")
    meta = {"Software": None, "Description": DIGEST_TAG + curve_digest(curve, top)}
    write_file_atomically(path, lambda tmp: fig.savefig(tmp, format="png", bbox_inches="tight", dpi=110, metadata=meta))
    charts.pyplot().close(fig)


def pages(root: Path = Path()) -> dict[Path, str]:
    """The README and the strategies findings page with their honest blocks made from the data under ``root``."""
    honest = honest_markdown(honest_table(root / ATLAS))
    readme = HONEST.put((root / README).read_text(encoding="utf-8"), honest)
    findings = HONEST.put((root / STRATEGIES_PAGE).read_text(encoding="utf-8"), honest)
    findings = CURVE_TABLE.put(findings, curve_markdown(load_curve(root / CURVE)))
    return {root / README: readme, root / STRATEGIES_PAGE: findings}


def main() -> int:
    """``python -m reports.honest_figures``: write the honest blocks and the budget curve's chart."""
    try:
        for row in honest.ship(HONEST_STORE, ATLAS):
            print(f"{ATLAS}: {row['variant']}'s honest games, deals {row['first']:,}-{row['last']:,} ({row['deals']:,})")
        for page, text in pages().items():
            write_file_atomically(page, lambda tmp, text=text: tmp.write_text(text, encoding="utf-8"))
            print(f"{page}: the honest player's figures")
        curve = load_curve()
        draw_curve(curve, ceilings(curve), CURVE_CHART)
        print(f"{CURVE_CHART}: the budget curve")
    except UserError as exc:
        print(f"honest_figures: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
