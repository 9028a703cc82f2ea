"""The report of a tuning study: its optimisation history, the parameters' importances, the confirmation table.

Written as ``tuning.md`` and ``tuning.html`` into the report folder, with the charts as SVG in ``charts/``
beside them (the names of `reports.output.REPORT_ITEMS`' ``charts``, so a study's report and a tuning
report can share a folder without either overwriting the other's pages).
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from reports.charts import label, pyplot, save
from reports.output import check_report_dir, contained, write_file_atomically

MIN_TRIALS_FOR_IMPORTANCE = 3
"""Completed trials (with values that differ) before the importances say anything."""


def history(study: Any) -> list[dict[str, Any]]:
    """One row per trial: its number, state, spec, the deals' win rate it reached and the best so far."""
    rows: list[dict[str, Any]] = []
    best = None
    for t in study.trials:
        value = t.value if t.value is not None else (t.intermediate_values[max(t.intermediate_values)]
                                                     if t.intermediate_values else None)
        if t.state.name == "COMPLETE" and (best is None or t.value > best):
            best = t.value
        rows.append({"trial": t.number, "state": t.state.name.lower(), "spec": t.user_attrs.get("spec", "?"),
                     "rounds": len(t.intermediate_values), "win_rate": value, "best_so_far": best})
    return rows


def importances(study: Any) -> dict[str, float]:
    """Each searched parameter's share of the variation in the completed trials' win rates (optuna's fANOVA);
    empty when fewer than `MIN_TRIALS_FOR_IMPORTANCE` trials completed or they all scored the same."""
    import optuna

    values = [t.value for t in study.trials if t.state.name == "COMPLETE"]
    if len(values) < MIN_TRIALS_FOR_IMPORTANCE or len(set(values)) < 2 or not study.best_trial.params:
        return {}
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


def _md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    def cell(x: str) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(cell(x) for x in r) + " |" for r in rows), ""]


def _pct(x: float | None) -> str:
    return "" if x is None else f"{x:.2%}"


def write_tuning_report(result: Any, tuning: Any, out_dir: str | Path) -> tuple[Path, Path]:
    """Write ``tuning.md`` and ``tuning.html`` for ``result`` (a `studies.tuning.TuneResult`) into ``out_dir``."""
    out = check_report_dir(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    title = f"Tuning {tuning.space.default_spec} on {tuning.rules.name}, deals {tuning.first}-{tuning.first + tuning.deals - 1}"
    rows = history(result.study)
    found = importances(result.study)
    charts = [_history_chart(rows, out, title)]
    if found:
        charts.append(_importance_chart(found, out, title))
    md = [f"# {title}", "", f"Study: `{result.journal}` ({', '.join(f'{n} {s}' for s, n in result.counts().items())} trials).",
          f"Best setting: `{result.best}`, {_pct(result.best_value)} of the tuning deals.", "",
          "Searched: " + "; ".join(f"{d.name}: {d.describe()}" for d in tuning.space.dimensions) + ".", "",
          "## Optimisation history", "", f"![optimisation history](charts/{charts[0].name})", ""]
    md += _md_table(["trial", "state", "rounds", "win rate", "best so far", "spec"],
                    [[str(r["trial"]), r["state"], str(r["rounds"]), _pct(r["win_rate"]), _pct(r["best_so_far"]), f"`{r['spec']}`"]
                     for r in rows])
    md += ["## Parameter importances", ""]
    if found:
        md += [f"![parameter importances](charts/{charts[1].name})", ""]
        md += _md_table(["parameter", "importance"], [[k, f"{v:.3f}"] for k, v in found.items()])
    else:
        md += [f"Too few completed trials with different win rates (at least {MIN_TRIALS_FOR_IMPORTANCE} are needed).", ""]
    c = result.confirmation
    md += ["## Confirmation on fresh deals", ""]
    if c is None:
        md += ["None asked for (`--confirm 0`).", ""]
    else:
        md += [f"Deals {c.first}-{c.first + c.deals - 1}, never tuned on, played by both settings.", ""]
        md += _md_table(["setting", "spec", "wins", "win rate", "95% interval (Wilson)"],
                        [[name, f"`{s.spec}`", f"{s.wins:,}", _pct(s.to_json()["win_rate"]),
                          f"{_pct(s.to_json()['ci_low'])}-{_pct(s.to_json()['ci_high'])}"]
                         for name, s in (("tuned", c.tuned), ("default", c.default))])
        md += [f"Tuned minus default: {c.difference:+.2%} (95% interval {c.low:+.2%} to {c.high:+.2%}); "
               f"{c.only_tuned:,} deals won only by the tuned setting, {c.only_default:,} only by the default; "
               f"McNemar's exact p = {c.p_value:.3g}.", ""]
    md_path = contained(out, out / "tuning.md")
    html_path = contained(out, out / "tuning.html")
    text = "\n".join(md)
    write_file_atomically(md_path, lambda p: p.write_text(text, encoding="utf-8"))
    page = (f"<!doctype html><meta charset='utf-8'><title>{html.escape(title)}</title>"
            f"<pre style='white-space:pre-wrap'>{html.escape(text)}</pre>"
            + "".join(f"<p><img src='charts/{html.escape(p.name)}' alt='{html.escape(p.stem)}'></p>" for p in charts))
    write_file_atomically(html_path, lambda p: p.write_text(page, encoding="utf-8"))
    return html_path, md_path
