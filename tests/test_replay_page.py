"""A replay page carries the game, not a drawing per position: its size grows by a few bytes a move, and its
script draws each position exactly as `sim.draw` does (run here in Node.js against a small stand-in for the DOM,
where Node is installed; `tests/test_replay.py` runs the page in Chromium). An analysis file's fields are checked
for their types before a page uses them."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from bakers_dozen.cli import main
from reports.replay import replay_page
from sim.cards import card_str
from sim.game import Game
from sim.rules import resolve_variant

NODE = shutil.which("node")


def random_game(variant: str, deal: int, moves: int, seed: int = 1) -> tuple[Game, list[str]]:
    """``moves`` legal moves of random play from ``deal``, away from the foundations where it can (so it goes
    on: cards shuttle between piles), as move texts; the game as it started."""
    rules = resolve_variant(variant)
    game = Game.from_deal(rules, deal)
    rng = random.Random(seed)
    numbered = rules.foundation != "suit"
    texts: list[str] = []
    while len(texts) < moves:
        legal = game.legal_moves()
        assert legal, "random play got stuck"
        inner = [m for m in legal if m.dst < rules.columns] or legal
        texts.append(game.play(rng.choice(inner)).text(numbered))
    return Game(rules, game.start), texts


def game_data(page: str) -> dict:
    """The game a page carries (its JSON block)."""
    return json.loads(re.search(r'<script type="application/json" id="game">(.*?)</script>', page, re.S).group(1))


def test_a_long_game_makes_a_page_linear_in_its_moves_with_a_small_constant():
    game, moves = random_game("bakers-dozen", 7, 4000)
    sizes = {n: len(replay_page(game.rules, game.start, moves[:n], "t").encode()) for n in (1000, 4000)}
    per_move = (sizes[4000] - sizes[1000]) / 3000
    assert per_move < 80, per_move  # a drawing of every position took about 11,000 bytes a move
    assert sizes[1000] < 20_000 + 80 * 1000
    data = game_data(replay_page(game.rules, game.start, moves, "t"))
    assert data["moves"] == moves and len(data["steps"]) == len(moves)


def test_face_down_cards_are_not_in_the_page_unless_revealed():
    game, moves = random_game("dick-1883", 2, 50)
    hidden = {card_str(c) for pile, down in zip(game.start.piles, game.start.face_down, strict=True) for c in pile[:down]}
    start = game_data(replay_page(game.rules, game.start, moves, "t"))["start"]
    assert [cards[:down] for down, cards in start[:13]] == [[-1] * d for d in game.start.face_down]
    revealed = game_data(replay_page(game.rules, game.start, moves, "t", reveal=True))["start"]
    assert [cards for _, cards in revealed[:13]] == [list(p) for p in game.start.piles]
    assert hidden  # the deal has face-down cards to hide


HARNESS = r"""
const fs = require('fs');
const html = fs.readFileSync(process.argv[2], 'utf8');
const actions = JSON.parse(process.argv[3]);
const json = html.match(/<script type="application\/json" id="game">([\s\S]*?)<\/script>/)[1];
const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map(m => m[1]);
function el(tag) {
  const e = {children: [], className: '', innerHTML: '', _text: '', onclick: null,
    appendChild(c) { this.children.push(c); return c; },
    set textContent(t) { this._text = t; this.children = []; },
    get textContent() { return this._text + this.children.map(c => c.textContent).join(''); }};
  e.classList = {toggle(name, on) {
    const s = new Set(e.className.split(' ').filter(Boolean)); if (on) s.add(name); else s.delete(name);
    e.className = [...s].join(' '); }};
  return e;
}
const ids = {game: {textContent: json}};
for (const id of ['board', 'moves', 'where', 'first', 'prev', 'next', 'last']) ids[id] = el(id);
const handlers = {};
global.document = {getElementById: id => ids[id], createElement: el, createTextNode: t => ({textContent: t}),
  addEventListener: (k, f) => { handlers[k] = f; }};
global.location = {hash: ''};
global.window = {addEventListener: (k, f) => { handlers[k] = f; }};
for (const s of scripts) eval(s);
const out = [];
for (const a of actions) {
  if (a.startsWith('#')) { location.hash = a; handlers.hashchange(); }
  else if (a.startsWith('click:')) { ids[a.slice(6)].onclick(); }
  else if (a.startsWith('item:')) { ids.moves.children[+a.slice(5)].onclick(); }
  else { handlers.keydown({key: a, preventDefault() {}}); }
  const items = ids.moves.children;
  out.push({board: ids.board.innerHTML, where: ids.where.textContent,
            current: items.filter(c => c.className.split(' ').includes('current')).map(c => c.textContent),
            losing: items.filter(c => c.className.split(' ').includes('losing')).map(c => c.textContent)});
}
console.log(JSON.stringify(out));
"""


def run_page(page: str, actions: list[str], tmp_path: Path) -> list[dict]:
    """The board, the label and the marked move-list entries after each action on the page, in Node.js."""
    (tmp_path / "page.html").write_text(page, encoding="utf-8")
    (tmp_path / "harness.js").write_text(HARNESS, encoding="utf-8")
    r = subprocess.run([NODE, str(tmp_path / "harness.js"), str(tmp_path / "page.html"), json.dumps(actions)],
                       capture_output=True, text=True, timeout=120, check=True)
    return json.loads(r.stdout)


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
@pytest.mark.parametrize(("variant", "deal", "reveal"), [("bakers-dozen", 7, False), ("dick-1883", 2, False),
                                                         ("dick-1883", 2, True), ("castles-in-spain", 5, False),
                                                         ("good-measure", 3, False)])
def test_the_script_draws_each_position_as_sim_draw_does(tmp_path, variant, deal, reveal):
    game, moves = random_game(variant, deal, 700)
    page = replay_page(game.rules, game.start, moves, "t", reveal=reveal)
    actions = ["#0", "ArrowRight", "ArrowRight", "#600", "ArrowLeft", "End", "Home", "item:5", "click:last",
               "click:prev", "click:first", "click:next", "#9999"]
    shown = [0, 1, 2, 600, 599, 700, 0, 5, 700, 699, 0, 1, 700]
    for k, got in zip(shown, run_page(page, actions, tmp_path), strict=True):
        want = Game(game.rules, game.start)
        for mv in moves[:k]:
            want.play(mv)
        assert got["board"] == want.svg(reveal), k
        assert got["current"] == ([f"{k}. {moves[k - 1]}"] if k else ["start"])
        assert got["where"] == (f"after move {k} of {len(moves)}: {moves[k - 1]}" if k else "start")


@pytest.mark.skipif(NODE is None, reason="Node.js is not installed")
def test_the_script_marks_the_losing_move_and_each_verdict(tmp_path):
    game, moves = random_game("bakers-dozen", 7, 6)
    analysis = {"moves": moves, "verdicts": ["won", "won", "lost", "lost", "lost", "lost", "lost"], "losing_move": 1,
                "alternative": "KH 1>2", "alternative_line": ["KH 1>2"]}
    page = replay_page(game.rules, game.start, moves, "t", analysis)
    got = run_page(page, ["#2"], tmp_path)[0]
    assert got["losing"] == [f"2. {moves[1]}lost (instead: KH 1>2)"]
    assert got["where"] == f"after move 2 of 6: {moves[1]}lost"
    assert "Instead, <b>KH 1&gt;2</b> keeps the game won" in page


def _analysis_refusal(tmp_path: Path, change: dict) -> str:
    game, moves = random_game("bakers-dozen", 7, 3)
    record = {"variant": "bakers-dozen", "deal": 7, "layout": [[card_str(c) for c in p] for p in game.start.piles],
              "outcome": "lost", "cards_home": 0, "moves": moves}
    analysis = {"moves": moves, "verdicts": ["won", "won", "lost", "lost"], "losing_move": 1, "alternative": "KH 1>2",
                "alternative_line": ["KH 1>2"], "clairvoyant": False, **change}
    (tmp_path / "game.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "analysis.json").write_text(json.dumps(analysis), encoding="utf-8")
    r = CliRunner().invoke(main, ["replay", str(tmp_path / "game.json"), "--analysis", str(tmp_path / "analysis.json"),
                                  "--out", str(tmp_path / "page.html")])
    assert r.exit_code == 2, r.output
    assert len(r.output.strip().splitlines()) == 1 and r.output.startswith("bakers-dozen: error: "), r.output
    assert not (tmp_path / "page.html").exists()
    return r.output


@pytest.mark.parametrize(("change", "said"), [
    ({"alternative_line": [1, 2]}, "'alternative_line' item 1 is a number 1; it must be a list of move strings"),
    ({"alternative_line": {"a": 1}}, "'alternative_line' is an object; it must be a list of move strings"),
    ({"alternative_line": "KH 1>2"}, "'alternative_line' is a string"),
    ({"verdicts": [["won"], "won", "lost", "lost"]}, "'verdicts' item 1 is a list"),
    ({"verdicts": ["won", "maybe", "lost", "lost"]}, "'verdicts' item 2 is a string 'maybe'"),
    ({"verdicts": {"0": "won"}}, "'verdicts' is an object"),
    ({"losing_move": True}, "'losing_move' is true/false; it must be a move's index"),
    ({"losing_move": 1.5}, "'losing_move' is a number with a fraction"),
    ({"losing_move": "1"}, "'losing_move' is a string"),
    ({"losing_move": 7}, "losing_move 7 is not a move of the game"),
    ({"alternative": ["KH 1>2"]}, "'alternative' is a list; it must be a move string or null"),
    ({"moves": None}, "'moves' is null; it must be a list of move strings"),
    ({"moves": [3, 4]}, "'moves' item 1 is a number 3"),
    ({"clairvoyant": "yes"}, "'clairvoyant' is a string; it must be true or false"),
    ({"verdicts": ["won", "x" * 100_000, "lost", "lost"]}, "(100,000 characters)"),
])
def test_an_analysis_field_of_the_wrong_type_is_refused_naming_it(tmp_path, change, said):
    assert said in _analysis_refusal(tmp_path, change)


@pytest.mark.parametrize("text", ["[]", "3", "null", '"moves"'])
def test_an_analysis_that_is_not_an_object_is_refused(tmp_path, text):
    (tmp_path / "a.json").write_text(text, encoding="utf-8")
    game, moves = random_game("bakers-dozen", 7, 1)
    record = {"variant": "bakers-dozen", "deal": 7, "layout": [[card_str(c) for c in p] for p in game.start.piles],
              "outcome": "lost", "cards_home": 0, "moves": moves}
    (tmp_path / "g.json").write_text(json.dumps(record), encoding="utf-8")
    r = CliRunner().invoke(main, ["replay", str(tmp_path / "g.json"), "--analysis", str(tmp_path / "a.json"),
                                  "--out", str(tmp_path / "p.html")])
    assert r.exit_code == 2 and "it must be an `analyse --json` output" in r.output, r.output


def test_a_record_longer_than_any_game_is_refused_in_one_line(tmp_path):
    from sim.engine import MAX_GAME_LENGTH

    game, moves = random_game("bakers-dozen", 7, 2)
    record = {"variant": "bakers-dozen", "deal": 7, "layout": [[card_str(c) for c in p] for p in game.start.piles],
              "outcome": "lost", "cards_home": 0, "moves": (moves * (MAX_GAME_LENGTH // 2 + 1))[:MAX_GAME_LENGTH + 1]}
    (tmp_path / "g.json").write_text(json.dumps(record), encoding="utf-8")
    r = CliRunner().invoke(main, ["replay", str(tmp_path / "g.json"), "--out", str(tmp_path / "p.html")])
    assert r.exit_code == 2 and f"the game has {MAX_GAME_LENGTH + 1:,} moves; no game is longer" in r.output, r.output
    assert not (tmp_path / "p.html").exists()


def test_an_analysis_that_is_not_utf8_text_is_refused_in_one_line(tmp_path):
    game, moves = random_game("bakers-dozen", 7, 1)
    record = {"variant": "bakers-dozen", "deal": 7, "layout": [[card_str(c) for c in p] for p in game.start.piles],
              "outcome": "lost", "cards_home": 0, "moves": moves}
    (tmp_path / "g.json").write_text(json.dumps(record), encoding="utf-8")
    (tmp_path / "a.json").write_bytes(b'{"moves": ["\xff\xfe"]}')
    r = CliRunner().invoke(main, ["replay", str(tmp_path / "g.json"), "--analysis", str(tmp_path / "a.json"),
                                  "--out", str(tmp_path / "p.html")])
    assert r.exit_code == 2 and "is not UTF-8 text" in r.output and len(r.output.strip().splitlines()) == 1, r.output
