"""The report's answer: win rate by variant and player, players ordered as a ladder.

Players climb from the weakest to perfect play: random, greedy, heuristic,
lookahead, sampling, any other player, then ``solver`` ("perfect play (solver)")
last. A player is a strategy label (``heuristic:preset=builder`` is its own
column). A cell holds one run: when several runs (other seeds, sources or deal
sets) share a cell, the one with the most deals is shown and the others are named,
so the grid drops nothing silently; every run is in the report's appendix.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import to_hex

from reports.formats import count, exact_pct
from reports.render import Cell
from sim.rules import variant_names
from studies.stats import win_rate_interval

LADDER = ("random", "greedy", "heuristic", "lookahead", "sampling")
SOLVER = "solver"
SOLVER_LABEL = "perfect play (solver)"
CLAIRVOYANT = " (clairvoyant)"
"""The suffix of a label that saw face-down cards (`strategies.base.CLAIRVOYANT`; not imported: the report reads
rows and does not load the engine)."""


def one_name(label: str) -> str:
    """A player's one name whatever the variant: its label without "(clairvoyant)" (whether a run saw
    face-down cards is its ``clairvoyant`` column's, or its cell's, to say)."""
    return label.removesuffix(CLAIRVOYANT)


def _base(label: str) -> str:
    return label.split(":")[0].split("(")[0].strip()


def player_order(labels: list[str]) -> list[str]:
    """``labels`` ordered as a ladder (see the module docstring); within one base player, by label."""
    def rank(label: str) -> tuple[int, str]:
        base = _base(label)
        if base == SOLVER:
            return len(LADDER) + 1, label
        return (LADDER.index(base) if base in LADDER else len(LADDER)), label
    return sorted(dict.fromkeys(labels), key=rank)


def player_name(label: str) -> str:
    """What the report calls a player: the solver is "perfect play (solver)", with its parameters inside the
    brackets ("perfect play (solver:nodes=10)"), others their label."""
    if _base(label) != SOLVER:
        return label
    plain = one_name(label)
    return (SOLVER_LABEL if plain == SOLVER else f"perfect play ({plain})") + label[len(plain):]


def player_names(labels: list[str], known: dict[str, str] | None = None) -> dict[str, str]:
    """What the report calls each of ``labels``: its name in ``known`` (a study's names for its players, e.g.
    "honest sampling (fast)" for ``sampling:preset=fast``) where that names every label apart, else
    `player_name`, except that the solver is "perfect play (solver)" without its parameters wherever that still
    names every label apart; `parameter_notes` then says which strategy each short name is. Whether a figure
    saw face-down cards depends on the variant, so the cells say it (`cell_text`), not the player's name."""
    labels = list(dict.fromkeys(labels))
    names = {x: player_name(x) for x in labels}
    chosen = {x: (known or {})[x] for x in labels if x in (known or {})}
    if len(set(chosen.values())) == len(chosen) and not set(chosen.values()) & {names[x] for x in labels if x not in chosen}:
        names.update(chosen)
        labels = [x for x in labels if x not in chosen]
    short = {x: SOLVER_LABEL for x in labels if _base(x) == SOLVER}
    others = {names[x] for x in names if x not in short}
    if len(set(short.values())) == len(short) and not others & set(short.values()):
        names.update(short)
    return names


def column_order(names: dict[str, str]) -> str:
    """The sentence that says in which order the grid's columns (players named ``names``) stand, and on what
    grounds: a fixed order of the built-in players, not a ranking by this report's figures."""
    order = [names[x] for x in player_order(list(names))]
    return (f"Players, left to right: {', '.join(order)} (the built-in players from the simplest, then any other "
            "player by name, perfect play last; an order fixed in advance, not a ranking by these figures).")


def short_names(labels: list[str]) -> dict[str, str]:
    """A heading's name for each of ``labels``: the player without its parameters ("heuristic", "perfect play
    (solver)") where no other label shares that name, else `player_name` cut to `SHORT_CHARS` characters;
    "(clairvoyant)" is left out (the rows say it). The full label belongs in a tooltip and the appendix."""
    plain = {x: one_name(x) for x in dict.fromkeys(labels)}
    bare = {x: SOLVER_LABEL if _base(p) == SOLVER else _base(p) for x, p in plain.items()}
    clash = {b for b in bare.values() if len({p for x, p in plain.items() if bare[x] == b}) > 1}
    return {x: _cut(player_name(plain[x])) if bare[x] in clash else bare[x] for x in plain}


SHORT_CHARS = 40
"""The longest name `short_names` gives a player whose parameters tell it apart from another."""


def _cut(text: str) -> str:
    return text if len(text) <= SHORT_CHARS else text[: SHORT_CHARS - 1] + "…"


def parameter_notes(names: dict[str, str]) -> list[str]:
    """A line for each player `player_names` shortened: the strategy, with its parameters, that the name stands for."""
    return [f"{name}: the strategy `{one_name(label)}`"
            + (", which sees the face-down cards: on a variant that deals some, its figure is an upper bound for an "
               "honest player, marked (clairvoyant)" if label.endswith(CLAIRVOYANT) else "")
            + "." for label, name in names.items() if name != player_name(label)]


def variant_order(variants: list[str]) -> list[str]:
    """Presets in their catalogue order, then other variants by name."""
    names = variant_names()
    return sorted(dict.fromkeys(variants), key=lambda v: (names.index(v) if v in names else len(names), v))


def cells(s: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """One run per (variant, player) from a `reports.tables.summary`, and a line naming each run left out of the grid."""
    s = s.assign(_rank=-s["deals"]).sort_values(["_rank", "key"], kind="stable")
    shown = s.drop_duplicates(["variant", "strategy"])
    others = s[~s["key"].isin(shown["key"])]
    size = shown.set_index(["variant", "strategy"])["deals"]
    notes = [f"{r.strategy} on {r.variant}: the grid shows the run of {count(size.loc[(r.variant, r.strategy)])} "
             f"deals; the run of {count(r.deals)} deals ({r.first_deal}–{r.last_deal}, seed {r.seed}, source {r.source}) "
             "is in the appendix" for r in others.itertuples()]
    return shown.drop(columns="_rank"), notes


def _pct(r: pd.Series) -> str:
    """A cell's win rate from its counts (`reports.formats.exact_pct`: exact ties round the same everywhere)."""
    return exact_pct(int(r["wins"]), int(r["deals"]))


def cell_text(r: pd.Series) -> str:
    """"10.29% (9.99–10.59%) of 40,000", with unknown verdicts and errors when there are any, and
    "(clairvoyant)" when the run saw face-down cards (its ``clairvoyant`` column).

    Unknown verdicts make the cell a range: the deals won, up to the deals won or unknown (for the solver,
    winnable p with won <= p <= won + unknown), and the interval runs from the Wilson low of the first to
    the Wilson high of the second."""
    if r["unknown"]:
        high = win_rate_interval(int(r["wins"] + r["unknown"]), int(r["deals"]))[1]
        text = (f"{_pct(r)}–{exact_pct(int(r['wins'] + r['unknown']), int(r['deals']))} ({r['ci_low']:.2%}–{high:.2%}) "
                f"of {count(r['deals'])}, "
                f"{count(r['unknown'])} unknown")
    else:
        text = f"{_pct(r)} ({r['ci_low']:.2%}–{r['ci_high']:.2%}) of {count(r['deals'])}"
    if r["errors"]:
        text += f", {count(r['errors'])} errors"
    if r.get("clairvoyant", False):
        text += CLAIRVOYANT
    return text


def cell(r: pd.Series) -> Cell:
    """A grid cell: the win rate ("10.29%", or "50.00–51.20%" with unknown verdicts, see `cell_text`) as its
    headline; its interval, deals, unknown verdicts, errors and "(clairvoyant)" as its details; `cell_text` as
    its one-line text."""
    if r["unknown"]:
        high = win_rate_interval(int(r["wins"] + r["unknown"]), int(r["deals"]))[1]
        main = f"{_pct(r).removesuffix('%')}–{exact_pct(int(r['wins'] + r['unknown']), int(r['deals']))}"
        details = [f"{r['ci_low'] * 100:.2f}–{high:.2%}", f"{count(r['deals'])} deals", f"{count(r['unknown'])} unknown"]
    else:
        main = _pct(r)
        details = [f"{r['ci_low'] * 100:.2f}–{r['ci_high']:.2%}", f"{count(r['deals'])} deals"]
    if r["errors"]:
        details.append(f"{count(r['errors'])} errors")
    if r.get("clairvoyant", False):
        details.append(CLAIRVOYANT.strip())
    return Cell(main, " · ".join(details), cell_text(r))


def rate_colour(rate: float) -> str:
    """A light background colour for a win rate, on a log scale from 0.01% to 100% (0 is the lightest)."""
    x = 0.0 if rate <= 0 else min(1.0, max(0.0, (math.log10(rate) + 4) / 4))
    return to_hex(colormaps["YlGn"](0.08 + 0.55 * x))


def table(shown: pd.DataFrame, names: dict[str, str] | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The grid (variant rows, player columns, `cell_text`) and the same-shaped table of cell colours ('' when empty);
    ``names``: the players' names (`player_names`; default `player_name`)."""
    name = _namer(names)
    variants = variant_order(list(shown["variant"]))
    players = player_order(list(shown["strategy"]))
    by = shown.set_index(["variant", "strategy"])
    text = {"variant": variants}
    colour = {"variant": [""] * len(variants)}
    for p in players:
        col, hue = [], []
        for v in variants:
            if (v, p) in by.index:
                r = by.loc[(v, p)]
                col.append(cell(r))
                hue.append(rate_colour(float(r["win_rate"])))
            else:
                col.append("–")
                hue.append("")
        text[name(p)] = col
        colour[name(p)] = hue
    return pd.DataFrame(text), pd.DataFrame(colour)


def _namer(names: dict[str, str] | None):  # noqa: ANN202
    return lambda label: (names or {}).get(label) or player_name(label)


def chart_data(shown: pd.DataFrame, names: dict[str, str] | None = None) -> pd.DataFrame:
    """The grid's runs in chart order: variant, player (its name, see `table`), win_rate, ci_low, ci_high, deals."""
    name = _namer(names)
    variants, players = variant_order(list(shown["variant"])), player_order(list(shown["strategy"]))
    out = shown.assign(v=[variants.index(v) for v in shown["variant"]], p=[players.index(p) for p in shown["strategy"]])
    out = out.sort_values(["v", "p"]).reset_index(drop=True)
    return out.assign(player=[name(p) for p in out["strategy"]])[
        ["variant", "player", "win_rate", "ci_low", "ci_high", "deals", "unknown"]].astype({"deals": np.int64})
