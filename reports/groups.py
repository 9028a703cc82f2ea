"""Which runs a report may set side by side: the runs one command played on the same deals.

A run key (`studies.store`) can hold deals from several invocations: a `simulate`
of 40,000 deals, later a `tournament` on deals 50,001-51,000. Each invocation
leaves a manifest per run with its command line and deal range. A tournament
(several players, one set of rules) or a variant comparison (one player, several
rules) is made only from runs whose manifests record the same command line and
the same first and last deal, and only on those deals: two separate `simulate`
runs that happen to share a variant never make a "tournament", and a run's other
deals never leak into a ranking.

A group whose runs lack some of its deals in the rows (a chunk file deleted or
damaged) is still shown on the deals they share, and said so; one whose runs
share none is named as unusable. Nothing is skipped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from reports.digest import Spans, clip, intersect, spans_size, within
from reports.formats import count, runs_text


@dataclass
class Group:
    """Runs one command played on deals first..last: a ``tournament`` or a variant ``comparison``."""

    kind: str
    keys: list[str]
    first: int
    last: int
    command: list[str]
    deals: Spans = field(default_factory=list)
    """The deals the group is shown on, as ranges."""
    note: str = ""


def _whole(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def sessions(manifests: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, int, int], list[str]]:
    """(command line as JSON, first, last) -> the run keys a manifest of that invocation names, in key order."""
    out: dict[tuple[str, int, int], list[str]] = {}
    for key, found in manifests.items():
        for m in found:
            params, command = m.get("parameters"), m.get("command")
            if not isinstance(params, dict) or not isinstance(command, list) or "ranges" in params:
                continue  # a run of scattered deals (an escalation rung's) is no tournament or comparison
            first, last = _whole(params.get("first")), _whole(params.get("last"))
            if first is None or last is None or first > last:
                continue
            keys = out.setdefault((json.dumps([str(c) for c in command]), first, last), [])
            if key not in keys:
                keys.append(key)
    return out


def find_groups(deals_of: dict[str, Spans], s: pd.DataFrame, manifests: dict[str, list[dict[str, Any]]],
                whole_store: bool) -> tuple[list[Group], list[str]]:
    """The tournaments and variant comparisons among the runs of ``s`` (their `reports.tables.summary`), whose
    deals ``deals_of`` holds per run key, and a line for each thing that could not be used.

    ``whole_store``: the rows are a store's every row, so a group whose deals are missing from them was damaged
    (it is used on the deals its runs share, and named). Otherwise the rows are one study's, and an invocation
    whose deals they do not all hold is another study, outside this report.
    """
    by_key = s.set_index("key")
    found: dict[tuple[str, tuple[str, ...], int, int], Group] = {}
    for (command, first, last), keys in sessions(manifests).items():
        keys = [k for k in keys if k in by_key.index]
        sub = by_key.loc[keys].reset_index()
        for kind, same, differ in (("tournament", "rules_fingerprint", "strategy_identity"),
                                   ("comparison", "strategy_identity", "rules_fingerprint")):
            for _, g in sub.groupby([same, "seed", "source"], sort=False):
                if g[differ].nunique() >= 2:
                    ident = (kind, tuple(sorted(g["key"])), first, last)
                    found.setdefault(ident, Group(kind, list(g["key"]), first, last, json.loads(command)))
    unused: list[str] = []
    groups: list[Group] = []
    for g in found.values():
        wanted = g.last - g.first + 1
        held = [clip(deals_of[k], g.first, g.last) for k in g.keys]
        common = held[0]
        for h in held[1:]:
            common = intersect(common, h)
        if all(spans_size(h) == wanted for h in held):
            g.deals = common
            groups.append(g)
            continue
        if not whole_store:
            continue
        what = _describe(g, by_key)
        if not common:
            unused.append(f"{what}: its runs share none of these deals in the store, so it is not shown")
            continue
        short = [f"{by_key.loc[k, 'strategy']} on {by_key.loc[k, 'variant']} holds {count(spans_size(h))}"
                 for k, h in zip(g.keys, held, strict=True) if spans_size(h) < wanted]
        g.deals = common
        g.note = f"{what}: {'; '.join(short)} of its {count(wanted)} deals"
        groups.append(g)
    kept = [g for g in groups if not any(_inside(g, o) for o in groups)]
    for g in groups:
        if g.note:
            home = next((o for o in kept if o is not g and _inside(g, o)), None)
            g.note += (f"; it is shown on the {count(spans_size(g.deals))} deals all its runs hold ({runs_text(g.deals)})"
                       if home is None else f"; the deals all its runs hold are in the {home.kind} on deals "
                       f"{runs_text(home.deals)}, shown")
            unused.append(g.note)
    return kept, unused


def _inside(g: Group, other: Group) -> bool:
    """``g`` is the same runs as ``other`` on a part of its deals (an earlier, smaller or interrupted invocation)."""
    if other is g or other.kind != g.kind or sorted(other.keys) != sorted(g.keys):
        return False
    if not within(g.deals, other.deals):
        return False
    return spans_size(other.deals) > spans_size(g.deals) or (bool(g.note) and not other.note)


def _describe(g: Group, by_key: pd.DataFrame) -> str:
    names = by_key.loc[g.keys, "strategy" if g.kind == "tournament" else "variant"].astype(str)
    return (f"the {'tournament' if g.kind == 'tournament' else 'variant comparison'} of {', '.join(names)} on deals "
            f"{count(g.first)}–{count(g.last)}")


def ungrouped(s: pd.DataFrame, manifests: dict[str, list[dict[str, Any]]]) -> list[str]:
    """A line for each run with no readable manifest: it is shown in the tables, but can join no tournament or comparison."""
    return [f"run {k} ({s.set_index('key').loc[k, 'strategy']} on {s.set_index('key').loc[k, 'variant']}) has no readable "
            "manifest, so the report cannot tell which command played it: it is in the tables, in no tournament or comparison"
            for k in s["key"] if not manifests.get(k)]
