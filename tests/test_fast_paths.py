"""One deal, fastest path: what a single `play` or `solve` loads and how it plays."""

from __future__ import annotations

from scipy import stats

from studies.stats import Z95, _z


def test_the_95_percent_quantile_is_scipys_without_loading_scipy() -> None:
    assert Z95 == float(stats.norm.ppf(0.975)) == _z(0.95)
    assert _z(0.9) == float(stats.norm.ppf(0.95))


class Recorder:
    """A `studies.progress.Progress` that keeps what it was told."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def start(self, total: int, done: int, wins: int, label: str) -> None:
        self.calls.append(("start", total, done, wins))

    def advance(self, deals: int, wins: int) -> None:
        self.calls.append(("advance", deals, wins))

    def note(self, text: str) -> None:
        self.calls.append(("note", text))

    def stop(self) -> None:
        self.calls.append(("stop",))


def test_solve_with_one_job_reports_progress_deal_by_deal_with_the_same_rows() -> None:
    from bakers_dozen.solve import solve_deals
    from sim.rules import resolve_variant
    from strategies.solver.strategy import SolverStrategy

    rules = resolve_variant("bakers-dozen")
    params = dict(SolverStrategy().params)
    progress = Recorder()
    rows = solve_deals(rules, params, 11, 13, progress=progress)
    wins = [int(r["verdict"] == "won") for r in rows]
    assert progress.calls == [("start", 3, 0, 0), *[("advance", 1, w) for w in wins], ("stop",)]
    again = solve_deals(rules, params, 11, 13)  # the process's solver is reused: the same verdicts and lines
    assert [(r["verdict"], r["nodes"], r["moves"]) for r in again] == [(r["verdict"], r["nodes"], r["moves"]) for r in rows]
