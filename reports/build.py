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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from reports import charts
from reports.losses import loss_sections
from reports.output import check_report_dir, contained, safe_name, staged_report
from reports.render import Chart, Report, Section, to_html, to_markdown
from reports.tables import ReportError, summary, tournament, variant_comparison
from sim.deals import SOURCES
from sim.rules import PARAMETERS, VARIANTS, Rules, find_variant, rules_from_mapping, variant_names

COLUMNS = ["deal", "seed", "source", "variant", "rules_fingerprint", "strategy", "strategy_version", "strategy_identity",
           "strategy_label", "clairvoyant", "strategy_seed", "outcome", "cards_home", "toolkit_version"]


def _pct(x: float) -> str:
    return f"{x:.2%}"


def _interval(low: float, high: float) -> str:
    return f"{low:.2%} – {high:.2%}"


def _signed_interval(d: float, low: float, high: float) -> str:
    return f"{d:+.2%} ({low:+.2%} to {high:+.2%})"


def _p(p: float) -> str:
    return "–" if not np.isfinite(p) else ("< 0.0001" if p < 1e-4 else f"{p:.4f}")


def latest_manifest(store_path: Path, key: str) -> dict[str, Any]:
    """The newest readable manifest of a run key (parameters and command), or {} when there is none.

    A store may come from someone else: a manifest that is not a JSON object, nests too
    deeply or is implausibly large is damaged (`studies.store.Store.read_manifests`); each
    damaged one, and a run with no readable manifest at all, is reported as a
    `studies.store.DamagedFileWarning`, since the run's command then shows ``?`` where the
    manifest would say and its rules are known only for a preset.
    """
    from studies.store import DamagedFileWarning, Store

    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]*", key):  # a key from a store's rows names its own folder only
        return {}
    good, bad = Store(store_path).read_manifests(key)
    for _, line in bad:
        done = "another manifest of the run is used" if good else "the report's command for the run shows ? for what it said"
        warnings.warn(DamagedFileWarning(f"{line}; {done} (the run's rows are unaffected)"), stacklevel=2)
    if not good and not bad:
        warnings.warn(DamagedFileWarning(
            f"run {key} has no manifest in {store_path / key / 'manifests'}; the report's command for the run shows ? "
            "for what it would say (the run's rows are unaffected)"), stacklevel=2)
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


def _check_manifest_rules(rows: pd.DataFrame, manifests: dict[str, dict[str, Any]]) -> None:
    """Warn (`studies.store.DamagedFileWarning`) for each run with a manifest whose rules cannot be used (not
    valid rules, or not those of the run's rows) and that is no preset: the report then writes no variant
    file and no sweep point for it."""
    from studies.store import DamagedFileWarning

    fingerprints = rows.assign(key=rows["key"].astype(str)).groupby("key")["rules_fingerprint"].first()
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

    A variant that is not a preset with these rules is written to a variant file
    (``files``); its rules come from the manifest only when they match ``fingerprint``.
    """
    params = manifest.get("parameters")
    params = params if isinstance(params, dict) else {}
    name = params.get("variant")
    variant = _text(name) if isinstance(name, str) else "?"
    rules = manifest_rules(manifest, fingerprint)
    if rules is not None and not (variant in variant_names() and find_variant(variant).fingerprint == fingerprint):
        variant = files.path_for(rules)
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


def _summary_table(s: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "variant": s["variant"], "strategy": s["strategy"], "deals": s["deals"].map("{:,}".format),
        "deal range": [f"{a}–{b}" for a, b in zip(s["first_deal"], s["last_deal"], strict=True)],
        "seed": s["seed"], "wins": s["wins"].map("{:,}".format), "win rate": s["win_rate"].map(_pct),
        "95% interval": [_interval(a, b) for a, b in zip(s["ci_low"], s["ci_high"], strict=True)],
        "mean cards home": s["mean_cards_home"].map("{:.2f}".format), "mean score": s["mean_score"].map("{:.1f}".format),
        "unknown": s["unknown"], "errors": s["errors"],
    })


def _variant_order(s: pd.DataFrame) -> list[str]:
    names = variant_names()
    order = sorted(range(len(s)), key=lambda i: (names.index(s["variant"].iloc[i]) if s["variant"].iloc[i] in names
                                                 else len(names), s["variant"].iloc[i]))
    return [s["key"].iloc[i] for i in order]


def build(store_path: str | Path, out_dir: str | Path, *, rows: pd.DataFrame | None = None, title: str = "",
          command: str = "", allow_mixed: bool = False) -> tuple[Path, Path, Report]:
    """Write ``report.html``, ``report.md`` and ``charts/`` into ``out_dir``; return both paths and the report.

    ``rows`` are the store's rows to report on (default: all of them);
    ``command`` is shown as the way to reproduce the whole report. A variant
    name found under several rule fingerprints (the rules changed between
    runs) is refused unless ``allow_mixed``: such figures must not sit side by
    side under one name.

    ``out_dir`` is checked before anything is read (`reports.output.check_report_dir`);
    the report is written to a staged folder and moved into place only when
    complete, so a failure leaves an earlier report in ``out_dir`` as it was.
    """
    from studies.store import DamagedFileWarning, read_store

    check_report_dir(out_dir)
    store_path, shown = Path(store_path), Path(out_dir)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DamagedFileWarning)
        if rows is None:
            rows = read_store(store_path, columns=COLUMNS)
        manifests = {k: latest_manifest(store_path, k) for k in dict.fromkeys(rows["key"].astype(str))}
        _check_manifest_rules(rows, manifests)
    for w in caught:  # passed on to the caller, which shows them (the command line: one line each)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno, source=w.source)
    damaged = list(dict.fromkeys(str(w.message) for w in caught if issubclass(w.category, DamagedFileWarning)))
    if rows.empty:
        raise ReportError(f"store {store_path} holds no results to report on; run `bakers-dozen simulate` (or compare) first")
    rows = rows.assign(key=rows["key"].astype(str), variant=rows["variant"].astype(str))
    if not allow_mixed:
        _refuse_mixed_names(rows)
    with staged_report(out_dir) as work:
        report = _write(rows, store_path, work, shown, title, command, manifests, damaged)
        html, md = to_html(report, work), to_markdown(report, work)
    final = Path(out_dir)
    for section in report.sections:
        for chart in section.charts:
            chart.paths = {k: final / p.relative_to(work) for k, p in chart.paths.items()}
    return final / html.name, final / md.name, report


def _write(rows: pd.DataFrame, store_path: Path, work: Path, shown: Path, title: str, command: str,
           manifests: dict[str, dict[str, Any]], damaged: list[str]) -> Report:
    """The report's sections, with their charts and variant files written into ``work``; ``damaged``
    names the store's damaged files that reading met, each with what was done about it."""
    chart_dir = work / "charts"
    s = summary(rows)
    s = s.iloc[[list(s["key"]).index(k) for k in _variant_order(s)]].reset_index(drop=True)
    by_key = s.set_index("key")
    files = VariantFiles(work, shown)

    def repro(keys_: list[str]) -> list[str]:
        if command:
            return [command]
        return sorted(set(reproduce_command(manifests[k], int(by_key.loc[k, "first_deal"]), int(by_key.loc[k, "last_deal"]),
                                            files, store_path, str(by_key.loc[k, "rules_fingerprint"])) for k in keys_))

    versions = sorted(set(s["toolkit_version"]))
    intro = [
        f"Results store `{store_path}`: {len(s)} run(s), {int(s['deals'].sum()):,} deals played, bakers-dozen "
        f"{', '.join(versions)}.",
        "Every win rate comes with its 95% Wilson interval and its number of deals. Differences between runs on the "
        "same deals are paired (Newcombe's interval, McNemar's exact test); a strategy marked (clairvoyant) sees "
        "face-down cards, so its figure is an upper bound for an honest player.",
    ]
    if command:
        intro.append(f"Reproduce this report: `{command}`")
    if damaged:
        intro.append(f"The store has {len(damaged)} damaged file(s); the figures use what could be read, as follows.")
        intro.extend(damaged)
    sections = []

    overview = Section("All runs", tables=[("Win rates", _summary_table(s))])
    labelled = s.assign(label=s["variant"] + " / " + s["strategy"])
    overview.charts.append(Chart(
        "Win rates of all runs",
        charts.save(charts.win_rates(labelled, f"Win rates, {len(s)} runs ({int(s['deals'].min()):,}–"
                                     f"{int(s['deals'].max()):,} deals each)"), chart_dir, "overview"),
        f"{len(s)} runs; seeds {', '.join(map(str, sorted(set(s['seed']))))}; bakers-dozen {', '.join(versions)}.",
        repro(list(s["key"]))))
    sections.append(overview)
    sections.extend(_comparisons(rows, s, chart_dir, repro))
    sections.extend(_tournaments(rows, s, chart_dir, repro))
    rules = {k: run_rules(manifests[k], str(by_key.loc[k, "rules_fingerprint"])) for k in s["key"]}
    sections.extend(_sweeps(s, rules, chart_dir, repro))
    sections.extend(loss_sections(store_path, s, rules, chart_dir, repro))
    return Report(title or "bakers-dozen report", intro, sections)


def _refuse_mixed_names(rows: pd.DataFrame) -> None:
    fps = rows.groupby("variant", observed=True)["rules_fingerprint"].unique()
    for name, found in fps.items():
        if len(found) > 1:
            raise ReportError(
                f"variant {name!r} appears under {len(found)} rule fingerprints ({', '.join(sorted(map(str, found)))}): "
                "its rules changed between runs, and such figures must not be reported under one name; "
                "report separate stores, or pass --allow-mixed to show them as separate runs")


def _primary_name(g: pd.DataFrame) -> str:
    """The name of the rules a group shares: a preset's name when one of its runs used it, else the first."""
    names = list(dict.fromkeys(g["variant"]))
    return next((n for n in names if n in variant_names()), names[0])


def _variant_name(g: pd.DataFrame) -> str:
    """The primary name of a group's rules, with the other names its runs used."""
    names = list(dict.fromkeys(g["variant"]))
    first = _primary_name(g)
    return first + (f" (also run as {', '.join(n for n in names if n != first)})" if len(names) > 1 else "")


def _series(rows: pd.DataFrame, keys: list[str], deals: np.ndarray | None, column: str) -> list[np.ndarray]:
    out = []
    for k in keys:
        g = rows[rows["key"] == k].sort_values("deal")
        if deals is not None:
            g = g[g["deal"].isin(deals)]
        out.append((g["outcome"].astype(str) == "won").to_numpy() if column == "won" else g[column].to_numpy())
    return out


def _comparisons(rows: pd.DataFrame, s: pd.DataFrame, chart_dir: Path, repro: Any) -> list[Section]:
    sections = []
    for n, ((_identity, seed, source), g) in enumerate(s.groupby(["strategy_identity", "seed", "source"], sort=False)):
        if g["rules_fingerprint"].nunique() < 2:
            continue
        keys = _variant_order(g)
        try:
            t = variant_comparison(rows, keys)
        except ReportError:
            continue
        strategy = g["strategy"].iloc[0]
        base = t["variant"].iloc[0]
        table = pd.DataFrame({
            "variant": t["variant"], "deals": t["deals"].map("{:,}".format), "wins": t["wins"],
            "win rate": t["win_rate"].map(_pct), "95% interval": [_interval(a, b) for a, b in zip(t["ci_low"], t["ci_high"], strict=True)],
            f"difference vs {base} (95% interval)": ["baseline" if i == 0 else _signed_interval(d, lo, hi) for i, (d, lo, hi)
                                                   in enumerate(zip(t["difference"], t["diff_low"], t["diff_high"], strict=True))],
            "McNemar p": [_p(p) for p in t["p_value"]], "mean cards home": t["mean_cards_home"].map("{:.2f}".format),
            "mean score": t["mean_score"].map("{:.1f}".format),
        })
        deals = int(t["deals"].iloc[0])
        lo, hi = int(t["first_deal"].min()), int(t["last_deal"].max())
        sec = Section(f"Variant comparison: {strategy}", paragraphs=[
            f"{strategy} played {len(keys)} variants on the same {deals:,} deals (deals {lo}–{hi}, seed {seed}, source {source}). "
            f"Score: 5 points per card home plus 500 per win (Card Game Nook)."], tables=[("Variants compared", table)])
        title = f"{strategy}: win rate by variant, {deals:,} deals each, seed {seed}"
        facts = (f"Strategy {strategy}, {deals:,} deals ({lo}–{hi}) per variant, seed {seed}, source {source}, "
                 f"bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}.")
        labelled = t.assign(label=t["variant"])
        common = np.array(sorted(set.intersection(*[set(rows.loc[rows['key'] == k, 'deal']) for k in keys])))
        sec.charts.append(Chart(title, charts.save(charts.win_rates(labelled, title), chart_dir, f"compare-{n}-rates"), facts, repro(keys)))
        won = _series(rows, keys, common, "won")
        sec.charts.append(Chart(f"{strategy}: convergence", charts.save(charts.convergence(
            list(zip(t["variant"], won, strict=True)), f"{strategy}: running win rate by variant (95% band), seed {seed}"),
            chart_dir, f"compare-{n}-convergence"), facts, repro(keys)))
        home = _series(rows, keys, common, "cards_home")
        sec.charts.append(Chart(f"{strategy}: cards home", charts.save(charts.cards_home(
            list(zip(t["variant"], home, strict=True)), f"{strategy}: cards home at the end, {deals:,} deals per variant"),
            chart_dir, f"compare-{n}-cards-home"), facts, repro(keys)))
        sections.append(sec)
    return sections


def _tournaments(rows: pd.DataFrame, s: pd.DataFrame, chart_dir: Path, repro: Any) -> list[Section]:
    sections = []
    for n, ((fp, seed, source), g) in enumerate(s.groupby(["rules_fingerprint", "seed", "source"], sort=False)):
        if g["strategy_identity"].nunique() < 2:
            continue
        keys = list(g["key"])
        try:
            t = tournament(rows, keys)
        except ReportError:
            continue
        variant = _variant_name(g)
        r = t.ranking
        ranking = pd.DataFrame({
            "rank": r["rank"], "strategy": r["strategy"], "wins": r["wins"], "win rate": r["win_rate"].map(_pct),
            "95% interval": [_interval(a, b) for a, b in zip(r["ci_low"], r["ci_high"], strict=True)],
            "mean cards home": r["mean_cards_home"].map("{:.2f}".format), "mean score": r["mean_score"].map("{:.1f}".format)})
        pair = t.pairwise
        pairwise = pd.DataFrame({
            "strategy A": pair["first"], "strategy B": pair["second"], "A won, B lost": pair["only_first"],
            "B won, A lost": pair["only_second"], "difference A − B (95% interval)": [
                _signed_interval(d, lo, hi) for d, lo, hi in zip(pair["difference"], pair["diff_low"], pair["diff_high"], strict=True)],
            "McNemar p": pair["p_value"].map(_p), "Holm-adjusted p": pair["p_holm"].map(_p)})
        play = ["bakers-dozen", "play", "--variant", _primary_name(g)]
        where = ["--source", source] if source != "default" else []
        dis = t.disagreements.assign(inspect=[shlex.join([*play, "--deal", str(d), "--seed", str(seed), *where])
                                              for d in t.disagreements["deal"]])
        lo, hi = int(r["first_deal"].min()), int(r["last_deal"].max())
        sec = Section(f"Tournament on {variant}", paragraphs=[
            f"{len(keys)} strategies played the same {t.deals:,} deals of {variant} (deals {lo}–{hi}, seed {seed}, source {source}). "
            f"Cochran's Q = {t.cochran_q:.1f} on {t.cochran_df} degrees of freedom, p = {_p(t.cochran_p)}: "
            + ("the strategies differ." if t.cochran_p < 0.05 else "no evidence that the strategies differ."),
            "Pairwise: McNemar's exact test on the deals exactly one of the two won, Holm-adjusted over all pairs."],
            tables=[("Ranking", ranking), ("Pairwise comparisons", pairwise),
                    ("Deals that disagree most with the ranking (lower-ranked strategies won, higher-ranked lost)", dis)])
        facts = (f"Variant {variant} (rules {fp}), {t.deals:,} common deals ({lo}–{hi}), seed {seed}, source {source}, "
                 f"bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}.")
        title = f"Tournament on {variant}: {t.deals:,} deals, seed {seed}"
        sec.charts.append(Chart(title, charts.save(charts.win_rates(r.assign(label=r["strategy"]), title), chart_dir,
                                                   f"tournament-{n}-rates"), facts, repro(keys)))
        sec.charts.append(Chart(f"{title}: pairwise", charts.save(charts.tournament_matrix(
            t, f"Tournament on {variant}: deals won by row and lost by column ({t.deals:,} deals)"), chart_dir,
            f"tournament-{n}-matrix"), facts, repro(keys)))
        ordered = list(r["key"])
        sec.charts.append(Chart(f"{title}: convergence", charts.save(charts.convergence(
            list(zip(r["strategy"], _series(rows, ordered, None, "won"), strict=True)),
            f"Tournament on {variant}: running win rate (95% band), seed {seed}"), chart_dir, f"tournament-{n}-convergence"),
            facts, repro(keys)))
        sections.append(sec)
    return sections


def _sweeps(s: pd.DataFrame, known: dict[str, Rules | None], chart_dir: Path, repro: Any) -> list[Section]:
    rules = {k: r.parameters() if r is not None else None for k, r in known.items()}
    buckets: dict[tuple[str, str], list[str]] = {}
    for param in PARAMETERS:
        groups: dict[str, list[str]] = {}
        for k, r in rules.items():
            if not r or not isinstance(r.get(param), int):
                continue
            rest = json.dumps({p: v for p, v in r.items() if p != param}, sort_keys=True)
            row = s.set_index("key").loc[k]
            groups.setdefault(f"{rest}|{row['seed']}|{row['source']}", []).append(k)
        for sig, keys in groups.items():
            # a strategy makes a line of the sweep only where it was played at three values or more
            by_strategy: dict[str, list[str]] = {}
            for k in keys:
                by_strategy.setdefault(str(s.set_index("key").loc[k, "strategy_identity"]), []).append(k)
            lines = [k for ks in by_strategy.values() if len({rules[x][param] for x in ks}) >= 3 for k in ks]
            if lines:
                buckets[(param, sig)] = lines
    sections = []
    for n, ((param, _), keys) in enumerate(buckets.items()):
        g = s.set_index("key").loc[keys].reset_index()
        g = g.assign(value=[int(rules[k][param]) for k in g["key"]])
        deals = f"{int(g['deals'].min()):,}–{int(g['deals'].max()):,}" if g["deals"].nunique() > 1 else f"{int(g['deals'].iloc[0]):,}"
        base = next((v for v in g["variant"] if v in variant_names()), g["variant"].iloc[0])
        title = (f"Win rate against {charts.AXIS_NAMES.get(param, param)} ({base} rules otherwise), "
                 f"{deals} deals per point, seed {g['seed'].iloc[0]}")
        table = pd.DataFrame({"strategy": g["strategy"], param: g["value"], "variant": g["variant"], "deals": g["deals"],
                              "win rate": g["win_rate"].map(_pct),
                              "95% interval": [_interval(a, b) for a, b in zip(g["ci_low"], g["ci_high"], strict=True)]})
        table = table.sort_values(["strategy", param]).reset_index(drop=True)
        sec = Section(f"Sweep of {param}", paragraphs=[
            f"The same rules except {param}, which takes the values {sorted(set(g['value']))}."], tables=[(title, table)])
        sec.charts.append(Chart(title, charts.save(charts.sweep(g, param, title), chart_dir, f"sweep-{n}"),
                                f"{len(keys)} runs; strategies {', '.join(sorted(set(g['strategy'])))}; deals {deals} per point; "
                                f"seed {g['seed'].iloc[0]}; bakers-dozen {', '.join(sorted(set(g['toolkit_version'])))}.",
                                repro(keys)))
        sections.append(sec)
    return sections
