"""The name a report gives each set of rules and each player: the identity decides, the stored name is a label.

A store's rows carry the variant name they were played under, and names do not
identify rules: two variant files may share a name, and rows of one set of rules
may be played under several names (a run reuses the rows of an earlier run with
the same rules and another name). A report therefore names rules by their
fingerprint: a preset's rules by the preset's name, other rules by the name
their rows were played under, with the fingerprint added where that name alone
would not tell them apart (it is a preset's name or alias, or it labels other
rules too). Every set of rules then has one label and no two share one.

A plug-in edited between runs has rows of several codes under one name (its
identity holds a digest of its code, `strategies.code`): those are different
players, never pooled, and their labels say which code each is, which one is
current (the plug-in's code now), and which rows were stored before digests
were ("code not recorded").
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from sim.rules import VARIANTS, preset_named
from strategies.base import CLAIRVOYANT
from strategies.code import identity_code

NOT_RECORDED = "code not recorded"
"""How a label tells a plug-in's run whose rows hold no code digest (stored before digests were, or opted out)."""


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


def player_labels(runs: pd.DataFrame, started: Mapping[str, float],
                  current: Mapping[str, str | None] | None = None) -> dict[str, str]:
    """Run key -> the label a report shows, from one row per run (``key``, ``strategy``, ``strategy_identity``,
    ``strategy_label``) and when each run last started (`started`, from its manifests; 0 when unknown).

    A strategy name whose runs hold one code keeps its stored labels. One whose runs hold several codes (an
    edited plug-in) gets ``[code <digest>]`` in each label and ``[code not recorded]`` on runs without a digest,
    so the players are told apart in every table and chart; ``, current`` marks the code the plug-in has now
    (``current``: name -> its digest as it loads now, where the caller could load it), else ``, latest run`` the
    code of its latest run (a run that only reused rows records no start, so that is a guess, said as one).
    """
    labels = {str(k): str(label) for k, label in zip(runs["key"], runs["strategy_label"], strict=True)}
    for _, g in runs.groupby("strategy", observed=True, sort=False):
        codes = {str(k): identity_code(str(i)) for k, i in zip(g["key"], g["strategy_identity"], strict=True)}
        if len(set(codes.values())) < 2:
            continue
        name = str(g["strategy"].iloc[0])
        if current is not None and current.get(name) is not None:
            now, word = current[name], "current"
        else:
            now, word = codes[max(codes, key=lambda k: (started.get(k, 0.0), codes[k] is not None))], "latest run"
        for key, code in codes.items():
            tag = NOT_RECORDED if code is None else f"code {code}" + (f", {word}" if code == now else "")
            base = labels[key].removesuffix(CLAIRVOYANT)
            labels[key] = f"{base} [{tag}]" + (CLAIRVOYANT if labels[key].endswith(CLAIRVOYANT) else "")
    return labels



def label_runs(s: pd.DataFrame) -> pd.DataFrame:
    """A summary ``s`` (one line per run: ``variant``, ``rules_fingerprint``) with each ``variant`` replaced by its
    rules label (`rules_labels`)."""
    labels = rules_labels(s[["variant", "rules_fingerprint"]].drop_duplicates())
    return s.assign(variant=[labels[str(fp)] for fp in s["rules_fingerprint"]])
