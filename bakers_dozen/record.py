"""Game records: the JSON that `play --json` writes, and the `verify` verb that checks every claim in one."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from bakers_dozen.output import InputFile
from sim.cards import card_str
from sim.deals import make_deal
from sim.errors import UserError, json_type, quoted
from sim.position import Position, parse_position
from sim.rules import Rules, find_variant, rules_from_mapping
from sim.text import one_line


class RecordError(UserError):
    """A JSON game record that cannot be checked as it stands."""


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
`sim.engine.NO_PROGRESS_LIMIT` counted moves per card home (under 60,000 moves, under
1 MiB of JSON) plus the moves of a proven winning line, which the guard does not count
(at most `sim.engine.MAX_PROVEN_LINE`, about 2 million: under 30 MiB); 64 Mi leaves
room for indentation and long names."""

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
            raise RecordError(f"record's {key!r} is {json_type(value)}; it must be {what}")
    _check_nested(record)
    return record


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
                raise RecordError(f"record's face_down for pile {i + 1} is {quoted(d)}; allowed: 0..{max(len(pile) - 1, 0)} "
                                  f"(the pile holds {len(pile)} cards and its top card is face up)")
    if not all(isinstance(m, str) for m in record["moves"]):
        raise RecordError("record's 'moves' must be a list of move strings such as \"9H 3>7\"")
    if not 0 <= record["cards_home"] <= 52:
        raise RecordError(f"record's cards_home is {record['cards_home']}; allowed: 0..52")
    if record["outcome"] not in OUTCOMES:
        raise RecordError(f"record's outcome {quoted(record['outcome'])} is not one of {', '.join(OUTCOMES)}")
    if record.get("termination", "won") not in TERMINATIONS:
        raise RecordError(f"record's termination {quoted(record['termination'])} is not one of {', '.join(TERMINATIONS)}")
    if record.get("source", "default") not in RECORD_SOURCES:
        raise RecordError(f"record's source {quoted(record['source'])} is not one of {', '.join(RECORD_SOURCES)}")


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
            raise RecordError(f"record's card {quoted(c)} is not one card; write each card as one word such as \"9H\"")
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
        out.append(f"the record's rules_fingerprint {quoted(want)} is not that of its rules ({rules.fingerprint})")
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
        out.append(f"the record claims outcome {quoted(claimed)} but the moves win the game")
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


def read_game(record_file: Any) -> tuple[dict[str, Any], Rules, Position]:
    """A `play --json` record file: the record, its rules and its start position (refused in one line if unreadable)."""
    try:
        text = record_file.read(MAX_RECORD_CHARS + 1)
    except UnicodeDecodeError as exc:
        raise RecordError(f"{record_file.name} is not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    record = load_record(text, record_file.name)
    rules = _record_rules(record)
    return record, rules, _record_start(record, rules)


@click.command()
@click.argument("record_file", type=InputFile())
def verify(record_file: Any) -> None:
    """Replay a JSON game record (from `play --json`) with the independent referee and check every claim.

    Checked: each move's legality, the outcome, the cards home and the termination against the
    replay, the layout, face-down counts and home cards against the deal the record names, and
    the rules fingerprint against the rules. Exit 0: every claim holds; 1: a claim is false
    (one line each); 2: the record cannot be read or checked.
    """
    from sim.referee import replay

    record, rules, start = read_game(record_file)
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
        click.echo(one_line(line if line.startswith("illegal:") else f"mismatch: {line}"))
    if false:
        sys.exit(1)

