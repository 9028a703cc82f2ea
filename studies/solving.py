"""Solving deals through the runner: the solver as a run's strategy, its rows read back from the store.

The deals run through the runner (`studies.runner.run`) like any strategy: the solver with the given parameters is the
run's strategy (its parameters are in the run key), chunks go to worker processes (a solve of a few deals, or with
``jobs=1``, plays in this process: `studies.backends.plays_in_process`) and into the store as they finish, so a killed
or interrupted solve loses only the chunks in flight and the same call resumes; the rows are then read back from the
store. `bakers-dozen solve`, the escalation ladder (`studies.atlas.ladder`) and the API all solve through here.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa

from sim.rules import Rules
from studies.chunks import REJECTED
from studies.progress import Progress
from studies.runner import run
from studies.spec import DEFAULT_STORE, RunSpec, RunSummary


def solver_spec(params: dict[str, Any]) -> str:
    """The strategy spec (``solver:key=value,...``) the runner loads for these solver parameters."""
    return "solver" + (":" + ",".join(f"{k}={v}" for k, v in sorted(params.items())) if params else "")


def solve_deals(rules: Rules, params: dict[str, Any], first: int, last: int, seed: int = 0, source: str = "default",
                **options: Any) -> tuple[list[dict[str, Any]], RunSummary]:
    """Solve deals first..last through the runner and its store; the rows (sorted by deal) and the run's summary.

    The runner plays the deals the store does not hold yet (a killed run resumes; ``force``
    replays) and, with ``verify``, replays every win with the referee in the worker before
    storing it (a rejected win is stored as an error). Wins stored by an earlier run that did
    not verify are replayed here, so every win in the rows has been checked when ``verify``.
    ``options`` are `solve_spec`'s.
    """
    return solve_spec(rules, RunSpec(rules, solver_spec(params), last - first + 1, first, seed, source), **options)


def solve_scattered(rules: Rules, params: dict[str, Any], deals: Sequence[int], seed: int = 0,
                    source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], RunSummary]:
    """Solve just the deal numbers ``deals``, however scattered, as one run on every worker (`solve_deals`
    otherwise)."""
    return solve_spec(rules, RunSpec.over(rules, solver_spec(params), deals, seed=seed, source=source), **options)


def solve_spec(rules: Rules, spec: RunSpec, *, store: str | Path = DEFAULT_STORE, jobs: int | None = None,
               chunk: int | None = None, verify: bool = True, force: bool = False, backend: str = "loky",
               scheduler: str | None = None, progress: Progress | None = None, command: list[str] | None = None
               ) -> tuple[list[dict[str, Any]], RunSummary]:
    """Run the solver run ``spec`` in ``store`` and read back its rows (`store_rows`) and summary."""
    result = run(spec, store, jobs=jobs, chunk=chunk, backend=backend, scheduler=scheduler, force=force,
                 progress=progress, command=command, verify=verify)
    return store_rows(rules, result, verify, spec.spans), result


def stored_deals(rules: Rules, params: dict[str, Any], deals: Sequence[int], seed: int = 0, source: str = "default",
                 *, store: str | Path = DEFAULT_STORE, **_: Any) -> list[int]:
    """The deals of ``deals`` whose solve with ``params`` the store holds, by its chunk files' names (nothing is
    read or played): what a solve of them that was interrupted finished, which `solve_scattered` then reads back
    without playing. Options other than ``store`` are `solve_spec`'s and change nothing here."""
    from studies.files import StoreError
    from studies.spec import check_spec, run_labels
    from studies.store import Store

    spec = RunSpec.over(rules, solver_spec(params), deals, seed=seed, source=source)
    key = run_labels(spec, check_spec(spec, None, None, "loky")).key.hash
    held: set[int] = set()
    try:
        st = Store(store)
        for lo, hi in spec.spans:  # a chunk file lies inside one span: every deal of it is one of ``deals``
            for c in st.chunk_files(key, lo, hi):
                held.update(range(max(c.first, lo), min(c.last, hi) + 1))
    except StoreError:  # a store that cannot be listed holds nothing this can vouch for
        return []
    return [d for d in deals if d in held]


def retry_unknown(rules: Rules, rows: list[dict[str, Any]], params: dict[str, Any], seed: int = 0,
                  source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], int]:
    """Solve again, with ``params`` (a bigger budget), only the deals ``rows`` leave unknown.

    They are one run under the bigger budget's run key (`solve_scattered` with ``options``: store,
    jobs, verify, ...), played on every worker however scattered they are, and resumed like any solve; the
    decided rows stay. Returns the rows with the retried ones in place, and how many were retried."""
    unknown = [r["deal"] for r in rows if r["verdict"] == "unknown"]
    if not unknown:
        return rows, 0
    rows, _ = solve_again(rules, rows, unknown, params, seed, source, **options)
    return rows, len(unknown)


def solve_again(rules: Rules, rows: list[dict[str, Any]], deals: list[int], params: dict[str, Any], seed: int = 0,
                source: str = "default", **options: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Solve ``deals`` (some of those ``rows`` hold) again with ``params`` (`solve_scattered` with ``options``) and
    put their new rows in place of the old; the rows, and the new rows alone."""
    again, _ = solve_scattered(rules, params, deals, seed, source, **options)
    by_deal = {r["deal"]: r for r in again}
    return [by_deal.get(r["deal"], r) for r in rows], again


def store_rows(rules: Rules, result: RunSummary, verify: bool,
               spans: Sequence[tuple[int, int]] | None = None) -> list[dict[str, Any]]:
    """The solve rows (deal, verdict, nodes, seconds, moves, the referee's check, the run's labels, and the
    termination: ``timeout`` where the seconds cap, not the node budget, left a deal unknown) of a finished run over
    ``spans`` (default: its deals from first on), read from its store (as Arrow rows: no pandas to import)."""
    from studies.reading import read_table
    from studies.store import Store

    spans = spans or ((result.first, result.first + result.deals - 1),)
    recheck = verify and not all(m.get("parameters", {}).get("verify") is True
                                 for m in Store.open(result.store, create=False).read_manifests(result.key)[0])
    columns = ["deal", "outcome", "termination", "nodes", "micros", "moves", "error"] + (["win_moves"] if recheck else [])
    table = read_table(result.store, key=result.key, deals=(spans[0][0], spans[-1][1]), columns=columns)
    if len(spans) > 1:  # the key may hold other deals between the run's
        import pyarrow.compute as pc

        wanted = [d for a, b in spans for d in range(a, b + 1)]
        table = table.filter(pc.is_in(table["deal"], value_set=pa.array(wanted, type=table.schema.field("deal").type)))
    rows = []
    fingerprint = rules.fingerprint  # a hash of the rules: once, not once a deal
    values = {c: table.column(c).to_pylist() for c in columns}  # a column at a time: no dict a row from Arrow
    for i, (deal, outcome, error) in enumerate(zip(values["deal"], values["outcome"], values["error"], strict=True)):
        verified: bool | None = None
        if verify and outcome == "won":
            verified = _replayed(rules, result, deal, values["win_moves"][i]) if recheck else True
        elif verify and outcome == "error" and str(error).startswith(REJECTED):
            verified = False
        rows.append({
            "variant": rules.name, "source": result.source, "seed": result.seed, "deal": deal,
            "verdict": outcome, "nodes": values["nodes"][i], "seconds": values["micros"][i] / 1e6,
            "moves": values["moves"][i], "verified": verified, "rules_fingerprint": fingerprint,
            "strategy": result.strategy_identity, "termination": values["termination"][i],
        })
    return rows


def _replayed(rules: Rules, result: RunSummary, deal: int, codes: Any) -> bool:
    """Whether the referee wins deal ``deal`` with the stored move ``codes``."""
    from studies.reading import check_win

    v = check_win(rules, {"deal": deal, "seed": result.seed, "source": result.source, "win_moves": list(codes)})
    return bool(v.legal and v.won)



