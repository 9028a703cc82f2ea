"""The name a report gives each set of rules: the fingerprint is the identity, the stored name a label.

A store's rows carry the variant name they were played under, and names do not
identify rules: two variant files may share a name, and rows of one set of rules
may be played under several names (a run reuses the rows of an earlier run with
the same rules and another name). A report therefore names rules by their
fingerprint: a preset's rules by the preset's name, other rules by the name
their rows were played under, with the fingerprint added where that name alone
would not tell them apart (it is a preset's name or alias, or it labels other
rules too). Every set of rules then has one label and no two share one.
"""

from __future__ import annotations

import pandas as pd

from sim.rules import VARIANTS, preset_named


def rules_labels(pairs: pd.DataFrame) -> dict[str, str]:
    """Fingerprint -> the label a report shows, from the distinct (``variant``, ``rules_fingerprint``) pairs of
    a store's rows."""
    presets = {v.rules.fingerprint: v.name for v in VARIANTS}
    names: dict[str, str] = {}
    for fingerprint, found in pairs.groupby("rules_fingerprint", observed=True, sort=True)["variant"]:
        fp = str(fingerprint)
        names[fp] = presets.get(fp) or min(map(str, found.unique()))
    rules_of: dict[str, set[str]] = {}  # the fingerprints each name labels, in the rows or as chosen here
    for name, fingerprint in zip(map(str, pairs["variant"]), map(str, pairs["rules_fingerprint"]), strict=True):
        rules_of.setdefault(name, set()).add(fingerprint)
    for fp, name in names.items():
        rules_of.setdefault(name, set()).add(fp)
    return {fp: name if fp in presets or (len(rules_of[name]) == 1 and preset_named(name) is None)
            else f"{name} (rules {fp})" for fp, name in names.items()}


def label_rules(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` with the ``variant`` column replaced by each row's rules label (`rules_labels`), a categorical."""
    labels = rules_labels(rows[["variant", "rules_fingerprint"]].drop_duplicates())
    # mapped category by category, not row by row; a subset of a store's rows leaves categories unused
    fingerprints = rows["rules_fingerprint"].astype("category").cat.remove_unused_categories()
    return rows.assign(variant=fingerprints.map(lambda fp: labels[str(fp)]).astype("category"))


def label_runs(s: pd.DataFrame) -> pd.DataFrame:
    """A summary ``s`` (one line per run: ``variant``, ``rules_fingerprint``) with each ``variant`` replaced by its
    rules label (`rules_labels`)."""
    labels = rules_labels(s[["variant", "rules_fingerprint"]].drop_duplicates())
    return s.assign(variant=[labels[str(fp)] for fp in s["rules_fingerprint"]])
