"""The `bakers-dozen` command.

Every verb reports bad input as one line naming what was wrong and what is
allowed, with exit code 2 and no traceback.
"""

from __future__ import annotations

import json
import sys
import traceback
from collections.abc import Callable
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from sim import __version__
from sim.cards import card_str
from sim.deals import MAX_DEAL, MAX_SEED, PYSOL_MAX_DEAL, check_strategy_seed, make_deal
from sim.errors import UserError
from sim.game import Game
from sim.position import LayoutError, Position, parse_position
from sim.rules import VARIANTS, Rules, find_variant, resolve_variant, rules_from_mapping

USER_ERRORS = (UserError,)
"""What the command reports as one line and exit code 2; every other exception is a bug."""
EXIT_BAD_INPUT = 2
EXIT_BUG = 1
EXIT_ABORTED = 1
"""A Ctrl-C outside the verbs that handle it themselves: click's "Aborted!" and its exit code."""
MAX_LAYOUT_CHARS = 1 << 20
"""A layout is 52 cards on a few lines; far longer text is refused before it is parsed."""


class RecordError(UserError):
    """A JSON game record that cannot be checked as it stands."""


class _Group(click.Group):
    """Bad input in one line and exit code 2; anything else is a bug, shown with its traceback and exit code 1.

    Bad input is a `sim.errors.UserError` or click's own usage errors (an unknown
    option, a value of the wrong type). The verbs' own exit codes (``sys.exit``)
    pass through. Click runs in non-standalone mode here so that its usage errors
    reach this method; it then returns ``--help``'s exit code, and a verb's return
    value (verbs return None) counts as exit 0.
    """

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_ABORTED)
        except click.ClickException as exc:
            _one_line_error(exc.format_message())
            sys.exit(EXIT_BAD_INPUT)
        except USER_ERRORS as exc:
            _one_line_error(str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except (SystemExit, KeyboardInterrupt):
            raise
        except BaseException:  # noqa: BLE001 (a bug: say so, with the traceback)
            traceback.print_exc()
            click.echo(f"bakers-dozen: this is a bug in bakers-dozen {__version__}, not in your input; please report it "
                       "with the command line and the traceback above", err=True)
            sys.exit(EXIT_BUG)
        sys.exit(code if isinstance(code, int) else 0)


def _one_line_error(message: str) -> None:
    """``bakers-dozen: error: MESSAGE`` on standard error, the message folded onto one line."""
    click.echo("bakers-dozen: error: " + " ".join(message.split()), err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bakers-dozen")
def main() -> None:
    """Simulate Baker's Dozen and its family: deals, strategies, win rates."""


def _console() -> Console:
    """Rich output; wide enough for the tables when printing to a file or pipe."""
    return Console() if sys.stdout.isatty() else Console(width=160)


# --- shared options -----------------------------------------------------------

def _variant_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--variant", "-v", default="bakers-dozen", show_default=True,
        help="A preset name or alias (see `bakers-dozen variants`), or a variant file: text ending in .toml or "
             "holding a path separator (a preset name always means the preset).",
    )(f)


def _deal_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--layout", "layout_file", type=click.File("r"), default=None,
                     help="Read the position from FILE ('-' for standard input) instead of dealing.")(f)
    f = click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
                     help="Deal numbering: this toolkit's, or PySolFC's (for cross-checks).")(f)
    f = click.option("--seed", type=int, default=0, show_default=True,
                     help=f"Deal seed, 0..{MAX_SEED} (default source; pysol takes 0).")(f)
    f = click.option("--deal", "-d", "number", type=int, default=None,
                     help=f"Deal number, 1..{MAX_DEAL} (pysol: 1..{PYSOL_MAX_DEAL}).")(f)
    return f


def _start(variant: str, number: int | None, seed: int, source: str, layout_file: Any) -> tuple[Rules, Game]:
    """The rules and the game a verb plays: a numbered deal, or a layout read from a file."""
    rules = resolve_variant(variant)
    if layout_file is not None:
        if number is not None:
            raise click.UsageError("give either --deal or --layout, not both")
        return rules, Game(rules, parse_position(_layout_text(layout_file), rules))
    if number is None:
        raise click.UsageError("missing --deal N (or --layout FILE)")
    return rules, Game.from_deal(rules, number, seed, source)


def _layout_text(layout_file: Any) -> str:
    """The text of ``--layout FILE``, refused in one line when it is not UTF-8 text or too long to be a layout."""
    name = getattr(layout_file, "name", "-")
    try:
        text = layout_file.read(MAX_LAYOUT_CHARS + 1)
    except UnicodeDecodeError as exc:
        raise LayoutError(f"layout file {name!r} is not UTF-8 text (byte {exc.start}); a layout is text, one pile a line") from None
    except OSError as exc:
        raise LayoutError(f"cannot read layout file {name!r}: {exc.strerror or exc}") from None
    if len(text) > MAX_LAYOUT_CHARS:
        raise LayoutError(f"layout file {name!r} is longer than {MAX_LAYOUT_CHARS:,} characters; a layout is a few lines")
    return text


# --- verbs --------------------------------------------------------------------

@main.command()
def variants() -> None:
    """List the preset variants."""
    table = Table(title="Variants (bakers-dozen is the default)")
    for col in ("name", "aliases", "fingerprint", "description"):
        table.add_column(col)
    for v in VARIANTS:
        table.add_row(v.name, ", ".join(v.aliases), v.rules.fingerprint, v.rules.description)
    _console().print(table)


@main.command()
@_variant_option
@_deal_options
@click.option("--reveal", is_flag=True, help="Show face-down cards as <4C> instead of ??.")
def deal(variant: str, number: int | None, seed: int, source: str, layout_file: Any, reveal: bool) -> None:
    """Print a deal: one pile per line, bottom to top."""
    rules, game = _start(variant, number, seed, source, layout_file)
    where = f"deal {number}, seed {seed}, source {source}" if number is not None else "typed layout"
    click.echo(f"# {rules.name} ({rules.fingerprint}), {where}")
    click.echo(game.start.to_text(reveal=reveal), nl=False)


@main.command()
def strategies() -> None:
    """List the strategies and their parameters."""
    from strategies import available, broken_plugins

    table = Table(title="Strategies (name:key=value,... to set parameters)")
    for col in ("name", "version", "parameters (default; allowed)", "description"):
        table.add_column(col)
    for name, cls in available().items():
        params = "\n".join(f"{k}={p.default}: {p.doc} ({p.allowed})" for k, p in cls.PARAMETERS.items()) or "-"
        table.add_row(name + (" (clairvoyant)" if cls.peeks else ""), cls.version, params, cls.description)
    _console().print(table)
    for problem in broken_plugins():
        click.echo(f"bakers-dozen: warning: {problem}", err=True)


@main.command()
@_variant_option
@_deal_options
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
    from sim.play import play_compiled, play_python
    from strategies import DealInfo, StrategyError, compiled_policy, load_strategy

    check_strategy_seed(strategy_seed)
    strategy = load_strategy(strategy_spec)
    rules, game = _start(variant, number, seed, source, layout_file)
    info = DealInfo(rules, number or 0, seed, source if number is not None else "layout")
    policy = None if tier == "python" else compiled_policy(strategy, rules)
    if tier == "compiled" and policy is None:
        raise StrategyError(f"strategy {strategy.name!r} has no compiled tier; allowed tiers for it: python, auto")
    if policy is None:
        record = play_python(strategy, game, info, strategy_seed)
    else:
        record = _play_compiled_plugin(play_compiled, strategy, game, info, strategy_seed)
    numbered = rules.foundation != "suit"
    move_texts = [m.text(numbered) for m in record.moves]
    if as_json:
        click.echo(json.dumps(game_record_json(rules, game.start, info, strategy.label, record.outcome,
                                               record.cards_home, move_texts, record.error)))
        return
    click.echo(f"# {rules.name} ({rules.fingerprint}), {'deal ' + str(number) if number else 'typed layout'}, "
               f"strategy {strategy.label}")
    for k in range(0, len(move_texts), 10):
        click.echo(f"{k + 1:4d}. " + "  ".join(move_texts[k : k + 10]))
    click.echo(f"outcome: {record.outcome}, cards home: {record.cards_home}/52, moves: {len(move_texts)}"
               + (f", error: {record.error}" if record.error else ""))


def _play_compiled_plugin(play: Callable[..., Any], strategy: Any, game: Game, info: Any, strategy_seed: int) -> Any:
    """``play(...)``; a plug-in's compiled policy that numba cannot compile is the plug-in's error, in one line."""
    from numba.core.errors import NumbaError

    from strategies import StrategyError, is_builtin

    try:
        return play(strategy, game, info, strategy_seed)
    except NumbaError as exc:
        if is_builtin(strategy):
            raise
        reasons = [line.strip() for line in str(exc).splitlines() if line.strip() and not line.startswith(("Failed in", "During"))]
        reason = reasons[0] if reasons else type(exc).__name__
        raise StrategyError(f"strategy {strategy.name!r}: its compiled policy does not compile: {reason}") from None


def game_record_json(rules: Rules, start: Position, info: Any, strategy: str, outcome: str, cards_home: int,
                     moves: list[str], error: str | None = None) -> dict[str, Any]:
    """The JSON form of one played deal, complete enough for `verify` to replay it."""
    return {
        "variant": rules.name,
        "rules_fingerprint": rules.fingerprint,
        "rules": rules.parameters(),
        "deal": info.number if info.source != "layout" else None,
        "seed": info.seed,
        "source": info.source,
        "strategy": strategy,
        "layout": [[card_str(c) for c in pile] for pile in start.piles],
        "face_down": list(start.face_down),
        "home": [[card_str(c) for c in f] for f in start.foundations],
        "outcome": outcome,
        "cards_home": cards_home,
        "moves": moves,
        **({"error": error} if error else {}),
    }


def _record_rules(record: dict[str, Any]) -> Rules:
    name = record.get("variant")
    if not isinstance(name, str):
        raise RecordError("record has no 'variant' name")
    if isinstance(record.get("rules"), dict):
        rules = rules_from_mapping({**record["rules"], "name": name}, default_name=name)
    else:
        rules = find_variant(name)
    want = record.get("rules_fingerprint")
    if want is not None and want != rules.fingerprint:
        raise RecordError(f"record's rules_fingerprint {want!r} does not match the rules of {name!r} ({rules.fingerprint})")
    return rules


def _record_start(record: dict[str, Any], rules: Rules) -> Position:
    layout = record.get("layout")
    if not isinstance(layout, list) or not all(isinstance(p, list) for p in layout):
        raise RecordError("record's 'layout' must be a list of piles, each a list of cards such as \"9H\"")
    downs = record.get("face_down") or [min(rules.face_down, max(len(p) - 1, 0)) for p in layout]
    if len(downs) != len(layout):
        raise RecordError(f"record's 'face_down' has {len(downs)} entries for {len(layout)} piles")
    lines = [" ".join(f"<{c}>" if i < d else str(c) for i, c in enumerate(p)) or "-" for p, d in zip(layout, downs, strict=True)]
    home = [f for f in record.get("home") or [] if f]
    if home:
        lines.append("home: " + " / ".join(" ".join(map(str, f)) for f in home))
    start = parse_position("\n".join(lines), rules)
    number, source = record.get("deal"), record.get("source", "default")
    if number is not None and source != "layout":
        dealt = make_deal(rules, int(number), int(record.get("seed", 0)), source).position
        if dealt != start:
            raise RecordError(f"record's layout is not deal {number} (seed {record.get('seed', 0)}, source {source}) of {rules.name}")
    return start


@main.command()
@click.argument("record_file", type=click.File("r"))
def verify(record_file: Any) -> None:
    """Replay a JSON game record (from `play --json`) with the independent referee."""
    from sim.referee import replay

    try:
        record = json.load(record_file)
    except json.JSONDecodeError as exc:
        raise RecordError(f"{record_file.name} is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{record_file.name} must hold one JSON object (a record from `play --json`)")
    rules = _record_rules(record)
    start = _record_start(record, rules)
    moves = record.get("moves")
    if not isinstance(moves, list) or not all(isinstance(m, str) for m in moves):
        raise RecordError("record's 'moves' must be a list of move strings such as \"9H 3>7\"")
    verdict = replay(rules, start, moves)
    if not verdict.legal:
        click.echo(f"illegal: {verdict.reason}")
        sys.exit(1)
    claimed = record.get("outcome")
    click.echo(f"legal: {verdict.moves_checked} moves, {verdict.cards_home}/52 cards home, "
               + ("the game is won" if verdict.won else "the game is not won"))
    if claimed == "won" and not verdict.won:
        click.echo("mismatch: the record claims a win but the moves do not win")
        sys.exit(1)


from sim.cli_report import compare, demo, report, tournament  # noqa: E402

for _command in (compare, tournament, report, demo):
    main.add_command(_command)


from sim.cli_simulate import simulate  # noqa: E402

main.add_command(simulate)


from sim.cli_solve import solve  # noqa: E402

main.add_command(solve)

if __name__ == "__main__":  # pragma: no cover
    main()
