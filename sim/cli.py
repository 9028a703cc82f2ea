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
                     moves: list[str], error: str | None = None, termination: str | None = None) -> dict[str, Any]:
    """The JSON form of one played deal, complete enough for `verify` to replay it and check every claim."""
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
        **({"termination": termination} if termination else {}),
        **({"error": error} if error else {}),
    }


# --- verify: read a record, then check each of its claims ------------------------

MAX_RECORD_CHARS = 64 * 2**20
"""The largest record `verify` reads (characters). A game ends after at most
`sim.engine.NO_PROGRESS_LIMIT` moves per card home: under 60,000 moves, under 1 MiB
of JSON; 64 Mi leaves room for indentation and long names."""

_RECORD_FIELDS: dict[str, tuple[tuple[type, ...], bool, str]] = {
    # field: (JSON types allowed, required, what it is)
    "variant": ((str,), True, "the variant's name"),
    "rules": ((dict,), False, "an object of rule parameters"),
    "rules_fingerprint": ((str,), False, "the rules' fingerprint"),
    "deal": ((int, type(None)), False, "a deal number or null"),
    "seed": ((int,), False, "a whole number"),
    "source": ((str,), False, "default, pysol or layout"),
    "strategy": ((str,), False, "the strategy's label"),
    "layout": ((list,), True, "a list of piles, each a list of cards such as \"9H\""),
    "face_down": ((list,), False, "a list of face-down counts, one per pile"),
    "home": ((list,), False, "a list of up to 4 foundations, each a list of cards"),
    "outcome": ((str,), True, "won, lost, unknown or error"),
    "cards_home": ((int,), True, "a whole number 0..52"),
    "moves": ((list,), True, "a list of move strings such as \"9H 3>7\""),
    "termination": ((str,), False, "why the game ended"),
    "error": ((str, type(None)), False, "the strategy's error text"),
}
RECORD_SOURCES = ("default", "pysol", "layout")


def load_record(text: str, name: str) -> dict[str, Any]:
    """Parse a record's JSON text and check every field's type and range; raise `RecordError` in one line otherwise.

    Refused here (exit 2, the record cannot be checked): text that is not JSON, nested too
    deeply for the parser, numbers too long to convert, NaN/Infinity, a missing field or
    one of the wrong type, and values outside what a record can hold.
    """
    if len(text) > MAX_RECORD_CHARS:
        raise RecordError(f"{name} is larger than {MAX_RECORD_CHARS:,} characters; no game record is that long")

    def refuse_constant(word: str) -> None:
        raise RecordError(f"{name} holds {word}, which is not a JSON number; records hold whole numbers only")

    try:
        record = json.loads(text, parse_constant=refuse_constant)
    except RecursionError:
        raise RecordError(f"{name} is nested too deeply to be a game record") from None
    except RecordError:
        raise
    except ValueError as exc:  # JSONDecodeError, and integers longer than Python converts
        raise RecordError(f"{name} is not JSON: {exc}") from None
    if not isinstance(record, dict):
        raise RecordError(f"{name} must hold one JSON object (a record from `play --json`)")
    for key, (types, required, what) in _RECORD_FIELDS.items():
        if key not in record:
            if required:
                raise RecordError(f"record has no {key!r} field; it must hold {what}")
            continue
        value = record[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise RecordError(f"record's {key!r} is {_json_type(value)}; it must be {what}")
    _check_nested(record)
    return record


def _json_type(value: Any) -> str:
    """The JSON name of a parsed value's type, for messages."""
    names = {bool: "true/false", int: "a number", float: "a number with a fraction", str: "a string", list: "a list",
             dict: "an object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def _check_nested(record: dict[str, Any]) -> None:
    """The element types and ranges inside the list fields, and the ranges of the number fields."""
    from sim.engine import OUTCOMES, TERMINATIONS

    def cards(value: Any, where: str) -> None:
        if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
            raise RecordError(f"record's {where} must be a list of cards such as \"9H\"")

    for i, pile in enumerate(record["layout"]):
        cards(pile, f"layout pile {i + 1}")
    home = record.get("home", [])
    if len(home) > 4:
        raise RecordError(f"record's 'home' lists {len(home)} foundations; there are at most 4")
    for i, f in enumerate(home):
        cards(f, f"home foundation {i + 1}")
    downs = record.get("face_down")
    if downs is not None:
        if len(downs) != len(record["layout"]):
            raise RecordError(f"record's 'face_down' has {len(downs)} entries for {len(record['layout'])} piles")
        for i, (d, pile) in enumerate(zip(downs, record["layout"], strict=True)):
            if not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= max(len(pile) - 1, 0):
                raise RecordError(f"record's face_down for pile {i + 1} is {d!r}; allowed: 0..{max(len(pile) - 1, 0)} "
                                  f"(the pile holds {len(pile)} cards and its top card is face up)")
    if not all(isinstance(m, str) for m in record["moves"]):
        raise RecordError("record's 'moves' must be a list of move strings such as \"9H 3>7\"")
    if not 0 <= record["cards_home"] <= 52:
        raise RecordError(f"record's cards_home is {record['cards_home']}; allowed: 0..52")
    if record["outcome"] not in OUTCOMES:
        raise RecordError(f"record's outcome {record['outcome']!r} is not one of {', '.join(OUTCOMES)}")
    if record.get("termination", "won") not in TERMINATIONS:
        raise RecordError(f"record's termination {record['termination']!r} is not one of {', '.join(TERMINATIONS)}")
    if record.get("source", "default") not in RECORD_SOURCES:
        raise RecordError(f"record's source {record['source']!r} is not one of {', '.join(RECORD_SOURCES)}")


def _record_rules(record: dict[str, Any]) -> Rules:
    """The rules a (type-checked) record was played under: its 'rules' object, else the preset it names."""
    name = record["variant"]
    if "rules" in record:
        return rules_from_mapping({**record["rules"], "name": name}, default_name=name)
    return find_variant(name)


def _pile_text(cards: list[str]) -> list[str]:
    """Each card of a record in its canonical text (so that no string can add words or lines to the layout text)."""
    from sim.cards import parse_card

    out = []
    for c in cards:
        if c.split() != [c]:
            raise RecordError(f"record's card {c!r} is not one card; write each card as one word such as \"9H\"")
        out.append(card_str(parse_card(c)))
    return out


def _record_start(record: dict[str, Any], rules: Rules) -> Position:
    """The start position the record claims (its layout, face-down counts and home cards), checked against the rules."""
    layout = [_pile_text(p) for p in record["layout"]]
    downs = record.get("face_down") or [min(rules.face_down, max(len(p) - 1, 0)) for p in layout]
    lines = [" ".join(f"<{c}>" if i < d else c for i, c in enumerate(p)) or "-" for p, d in zip(layout, downs, strict=True)]
    home = [_pile_text(f) for f in record.get("home", [])]
    while home and not home[-1]:
        home.pop()
    if home:
        lines.append("home: " + " / ".join(" ".join(f) or "-" for f in home))
    return parse_position("\n".join(lines), rules)


def _claimed_deal(record: dict[str, Any], rules: Rules) -> tuple[str, Position] | None:
    """The deal a record names (a description and its position), or None for a typed layout."""
    number, source = record.get("deal"), record.get("source", "default")
    if number is None or source == "layout":
        return None
    seed = record.get("seed", 0)
    return f"deal {number} (seed {seed}, source {source}) of {rules.name}", make_deal(rules, number, seed, source).position


def _start_mismatches(record: dict[str, Any], rules: Rules, start: Position) -> list[str]:
    """The record's claims about its start that are false: the rules fingerprint, and the layout,
    face-down counts and home cards of the deal it names."""
    out = []
    want = record.get("rules_fingerprint")
    if want is not None and want != rules.fingerprint:
        out.append(f"the record's rules_fingerprint {want!r} is not that of its rules ({rules.fingerprint})")
    claimed = _claimed_deal(record, rules)
    if claimed is not None:
        what, dealt = claimed
        for i, (a, b) in enumerate(zip(start.piles, dealt.piles, strict=True)):
            if a != b:
                out.append(f"the record's layout is not {what}: pile {i + 1} is {' '.join(map(card_str, a)) or '-'}, "
                           f"the deal has {' '.join(map(card_str, b)) or '-'}")
        if "face_down" in record and start.face_down != dealt.face_down:
            out.append(f"the record's face_down {list(start.face_down)} is not that of {what} {list(dealt.face_down)}")
        if start.foundations != dealt.foundations:
            out.append(f"the record's home cards are not those {what} starts with")
    return out


def _play_mismatches(record: dict[str, Any], rules: Rules, verdict: Any) -> list[str]:
    """The record's claims about how the game ended that the referee's replay contradicts."""
    from sim.engine import OUTCOMES, TERMINATION_OUTCOME, TERMINATIONS
    from sim.referee import legal_moves

    out = []
    claimed, won = record["outcome"], verdict.won
    if claimed == "won" and not won:
        out.append(f"the record claims a win but the moves do not win ({verdict.cards_home}/52 cards home)")
    if claimed != "won" and won:
        out.append(f"the record claims outcome {claimed!r} but the moves win the game")
    if record["cards_home"] != verdict.cards_home:
        out.append(f"the record claims {record['cards_home']} cards home; the moves leave {verdict.cards_home} home")
    termination = record.get("termination")
    if termination is not None:
        counts_as = OUTCOMES[TERMINATION_OUTCOME[TERMINATIONS.index(termination)]]
        if counts_as != claimed:
            out.append(f"the record's termination {termination!r} counts as outcome {counts_as!r}, not {claimed!r}")
        if (termination == "won") != won:
            out.append(f"the record's termination is {termination!r} but the game is " + ("won" if won else "not won"))
        left = len(legal_moves(rules, verdict.final)) if termination == "no_moves" and not won else 0
        if left:
            out.append(f"the record's termination is 'no_moves' but {left} legal move(s) remain at the end")
    return out


@main.command()
@click.argument("record_file", type=click.File("r", encoding="utf-8"))
def verify(record_file: Any) -> None:
    """Replay a JSON game record (from `play --json`) with the independent referee and check every claim.

    Checked: each move's legality, the outcome, the cards home and the termination against the
    replay, the layout, face-down counts and home cards against the deal the record names, and
    the rules fingerprint against the rules. Exit 0: every claim holds; 1: a claim is false
    (one line each); 2: the record cannot be read or checked.
    """
    from sim.referee import replay

    try:
        text = record_file.read(MAX_RECORD_CHARS + 1)
    except UnicodeDecodeError as exc:
        raise RecordError(f"{record_file.name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    record = load_record(text, record_file.name)
    rules = _record_rules(record)
    start = _record_start(record, rules)
    false = _start_mismatches(record, rules, start)
    try:
        verdict = replay(rules, start, record["moves"])
    except ValueError as exc:  # replay's one refusal: a start that does not fit the rules
        raise RecordError(f"record's start position cannot be played under its rules: {exc}") from None
    if not verdict.legal:
        false.append(f"illegal: {verdict.reason}")
    else:
        click.echo(f"legal: {verdict.moves_checked} moves, {verdict.cards_home}/52 cards home, "
                   + ("the game is won" if verdict.won else "the game is not won"))
        false.extend(_play_mismatches(record, rules, verdict))
    for line in false:
        click.echo(line if line.startswith("illegal:") else f"mismatch: {line}")
    if false:
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
