"""The report section of a sequential tournament: each adjacent pair's log-likelihood ratio, round by round,
against its bounds (a chart), and the deals each pair needed (a table).

Written as ``sequential.md`` with ``charts/sequential-llr.svg`` into the tournament's report folder, beside
its ``report.md``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reports.charts import label, pyplot, save
from reports.output import check_report_dir, contained, write_file_atomically


def llr_chart(result: Any, out: Path) -> Path:
    """Each adjacent pair's LLR (towards the better of the two at the end) after each round, with the bounds."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for pair in result.pairs:
        xs, ys = [], []
        for deals, tests in result.history:
            for a, b, llr, reverse in tests:
                if {a, b} == {pair.first, pair.second}:
                    xs.append(deals)
                    ys.append(llr if a == pair.first else reverse)  # oriented as the final ranking
        ax.plot(xs, ys, marker="o", label=label(f"{pair.first} vs {pair.second}"))
    test = result.pairs[0].test
    ax.axhline(test.upper, color="green", linestyle="--", label="upper bound: better")
    ax.axhline(test.lower, color="red", linestyle="--", label="lower bound: no difference of delta")
    ax.set_xlabel("deals played")
    ax.set_ylabel("log-likelihood ratio")
    ax.set_title(f"Sequential tests, stopped after {result.deals_played:,} deals", fontsize=10)
    ax.legend(fontsize=7)
    return save(fig, out / "charts", "sequential-llr")["svg"]


def write_sequential_report(result: Any, out_dir: str | Path) -> Path:
    """Write ``sequential.md`` for ``result`` (a `studies.rounds.SequentialResult`); return its path."""
    out = check_report_dir(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    chart = llr_chart(result, out)
    test = result.pairs[0].test
    lines = ["# Sequential tests", "",
             f"{'Decided' if result.decided else 'Not decided'} after {result.deals_played:,} deals. Each adjacent pair of "
             "the ranking is tested in both directions by Wald's SPRT on its discordant deals (studies.sequential); "
             f"bounds {test.lower:.2f} (no difference of delta) and {test.upper:.2f} (better).", "",
             f"![log-likelihood ratios](charts/{chart.name})", "",
             "| rank | strategy | wins |", "|---|---|---|",
             *(f"| {i} | `{s}` | {result.wins[s]:,} |" for i, s in enumerate(result.ranking, 1)), "",
             "| pair | decision | deals needed | LLR | LLR reverse |", "|---|---|---|---|---|"]
    for p in result.pairs:
        lines.append(f"| `{p.first}` vs `{p.second}` | {p.test.decision or 'undecided'} | "
                     f"{'' if p.needed is None else f'{p.needed:,}'} | {p.test.llr:+.2f} | {p.test.llr_reverse:+.2f} |")
    path = contained(out, out / "sequential.md")
    text = "\n".join(lines) + "\n"
    write_file_atomically(path, lambda t: t.write_text(text, encoding="utf-8"))
    return path
