"""The verbs that look at the game: list variants and strategies, print a deal, play one deal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from bakers_dozen.options import console, deal_options, start, table, variant_option, variant_title
from bakers_dozen.output import OutputFile
from bakers_dozen.record import game_record_json
from sim.deals import MAX_SEED, check_strategy_seed
from sim.rules import VARIANTS
from sim.text import one_line, printable, text_console

if TYPE_CHECKING:
    from sim.game import Game


@click.command()
def variants() -> None:
    """List the preset variants."""
    out = table("Variants (bakers-dozen is the default)",
                dict.fromkeys(("name", "aliases", "fingerprint", "description"), "left"))
    for v in VARIANTS:
        out.add_row(v.name, ", ".join(v.aliases), v.rules.fingerprint, v.rules.description)
    console().print(out)


@click.command()
@variant_option
@deal_options
@click.option("--reveal", is_flag=True, help="Show face-down cards as <4C> instead of ?? (in --svg: face up on grey).")
@click.option("--svg", "svg_file", type=OutputFile(), default=None,
              help="Also draw the deal as an SVG picture into FILE.")
def deal(variant: str, number: int | None, seed: int, source: str, layout_file: Any, reveal: bool, svg_file: Any) -> None:
    """Print a deal: one pile per line, bottom to top."""
    rules, game = start(variant, number, seed, source, layout_file)
    where = f"deal {number}, seed {seed}, source {source}" if number is not None else "typed layout"
    if svg_file is not None:
        svg_file.write(game.svg(reveal=reveal, caption=f"{rules.name}, {where}") + "\n")
    click.echo(printable(f"# {variant_title(variant, rules)} ({rules.fingerprint}), {where}"))
    click.echo(game.start.to_text(reveal=reveal), nl=False)


@click.command()
def strategies() -> None:
    """List the strategies and their parameters."""
    from strategies import available, broken_plugins

    out = table("Strategies (name:key=value,... to set parameters)",
                dict.fromkeys(("name", "version", "parameters (default; allowed)", "description"), "left"))
    for name, cls in available().items():
        params = "\n".join(f"{k}={p.default}: {p.doc} ({p.allowed})" for k, p in cls.PARAMETERS.items()) or "-"
        out.add_row(name + (" (clairvoyant)" if cls.peeks else ""), cls.version, params, cls.description)
    console().print(out)
    for problem in broken_plugins():
        click.echo(f"bakers-dozen: warning: {one_line(problem)}", err=True)


@click.command()
@variant_option
@deal_options
@click.option("--strategy", "-s", "strategy_spec", default="greedy", show_default=True,
              help="NAME, NAME:key=value,..., or package.module:ClassName[:key=value,...].")
@click.option("--strategy-seed", type=int, default=0, show_default=True,
              help=f"Seed of the strategy's random generator, 0..{MAX_SEED}.")
@click.option("--tier", type=click.Choice(["auto", "python", "compiled"]), default="auto", show_default=True,
              help="Play through the Python interface or the compiled policy (auto: compiled when there is one).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON record (see `bakers-dozen verify`).")
def play(variant: str, number: int | None, seed: int, source: str, layout_file: Any, strategy_spec: str,
         strategy_seed: int, tier: str, as_json: bool) -> None:
    """Play one deal with a strategy and print the moves and the outcome."""
    from strategies import DealInfo, StrategyError, compiled_policy, load_strategy
    from strategies.memory import check_memory
    from strategies.play import play_compiled, play_python

    check_strategy_seed(strategy_seed)
    strategy = load_strategy(strategy_spec)
    rules, game = start(variant, number, seed, source, layout_file)
    check_memory(strategy, rules, 1)
    info = DealInfo(rules, number or 0, seed, source if number is not None else "layout")
    policy = None if tier == "python" else compiled_policy(strategy, rules)
    if tier == "compiled" and policy is None:
        raise StrategyError(f"strategy {strategy.name!r} has no compiled tier; allowed tiers for it: python, auto")
    label = strategy.label_for(rules)
    with _progress(f"{rules.name}, {'deal ' + str(number) if number else 'typed layout'}, {label}"):
        if policy is None:
            record = play_python(strategy, game, info, strategy_seed)
        else:
            record = _play_compiled_plugin(play_compiled, strategy, game, info, strategy_seed)
    numbered = rules.foundation != "suit"
    move_texts = [m.text(numbered) for m in record.moves]
    if as_json:
        click.echo(json.dumps(game_record_json(rules, game.start, info, label, record.outcome,
                                               record.cards_home, move_texts, record.error)))
        return
    click.echo(printable(f"# {variant_title(variant, rules)} ({rules.fingerprint}), "
                         f"{'deal ' + str(number) if number else 'typed layout'}, strategy {label}"))
    for k in range(0, len(move_texts), 10):
        click.echo(f"{k + 1:4d}. " + "  ".join(move_texts[k : k + 10]))
    click.echo(f"outcome: {record.outcome} ({ended(record.termination)}), cards home: {record.cards_home}/52, "
               f"moves: {len(move_texts)}" + (f", error: {one_line(record.error)}" if record.error else ""))


def ended(termination: str | None) -> str:
    """Why a game ended, in words, from its termination (`sim.engine.TERMINATIONS`)."""
    from sim.engine import NO_PROGRESS_LIMIT

    return {"won": "every card home", "no_moves": "no legal move left",
            "no_progress": f"no card home or turned up in {NO_PROGRESS_LIMIT:,} moves",
            "resigned": "the strategy resigned", "undecided": "the strategy gave up without a verdict",
            "timeout": "a time limit ran out (the deal's, or the strategy's own cap)", "illegal": "the strategy chose an illegal move",
            "raised": "the strategy raised an error"}.get(termination or "", "why it ended was not recorded")


def _play_compiled_plugin(play: Callable[..., Any], strategy: Any, game: Game, info: Any, strategy_seed: int) -> Any:
    """``play(...)``; a plug-in's compiled policy that numba cannot compile is the plug-in's error, in one line."""
    from numba.core.errors import NumbaError

    from strategies import is_builtin, uncompilable

    try:
        return play(strategy, game, info, strategy_seed)
    except NumbaError as exc:
        if is_builtin(strategy):
            raise
        raise uncompilable(strategy, exc) from None



@contextmanager
def _progress(label: str) -> Iterator[None]:
    """On a terminal, a spinner with the time played so far on standard error while a deal is played (it
    keeps turning during a long compiled game, whose loop releases the GIL); it vanishes when the deal ends."""
    import sys

    if not sys.stderr.isatty():
        yield
        return
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    with Progress(SpinnerColumn(), TextColumn(f"playing {printable(label)}", markup=False), TimeElapsedColumn(),
                  console=text_console(stderr=True), transient=True) as bar:
        bar.add_task("play", total=None)
        yield
