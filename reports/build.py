"""From a results store to a report: which tables and charts, grouped how.

Runs are grouped by what they share:

- runs of one strategy under several variants on the same deals make a
  variant comparison (paired, since the same deal numbers are the same shuffles);
- runs of several strategies on one variant and the same deals make a tournament;
- variant comparisons whose rules differ in one numeric parameter only (for
  example face-down cards per pile) also make a sweep chart.

Every chart states the variant, strategy, deals, seed and toolkit version, and
the command that reproduces its runs.
"""

from __future__ import annotations

import json
import re
import shlex
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from reports import atlas as atlas_files
from reports import charts, digest, front, grid
from reports.digest import Spans
from reports.formats import (
    count,
    interval,
    p_clause,
    p_value,
    pct,
    runs_text,
    signed_interval,
    verified_sentence,
)
from reports.groups import Group, find_groups, ungrouped
from reports.losses import loss_sections
from reports.names import label_runs, player_labels
from reports.output import REPLAY_DIR, check_report_dir, contained, safe_name, staged_report
from reports.render import Chart, Links, Report, Section, to_html, to_markdown
from reports.replays import Replays, upset_replays
from reports.select import Selection
from reports.tables import ReportError, errored_note
from sim.deals import SOURCES
from sim.rules import PARAMETERS, VARIANTS, Rules, preset_named, rules_from_mapping, variant_names
from studies.atlas.honest import Beside
from studies.study import face_up_twins, player_names

COLUMNS = ["deal", "seed", "source", "variant", "rules_fingerprint", "strategy", "strategy_version", "strategy_identity",
           "strategy_label", "clairvoyant", "strategy_seed", "outcome", "cards_home", "toolkit_version", "verified"]


def run_manifests(store_path: Path, key: str) -> list[dict[str, Any]]:
    """The readable manifests of a run key (one per invocation: parameters, deal range, command), oldest first.

    A store may come from someone else: a manifest that is not a JSON object, nests too
    deeply or is implausibly large is damaged (`studies.store.Store.read_manifests`); each
    damaged one, and a run with no readable manifest at all, is reported as a
    `studies.files.DamagedFileWarning`, since the run's command then shows ``?`` where the
    manifest would say and its rules are known only for a preset.
    """
    from studies.files import DamagedFileWarning
    from studies.store import Store

    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", key):  # a key from a store's rows names its own folder only
        return []
    good, bad = Store(store_path).read_manifests(key)
    for _, line in bad:
        done = "another manifest of the run is used" if good else "the report's command for the run shows ? for what it said"
        warnings.warn(DamagedFileWarning(f"{line}; {done} (the run's rows are unaffected)"), stacklevel=2)
    if not good and not bad:
        warnings.warn(DamagedFileWarning(
            f"run {key} has no manifest in {store_path / key / '_manifests'}; the report's command for the run shows ? "
            "for what it would say (the run's rows are unaffected)"), stacklevel=2)
    return good


def latest_manifest(store_path: Path, key: str) -> dict[str, Any]:
    """The newest readable manifest of a run key (`run_manifests`), or {} when there is none."""
    good = run_manifests(store_path, key)
    return good[-1] if good else {}


def manifest_rules(manifest: dict[str, Any], fingerprint: str) -> Rules | None:
    """The rules a manifest records, only when they are valid rules whose fingerprint is ``fingerprint``
    (the one the store's rows carry); None otherwise. Nothing else in a manifest is trusted for rules."""
    params = manifest.get("parameters")
    if not isinstance(params, dict) or not isinstance(params.get("rules"), dict):
        return None
    name = params.get("variant")
    try:
        rules = rules_from_mapping({**params["rules"], "name": _text(name) if isinstance(name, str) else "custom"})
    except (TypeError, ValueError):  # rules a hostile or damaged manifest made up (UserError is a ValueError)
        return None
    return rules if rules.fingerprint == fingerprint else None


def run_rules(manifest: dict[str, Any], fingerprint: str) -> Rules | None:
    """The rules of a run whose rows carry ``fingerprint``: its manifest's (`manifest_rules`), else the
    preset's with that fingerprint (a damaged manifest costs a preset run nothing), else None."""
    rules = manifest_rules(manifest, fingerprint)
    return rules or next((v.rules for v in VARIANTS if v.rules.fingerprint == fingerprint), None)


def _check_manifest_rules(s: pd.DataFrame, manifests: dict[str, dict[str, Any]]) -> None:
    """Warn (`studies.files.DamagedFileWarning`) for each run with a manifest whose rules cannot be used (not
    valid rules, or not those of the run's rows) and that is no preset: the report then writes no variant
    file and no sweep point for it. ``s``: one line per run, its key and rules_fingerprint."""
    from studies.files import DamagedFileWarning

    fingerprints = dict(zip(s["key"], s["rules_fingerprint"], strict=True)) if len(s) else {}
    for k, m in manifests.items():
        fingerprint = str(fingerprints[k])
        if m and run_rules(m, fingerprint) is None:
            warnings.warn(DamagedFileWarning(
                f"the newest readable manifest of run {k} does not record valid rules with the fingerprint of its "
                f"rows ({fingerprint}); the report shows the run without its rules: no variant file, no sweep point"),
                stacklevel=2)


def _text(value: str) -> str:
    """``value`` with anything UTF-8 cannot encode (lone surrogates from JSON escapes) replaced by '?'."""
    return value.encode("utf-8", "replace").decode("utf-8")


def _whole(value: Any, default: int) -> int:
    """A whole number from a manifest, or ``default`` when it is not one."""
    return value if isinstance(value, int) and not isinstance(value, bool) else default


class VariantFiles:
    """The TOML files of the custom variants a report's commands name.

    Each is written to ``<work>/variants/<safe name>.toml`` (see `reports.output.safe_name`)
    and named in commands as it will be once the report is in ``shown``.
    """

    def __init__(self, work: Path, shown: Path) -> None:
        self.work, self.shown = work, shown
        self.taken: set[str] = set()
        self.files: dict[tuple[str, str], str] = {}

    def path_for(self, rules: Rules) -> str:
        """The shown path of the file holding ``rules`` (written on first use)."""
        key = (rules.name, rules.fingerprint)
        if key not in self.files:
            stem = safe_name(rules.name, self.taken)
            vdir = self.work / "variants"
            vdir.mkdir(exist_ok=True)
            path = contained(self.work, vdir / f"{stem}.toml")
            path.write_text(variant_toml(rules), encoding="utf-8")
            self.files[key] = str(self.shown / "variants" / path.name)
        return self.files[key]


def variant_toml(rules: Rules) -> str:
    """A variant file that `sim.rules.load_variant_file` reads back as ``rules`` (name included)."""
    lines = [f"name = {_toml(_text(rules.name))}"] + [f"{k} = {_toml(v)}" for k, v in rules.parameters().items()]
    return "\n".join(lines) + "\n"


def reproduce_command(manifest: dict[str, Any], first: int, last: int, files: VariantFiles, store_path: Path,
                      fingerprint: str) -> str:
    """A `bakers-dozen simulate` command that replays (or reuses) deals first..last of a run.

    Rules with a preset's fingerprint are named by the preset's name; other rules are written to a
    variant file (``files``), taken from the manifest only when they match ``fingerprint`` (else ``?``
    stands for them where the manifest's name is a preset's, which would name other rules).
    """
    params = manifest.get("parameters")
    params = params if isinstance(params, dict) else {}
    name = params.get("variant")
    variant = _text(name) if isinstance(name, str) else "?"
    rules = manifest_rules(manifest, fingerprint)
    preset = next((v.name for v in VARIANTS if v.rules.fingerprint == fingerprint), None)
    if preset is not None:  # the preset's rules by the preset's name, whatever name the run used
        variant = preset
    elif rules is not None:
        variant = files.path_for(rules)
    elif preset_named(variant) is not None:  # a preset's name on other rules the manifest does not hold
        variant = "?"
    spec = params.get("strategy_spec")
    cmd = ["bakers-dozen", "simulate", "--variant", variant, "--strategy", _text(spec) if isinstance(spec, str) else "?",
           "--first", str(first), "--deals", str(last - first + 1), "--seed", str(_whole(params.get("seed"), 0)),
           "--store", str(store_path)]
    source = params.get("source", "default")
    if source in SOURCES and source != "default":
        cmd += ["--source", source]
    if _whole(params.get("strategy_seed"), 0):
        cmd += ["--strategy-seed", str(params["strategy_seed"])]
    return shlex.join(cmd)


def _toml(v: Any) -> str:
    """A TOML value: booleans, numbers, lists, and basic strings with every control character escaped."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, list | tuple):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, str):
        return '"' + "".join(_TOML_ESCAPES.get(ch, f"\\u{ord(ch):04x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch)
                             for ch in v) + '"'
    return json.dumps(v)


_TOML_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _variant_order(s: pd.DataFrame) -> list[str]:
    names = variant_names()
    order = sorted(range(len(s)), key=lambda i: (names.index(s["variant"].iloc[i]) if s["variant"].iloc[i] in names
                                                 else len(names), s["variant"].iloc[i]))
    return [s["key"].iloc[i] for i in order]


def build(store_path: str | Path, out_dir: str | Path, *, runs: dict[str, Spans] | None = None, title: str = "",
          command: str = "", maker: str = "", force: bool = False, select: Selection | None = None,
          png: bool = False, atlas: Path | None = None,
          current_code: Mapping[str, str | None] | None = None) -> tuple[Path, Path, Report]:
    """Write ``report.html``, ``report.md`` and ``charts/`` into ``out_dir``; return both paths and the report.

    ``runs`` are the run keys and deals to report on (default: every deal of every run; given, they are one
    study's, see `reports.groups.find_groups`). The figures are aggregated in a pass over the store's files
    (`reports.digest`), so memory does not grow with the number of rows; ``command`` is shown as the way to reproduce
    the whole report, and each figure names the commands of its own runs and deals. Rules are
    told apart by fingerprint, not by name (`reports.names`): runs of different rules under one
    name are shown as different variants, each label saying which rules it is.

    ``out_dir`` is checked before anything is read (`reports.output.check_report_dir`);
    the report is written to a staged folder and moved into place only when
    complete, so a failure leaves an earlier report in ``out_dir`` as it was. ``maker`` (the command
    writing the report) is noted there; a folder with another command's report is refused unless ``force``.
    ``select`` keeps some of the store's runs (`reports.select.Selection`; the report says which it left out);
    ``png`` writes each chart as PNG too, beside its SVG. ``atlas``: the winnability atlas's folder, whose
    figures for the report's rules are shown beside the live perfect play (`reports.atlas`); what of it cannot
    be used is said in the report and as an `reports.atlas.AtlasWarning` each. ``current_code``: each plug-in
    name's code digest as it loads now, which its labels mark current (`reports.names.player_labels`).
    """
    from studies.files import DamagedFileWarning

    check_report_dir(out_dir, maker, force)
    store_path, shown = Path(store_path), Path(out_dir)
    whole_store = runs is None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedFileWarning)
        digests = digest.digest_runs(store_path) if runs is None else digest.digest_runs(store_path, list(runs), runs)
        left_out: list[str] = []
        if select and digests:
            kept, left_out = select.apply(digest.summary(list(digests.values())))
            digests = {k: d for k, d in digests.items() if k in set(kept)}
        every = {k: run_manifests(store_path, k) for k in digests}
        manifests = {k: m[-1] if m else {} for k, m in every.items()}
        s = digest.summary(list(digests.values())) if digests else pd.DataFrame()
        _check_manifest_rules(s, manifests)
    for w in caught:  # passed on to the caller, which shows them (the command line: one line each)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    damaged = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, DamagedFileWarning)))
    if not digests:
        raise ReportError(f"store {store_path} holds no results to report on; run `bakers-dozen simulate` (or compare) first")
    s = label_runs(_label_players(digests, s, every, current_code))
    with staged_report(out_dir, maker, force) as work:
        earlier = shown / "charts"  # the previous report's charts: those with the same inputs are reused
        report = _write(digests, s, store_path, work, shown, title, command, every, damaged, whole_store,
                        earlier if earlier.is_dir() else None, png, atlas)
        if left_out:
            said = f"Left out at your request ({select.options()}): {len(left_out)} run(s): {'; '.join(left_out)}."
            report.intro.insert(1, said)
            report.notes.append(said)
        html, md = to_html(report, work), to_markdown(report, work)
    final = Path(out_dir)
    for section in report.sections:
        for chart in section.charts:
            chart.paths = {k: final / p.relative_to(work) for k, p in chart.paths.items()}
    return final / html.name, final / md.name, report


def _write(digests: dict[str, digest.RunDigest], s: pd.DataFrame, store_path: Path, work: Path, shown: Path, title: str, command: str,
           every: dict[str, list[dict[str, Any]]], damaged: list[str], whole_store: bool,
           earlier: Path | None, png: bool = False, atlas: Path | None = None) -> Report:
    """The report's sections, with their charts and variant files written into ``work``; ``damaged``
    names the store's damaged files that reading met, each with what was done about it; ``atlas`` (see `build`);
    ``digests``: each run's aggregates, ``s`` their summary (rules labelled)."""
    paint = charts.Painter(work / "charts", earlier, png)
    manifests = {k: m[-1] if m else {} for k, m in every.items()}
    s = s.iloc[[list(s["key"]).index(k) for k in _variant_order(s)]].reset_index(drop=True)
    rules = {k: run_rules(manifests[k], str(fp)) for k, fp in zip(s["key"], s["rules_fingerprint"], strict=True)}
    # A strategy that peeks saw face-down cards only where the variant deals some (stores written before
    # `Strategy.label_for` mark every run of a peeking strategy): elsewhere its figure is not a bound.
    s = s.assign(clairvoyant=[bool(c) and (rules[k] is None or rules[k].face_down > 0)
                              for k, c in zip(s["key"], s["clairvoyant"], strict=True)])
    by_key = s.set_index("key")
    runs_of = {k: digests[k].spans for k in s["key"]}
    group_runs = _GroupRuns(store_path, digests, s)
    ranges = {k: runs_text(runs_of[k]) for k in s["key"]}
    files = VariantFiles(work, shown)

    def commands(keys_: list[str], deals: Spans | None) -> list[str]:
        out = []
        for k in keys_:
            for a, b in runs_of[k] if deals is None else deals:
                out.append(reproduce_command(manifests[k], a, b, files, store_path, str(by_key.loc[k, "rules_fingerprint"])))
        return list(dict.fromkeys(out))

    groups, unused = find_groups(runs_of, s, every, whole_store)
    unused = ungrouped(s, every) + unused
    versions = sorted(set(s["toolkit_version"]))
    intro = [
        f"Results store `{store_path}`: {len(s)} run(s), {count(int(s['deals'].sum()))} deals played, bakers-dozen "
        f"{', '.join(versions)}.",
        "Every win rate comes with its 95% Wilson interval and its number of deals. Differences between runs on the "
        "same deals are paired (Newcombe's interval, McNemar's exact test); a figure marked (clairvoyant) saw the "
        "face-down cards, so it is an upper bound for an honest player. Tournaments and variant comparisons "
        "are made only of runs one command played on the same deals; each figure names its deals and the commands "
        "that replay exactly them.",
    ]
    if command:
        intro.append(f"Reproduce this report: `{command}`")
    if damaged:
        intro.append(f"The store has {len(damaged)} damaged file(s); the figures use what could be read, as follows.")
        intro.extend(damaged)
    figures, honest, unusable = _atlas_figures(atlas, list(map(str, s["rules_fingerprint"])))
    intro.extend(unusable)
    first, left = front.answer(s, ranges, paint, commands, (atlas, figures, honest) if atlas is not None else None,
                               _face_up_twins(s, rules), player_names())
    sections = [first]
    compared: list[tuple[pd.DataFrame, Spans]] = []
    later = _comparisons(group_runs, s, [g for g in groups if g.kind == "comparison"], paint, commands, compared)
    diffs = front.differences(s, compared)
    if diffs is not None:
        sections.append(diffs)
    sections.extend(later)
    replays = Replays(store_path, rules, work / REPLAY_DIR, earlier.parent / REPLAY_DIR if earlier is not None else None)
    sections.extend(_tournaments(group_runs, s, [g for g in groups if g.kind == "tournament"], paint, commands, replays))
    sections.extend(_sweeps(s, rules, ranges, paint, lambda keys_: commands(keys_, None)))
    sections.extend(loss_sections(replays, s, paint, lambda keys_: commands(keys_, None)))
    replays.ledger.seal()
    if unused:
        sections.append(Section(NOT_USED, paragraphs=["What the report could not use as a whole, and what it did:",
                                                      *unused]))
    sections.append(front.appendix(s, ranges, commands))
    _unique_headings(sections)
    paint.finish()
    return Report(title or "bakers-dozen report", intro, sections, notes=unused)


NOT_USED = "What the report could not use"


def _face_up_twins(s: pd.DataFrame, rules: dict[str, Rules | None]) -> dict[str, str]:
    """`studies.study.face_up_twins` of the variants of the summary ``s`` whose rules are known."""
    known = {str(v): r for k, v in zip(s["key"], s["variant"], strict=True) if (r := rules.get(k)) is not None}
    return face_up_twins(known)


def _atlas_figures(folder: Path | None, fingerprints: list[str]
                   ) -> tuple[dict[str, atlas_files.Figure], list[Beside], list[str]]:
    """The atlas's figures for ``fingerprints`` (`reports.atlas.perfect_play`), its honest games for them
    (`reports.atlas.honest_beside`), and what of the atlas could not be used, each line also passed on as its
    warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", atlas_files.AtlasWarning)
        figures = atlas_files.perfect_play(folder, fingerprints)
        honest = atlas_files.honest_beside(folder, fingerprints)
    for w in caught:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    return figures, honest, [str(w.message) for w in caught if issubclass(w.category, atlas_files.AtlasWarning)]


def _unique_headings(sections: list[Section]) -> None:
    """Number the second and later sections of a heading ("..., 2"), so that every heading, and the table
    of contents' link to it, names one section."""
    seen: dict[str, int] = {}
    for sec in sections:
        n = seen[sec.heading] = seen.get(sec.heading, 0) + 1
        if n > 1:
            sec.heading = f"{sec.heading} ({n})"


def _primary_name(g: pd.DataFrame) -> str:
    """The name of the rules a group shares: a preset's name when one of its runs used it, else the first."""
    names = list(dict.fromkeys(g["variant"]))
    return next((n for n in names if n in variant_names()), names[0])


def _variant_name(g: pd.DataFrame) -> str:
    """The primary name of a group's rules, with the other names its runs used."""
    names = list(dict.fromkeys(g["variant"]))
    first = _primary_name(g)
    return first + (f" (also run as {', '.join(n for n in names if n != first)})" if len(names) > 1 else "")


def _label_players(digests: dict[str, digest.RunDigest], s: pd.DataFrame, every: dict[str, list[dict[str, Any]]],
                   current: Mapping[str, str | None] | None) -> pd.DataFrame:
    """Each run's player label (`reports.names.player_labels`, which tells apart the codes of an edited plug-in)
    put into its digest and into the summary ``s``, so every table and chart of the report names it the same way;
    ``every``: each run's manifests (when it last started), ``current``: plug-in name -> its code digest now."""
    runs = pd.DataFrame([{"key": k, **{c: d.meta[c] for c in ("strategy", "strategy_identity", "strategy_label")}}
                         for k, d in digests.items()])
    started = {k: max((float(m.get("started_unix") or 0.0) for m in ms), default=0.0) for k, ms in every.items()}
    labels = player_labels(runs, started, current)
    for k, d in digests.items():
        d.meta["strategy_label"] = labels[k]
    return s.assign(strategy=[labels[k] for k in s["key"]])


class _GroupRuns:
    """The runs of a group digested on the group's deals (`reports.digest.on_deals`), with their labels."""

    def __init__(self, store_path: Path, digests: dict[str, digest.RunDigest], s: pd.DataFrame) -> None:
        self.store_path, self.digests = store_path, digests
        self.labels = dict(zip(s["key"], s["variant"], strict=True))

    def __call__(self, g: Group, keys: list[str]) -> tuple[list[digest.RunDigest], dict[str, int]]:
        """The runs ``keys`` on the group's deals less those that ended in an error for any of them, and how many
        deals of each run ended in an error (`reports.digest.without_failed`)."""
        runs, failed = digest.without_failed(self.store_path, digest.on_deals(self.store_path, self.digests, keys, g.deals),
                                             g.deals)
        for r in runs:  # a run digested again on the group's deals keeps the player label the report gave it
            r.meta["strategy_label"] = self.digests[r.key].meta["strategy_label"]
        return runs, failed

    def labelled(self, table: pd.DataFrame) -> pd.DataFrame:
        """``table`` (a line per run key) with each run's variant named by its rules label."""
        return table.assign(variant=[self.labels[k] for k in table["key"]])


def _verified(runs: list[digest.RunDigest]) -> tuple[int, int]:
    """(wins the referee verified, wins) of digested runs: `reports.tables.verified_wins` of their rows."""
    return sum(r.verified_wins for r in runs), sum(r.wins for r in runs)


def _comparisons(group_runs: _GroupRuns, s: pd.DataFrame, groups: list[Group], paint: charts.Painter,
                 commands: Any, compared: list[tuple[pd.DataFrame, Spans]]) -> list[Section]:
    """A section per variant comparison; each comparison's table and deals are added to ``compared``."""
    sections = []
    clairvoyant = s.set_index("key")["clairvoyant"]
    short = grid.short_names(list(s["strategy"]))
    for n, grp in enumerate(groups):
        g = s.set_index("key").loc[grp.keys].reset_index()
        keys = _variant_order(g)
        sub, erred = group_runs(grp, keys)
        t = group_runs.labelled(digest.variant_comparison(sub))
        compared.append((t, grp.deals))
        strategy, seed, source = grid.one_name(g["strategy"].iloc[0]), int(g["seed"].iloc[0]), g["source"].iloc[0]
        base = t["variant"].iloc[0]
        # a row of a strategy that saw face-down cards there is an upper bound for an honest player
        rows_named = [v + (grid.CLAIRVOYANT if clairvoyant.loc[k] else "") for v, k in zip(t["variant"], t["key"], strict=True)]
        table = pd.DataFrame({
            "variant": rows_named, "deals": t["deals"].map(count), "wins": t["wins"].map(count),
            "win rate": t["win_rate"].map(pct), "95% interval": [interval(a, b) for a, b in zip(t["ci_low"], t["ci_high"], strict=True)],
            f"difference vs {base} (95% interval)": ["baseline" if i == 0 else signed_interval(d, lo, hi) for i, (d, lo, hi)
                                                   in enumerate(zip(t["difference"], t["diff_low"], t["diff_high"], strict=True))],
            "McNemar p": [p_value(p) for p in t["p_value"]], "mean cards home": t["mean_cards_home"].map("{:.2f}".format),
            "mean score": t["mean_score"].map("{:.1f}".format),
        })
        deals = int(t["deals"].iloc[0])
        where = runs_text(grp.deals)
        paragraphs = [
            f"{strategy} played {len(keys)} variants on the same {count(deals)} deals (deals {where}, seed {seed}, source {source}). "
            f"Score: 5 points per card home plus 500 per win (Card Game Nook)."]
        failed = errored_note(erred, dict(zip(g["key"], g["variant"], strict=True)))
        if failed:
            paragraphs.append(failed)
        if grp.note:
            paragraphs.append(f"Not all of it could be used: {grp.note}.")
        sec = Section(f"Variant comparison: {short[g['strategy'].iloc[0]]}"
                      + (f", deals {where}" if n and _repeats(groups, grp, s) else ""),
                      paragraphs=paragraphs, tables=[("Variants compared", table)], tooltip=strategy)
        title = f"{strategy}: win rate by variant, deals {where}, seed {seed}"
        facts = (f"Strategy {strategy}, the same {count(deals)} deals ({where}) per variant, seed {seed}, source {source}, "
                 f"bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}. {verified_sentence(*_verified(sub))}")
        cmds = commands(keys, grp.deals)
        labelled = t.assign(label=t["variant"])
        sec.charts.append(Chart(title, paint(charts.win_rates, f"compare-{n}-rates", labelled, title), facts, cmds))
        won = [digest.running_wins(r.won) for r in sub]
        sec.charts.append(Chart(f"{strategy}: convergence", paint(
            charts.convergence, f"compare-{n}-convergence", list(zip(t["variant"], won, strict=True)),
            f"{strategy}: running win rate by variant (95% band), deals {where}"), facts, cmds))
        home = [r.home for r in sub]
        sec.charts.append(Chart(f"{strategy}: cards home", paint(
            charts.cards_home, f"compare-{n}-cards-home", list(zip(t["variant"], home, strict=True)),
            f"{strategy}: cards home at the end, deals {where} per variant"), facts, cmds))
        sections.append(sec)
    return sections


def _repeats(groups: list[Group], grp: Group, s: pd.DataFrame) -> bool:
    """Another group of the same kind has a run of the same strategy (its heading must then say its deals)."""
    ident = s.set_index("key")["strategy_identity"]
    mine = set(ident.loc[grp.keys])
    return any(o is not grp and set(ident.loc[o.keys]) & mine for o in groups)


def _tournaments(group_runs: _GroupRuns, s: pd.DataFrame, groups: list[Group], paint: charts.Painter, commands: Any,
                 replays: Replays) -> list[Section]:
    sections = []
    for n, grp in enumerate(groups):
        g = s.set_index("key").loc[grp.keys].reset_index()
        keys = list(g["key"])
        seed, source, fp = int(g["seed"].iloc[0]), g["source"].iloc[0], g["rules_fingerprint"].iloc[0]
        sub, erred = group_runs(grp, keys)
        t = digest.tournament(sub)
        t.ranking = group_runs.labelled(t.ranking)
        variant = _variant_name(g)
        where = runs_text(grp.deals)
        r = t.ranking
        ranking = pd.DataFrame({
            "rank": r["rank"], "strategy": r["strategy"], "wins": r["wins"].map(count), "win rate": r["win_rate"].map(pct),
            "95% interval": [interval(a, b) for a, b in zip(r["ci_low"], r["ci_high"], strict=True)],
            "mean cards home": r["mean_cards_home"].map("{:.2f}".format), "mean score": r["mean_score"].map("{:.1f}".format)})
        pair = t.pairwise
        pairwise = pd.DataFrame({
            "strategy A": pair["first"], "strategy B": pair["second"], "A won, B lost": pair["only_first"].map(count),
            "B won, A lost": pair["only_second"].map(count), "difference A − B (95% interval)": [
                signed_interval(d, lo, hi) for d, lo, hi in zip(pair["difference"], pair["diff_low"], pair["diff_high"], strict=True)],
            "McNemar p": pair["p_value"].map(p_value), "Holm-adjusted p": pair["p_holm"].map(p_value)})
        play = ["bakers-dozen", "play", "--variant", _primary_name(g)]
        opts = ["--source", source] if source != "default" else []
        # the game worth inspecting is the loss of the highest-ranked strategy that lost the deal
        dis = t.disagreements.assign(inspect=[
            shlex.join([*play, "--deal", str(d), "--seed", str(seed), *opts, "--strategy", grid.one_name(loser)])
            for d, loser in zip(t.disagreements["deal"], t.disagreements["top_loser"], strict=True)]).drop(columns="top_loser")
        known = replays.rules.get(keys[0])
        if known is not None and len(dis):
            picked = [int(d) for d in dis["deal"]]
            pages = upset_replays(replays.store_path, known, r[["key", "strategy"]], digest.outcomes(sub, picked),
                                  picked, replays.ledger)
            dis = dis.assign(replays=[Links(tuple(pages.get(int(d), ()))) for d in dis["deal"]])
        paragraphs = [
            f"{len(keys)} strategies played the same {count(t.deals)} deals of {variant} (deals {where}, seed {seed}, "
            f"source {source}), in one command; every figure of this section is on exactly these deals. "
            f"Cochran's Q = {t.cochran_q:.1f} on {t.cochran_df} degrees of freedom, {p_clause(t.cochran_p)}: "
            + ("the strategies differ." if t.cochran_p < 0.05 else "no evidence that the strategies differ."),
            "Pairwise: McNemar's exact test on the deals exactly one of the two won, Holm-adjusted over all pairs."]
        failed = errored_note(erred, dict(zip(g["key"], g["strategy"], strict=True)))
        if failed:
            paragraphs.append(failed)
        if grp.note:
            paragraphs.append(f"Not all of it could be used: {grp.note}.")
        sec = Section(f"Tournament on {variant}" + (f", deals {where}" if _repeats(groups, grp, s) else ""),
                      paragraphs=paragraphs,
                      tables=[("Ranking", ranking), ("Pairwise comparisons", pairwise),
                              ("Deals that disagree most with the ranking (lower-ranked strategies won, higher-ranked lost)", dis)])
        facts = (f"Variant {variant} (rules {fp}), the same {count(t.deals)} deals ({where}) for every strategy, seed {seed}, "
                 f"source {source}, bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}. "
                 f"{verified_sentence(*_verified(sub))}")
        title = f"Tournament on {variant}: deals {where}, seed {seed}"
        cmds = commands(keys, grp.deals)
        sec.charts.append(Chart(title, paint(charts.win_rates, f"tournament-{n}-rates",
                                                   r.assign(label=r["strategy"]), title), facts, cmds))
        sec.charts.append(Chart(f"{title}: pairwise", paint(
            charts.tournament_matrix, f"tournament-{n}-matrix", t,
            f"Tournament on {variant}: deals won by row and lost by column (deals {where})"), facts, cmds))
        by_key = {d.key: d for d in sub}
        sec.charts.append(Chart(f"{title}: convergence", paint(
            charts.convergence, f"tournament-{n}-convergence",
            list(zip(r["strategy"], [digest.running_wins(by_key[k].won) for k in r["key"]], strict=True)),
            f"Tournament on {variant}: running win rate (95% band), deals {where}"),
            facts, cmds))
        sections.append(sec)
    return sections


def _sweeps(s: pd.DataFrame, known: dict[str, Rules | None], ranges: dict[str, str], paint: charts.Painter,
            repro: Any) -> list[Section]:
    rules = {k: r.parameters() if r is not None else None for k, r in known.items()}
    by_key = s.set_index("key")
    buckets: dict[tuple[str, str], list[str]] = {}
    for param in PARAMETERS:
        groups: dict[str, list[str]] = {}
        for k, r in rules.items():
            if not r or not isinstance(r.get(param), int):
                continue
            rest = json.dumps({p: v for p, v in r.items() if p != param}, sort_keys=True)
            row = by_key.loc[k]
            groups.setdefault(f"{rest}|{row['seed']}|{row['source']}", []).append(k)
        for sig, keys in groups.items():
            # a strategy makes a line of the sweep only where it was played at three values or more
            by_strategy: dict[str, list[str]] = {}
            for k in keys:
                by_strategy.setdefault(str(by_key.loc[k, "strategy_identity"]), []).append(k)
            lines = [k for ks in by_strategy.values() if len({rules[x][param] for x in ks}) >= 3 for k in ks]
            if lines:
                buckets[(param, sig)] = lines
    sections = []
    for n, ((param, _), keys) in enumerate(buckets.items()):
        g = by_key.loc[keys].reset_index()
        g = g.assign(value=[int(rules[k][param]) for k in g["key"]])
        deals = f"{int(g['deals'].min()):,}–{int(g['deals'].max()):,}" if g["deals"].nunique() > 1 else f"{int(g['deals'].iloc[0]):,}"
        base = next((v for v in g["variant"] if v in variant_names()), g["variant"].iloc[0])
        title = (f"Win rate against {charts.AXIS_NAMES.get(param, param)} ({base} rules otherwise), "
                 f"{deals} deals per point, seed {g['seed'].iloc[0]}")
        table = pd.DataFrame({"strategy": g["strategy"], param: g["value"], "variant": g["variant"], "deals": g["deals"].map(count),
                              "deal range": [ranges[k] for k in g["key"]], "win rate": g["win_rate"].map(pct),
                              "95% interval": [interval(a, b) for a, b in zip(g["ci_low"], g["ci_high"], strict=True)]})
        table = table.sort_values(["strategy", param]).reset_index(drop=True)
        sec = Section(f"Sweep of {param}", paragraphs=[
            f"The same rules except {param}, which takes the values {sorted(set(g['value']))}."], tables=[(title, table)])
        sec.charts.append(Chart(title, paint(charts.sweep, f"sweep-{n}", g, param, title),
                                f"{len(keys)} runs; strategies {', '.join(sorted(set(g['strategy'])))}; "
                                f"deals {', '.join(dict.fromkeys(ranges[k] for k in g['key']))}; "
                                f"seed {g['seed'].iloc[0]}; bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}. "
                                + verified_sentence(int(g["verified_wins"].sum()), int(g["wins"].sum())),
                                repro(keys)))
        sections.append(sec)
    return sections
