"""`bakers-dozen replay`: a played game as one self-contained HTML page to step through in a browser.

The page is `reports.replay.replay_page`; this verb reads the record, and the
analysis when one is given (``--analysis FILE`` from ``analyse --json``) or
asked for (``--analyse``, with the solver's budget per position).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from bakers_dozen.limits import MAX_SOLVE_NODES, MAX_SOLVE_SECONDS, Bounded
from bakers_dozen.output import InputFile
from bakers_dozen.record import read_game
from reports.output import check_output_file, write_file_atomically
from sim.text import printable


@click.command()
@click.argument("record_file", type=InputFile())
@click.option("--out", "-o", "out", type=click.Path(path_type=Path), required=True,
              help="The HTML file to write.")
@click.option("--analysis", "analysis_file", type=InputFile(), default=None,
              help="The output of `analyse RECORD --json`: show each position's verdict and the losing move.")
@click.option("--analyse", "run_analysis", is_flag=True, help="Run the analysis now (see `analyse`) and show it.")
@click.option("--nodes", type=Bounded(int, 1, MAX_SOLVE_NODES), default=1_000_000, show_default=True,
              help="With --analyse: the solver's node budget per position searched.")
@click.option("--seconds", type=Bounded(float, 0.0, MAX_SOLVE_SECONDS), default=10.0, show_default=True,
              help="With --analyse: the solver's time budget per position searched.")
@click.option("--reveal", is_flag=True, help="Draw face-down cards face up (on grey) instead of as backs.")
def replay(record_file: Any, out: Path, analysis_file: Any, run_analysis: bool, nodes: int, seconds: float,
           reveal: bool) -> None:
    """Write a replay page of a `play --json` RECORD: step forward and back with the buttons or the arrow keys.

    The page holds the game (the start and what each move changed) and draws each position as
    you step, with the move list, the current move marked and, with an analysis, each
    position's verdict with the losing move highlighted. It is one file that needs no network.
    A record longer than any game (105,105 moves) is refused.
    """
    from reports.replay import MAX_ANALYSIS_CHARS, ReplayError, analysis_json, check_length, replay_page

    if analysis_file is not None and run_analysis:
        raise click.UsageError("give either --analysis FILE or --analyse, not both")
    out = check_output_file(out, (".html", ".htm"))
    record, rules, start = read_game(record_file)
    check_length(len(record["moves"]))  # before an analysis, which searches every position
    analysis = None
    if analysis_file is not None:
        try:
            text = analysis_file.read(MAX_ANALYSIS_CHARS + 1)
        except UnicodeDecodeError as exc:
            raise ReplayError(f"the analysis {analysis_file.name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
        analysis = analysis_json(text)
    elif run_analysis:
        from strategies.analyse import analyse_game
        from strategies.solver.strategy import SolverStrategy

        analysis = analyse_game(rules, start, record["moves"], SolverStrategy(nodes=nodes, seconds=seconds)).to_json()
    where = f"deal {record['deal']}" if record.get("deal") is not None else "typed layout"
    title = f"{rules.name}, {where}, {record.get('strategy', 'unknown strategy')}: {record['outcome']}, " \
            f"{record['cards_home']}/52 home"
    page = replay_page(rules, start, record["moves"], title, analysis, reveal)
    write_file_atomically(out, lambda tmp: tmp.write_text(page, encoding="utf-8"))
    click.echo(printable(f"wrote {out} ({len(record['moves'])} moves)"))
