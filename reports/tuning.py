"""The report of a tuning study: its optimisation history, the parameters' importances, the confirmation table.

Written like every report (`reports.render`): ``report.md`` and ``report.html`` with the charts as SVG
in ``charts/``, staged and put in place in one step (`reports.output.staged_report`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reports.charts import label, pyplot, save
from reports.output import staged_report
from reports.render import Chart, Report, Section, to_html, to_markdown

MIN_TRIALS_FOR_IMPORTANCE = 3
"""Completed trials (with values that differ) before the importances say anything."""


def history(trials: Sequence[Any]) -> list[dict[str, Any]]:
    """One row per trial: its number, state, spec, the deals' win rate it reached and the best so far."""
    rows: list[dict[str, Any]] = []
    best = None
    for t in trials:
        value = t.value if t.value is not None else (t.intermediate_values[max(t.intermediate_values)]
                                                     if t.intermediate_values else None)
        if t.state.name == "COMPLETE" and (best is None or t.value > best):
            best = t.value
        rows.append({"trial": t.number, "state": t.state.name.lower(), "spec": t.user_attrs.get("spec", "?"),
                     "rounds": len(t.intermediate_values), "win_rate": value, "best_so_far": best})
    return rows


def importances(trials: Sequence[Any]) -> dict[str, float]:
    """Each searched parameter's share of the variation in the completed ``trials``' win rates (optuna's fANOVA);
    empty when fewer than `MIN_TRIALS_FOR_IMPORTANCE` trials completed or they all scored the same."""
    import optuna

    done = [t for t in trials if t.state.name == "COMPLETE"]
    if len(done) < MIN_TRIALS_FOR_IMPORTANCE or len({t.value for t in done}) < 2 or not done[0].params:
        return {}
    study = optuna.create_study(direction="maximize")  # in memory: the trials that count, and only those
    study.add_trials(done)
    return optuna.importance.get_param_importances(study)


def _history_chart(rows: list[dict[str, Any]], out: Path, title: str) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for state, marker in (("complete", "o"), ("pruned", "x")):
        points = [(r["trial"], 100 * r["win_rate"]) for r in rows if r["state"] == state and r["win_rate"] is not None]
        if points:
            ax.scatter(*zip(*points, strict=True), marker=marker, label=f"{state} trial")
    best = [(r["trial"], 100 * r["best_so_far"]) for r in rows if r["best_so_far"] is not None]
    if best:
        ax.step(*zip(*best, strict=True), where="post", label="best so far")
    ax.set_xlabel("trial")
    ax.set_ylabel("win rate on the tuning deals (%)")
    ax.set_title(label(title, 160), fontsize=10)
    ax.legend(fontsize=8)
    return save(fig, out / "charts", "tuning-history")["svg"]


def _importance_chart(found: dict[str, float], out: Path, title: str) -> Path:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 0.5 + 0.4 * len(found)))
    names = list(found)[::-1]
    ax.barh([label(n) for n in names], [found[n] for n in names])
    ax.set_xlabel("importance (share of the win rate's variation)")
    ax.set_title(label(title, 160), fontsize=10)
    return save(fig, out / "charts", "tuning-importance")["svg"]


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:.2%}"


def tuning_report(result: Any, tuning: Any, work: Path, command: str) -> Report:
    """The report of ``result`` (a `studies.tuning.TuneResult` of ``tuning``), its charts written into ``work``."""
    import pandas as pd

    title = f"Tuning {tuning.space.default_spec} on {tuning.rules.name}, deals {tuning.first}-{tuning.first + tuning.deals - 1}"
    rows = history(result.trials)
    found = importances(result.trials)
    counts = ", ".join(f"{n} {s}" for s, n in result.counts().items())
    intro = [f"Study `{result.journal}` ({counts} trials); every trial played the same {tuning.deals:,} deals with the "
             "same strategy seeds, in rounds after each of which a median pruner could stop it.",
             "Searched: " + "; ".join(f"{d.name}: {d.describe()}" for d in tuning.space.dimensions) + ".",
             f"Best setting: `{result.best}`, {_pct(result.best_value)} of the tuning deals (the best of many estimates, "
             "so biased upwards; the confirmation below is not)."]
    table = pd.DataFrame([{"trial": r["trial"], "state": r["state"], "rounds": r["rounds"], "win rate": _pct(r["win_rate"]),
                           "best so far": _pct(r["best_so_far"]), "spec": r["spec"]} for r in rows])
    facts = f"{len(rows)} trials on deals {tuning.first}-{tuning.first + tuning.deals - 1}, seed {tuning.seed}."
    history_section = Section("Optimisation history", tables=[("Trials", table)],
                              charts=[Chart("Optimisation history", {"svg": _history_chart(rows, work, title)}, facts, [command])])
    if found:
        importance = Section("Parameter importances",
                             ["Each parameter's share of the variation of the completed trials' win rates (optuna's fANOVA)."],
                             tables=[("Importances", pd.DataFrame({"parameter": list(found),
                                                                   "importance": [f"{v:.3f}" for v in found.values()]}))],
                             charts=[Chart("Parameter importances", {"svg": _importance_chart(found, work, title)}, facts,
                                           [command])])
    else:
        importance = Section("Parameter importances", [f"Too few completed trials with different win rates (at least "
                                                       f"{MIN_TRIALS_FOR_IMPORTANCE} are needed)."])
    c = result.confirmation
    if c is None:
        confirmation = Section("Confirmation on fresh deals", ["None asked for (`--confirm 0`)."])
    else:
        sides = [{"setting": name, "spec": side.spec, "wins": f"{side.wins:,}", "win rate": _pct(side.to_json()["win_rate"]),
                  "95% interval (Wilson)": f"{_pct(side.to_json()['ci_low'])} – {_pct(side.to_json()['ci_high'])}"}
                 for name, side in (("tuned", c.tuned), ("default", c.default))]
        confirmation = Section("Confirmation on fresh deals",
                               [f"Deals {c.first}-{c.first + c.deals - 1}, never tuned on, played by both settings. Tuned minus "
                                f"default: {c.difference:+.2%} (95% interval {c.low:+.2%} to {c.high:+.2%}); {c.only_tuned:,} "
                                f"deals won only by the tuned setting, {c.only_default:,} only by the default; McNemar's "
                                f"exact p = {c.p_value:.3g}."],
                               tables=[("Tuned and default setting", pd.DataFrame(sides))])
    return Report(title, intro, [history_section, importance, confirmation])


def write_tuning_report(result: Any, tuning: Any, out_dir: str | Path, command: str) -> tuple[Path, Path]:
    """Write ``report.html`` and ``report.md`` (charts in ``charts/``) for ``result`` into ``out_dir``."""
    with staged_report(out_dir) as work:
        report = tuning_report(result, tuning, work, command)
        html, md = to_html(report, work), to_markdown(report, work)
    final = Path(out_dir)
    return final / html.name, final / md.name
