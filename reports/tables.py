"""Tables computed from stored rows: run summaries, variant comparisons, tournaments.

Every function takes the rows of a store (`studies.reading.read_store`) and returns
pandas DataFrames whose figures can be recomputed from those rows alone; each
win rate carries its 95% interval and its number of deals.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from sim.errors import UserError
from studies.stats import cochrans_q, paired_comparison, pairwise_mcnemar, win_rate_interval

POINTS_PER_CARD = 5
POINTS_PER_WIN = 500
"""The Card Game Nook score: 5 points per card home, 500 more for a win."""


class ReportError(UserError):
    """Rows that cannot make the table asked for (empty, mixed, or not on common deals)."""


def _is(rows: pd.DataFrame, outcome: str) -> np.ndarray:
    """Per row, whether its outcome is ``outcome``: compared in place (the store's outcomes are categorical;
    turning them into text first costs a copy of every row each time)."""
    return (rows["outcome"] == outcome).to_numpy(dtype=bool)


def _won(rows: pd.DataFrame) -> np.ndarray:
    return _is(rows, "won")


def verified_wins(rows: pd.DataFrame) -> tuple[int, int]:
    """(wins the referee replayed and accepted, wins) among ``rows``; rows without the ``verified`` column
    count as unverified."""
    won = _won(rows)
    checked = won & rows["verified"].to_numpy(dtype=bool) if "verified" in rows else np.zeros_like(won)
    return int(checked.sum()), int(won.sum())


def summary(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per run key: deals, wins (and how many the referee verified), win rate with its interval, cards
    home, score, other outcomes."""
    if rows.empty:
        raise ReportError("the store holds no rows to report on")
    out = []
    for key, g in rows.groupby("key", sort=False, observed=True):
        won = _won(g)
        n, wins = len(g), int(won.sum())
        low, high = win_rate_interval(wins, n)
        home = g["cards_home"].to_numpy(dtype=np.int64)
        first = g.iloc[0]
        out.append({
            "key": key,
            "variant": str(first["variant"]),
            "rules_fingerprint": str(first["rules_fingerprint"]),
            "strategy": str(first["strategy_label"]),
            "strategy_identity": str(first["strategy_identity"]),
            "clairvoyant": bool(first["clairvoyant"]),
            "seed": int(first["seed"]),
            "source": str(first["source"]),
            "first_deal": int(g["deal"].min()),
            "last_deal": int(g["deal"].max()),
            "deals": n,
            "wins": wins,
            "verified_wins": verified_wins(g)[0],
            "win_rate": wins / n,
            "ci_low": low,
            "ci_high": high,
            "mean_cards_home": float(home.mean()),
            "mean_score": float(POINTS_PER_CARD * home.mean() + POINTS_PER_WIN * wins / n),
            "unknown": int(_is(g, "unknown").sum()),
            "errors": int(_is(g, "error").sum()),
            "toolkit_version": str(first["toolkit_version"]),
        })
    return pd.DataFrame(out)


def common_deals(rows: pd.DataFrame, keys: list[str]) -> np.ndarray:
    """The deal numbers every one of ``keys`` played (sorted), less those whose game ended in an error for any of
    them (`errored`): an error is neither a win nor a loss, so a paired test leaves the deal out rather than
    counting it lost."""
    held = rows.loc[rows["key"].isin(keys), ["key", "deal"]].drop_duplicates()
    per_deal = held.groupby("deal", observed=True).size()
    deals = np.sort(per_deal.index[per_deal.to_numpy() == len(set(keys))].to_numpy(dtype=np.int64)) if keys else []
    if len(deals) and "outcome" in rows.columns:
        failed = rows.loc[rows["key"].isin(keys) & (rows["outcome"] == "error"), "deal"].to_numpy(dtype=np.int64)
        deals = np.setdiff1d(deals, failed)
    if len(deals) == 0:
        raise ReportError("the runs share no deals that every one played to an end; compare runs over the same deal "
                          "numbers and seed")
    return np.asarray(deals, dtype=np.int64)


def errored(rows: pd.DataFrame, keys: list[str]) -> dict[str, int]:
    """Per key of ``keys``, how many of its deals ended in an error (keys with none left out)."""
    if "outcome" not in rows.columns:
        return {}
    sub = rows.loc[rows["key"].isin(keys) & (rows["outcome"] == "error"), ["key", "deal"]].drop_duplicates()
    found = sub.groupby("key", observed=True).size()
    return {k: int(found[k]) for k in keys if k in found.index and found[k] > 0}


def errored_note(found: dict[str, int], names: dict[str, str]) -> str:
    """A sentence saying how many deals of each run (``found``: run key -> deals that ended in an error, as
    `errored` counts them; shown by ``names``) ended in an error and that they are left out of the paired figures;
    empty when none did."""
    if not found:
        return ""
    each = ", ".join(f"{names.get(k, k)}: {n:,}" for k, n in found.items())
    return (f"Deals whose game ended in an error (a fault of the strategy or the engine, neither won nor lost): {each}; "
            "a deal that ended in an error for any of them is left out of every figure here.")


def wins_matrix(rows: pd.DataFrame, keys: list[str], deals: np.ndarray) -> np.ndarray:
    """deals x keys, True where that run won that deal (its first row of the deal, should there be two);
    ``deals`` are sorted, and every run holds each of them (`common_deals`)."""
    deals = np.asarray(deals, dtype=np.int64)
    out = np.zeros((len(deals), len(keys)), dtype=bool)
    sub = rows.loc[rows["key"].isin(keys), ["key", "deal", "outcome"]]
    for j, k in enumerate(keys):
        run = sub[sub["key"] == k]
        d, won = run["deal"].to_numpy(dtype=np.int64), _won(run)
        d, first = np.unique(d, return_index=True)  # sorted, each deal's first row
        at = np.searchsorted(d, deals)
        if (at >= len(d)).any() or (d[np.minimum(at, len(d) - 1)] != deals).any():
            raise ReportError(f"run {k} holds not every one of the deals compared")
        out[:, j] = won[first[at]]
    return out


def variant_comparison(rows: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Runs of one strategy under several variants, on their common deals; the first key is the baseline.

    Variants are compared deal by deal (the same deal numbers are the same
    shuffles), so differences use the paired interval and McNemar's test.
    """
    deals = common_deals(rows, keys)
    wins = wins_matrix(rows, keys, deals)
    sub = rows[rows["deal"].isin(deals)]
    table = summary(sub[sub["key"].isin(keys)]).set_index("key").loc[keys].reset_index()
    diffs = [paired_comparison(wins[:, i], wins[:, 0]) for i in range(1, len(keys))]
    # the baseline differs from itself by exactly 0 and has no test
    table["difference"] = [0.0, *(d.difference for d in diffs)]
    table["diff_low"] = [0.0, *(d.low for d in diffs)]
    table["diff_high"] = [0.0, *(d.high for d in diffs)]
    table["p_value"] = [np.nan, *(d.p_value for d in diffs)]
    return table


@dataclass
class Tournament:
    """Several strategies on the same deals of one variant."""

    ranking: pd.DataFrame
    pairwise: pd.DataFrame
    wins_over: pd.DataFrame
    adjusted_p: pd.DataFrame
    cochran_q: float
    cochran_df: int
    cochran_p: float
    disagreements: pd.DataFrame
    """The deals that disagree most with the ranking: deal, upsets, won_by, lost_by, and top_loser (the
    highest-ranked strategy that lost it, the one whose game shows the upset)."""
    deals: int


def tournament(rows: pd.DataFrame, keys: list[str], top: int = 10) -> Tournament:
    """Rank strategies by win rate on their common deals, with paired tests between every two."""
    deals = common_deals(rows, keys)
    wins = wins_matrix(rows, keys, deals)
    sub = rows[rows["deal"].isin(deals) & rows["key"].isin(keys)]
    ranking = summary(sub).set_index("key").loc[keys].reset_index()
    order = np.argsort(-ranking["win_rate"].to_numpy(), kind="stable")
    ranking = ranking.iloc[order].reset_index(drop=True)
    ranking.insert(0, "rank", np.arange(1, len(keys) + 1))
    keys = [keys[i] for i in order]
    wins = wins[:, order]
    names = ranking["strategy"].tolist()
    q, df, p = cochrans_q(wins) if len(keys) >= 2 else (0.0, 0, 1.0)
    pairwise = pd.DataFrame(
        [{"first": first, "second": second, "both": c.both, "only_first": c.only_first, "only_second": c.only_second,
          "neither": c.neither, "difference": c.difference, "diff_low": c.low, "diff_high": c.high,
          "p_value": c.p_value, "p_holm": p_holm}
         for first, second, c, p_holm in pairwise_mcnemar(wins, names)])
    over = pd.DataFrame(0, index=names, columns=names, dtype=np.int64)
    padj = pd.DataFrame(np.nan, index=names, columns=names)
    for i in range(len(keys)):
        for j in range(len(keys)):
            if i != j:
                over.iloc[i, j] = int((wins[:, i] & ~wins[:, j]).sum())
    for _, r in pairwise.iterrows():
        padj.loc[r["first"], r["second"]] = padj.loc[r["second"], r["first"]] = r["p_holm"]
    # A deal disagrees with the ranking when a lower-ranked strategy won it and a higher-ranked one lost it.
    against = np.zeros(len(deals), dtype=np.int64)
    for i, j in combinations(range(len(keys)), 2):
        against += (~wins[:, i] & wins[:, j]).astype(np.int64)
    pick = np.argsort(-against, kind="stable")[:top]
    pick = pick[against[pick] > 0]
    dis = pd.DataFrame({"deal": deals[pick], "upsets": against[pick],
                        "won_by": [", ".join(n for n, w in zip(names, wins[k], strict=True) if w) for k in pick],
                        "lost_by": [", ".join(n for n, w in zip(names, wins[k], strict=True) if not w) for k in pick],
                        "top_loser": [next(n for n, w in zip(names, wins[k], strict=True) if not w) for k in pick]})
    return Tournament(ranking, pairwise, over, padj, q, df, p, dis, len(deals))
