"""The sections a reader meets first and last: the answer, the paired variant differences, the appendix.

- The answer: the variant x player grid (`reports.grid`) and the grouped chart of
  the same runs, each saying which deals every figure is on.
- The paired variant differences: every variant comparison's differences from its
  baseline in one table, McNemar's exact test Holm-adjusted over the whole table.
- The appendix: one line per run, every run the report holds.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from reports import charts, grid
from reports.atlas import HONEST_CAPTION, Figure, grid_column, honest_paragraph, honest_table
from reports.atlas import paragraph as atlas_paragraph
from reports.digest import Spans, spans_size
from reports.finding import Twins, finding
from reports.formats import count, interval, p_value, pct, runs_text, signed_interval, verified, verified_sentence
from reports.render import Chart, Section
from studies.atlas.honest import Beside
from studies.stats import holm

Commands = Callable[[list[str], "Spans | None"], list[str]]
"""(run keys, the deals they are compared on or None for each run's own) -> the commands that replay them."""

ANSWER = "Win rate by variant and player"
GRID_CAPTION = "Win rates"
APPENDIX = "Appendix: every run"
UNKNOWN_COLUMN = "unknown (variant / baseline)"


def _deals_by_player(s: pd.DataFrame, ranges: dict[str, str], names: dict[str, str]) -> str:
    """"random, greedy: deals 1–40,000, seed 0; lookahead: deals 1–1,000, seed 0" for the runs of ``s``."""
    groups: dict[str, list[str]] = {}
    for r in s.itertuples():
        where = f"deals {ranges[r.key]}, seed {r.seed}" + (f", source {r.source}" if r.source != "default" else "")
        players = groups.setdefault(where, [])
        name = names[r.strategy]
        if name not in players:
            players.append(name)
    return "; ".join(f"{', '.join(p)}: {w}" for w, p in groups.items())


def _one_name_per_player(s: pd.DataFrame) -> pd.DataFrame:
    """``s`` with each label its player's one name (`grid.one_name`)."""
    return s.assign(strategy=s["strategy"].map(grid.one_name))


def answer(s: pd.DataFrame, ranges: dict[str, str], paint: charts.Painter, commands: Commands,
           atlas: tuple[Path, dict[str, Figure], list[Beside]] | None = None, twins: Twins | None = None,
           known: dict[str, str] | None = None) -> tuple[Section, list[str]]:
    """The first section (the finding in words, the grid, then grouped chart) and a line for each run the grid
    leaves to the appendix; ``atlas``: the atlas's folder, its figures by rules fingerprint
    (`reports.atlas.perfect_play`), shown in a column of their own beside the live perfect play, and its honest
    games for the report's rules (`reports.atlas.honest_beside`), a table after the grid; ``twins``: each
    face-down variant's face-up twin (`reports.finding`); ``known``: names for players (`grid.player_names`)."""
    s = _one_name_per_player(s)
    shown, left = grid.cells(s)
    names = grid.player_names(list(s["strategy"]), known)
    text, colours = grid.table(shown, names)
    note = ""
    tables = [(GRID_CAPTION, text)]
    honest_note = ""
    if atlas is not None:
        folder, figures, honest = atlas
        fingerprints = dict(zip(map(str, shown["variant"]), map(str, shown["rules_fingerprint"]), strict=True))
        live = any(str(c).startswith("perfect play") for c in text.columns)
        text, colours, used = grid_column(text, colours, fingerprints, figures)
        tables = [(GRID_CAPTION, text)]
        note = atlas_paragraph(folder, used, live) if used else ""
        if honest:
            tables.append((HONEST_CAPTION, honest_table(honest)))
            honest_note = honest_paragraph(folder, honest)
    where = _deals_by_player(shown, ranges, names)
    checked = verified_sentence(int(shown["verified_wins"].sum()), int(shown["wins"].sum()))
    if int(shown["verified_wins"].sum()) < int(shown["wins"].sum()):
        checked += (" Why not all: a run's wins are replayed by the referee as it plays only with verification, on "
                    "by default for plug-in strategies and off for the built-ins, whose engine the test suite checks "
                    "against the referee (tests/test_referee_volume.py); `bakers-dozen simulate --verify` plays a run "
                    "with it.")
    paragraphs = [
        f"Each cell: the win rate, with its 95% Wilson interval and the number of deals. {grid.column_order(names)} "
        "The colour of a cell is its win rate on a log scale (darker: higher). "
        "A cell with unknown verdicts (a search out of budget) is a range: from the deals won to the deals won or "
        "unknown, with the interval from the lower Wilson bound of the first to the upper bound of the second; "
        "for perfect play that is the winnable share, won <= p <= won + unknown. A cell marked (clairvoyant) saw "
        "the face-down cards: an upper bound for an honest player.",
        f"Deals: {where}.",
        f"{checked} (Per run: the appendix.)",
    ]
    if note:
        paragraphs.insert(1, note)
    if honest_note:
        paragraphs.insert(2 if note else 1, honest_note)
    if left:
        paragraphs.append("Runs not in the grid (another seed, source or deal set of a cell): " + "; ".join(left) + ".")
    said = finding(shown, names, twins)
    sec = Section(ANSWER, paragraphs=paragraphs, tables=tables, colours={GRID_CAPTION: colours},
                  lead=[said] if said else [])
    sec.small_print.extend(grid.parameter_notes({p: names[p] for p in shown["strategy"]}))
    data = grid.chart_data(shown, names)
    title = f"Win rate by variant and player ({len(data)} runs, log scale)"
    sec.charts.append(Chart(title, paint(charts.grouped, "answer", data, title),
                            f"{len(data)} runs. {where}. {checked}", commands(list(shown["key"]), None)))
    return sec, left


def differences(s: pd.DataFrame, compared: list[tuple[pd.DataFrame, Spans]]) -> Section | None:
    """Every variant comparison's paired differences from its baseline (its first variant), Holm-adjusted together;
    ``compared``: each comparison's `reports.tables.variant_comparison` and the deals it is on (ranges)."""
    plain = _one_name_per_player(s)["strategy"]
    order = grid.player_order(list(plain))
    names = grid.player_names(list(plain))
    parts = []
    for t, deals in compared:
        base = t["variant"].iloc[0]
        for i in range(1, len(t)):
            r = t.iloc[i]
            label = str(r["strategy"])
            one = grid.one_name(label)
            parts.append({"player": names[one] + label[len(one):], "_label": one, "variant": r["variant"], "baseline": base,
                          "deals": f"{count(spans_size(deals))} ({runs_text(deals)})",
                          "_d": r["difference"], "_lo": r["diff_low"], "_hi": r["diff_high"], "_p": r["p_value"],
                          "_unknown": f"{count(int(r['unknown']))} / {count(int(t['unknown'].iloc[0]))}",
                          "_any_unknown": int(r["unknown"]) + int(t["unknown"].iloc[0]) > 0,
                          "_rank": order.index(one)})
    if not parts:
        return None
    t = pd.DataFrame(parts).sort_values("_rank", kind="stable").reset_index(drop=True)
    adjusted = holm(t["_p"].to_numpy(dtype=float))
    table = pd.DataFrame({
        "player": t["player"], "variant": t["variant"], "baseline": t["baseline"], "deals": t["deals"],
        "difference (95% interval)": [signed_interval(d, lo, hi) for d, lo, hi in zip(t["_d"], t["_lo"], t["_hi"], strict=True)],
        "McNemar p": t["_p"].map(p_value), "Holm-adjusted p": [p_value(p) for p in adjusted]})
    paragraphs = [
        "Each variant against the baseline of its comparison, on the same deals (the same deal number is the same "
        "shuffle): the paired difference of win rates with Newcombe's interval, McNemar's exact test, and Holm's "
        f"adjustment over all {len(table)} differences of this table."]
    if t["_any_unknown"].any():
        table.insert(5, UNKNOWN_COLUMN, t["_unknown"])
        paragraphs.append(
            "A deal left unknown (a search out of budget) counts as not won in these differences, so a row with "
            f"unknown deals ({UNKNOWN_COLUMN}) compares lower bounds: with u of the variant's and u0 of the "
            "baseline's N deals unknown, the difference of the true rates lies between u0/N below and u/N above "
            "the one shown, before sampling error.")
    return Section("Paired variant differences", paragraphs=paragraphs, tables=[("Paired differences", table)],
                   small_print=grid.parameter_notes({x: names[x] for x in t["_label"]}))


def appendix(s: pd.DataFrame, ranges: dict[str, str], commands: Commands) -> Section:
    """Every run: deals, wins, rate, interval, wins the referee verified, cards home, score, unknown verdicts and
    errors."""
    s = _one_name_per_player(s)
    names = grid.player_names(list(s["strategy"]))
    table = pd.DataFrame({
        "variant": s["variant"],
        "player": [names[x] + (grid.CLAIRVOYANT if c else "") for x, c in zip(s["strategy"], s["clairvoyant"], strict=True)],
        "deals": s["deals"].map(count),
        "deal range": [ranges[k] for k in s["key"]], "seed": s["seed"], "wins": s["wins"].map(count),
        "win rate": s["win_rate"].map(pct),
        "95% interval": [interval(a, b) for a, b in zip(s["ci_low"], s["ci_high"], strict=True)],
        "wins verified": [verified(int(c), int(w)) for c, w in zip(s["verified_wins"], s["wins"], strict=True)],
        "mean cards home": s["mean_cards_home"].map("{:.2f}".format), "mean score": s["mean_score"].map("{:.1f}".format),
        "unknown": s["unknown"].map(count), "errors": s["errors"].map(count)})
    cmds = commands(list(s["key"]), None)
    return Section(APPENDIX, paragraphs=["Every run the report holds, one line each. Replay (or reuse) them with:",
                                         *(f"`{c}`" for c in cmds)], tables=[("Every run", table)],
                   small_print=grid.parameter_notes(names))
