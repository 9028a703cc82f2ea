"""Verdicts through related rules: a deal won under stricter rules is won, a deal lost under looser rules is lost.

Two rule sets are related when they deal the same layout from the same deal number and every move one allows the
other allows too (`includes`). Then every winning line of the stricter game is a winning line of the looser one,
so a win under the stricter rules proves a win under the looser, and a loss under the looser proves a loss under
the stricter. The layout is the same when the rules agree on the piles, the cards a pile, kings to the bottom, the
cards that start home and the foundations; the moves include each other by these inclusions, each checked by the
tests against the solver (tests/test_atlas_related.py):

- building: ``alternate-colour`` within ``other-suit`` (a card of the other colour is of another suit) within
  ``any-suit``; ``same-suit`` within ``any-suit``;
- empty piles: ``none`` within ``kings`` within ``any``;
- worrying back: not allowed within allowed.

Cards dealt face down change nothing here: the atlas's verdicts are the solver's with every card known, so a
face-down variant is related to its face-up twin as the face-up rules are (dick-1883 and bakers-dozen are the
same game to the solver). Among the presets: other-suit is stricter than bakers-dozen (and dick-1883); castles-in-spain
and kings-into-empty are stricter than spanish-patience.

`decided_by_relatives` reads an atlas's other rows for the unknown deals of one: nothing is solved, and the row
itself is not rewritten (its verdicts stay those of its own ladder); `atlas show` says what the relatives decide.
`contradictions` is the check the other way round: a deal won under stricter rules and lost under looser ones
would be a wrong verdict in one of the two rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from sim.errors import UserError
from sim.rules import Rules, find_variant
from studies import atlas as files

LAYOUT = ("columns", "cards_per_column", "kings_to_bottom", "start_home", "foundation")
"""The parameters that make the layout of a deal number and the foundations' order: related rules agree on them."""
BUILD_WITHIN = {"any-suit": {"any-suit", "other-suit", "alternate-colour", "same-suit"},
                "other-suit": {"other-suit", "alternate-colour"},
                "alternate-colour": {"alternate-colour"},
                "same-suit": {"same-suit"}}
"""For each building rule, the rules whose every building move it allows."""
FILL_WITHIN = {"any": {"any", "kings", "none"}, "kings": {"kings", "none"}, "none": {"none"}}
"""For each empty-pile rule, the rules whose every move into an empty pile it allows."""


def includes(looser: Rules, stricter: Rules) -> bool:
    """Whether every game of ``stricter`` is a game of ``looser``: the same layout for every deal number, and every
    move ``stricter`` allows is allowed by ``looser`` (see the module text). Face-down cards are not compared."""
    return (all(getattr(looser, p) == getattr(stricter, p) for p in LAYOUT)
            and stricter.build in BUILD_WITHIN[looser.build]
            and stricter.empty_fill in FILL_WITHIN[looser.empty_fill]
            and (looser.worrying_back or not stricter.worrying_back))


@dataclass(frozen=True)
class Relative:
    """Another row of the atlas whose rules are related to a row's: ``looser`` (its losses prove losses) or
    stricter (its wins prove wins); both when the two games are the same."""

    variant: str
    looser: bool
    stricter: bool


def relatives(folder: Path, variant: str, source: str = "default") -> list[Relative]:
    """The rows of the atlas at ``folder`` in numbering ``source`` whose rules (the presets of their names, which
    must have the fingerprint the row records) are related to ``variant``'s, nearest first by name."""
    rules = find_variant(variant)
    found = []
    for row in files.read_summary(folder / files.SUMMARY):
        if row["source"] != source or row["variant"] == rules.name:
            continue
        try:
            other = find_variant(row["variant"])
        except UserError:  # a row of a variant this toolkit has no preset for: its rules are not known here
            continue
        if other.fingerprint != row["fingerprint"]:
            continue
        looser, stricter = includes(other, rules), includes(rules, other)
        if looser or stricter:
            found.append(Relative(other.name, looser, stricter))
    return sorted(found, key=lambda r: r.variant)


def _verdicts(folder: Path, variant: str, source: str) -> tuple[np.ndarray, np.ndarray, list[str]]:
    table = files.read_deals(folder, variant, source, ("deal", "verdict"))
    codes, labels = files.verdict_codes(table)
    return files.deal_numbers(table), codes, labels


def _with(deals: np.ndarray, codes: np.ndarray, labels: list[str], verdict: str) -> np.ndarray:
    return deals[codes == labels.index(verdict)] if verdict in labels else deals[:0]


def decided_by_relatives(folder: Path, variant: str, source: str = "default") -> dict[int, tuple[str, str]]:
    """The unknown deals of ``variant``'s row that its related rows decide: deal -> (verdict, the variant whose row
    proves it). A looser row's loss proves a loss, a stricter row's win a win."""
    deals, codes, labels = _verdicts(folder, find_variant(variant).name, source)
    unknown = _with(deals, codes, labels, "unknown")
    decided: dict[int, tuple[str, str]] = {}
    for rel in relatives(folder, variant, source):
        other = _verdicts(folder, rel.variant, source)
        for verdict, applies in (("lost", rel.looser), ("won", rel.stricter)):
            if applies:
                for deal in np.intersect1d(unknown, _with(*other, verdict)).tolist():
                    decided.setdefault(int(deal), (verdict, rel.variant))
    return dict(sorted(decided.items()))


def contradictions(folder: Path, source: str = "default") -> list[str]:
    """Each pair of related rows of the atlas at ``folder`` with a deal won under the stricter rules and lost under
    the looser ones (one of the two verdicts is wrong): a line per pair, with the first such deals."""
    said = []
    for row in files.read_summary(folder / files.SUMMARY):
        if row["source"] != source:
            continue
        try:
            rules = find_variant(row["variant"])
        except UserError:  # not a preset of this toolkit
            continue
        if rules.fingerprint != row["fingerprint"]:
            continue
        looser = [rel for rel in relatives(folder, rules.name, source)
                  if rel.looser and not (rel.variant < rules.name and rel.stricter)]
        # each pair once, from its stricter side (a pair of the same game from its first name)
        won = _with(*_verdicts(folder, rules.name, source), "won") if looser else None
        for rel in looser:
            lost = _with(*_verdicts(folder, rel.variant, source), "lost")
            both = np.intersect1d(won, lost)
            if len(both):
                said.append(f"{rules.name} wins deal(s) {', '.join(map(str, both[:10].tolist()))} that "
                            f"{rel.variant}, whose moves include every move of its, proves lost")
    return said
