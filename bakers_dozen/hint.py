"""`bakers-dozen hint`: the legal moves of the position in front of a player, ranked by their chance of winning.

The position is a typed layout (face-down cards written ``??``) or a deal and the
moves played so far. The ranking itself is `studies.hint.hint_position`; this
verb reads the position, checks the budgets and prints a table (one JSON object
with ``--json``).
"""

from __future__ import annotations

import json
from typing import Any

import click

from bakers_dozen.analyse import MOVES_PER_LINE, split_moves
from bakers_dozen.limits import MAX_SOLVE_NODES, MAX_SOLVE_SECONDS, Bounded, memory_mib
from bakers_dozen.options import console, deal_options, layout_text, table, variant_option, variant_title
from sim.deals import MAX_SEED
from sim.errors import UserError
from sim.text import printable

MAX_SAMPLES = 100_000
"""Completions a move may be scored on: each is a solve, so 100,000 are hours."""


@click.command()
@variant_option
@deal_options
@click.option("--moves", "moves_text", default=None,
              help="With --deal: the moves played so far, separated by commas, e.g. '9H 3>7, AS 5>F'.")
@click.option("--samples", type=Bounded(int, 1, MAX_SAMPLES), default=256, show_default=True,
              help="With cards face down: the most completions of them a move is scored on (the leading moves get "
                   "them all; every completion when there are no more than this).")
@click.option("--nodes", type=Bounded(int, 1, MAX_SOLVE_NODES), default=None,
              help="Node budget of each solve: of a completion after a move (default 20,000), or with every card "
                   "face up of the position after a move (default 100,000).")
@click.option("--seconds", type=Bounded(float, 0.0, MAX_SOLVE_SECONDS, above=True), default=60.0, show_default=True,
              help="Safety cap on the whole hint; the budgets above decide the answer unless it stops them "
                   "(then the output says so).")
@click.option("--strategy-seed", "hint_seed", type=Bounded(int, 0, MAX_SEED), default=0, show_default=True,
              help="Seed of the completions drawn: the same seed gives the same hint.")
@click.option("--tt-mb", type=Bounded(float, 0.01, memory_mib), default=64.0, show_default=True,
              help="The solver's transposition table in MiB (allocated once, reused for every solve).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (moves best first, each with its "
              "verdict or estimate; the winning line in full).")
def hint(variant: str, number: int | None, seed: int, source: str, layout_file: Any, moves_text: str | None,
         samples: int, nodes: int | None, seconds: float, hint_seed: int, tt_mb: float, as_json: bool) -> None:
    """Rank the legal moves of a position by their chance of winning.

    Give the position as --layout FILE (face-down cards written ??) or as --deal N with
    --moves, the moves played so far. With every card face up the answer is exact: the
    solver's verdict on each move (won, with a winning line; lost, by a proof; unknown
    within the budget). With cards face down it is an estimate that never reads them:
    each move's share of won completions of the hidden cards, with its 95% interval.
    """
    from sim.game import Game
    from sim.position import parse_position
    from sim.rules import resolve_variant
    from studies.hint import hint_position

    rules = resolve_variant(variant)
    if layout_file is not None:
        if number is not None:
            raise click.UsageError("give either --deal or --layout, not both")
        if moves_text is not None:
            raise click.UsageError("--moves goes with --deal; a --layout is the position as it stands now")
        position = parse_position(layout_text(layout_file), rules, hidden=True)
        title = "typed layout"
    else:
        if number is None:
            raise click.UsageError("missing --deal N (or --layout FILE)")
        game = Game.from_deal(rules, number, seed, source)
        played = play_moves(game, split_moves(moves_text or ""))
        position = game.position().blanked()  # what the player sees: the face-down cards are never read
        title = f"deal {number}" + (f" after {played} move(s)" if played else "")
    _check_memory(rules, tt_mb)
    result = hint_position(rules, position, samples=samples, nodes=nodes, seconds=seconds, seed=hint_seed,
                           tt_mb=tt_mb)
    if as_json:
        click.echo(json.dumps({"rules_fingerprint": rules.fingerprint, **result.to_json()}))
        return
    click.echo(printable(f"# {variant_title(variant, rules)} ({rules.fingerprint}), {title}; {_how(result)}"))
    console().print(_table(result))
    click.echo(_footer(result))


def play_moves(game: Any, moves: list[str]) -> int:
    """Play ``moves`` on ``game``; an illegal or unreadable one is one line naming it. Returns how many."""
    for k, move in enumerate(moves, start=1):
        try:
            game.play(move)
        except UserError as exc:
            raise type(exc)(f"move {k} ({move}): {exc}") from None
    return len(moves)


def _check_memory(rules: Any, tt_mb: float) -> None:
    """Refuse a table larger than the machine's memory before it is allocated."""
    from strategies.memory import check_memory
    from strategies.solver.strategy import SolverStrategy

    check_memory(SolverStrategy(tt_mb=tt_mb), rules, 1)


def _how(result: Any) -> str:
    """How the ranking was made, in words."""
    b = result.budget
    if result.mode == "exact":
        return f"every card face up: the solver's verdicts, {b['nodes']:,} nodes a move"
    what = ("every completion of them" if result.mode == "enumerated"
            else f"up to {result.completions:,} sampled completions of them a move (seed {b['seed']})")
    return (f"{result.hidden} card(s) face down, never read: won completions over {what}, "
            f"{b['nodes']:,} nodes a solve")


def _table(result: Any) -> Any:
    """The moves, best first."""
    if result.mode == "exact":
        out = table("Moves, best first", {"#": "right", "move": "left", "verdict": "left", "line": "right",
                                          "nodes": "right"})
        for i, m in enumerate(result.moves, start=1):
            out.add_row(str(i), m.move, m.verdict, f"{len(m.line) + 1} moves" if m.verdict == "won" else "",
                        f"{m.nodes:,}")
        return out
    out = table("Moves, best first", {"#": "right", "move": "left", "chance": "right", "95% interval": "right",
                                      "won / samples": "right", "undecided": "right"})
    for i, m in enumerate(result.moves, start=1):
        if not m.samples:
            out.add_row(str(i), m.move, "-", "-", "0 / 0", "-")
            continue
        out.add_row(str(i), m.move, f"{m.rate:.1%}", f"{m.low:.1%}-{m.high:.1%}", f"{m.wins} / {m.samples}",
                    str(m.undecided))
    return out


def _footer(result: Any) -> str:
    """The winning line, or what the estimate means, and the work done."""
    lines = []
    if not result.moves:
        lines.append("no legal move: the game is over")
    elif result.mode == "exact":
        if result.line:
            shown = "  ".join(result.line[:MOVES_PER_LINE]) + (" ..." if len(result.line) > MOVES_PER_LINE else "")
            lines.append(f"winning line ({len(result.line)} moves): {shown}")
        else:
            lines.append("no move is known to win within the budget (raise --nodes)")
    else:
        lines.append("chance: the share of completions won after the move by a solver that sees them (an upper bound "
                     "on play that does not); undecided ones count as not won")
    lines.append(f"{result.nodes:,} nodes, {result.seconds:.2f} s"
                 + ("; stopped by --seconds before the budget was spent: the ranking depends on this machine's speed"
                    if result.clock else ""))
    return "\n".join(lines)
