"""Where strategies lose: on a sample of winnable deals a run lost, the move that lost each and its kind.

For each run of a chosen strategy (by default the heuristic and lookahead
players) the lowest-numbered lost deals are played again (the store keeps no
moves of a loss; the strategy, its parameters and seeds are in the rows, and a
replay that does not end as stored is left out and counted). Each game goes to
`strategies.analyse.analyse_game`: a deal the solver proves lost from the start
is unwinnable, not the strategy's fault; in the others the losing move is the
one after which a won position was lost. Its kind says what a strategy author
could fix:

- ``home``: a card played to a foundation (too early);
- ``from home``: a card taken back from a foundation;
- ``into an empty pile``;
- ``buried a needed card``: onto a pile whose exposed card the winning line from
  the position before moves within its first `NEEDED_WITHIN` moves;
- ``onto a pile``: any other move onto a pile.

The section holds a table and a chart per strategy and variant. On variants
with face-down cards the solver sees them, so "winnable" there is clairvoyant.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from reports import charts
from reports.output import contained, safe_name
from reports.render import Chart, Section
from reports.replays import REPLAY_COLUMNS, Replays, replay_row, usable_rows
from sim.game import Game
from sim.notation import Move
from sim.rules import Rules

if TYPE_CHECKING:
    from matplotlib.figure import Figure

LOSS_STRATEGIES = ("heuristic", "lookahead")
"""The strategies whose losses the default report analyses."""
SAMPLE = 12
"""Lost deals analysed per run (the lowest-numbered ones)."""
BUDGET = {"nodes": 200_000, "seconds": 2.0}
"""The solver's budget per position searched."""
NEEDED_WITHIN = 6
"""A covered card is "needed" when the winning line moves it within this many moves."""
KINDS = ("home", "from home", "into an empty pile", "buried a needed card", "onto a pile")
LOSS_COLUMNS = ["deal", "moves", "start", "end", "losing_move", "at", "kind", "replayed"]
"""One analysed lost deal: see `analyse_losses`."""
COLOURS = ("#59a14f", "#edc948", "#76b7b2", "#e15759", "#4e79a7")
LOSSES_CODE = hashlib.sha256(Path(__file__).read_bytes() + json.dumps(BUDGET).encode()).hexdigest()
"""What a run's loss analysis is made by: an earlier build's is reused only when the code is the same."""


def move_kind(game: Game, move: Move, line: list[Move]) -> str:
    """The kind (one of `KINDS`) of ``move`` played from ``game``'s position, given a winning ``line`` from there."""
    if move.from_foundation:
        return "from home"
    if move.to_foundation:
        return "home"
    view = game.view(peeks=True)
    covered = view.top(move.dst)
    if covered < 0:
        return "into an empty pile"
    if any(m.card == covered for m in line[:NEEDED_WITHIN]):
        return "buried a needed card"
    return "onto a pile"


def analyse_losses(rules: Rules, run: pd.DataFrame, sample: int = SAMPLE,
                   budget: dict[str, float] | None = None) -> pd.DataFrame:
    """One row per analysed lost deal of one run (rows of one key): deal, moves, the verdicts at the start and
    at the end, the losing move (1-based) and its share of the game, its kind, and whether the replay matched
    the store."""
    return pd.DataFrame([analyse_loss(rules, row, budget) for row in _sampled(run, sample).itertuples()],
                        columns=LOSS_COLUMNS)


def _sampled(run: pd.DataFrame, sample: int) -> pd.DataFrame:
    """The lost deals of a run that are analysed: the ``sample`` lowest-numbered."""
    return run[run["outcome"] == "lost"].sort_values("deal").head(sample)


def _analyse_task(task: tuple[Rules, Any]) -> dict[str, Any]:
    """`analyse_loss` of one (rules, row), in whichever process analyses it."""
    return analyse_loss(*task)


def analyse_loss(rules: Rules, row: Any, budget: dict[str, float] | None = None) -> dict[str, Any]:
    """One lost deal (a stored row, `REPLAY_COLUMNS`) played again and analysed: one row of `analyse_losses`.
    The solver and its table are the deal's own, so the verdicts do not depend on which deals the same process
    analysed before (the deals of a report go to its processes in no fixed order)."""
    from strategies.analyse import analyse_game
    from strategies.solver.strategy import SolverStrategy

    game, record = replay_row(rules, row)
    entry: dict[str, Any] = {"deal": int(row.deal), "moves": len(record.moves), "start": None, "end": None,
                             "losing_move": None, "at": None, "kind": None,
                             "replayed": record.cards_home == int(row.cards_home)}
    if entry["replayed"]:
        a = analyse_game(rules, game.start, record.moves, SolverStrategy(**(budget or BUDGET)))
        entry["start"], entry["end"] = a.verdicts[0], a.verdicts[-1]
        if a.losing_move is not None:
            k = a.losing_move
            before = Game(rules, game.start)
            for mv in record.moves[:k]:
                before.play_legal(mv)
            line = [before.parse(t) for t in a.alternative_line]
            entry.update(losing_move=k + 1, at=(k + 1) / len(record.moves),
                         kind=move_kind(before, record.moves[k], line))
    return entry


def loss_sections(place: Replays, s: pd.DataFrame, paint: charts.Painter,
                  repro: Callable[[list[str]], list[str]], strategies: tuple[str, ...] = LOSS_STRATEGIES,
                  sample: int = SAMPLE) -> list[Section]:
    """The report section "Where strategies lose" over the runs of ``strategies`` in the report's summary ``s``
    (one row per run: key, variant, strategy (its label), strategy_identity, first_deal, last_deal), reading
    their lost deals from the store; no section if there is no such run. A run's analysis is kept in the
    report's replay folder and reused by the next build (the same run key plays the same games)."""
    names = s["strategy_identity"].astype(str).str.partition("@")[0]  # the name, whatever the parameters
    runs = s[names.isin(strategies)]
    runs = runs[[place.rules.get(k) is not None for k in runs["key"]]]
    if runs.empty:
        return []
    table, counts, labels = [], [], []
    every = _runs_losses(place, [(str(r.key), (int(r.first_deal), int(r.last_deal))) for r in runs.itertuples()], sample)
    for r, found in zip(runs.itertuples(), every, strict=True):
        losing = found.dropna(subset=["kind"])
        label = f"{r.variant} / {r.strategy}"
        labels.append(label)
        counts.append([int((losing["kind"] == k).sum()) for k in KINDS])
        seen = " (clairvoyant)" if place.rules[r.key].face_down else ""  # type: ignore[union-attr]
        table.append({
            "variant": str(r.variant) + seen, "strategy": str(r.strategy), "lost deals analysed": len(found),
            "unwinnable": int((found["start"] == "lost").sum()),
            "still won at the end": int((found["end"] == "won").sum()),
            "losing move found": len(losing),
            "median losing move": f"{losing['losing_move'].median():.0f} of {losing['moves'].median():.0f}"
            if len(losing) else "–",
            **{k: int((losing["kind"] == k).sum()) for k in KINDS},
            "not replayed": int((~found["replayed"]).sum()),
        })
    paragraphs = [
        f"For each run of {', '.join(strategies)}, the {sample} lowest-numbered lost deals are played again and "
        "analysed by the solver (`bakers-dozen analyse`). A deal lost from the start is unwinnable; one still won at "
        "the end was given up (the strategy resigned, or ran out of moves allowed, in a winnable position); in the "
        "others the losing move turned a won position into a lost one. Its kind: home (a card played to a "
        "foundation), from home, into an empty pile, buried a needed card (covered a card that the winning line "
        f"moves within {NEEDED_WITHIN} moves) or onto a pile. On variants with face-down cards the solver sees them: "
        "those verdicts are clairvoyant.",
        f"Solver budget per position: {BUDGET['nodes']:,} nodes, {BUDGET['seconds']:g} s; positions left unknown "
        "give no losing move.",
    ]
    section = Section("Where strategies lose", paragraphs=paragraphs, tables=[("Losing moves by kind", pd.DataFrame(table))])
    title = f"Kinds of losing moves ({sample} lost deals per run)"
    section.charts.append(Chart(title, paint(_kinds_chart, "losses", labels, counts, title),
                                f"{len(runs)} runs; the {sample} lowest-numbered lost deals of each.",
                                repro(list(runs["key"]))))
    return [section]


def _runs_losses(place: Replays, runs: list[tuple[str, tuple[int, int]]], sample: int) -> list[pd.DataFrame]:
    """`analyse_losses` of each run (key, deals), read from the previous build's analysis where it covers the
    same deals; the other runs' lost deals are analysed side by side, a process a core (`studies.backends.map_in_workers`), one task
    a deal: each is up to a few seconds of solver work, and the hardest runs' deals (good-measure's)
    would otherwise keep one core busy after the other had finished. Each run's analysis is kept in
    the report's replay folder, in its ledger (`reports.ledger`): the next build reads back only what
    this one wrote, unchanged."""
    from joblib import cpu_count

    from studies.backends import map_in_workers

    names = [f"losses-{safe_name(key, set())}-{deals[0]}-{deals[1]}-{sample}.json" for key, deals in runs]
    earlier = [place.ledger.take(name, f"{LOSSES_CODE}:{name}") for name in names]
    todo = [(i, place.rules[key], row) for i, ((key, deals), found) in enumerate(zip(runs, earlier, strict=True))
            if found is None
            for row in _sampled(usable_rows(_first_lost(place.store_path, key, deals, sample), key), sample).itertuples()]
    analysed = map_in_workers(_analyse_task, [(rules, row) for _, rules, row in todo], cpu_count())
    every: list[pd.DataFrame] = []
    for i, found in enumerate(earlier):
        if found is not None:
            every.append(pd.read_json(found, orient="records", dtype=False).reindex(columns=LOSS_COLUMNS))
        else:
            every.append(pd.DataFrame([e for (j, _, _), e in zip(todo, analysed, strict=True) if j == i], columns=LOSS_COLUMNS))
    place.out_dir.mkdir(parents=True, exist_ok=True)
    for name, result in zip(names, every, strict=True):
        result.to_json(contained(place.out_dir, place.out_dir / name), orient="records")
        place.ledger.wrote(name, f"{LOSSES_CODE}:{name}")
    return every


def _first_lost(store: Path, key: str, deals: tuple[int, int], sample: int) -> pd.DataFrame:
    """The rows (`REPLAY_COLUMNS`) of the ``sample`` lowest-numbered lost deals of run ``key`` within ``deals``:
    its chunk files are read in deal order until they are found, not the whole run."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from studies.reading import scan_store

    found: list[pa.Table] = []
    held = 0
    for table in scan_store(store, key=key, deals=deals, columns=REPLAY_COLUMNS):
        lost = table.filter(pc.equal(pc.cast(table.column("outcome"), pa.string()), "lost"))
        found.append(lost.slice(0, sample - held))
        held += found[-1].num_rows
        if held >= sample:
            break
    if not found:
        return pd.DataFrame(columns=["key", *REPLAY_COLUMNS])
    return pa.concat_tables(found).unify_dictionaries().to_pandas()


def _kinds_chart(labels: list[str], counts: list[list[int]], title: str) -> Figure:
    """Stacked bars: per run, how many losing moves of each kind."""
    fig, ax = charts.pyplot().subplots(figsize=(8.5, 0.45 * len(labels) + 1.8))
    y = list(range(len(labels)))[::-1]
    left = [0] * len(labels)
    for i, (kind, colour) in enumerate(zip(KINDS, COLOURS, strict=True)):
        widths = [c[i] for c in counts]
        ax.barh(y, widths, left=left, color=colour, height=0.6, label=kind)
        left = [a + b for a, b in zip(left, widths, strict=True)]
    ax.set_yticks(y, [charts.label(lab) for lab in labels])
    ax.set_xlabel("losing moves found")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    ax.set_title(charts.label(title, charts.MAX_TITLE_CHARS), fontsize=10)
    return fig
