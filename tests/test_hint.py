"""`hint`: the legal moves of a position ranked by their chance of winning, exact with every card face up and an
honest estimate (that never reads a face-down card) otherwise."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from bakers_dozen import api
from bakers_dozen.cli import main
from sim.errors import UserError
from sim.game import Game
from sim.position import LayoutError, Position, parse_position
from sim.rules import find_variant

SUITS = "CDHS"
RANKS = "A23456789TJQK"


def home(clubs: int, diamonds: int, hearts: int, spades: int) -> str:
    """A ``home:`` line with each suit's foundation up to the given count of cards."""
    return "home: " + " / ".join(" ".join(RANKS[r] + s for r in range(n)) for s, n in zip(SUITS, (clubs, diamonds, hearts, spades),
                                                                                            strict=True))


def layout(*piles: str, foundations: str) -> str:
    return "\n".join([*piles, *["-"] * (13 - len(piles)), foundations]) + "\n"


# Six cards left: TS under QH, a lone JS, QS under KH, KS. JS onto QH buries TS, which JS needs home first, and no
# other queen is free for JS to move to: a loss the solver proves at once. Every other move wins.
ENDGAME = layout("TS QH", "JS", "QS KH", "KS", foundations=home(13, 13, 11, 9))
# One card from home: the only move wins at once.
LAST_CARD = layout("KS", foundations=home(13, 13, 13, 12))
SMALL = {"samples": 16, "nodes": 2000}
"""A budget small enough for a test, on face-down layouts."""


def bakers_dozen_hint(text: str, **budget):
    return api.hint(text, "bakers-dozen", **budget)


def test_the_move_that_wins_is_first_and_its_line_wins():
    h = bakers_dozen_hint(LAST_CARD)
    assert h.mode == "exact" and [m.move for m in h.moves] == ["KS 1>F"]
    assert h.best.verdict == "won" and h.line == ("KS 1>F",)

    h = bakers_dozen_hint(ENDGAME)
    assert h.best.verdict == "won" and h.line[0] == h.best.move
    game = Game(find_variant("bakers-dozen"), parse_position(ENDGAME, find_variant("bakers-dozen")))
    game.replay(h.line)
    assert game.is_won


def test_a_move_that_loses_by_a_proof_is_shown_lost_and_ranked_last():
    h = bakers_dozen_hint(ENDGAME)
    verdicts = {m.move: m.verdict for m in h.moves}
    assert verdicts.pop("JS 2>1") == "lost" and set(verdicts.values()) == {"won"}
    assert h.moves[-1].move == "JS 2>1" and h.moves[-1].line == ()


def test_a_dick_layout_with_hidden_cards_is_answered_and_ranked():
    rules = find_variant("dick-1883")
    text = str(Game.from_deal(rules, 3))
    assert text.count("??") == 39
    h = api.hint(text, "dick-1883", **SMALL)
    assert h.mode == "sampled" and h.hidden == 39 and h.completions == 16
    assert len(h.moves) == len(Game.from_deal(rules, 3).legal_moves())
    assert all(m.verdict is None and m.samples == 16 and 0 <= m.low <= m.rate <= m.high <= 1 for m in h.moves)
    assert [m.rate for m in h.moves] == sorted((m.rate for m in h.moves), reverse=True)
    assert sum(m.nodes for m in h.moves) == h.nodes > 0


def test_a_few_hidden_cards_are_enumerated_and_the_leaders_scored_on_every_completion():
    rules = find_variant("dick-1883")
    p = Game.from_deal(rules, 1).position()
    few = Position(p.piles, (0,) * 12 + (3,), p.foundations)  # KC QC 2C face down under QD: kings to the bottom
    h = api.hint(few.to_text(), "dick-1883", samples=16, nodes=2000)
    assert h.mode == "enumerated" and h.hidden == 3 and h.completions == 6
    assert h.moves[0].samples == 6 and h.moves[0].low == h.moves[0].rate


def test_a_count_of_question_marks_that_is_not_the_unseen_cards_is_one_line():
    text = str(Game.from_deal(find_variant("dick-1883"), 1)).replace("?? ?? ?? TS", "?? ?? TS", 1)
    with pytest.raises(LayoutError, match="38 '[?][?]' but 39 card"):
        parse_position(text, find_variant("dick-1883"), hidden=True)
    with pytest.raises(LayoutError, match="name every card"):
        parse_position(str(Game.from_deal(find_variant("dick-1883"), 1)), find_variant("dick-1883"))


def test_two_tables_that_differ_only_in_their_face_down_cards_get_the_same_hint():
    rules = find_variant("dick-1883")
    game = Game.from_deal(rules, 2)
    game.replay(["TC 1>11"])
    p = game.position()
    piles = [list(pile) for pile in p.piles]
    piles[1][0], piles[12][2] = piles[12][2], piles[1][0]  # two face-down cards of different piles trade places
    other = Game(rules, Position(tuple(map(tuple, piles)), p.face_down, p.foundations))
    assert other.position() != p
    first, second = api.hint(game, **SMALL).to_json(), api.hint(other, **SMALL).to_json()
    first.pop("seconds"), second.pop("seconds")
    assert first == second


def test_the_same_seed_gives_the_same_hint():
    text = str(Game.from_deal(find_variant("dick-1883"), 4))
    runs = [api.hint(text, "dick-1883", seed=7, **SMALL).to_json() for _ in range(2)]
    for run in runs:
        run.pop("seconds")
    assert runs[0] == runs[1] and runs[0]["budget"]["seed"] == 7


def test_the_command_prints_one_json_object(tmp_path):
    path = tmp_path / "endgame.txt"
    path.write_text(ENDGAME, encoding="utf-8")
    r = CliRunner().invoke(main, ["hint", "--layout", str(path), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert {"variant", "rules_fingerprint", "mode", "hidden", "completions", "moves", "line", "nodes", "seconds",
            "clock", "budget"} <= set(out)
    assert out["mode"] == "exact" and out["line"][0] == out["moves"][0]["move"]
    assert set(out["moves"][0]) == {"move", "verdict", "line", "wins", "samples", "undecided", "rate", "low", "high",
                                    "nodes"}


def test_the_command_deals_plays_the_moves_and_prints_a_table():
    r = CliRunner().invoke(main, ["hint", "-v", "dick-1883", "--deal", "1", "--moves", "TS 1>5", "--samples", "16",
                                  "--nodes", "2000"])
    assert r.exit_code == 0, r.output
    assert "38 card(s) face down, never read" in r.output and "TS 5>7" in r.output


@pytest.mark.parametrize(("args", "said"), [
    (["--deal", "1", "--moves", "TS 1>5, XX"], "move 2 (XX)"),
    (["--deal", "1", "--moves", "TS 1>2"], "move 1 (TS 1>2)"),
    (["--deal", "1", "--samples", "0"], "--samples 0 is out of range"),
    (["--layout", "SHORT", "--deal", "1"], "not both"),
    (["--layout", "SHORT"], "38 '??' but 39 card(s)"),
])
def test_bad_input_is_one_line_and_exit_code_2(args, said, tmp_path):
    short = tmp_path / "short.txt"  # a Dick layout with one '??' too few
    short.write_text(str(Game.from_deal(find_variant("dick-1883"), 1)).replace("?? ?? ?? TS", "?? ?? TS", 1),
                     encoding="utf-8")
    r = CliRunner().invoke(main, ["hint", "-v", "dick-1883", *(str(short) if a == "SHORT" else a for a in args)])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and said in lines[0], r.output


@pytest.mark.parametrize("call", [
    lambda: api.hint(LAST_CARD, "bakers-dozen", budget=5),
    lambda: api.hint(None),
    lambda: api.hint(api.deal("dick-1883", 1), "dick-1883"),
    lambda: api.hint(LAST_CARD, samples=0),
    lambda: api.hint(LAST_CARD, seconds=float("nan")),
], ids=["unknown keyword", "None", "a game and a variant", "samples", "seconds"])
def test_bad_input_to_the_api_is_a_user_error(call):
    with pytest.raises(UserError, match="api.hint|where must be a Game"):
        call()


def test_the_help_names_the_default_budgets():
    from studies.hint import EXACT_NODES, SAMPLE_NODES, SAMPLES

    text = " ".join(CliRunner().invoke(main, ["hint", "--help"]).output.split())
    assert f"default {SAMPLE_NODES:,})" in text and f"default {EXACT_NODES:,})" in text and f"default: {SAMPLES}]" in text
