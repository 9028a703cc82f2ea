"""The report's finding: one paragraph, in words, of what its win-rate grid shows.

Generated from the grid's cells (`reports.grid.cells`), never written by hand, so it cannot drift from the
figures: which variant is easiest for perfect play and for each other player, and what dealing cards face
down costs a player who does not look at them (each face-down variant against the variant with the same rules
dealt face up, where the grid holds both). "Easiest" is the highest win rate (the lower end of a range with
unknown verdicts); variants whose counts give exactly the same rate are named together. A figure that saw the
face-down cards (clairvoyant) is never counted as an honest player's.
"""

from __future__ import annotations

from fractions import Fraction

import pandas as pd

from reports.formats import exact_pct
from reports.grid import SOLVER, player_order

Twins = dict[str, str]
"""Face-down variant -> the variant with the same rules dealt face up (both as the grid names them)."""


def _rate(r: pd.Series) -> Fraction:
    return Fraction(int(r["wins"]), int(r["deals"]))


def _figure(r: pd.Series) -> str:
    """"32.31%", or "90.60–93.50%" for a cell with unknown verdicts."""
    low = exact_pct(int(r["wins"]), int(r["deals"]))
    if not r["unknown"]:
        return low
    return f"{low.removesuffix('%')}–{exact_pct(int(r['wins'] + r['unknown']), int(r['deals']))}"


def _names(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def easiest(cells: pd.DataFrame) -> tuple[list[str], pd.Series]:
    """The variants with the highest win rate among ``cells`` (one player's), in grid order, and one such cell."""
    rates = [_rate(r) for _, r in cells.iterrows()]
    best = max(rates)
    tied = [str(r["variant"]) for (_, r), x in zip(cells.iterrows(), rates, strict=True) if x == best]
    return tied, cells.iloc[rates.index(best)]


def _is_solver(label: str) -> bool:
    return label.split(":")[0].split("(")[0].strip() == SOLVER


def finding(shown: pd.DataFrame, names: dict[str, str], twins: Twins | None = None) -> str:
    """The finding paragraph for the grid's cells ``shown`` (columns variant, strategy, clairvoyant, wins, unknown,
    deals, ci_low, ci_high, in the grid's variant order), ``names`` the players' names, ``twins`` the face-down
    variants' face-up twins; '' when the grid is empty."""
    if shown.empty:
        return ""
    players = player_order(list(shown["strategy"]))
    sentences = []
    perfect = [p for p in players if _is_solver(p)]
    for p in perfect:
        variants, r = easiest(shown[shown["strategy"] == p])
        sentences.append(f"{_cap(names[p])} wins most often on {_names(variants)} ({_figure(r)}"
                         f"{' each' if len(variants) > 1 else ''}).")
    groups: dict[str, list[str]] = {}
    for p in players:
        honest = shown[(shown["strategy"] == p) & ~shown["clairvoyant"].astype(bool)]
        if p in perfect or honest.empty:
            continue
        variants, r = easiest(honest)
        groups.setdefault(_names(variants), []).append(f"{names[p]} ({_figure(r)}{' each' if len(variants) > 1 else ''})")
    if groups:
        lead = "The easiest variant for " + ("each other player" if perfect else "each player") + " is "
        sentences.append(lead + "; ".join(f"{v} for {_names(ps)}" for v, ps in groups.items()) + ".")
    sentences.extend(_face_down_costs(shown, names, twins or {}, players))
    return " ".join(sentences)


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _apart(a: pd.Series, b: pd.Series) -> bool:
    """Whether two cells' 95% intervals do not overlap (a difference the grid itself shows)."""
    return bool(a["ci_high"] < b["ci_low"] or b["ci_high"] < a["ci_low"])


def _face_down_costs(shown: pd.DataFrame, names: dict[str, str], twins: Twins, players: list[str]) -> list[str]:
    """A sentence for each face-down variant whose face-up twin is in the grid: each honest player whose win rate
    differs between the two beyond both intervals, with both rates, and the best honest player on the face-down
    deal where it is not one of those."""
    out = []
    by = {(str(r["variant"]), str(r["strategy"])): r for _, r in shown.iterrows()}
    for hidden, open_ in twins.items():
        moved, same, best = [], [], None
        for p in players:
            face_down, face_up = by.get((hidden, p)), by.get((open_, p))
            if face_down is None or bool(face_down["clairvoyant"]):
                continue
            if best is None or _rate(face_down) > _rate(by[(hidden, best)]):
                best = p
            if face_up is not None:
                (moved if _apart(face_up, face_down) else same).append(p)
        if best is None:
            continue
        parts = [f"{names[p]} {_figure(by[(open_, p)])} to {_figure(by[(hidden, p)])}" for p in moved]
        text = f"Dealt as {hidden} instead of {open_}: " + (", ".join(parts) if parts else "no player's win rate moves "
                                                             "beyond its interval")
        if same and parts:
            text += f" ({_names([names[p] for p in same])} within {'their' if len(same) > 1 else 'its'} intervals)"
        if best not in moved:
            text += f"; the best honest player there is {names[best]}, at {_figure(by[(hidden, best)])}"
        out.append(text + ".")
    return out
