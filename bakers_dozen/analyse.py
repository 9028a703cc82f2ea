"""`bakers-dozen analyse`: where a played game was lost, and a move that would have kept it won.

The game is a `play --json` record, or a deal or typed layout with a move list.
The analysis itself is `strategies.analyse.analyse_game`; this verb reads the
game, sets the solver's budget per position and prints the result (one JSON
object with ``--json``).
"""

from __future__ import annotations

import json
from typing import Any

import click

from bakers_dozen.limits import MAX_SOLVE_NODES, MAX_SOLVE_SECONDS, Bounded, memory_mib
from bakers_dozen.options import deal_options, start, variant_option, variant_title
from bakers_dozen.output import InputFile
from bakers_dozen.record import read_game
from sim.text import printable

MOVES_PER_LINE = 10
"""How many moves of a winning line the text output shows."""


def split_moves(text: str) -> list[str]:
    """Moves typed as one text: separated by commas, semicolons or new lines (a move holds a space: ``9H 3>7``)."""
    return [m.strip() for m in text.replace(";", ",").replace("\n", ",").split(",") if m.strip()]


@click.command()
@click.argument("record_file", type=InputFile(), required=False)
@variant_option
@deal_options
@click.option("--moves", "moves_text", default=None,
              help="With --deal or --layout: the moves played, separated by commas, e.g. '9H 3>7, AS 5>F'.")
@click.option("--nodes", type=Bounded(int, 1, MAX_SOLVE_NODES), default=1_000_000, show_default=True,
              help="The solver's node budget per position searched.")
@click.option("--seconds", type=Bounded(float, 0.0, MAX_SOLVE_SECONDS), default=10.0, show_default=True,
              help="The solver's time budget per position searched.")
@click.option("--tt-mb", type=Bounded(float, 0.01, memory_mib), default=64.0, show_default=True,
              help="The solver's transposition table in MiB (allocated once, reused for every position).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (verdicts, losing_move, alternative, ...).")
def analyse(record_file: Any, variant: str, number: int | None, seed: int, source: str, layout_file: Any,
            moves_text: str | None, nodes: int, seconds: float, tt_mb: float, as_json: bool) -> None:
    """Find the move that lost a game: the solver's verdict before every move and after the last.

    RECORD is a `play --json` record; without it, give --deal N or --layout FILE and --moves.
    Prints, for each position, won / lost / unknown (within the budget), the first move after
    which a won position was lost, and a move from the position before it that keeps the game
    won (the first of a winning line). On variants with face-down cards the solver sees them:
    its verdicts are clairvoyant and labelled so.
    """
    from strategies.analyse import analyse_game
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy

    if record_file is not None:
        if number is not None or layout_file is not None or moves_text is not None:
            raise click.UsageError("give either a RECORD or --deal/--layout with --moves, not both")
        record, rules, position = read_game(record_file)
        moves = record["moves"]
        title = f"deal {record['deal']}" if record.get("deal") is not None else "typed layout"
        title += f", strategy {record.get('strategy', '?')}"
    else:
        if moves_text is None:
            raise click.UsageError("missing RECORD (a `play --json` record) or --moves with --deal N or --layout FILE")
        rules, game = start(variant, number, seed, source, layout_file)
        position, moves = game.start, split_moves(moves_text)
        title = f"deal {number}" if number is not None else "typed layout"
    solver = SolverStrategy(nodes=nodes, seconds=seconds, tt_mb=tt_mb)
    check_memory(solver, rules, 1)
    result = analyse_game(rules, position, moves, solver)
    if as_json:
        click.echo(json.dumps({"variant": rules.name, "rules_fingerprint": rules.fingerprint, **result.to_json()}))
        return
    seen = " (clairvoyant: the solver sees the face-down cards)" if result.clairvoyant else ""
    shown = rules.name if record_file is not None else variant_title(variant, rules)
    click.echo(printable(f"# {shown} ({rules.fingerprint}), {title}; solver budget {nodes:,} nodes, {seconds:g} s "
                         f"per position{seen}"))
    for i, verdict in enumerate(result.verdicts):
        move = result.moves[i] if i < len(result.moves) else "(end)"
        mark = "   <- the losing move" if i == result.losing_move else ""
        click.echo(f"{i + 1:4d}. {move:<9} before: {verdict:<7} ({result.how[i]}){mark}")
    click.echo(f"{result.solves} positions searched, {result.nodes:,} nodes, {result.seconds:.2f} s")
    click.echo(_summary(result))


def _summary(result: Any) -> str:
    """One sentence: the losing move and the alternative, or why there is none."""
    v = result.verdicts
    if result.losing_move is not None:
        k = result.losing_move
        line = result.alternative_line
        shown = "  ".join(line[:MOVES_PER_LINE]) + (" ..." if len(line) > MOVES_PER_LINE else "")
        return (f"losing move: {k + 1}. {result.moves[k]} (won before it, lost after it); instead {result.alternative} "
                f"keeps the game won, e.g. by the {len(line)}-move line {shown}")
    if v[-1] == "won":
        return "no losing move: the position at the end of the game is still won"
    if v[0] == "lost":
        return "no losing move: the game was lost from the start"
    return "no losing move found: the budget left positions near the boundary unknown (raise --nodes or --seconds)"
