"""A replay page: one self-contained HTML file that steps through a game, forward and back.

The page carries the game, not its pictures: the start position, and for each
move only what it changed (which piles and foundations, how many of their cards
stay, the cards added), checked here by playing every move with the engine. A
short script rebuilds any position from the nearest of the positions it keeps
(one every `SNAPSHOT_EVERY` moves, made as they are needed) and draws it as
`sim.draw` draws a table, to the same SVG text. So a page grows by some twenty
bytes a move, where a drawing of every position took eleven kilobytes a move, and
a game of a million moves is a page of tens of megabytes, not tens of gigabytes.
Face-down cards are carried as unknown unless the page ``reveal``s them, so the
page's text shows no more than its pictures.

Buttons and the arrow keys step (Home and End jump to the ends), the move list
marks the move that led to the shown position and jumps on a click, and ``#N``
in the address opens position N. Where an analysis
(`strategies.analyse.Analysis.to_json`) is given, each position shows its
verdict, and the losing move is highlighted with the move that would have kept
the game won. The page needs no network, no library and no renderer of its own.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from sim.cards import DECK_SIZE, SUIT_SYMBOLS, card_str, is_red, rank_of, suit_of
from sim.draw import CARD_H, CARD_W, GAP, LABEL_H, RANK_TEXT, STEP_DOWN, STEP_UP, TABLE
from sim.draw import STYLE as DRAW_STYLE
from sim.engine import MAX_GAME_LENGTH, NO_PROGRESS_LIMIT
from sim.errors import UserError, json_type, quoted
from sim.game import Game
from sim.notation import Move
from sim.position import Position
from sim.rules import Rules


class ReplayError(UserError):
    """An analysis that cannot go with the game replayed."""


STYLE = """
body { font-family: DejaVu Sans, Arial, sans-serif; margin: 1.2em; color: #1a1a1a; }
h1 { font-size: 1.25em; margin: 0 0 .4em; }
#controls { margin: .5em 0; }
#controls button { font-size: 1em; padding: .25em .8em; margin-right: .3em; }
#where { margin-left: .6em; font-weight: bold; }
.verdict { display: inline-block; padding: 0 .4em; border-radius: 3px; margin-left: .4em; font-size: .9em; }
.won { background: #d4edda; } .lost { background: #f8d7da; } .unknown { background: #eee; }
#layout { display: flex; gap: 1.2em; align-items: flex-start; flex-wrap: wrap; }
#moves { columns: 3; max-width: 36em; font-family: DejaVu Sans Mono, monospace; font-size: .9em; padding-left: 0;
         list-style: none; margin: 0; }
#moves li { cursor: pointer; padding: 0 .3em; }
#moves li.current { background: #ffe08a; font-weight: bold; }
#moves li.losing { outline: 2px solid #c0392b; color: #c0392b; }
#note { margin: .5em 0; max-width: 60em; }
"""

SNAPSHOT_EVERY = 256
"""The script keeps every this many positions once reached, so a step back costs at most this many moves."""

SCRIPT = """
(function () {
  var G = JSON.parse(document.getElementById('game').textContent);
  var D = G.draw, N = G.steps.length, P = G.piles;
  var board = document.getElementById('board'), list = document.getElementById('moves');
  var where = document.getElementById('where');
  var snaps = [{places: G.start.map(function (s) { return s[1]; }), down: G.start.map(function (s) { return s[0]; })}];
  function copy(s) { return {places: s.places.slice(), down: s.down.slice()}; }
  function apply(s, step) {
    for (var j = 0; j < step.length; j += 4 + step[j + 3]) {
      var p = step[j];
      s.places[p] = s.places[p].slice(0, step[j + 2]).concat(step.slice(j + 4, j + 4 + step[j + 3]));
      s.down[p] = step[j + 1];
    }
  }
  function stateAt(k) {
    var c = Math.floor(k / G.every);
    while (snaps.length <= c) {
      var s = copy(snaps[snaps.length - 1]);
      for (var i = (snaps.length - 1) * G.every; i < snaps.length * G.every; i++) { apply(s, G.steps[i]); }
      snaps.push(s);
    }
    var t = copy(snaps[c]);
    for (var i = c * G.every; i < k; i++) { apply(t, G.steps[i]); }
    return t;
  }
  function label(x, y, text) {
    return '<text class="bd-l" x="' + (x + D.w / 2) + '" y="' + y + '">' + text + '</text>';
  }
  function empty(x, y) {
    return '<rect class="slot empty" x="' + x + '" y="' + y + '" width="' + D.w + '" height="' + D.h + '" rx="5"/>';
  }
  function back(x, y) {
    return '<g class="card back" transform="translate(' + x + ',' + y + ')"><rect width="' + D.w + '" height="' + D.h +
      '" rx="5"/><rect class="bd-i" x="4" y="4" width="' + (D.w - 8) + '" height="' + (D.h - 8) + '" rx="3"/></g>';
  }
  function card(c, x, y, hidden) {
    var k = G.cards[c];
    return '<g class="card ' + (k[3] ? 'red' : 'black') + (hidden ? ' down' : '') + '" data-card="' + k[0] +
      '" transform="translate(' + x + ',' + y + ')"><rect width="' + D.w + '" height="' + D.h + '" rx="5"/>' +
      '<text x="4" y="16">' + k[1] + k[2] + '</text><text class="bd-s" x="' + (D.w / 2) + '" y="' + (D.h - 14) + '">' +
      k[2] + '</text></g>';
  }
  function pileHeight(pile, down) {
    if (!pile.length) { return D.h; }
    var h = D.h;
    for (var i = 0; i < pile.length - 1; i++) { h += i < down ? D.stepDown : D.stepUp; }
    return h;
  }
  function svg(s) {
    var width = D.gap + Math.max(P, 4) * (D.w + D.gap), top = D.gap;
    var pilesY = top + D.label + D.h + D.gap + D.label, tallest = P ? 0 : D.h;
    for (var p = 0; p < P; p++) { tallest = Math.max(tallest, pileHeight(s.places[p], G.reveal ? 0 : s.down[p])); }
    var height = pilesY + tallest + D.gap;
    var out = ['<svg xmlns="http://www.w3.org/2000/svg" class="bd-table" width="' + width + '" height="' + height +
      '" viewBox="0 0 ' + width + ' ' + height + '" font-family="DejaVu Sans, Arial, sans-serif">', D.style,
      '<rect width="' + width + '" height="' + height + '" rx="6" fill="' + D.table + '"/>'];
    for (var f = 0; f < 4; f++) {
      var x = D.gap + f * (D.w + D.gap), stack = s.places[P + f];
      out.push(label(x, top + D.label - 3, 'F' + (f + 1)));
      out.push(stack.length ? card(stack[stack.length - 1], x, top + D.label, false) : empty(x, top + D.label));
    }
    for (var p = 0; p < P; p++) {
      var x = D.gap + p * (D.w + D.gap), pile = s.places[p], y = pilesY;
      out.push(label(x, pilesY - 3, String(p + 1)));
      if (!pile.length) { out.push(empty(x, pilesY)); }
      for (var i = 0; i < pile.length; i++) {
        var hidden = i < s.down[p], isBack = pile[i] < 0 || (hidden && !G.reveal);
        out.push(isBack ? back(x, y) : card(pile[i], x, y, hidden));
        y += isBack ? D.stepDown : D.stepUp;
      }
    }
    out.push('</svg>');
    return out.join('\\n');
  }
  function verdict(i) {
    var v = document.createElement('span');
    v.className = 'verdict ' + G.verdicts[i];
    v.textContent = G.verdicts[i];
    return v;
  }
  var items = [];
  for (var i = 0; i <= N; i++) {
    var li = document.createElement('li');
    li.className = 'step' + (G.losing !== null && i === G.losing + 1 ? ' losing' : '');
    li.appendChild(document.createTextNode(i ? i + '. ' + G.moves[i - 1] : 'start'));
    if (G.verdicts.length) { li.appendChild(verdict(i)); }
    if (G.losing !== null && i === G.losing + 1) { li.appendChild(document.createTextNode(' (instead: ' + G.alternative + ')')); }
    li.onclick = (function (k) { return function () { show(k); }; })(i);
    list.appendChild(li);
    items.push(li);
  }
  var at = -1;
  function show(k) {
    k = Math.max(0, Math.min(N, k));
    if (at >= 0) { items[at].classList.toggle('current', false); }
    at = k;
    items[at].classList.toggle('current', true);
    board.innerHTML = svg(stateAt(at));
    where.textContent = at ? 'after move ' + at + ' of ' + N + ': ' + G.moves[at - 1] : 'start';
    if (G.verdicts.length) { where.appendChild(verdict(at)); }
  }
  document.getElementById('first').onclick = function () { show(0); };
  document.getElementById('prev').onclick = function () { show(at - 1); };
  document.getElementById('next').onclick = function () { show(at + 1); };
  document.getElementById('last').onclick = function () { show(N); };
  document.addEventListener('keydown', function (e) {
    var to = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: N}[e.key];
    if (to !== undefined) { show(to); e.preventDefault(); }
  });
  function fromHash() { var k = parseInt(location.hash.slice(1), 10); show(isNaN(k) ? 0 : k); }
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
"""


def check_length(moves: int) -> None:
    """Refuse (`ReplayError`) a game of more ``moves`` than any game has: a page's size and the memory that makes
    it grow with the moves."""
    if moves > MAX_GAME_LENGTH:
        raise ReplayError(f"the game has {moves:,} moves; no game is longer than {MAX_GAME_LENGTH:,} (a game ends "
                          f"after {NO_PROGRESS_LIMIT:,} moves without a card home or turned up)")


def replay_page(rules: Rules, start: Position, moves: Sequence[str | Move], title: str,
                analysis: dict[str, Any] | None = None, reveal: bool = False) -> str:
    """The HTML of the replay of ``moves`` from ``start``; ``analysis`` (``analyse --json``) adds the verdicts.

    Face-down cards are drawn as backs, or with ``reveal`` face up on grey. An illegal
    move raises `sim.game.IllegalMoveError`; an analysis of another move list, or more moves than any
    game has (`sim.engine.MAX_GAME_LENGTH`), raises `ReplayError`.
    """
    check_length(len(moves))
    game = Game(rules, start)
    numbered = rules.foundation != "suit"
    first = places = _places(game.position(), reveal)
    texts: list[str] = []
    steps: list[str] = []
    for k, mv in enumerate(moves):
        try:
            texts.append(game.play(mv).text(numbered))
        except UserError as exc:  # an illegal or unreadable move: the same error, saying which move
            raise type(exc)(f"move {k + 1}: {exc}") from None
        now = _places(game.position(), reveal)
        steps.append(_step(places, now))
        places = now
    verdicts: list[str] = []
    losing = None
    if analysis is not None:
        if list(analysis.get("moves", [])) != texts:
            raise ReplayError("the analysis is of another move list than the game's (run `analyse` on this record)")
        verdicts, losing = list(analysis["verdicts"]), analysis.get("losing_move")
        if len(verdicts) != len(texts) + 1 or not all(isinstance(v, str) and v in VERDICTS for v in verdicts):
            raise ReplayError(f"the analysis must hold {len(texts) + 1} verdicts, each won, lost or unknown")
        if losing is not None and (not isinstance(losing, int) or isinstance(losing, bool)
                                   or not 0 <= losing < len(texts)):
            raise ReplayError(f"the analysis's losing_move {quoted(losing)} is not a move of the game "
                              f"(0..{len(texts) - 1})")
    data = {"draw": DRAW, "cards": CARDS, "piles": len(start.piles), "reveal": reveal, "every": SNAPSHOT_EVERY,
            "start": first, "moves": texts, "verdicts": verdicts, "losing": losing,
            "alternative": str(analysis.get("alternative")) if analysis is not None else None}
    head = json.dumps(data, ensure_ascii=False, separators=(",", ":"))[:-1]  # the steps follow, built as text
    game_json = head + ',"steps":[' + ",".join(steps) + "]}"
    note = _note(analysis, texts) if analysis is not None else ""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>", f"<h1>{escape(title)}</h1>", note,
        '<div id="controls"><button id="first" title="Home">&laquo; start</button>'
        '<button id="prev" title="left arrow">&#x25C0; back</button>'
        '<button id="next" title="right arrow">forward &#x25B6;</button>'
        '<button id="last" title="End">end &raquo;</button><span id="where"></span></div>',
        '<div id="layout"><div id="board" class="pos"></div><ol id="moves"></ol></div>',
        # JSON in a script element: "<" escaped, so no text of it can close the element
        '<script type="application/json" id="game">' + game_json.replace("<", "\\u003c") + "</script>",
        f"<script>{SCRIPT}</script>", "</body></html>", ""])


DRAW = {"w": CARD_W, "h": CARD_H, "gap": GAP, "stepUp": STEP_UP, "stepDown": STEP_DOWN, "label": LABEL_H,
        "table": TABLE, "style": DRAW_STYLE}
"""`sim.draw`'s measures and look, which the page's script draws with."""
CARDS = [[card_str(c), RANK_TEXT[rank_of(c)], SUIT_SYMBOLS[suit_of(c)], is_red(c)] for c in range(DECK_SIZE)]
"""Each card code's name, rank and suit as drawn, and whether it is red: the script's only knowledge of cards."""


def _places(position: Position, reveal: bool) -> list[list[Any]]:
    """Each pile, then each foundation, as [face-down count, cards bottom to top]: a face-down card as -1 unless
    ``reveal`` (what the picture may show)."""
    out: list[list[Any]] = []
    for pile, down in zip(position.piles, position.face_down, strict=True):
        out.append([down, list(pile) if reveal else [-1] * down + list(pile[down:])])
    out.extend([0, list(f)] for f in position.foundations)
    return out


def _step(before: list[list[Any]], after: list[list[Any]]) -> str:
    """What one move changed, as the script's flat JSON list: for each place changed, its index, its face-down
    count, how many of its cards stay, how many follow, and those cards."""
    out: list[int] = []
    for p, ((_, old), (down, new)) in enumerate(zip(before, after, strict=True)):
        if old == new and before[p][0] == down:
            continue
        keep = 0
        while keep < min(len(old), len(new)) and old[keep] == new[keep]:
            keep += 1
        out += [p, down, keep, len(new) - keep, *new[keep:]]
    return "[" + ",".join(map(str, out)) + "]"


def _note(analysis: dict[str, Any], texts: list[str]) -> str:
    """The analysis in a sentence above the table."""
    seen = " The solver sees face-down cards: these verdicts are clairvoyant." if analysis.get("clairvoyant") else ""
    k = analysis.get("losing_move")
    if k is None:
        return f'<p id="note">No losing move was found (verdicts by the solver within its budget).{seen}</p>'
    full = analysis.get("alternative_line", [])
    line = " ".join(full[:12]) + (" ..." if len(full) > 12 else "")
    return (f'<p id="note">The losing move: <b>{k + 1}. {escape(texts[k])}</b> turned a won position into a lost one. '
            f"Instead, <b>{escape(str(analysis.get('alternative')))}</b> keeps the game won "
            f"(a winning line: {escape(line)}).{seen}</p>")


ANALYSIS_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    # field: (JSON types allowed, what it is); the fields a replay page reads of an ``analyse --json`` output
    "moves": ((list,), "a list of move strings such as \"9H 3>7\""),
    "verdicts": ((list,), "a list of verdicts, each \"won\", \"lost\" or \"unknown\""),
    "losing_move": ((int, type(None)), "a move's index (0 for the first move) or null"),
    "alternative": ((str, type(None)), "a move string or null"),
    "alternative_line": ((list,), "a list of move strings"),
    "clairvoyant": ((bool,), "true or false"),
}
REQUIRED = ("moves", "verdicts")
VERDICTS = ("won", "lost", "unknown")


MAX_ANALYSIS_CHARS = 64 * 2**20
"""The longest analysis read (characters): that of the longest game (`sim.engine.MAX_GAME_LENGTH` moves) is a few
MiB of JSON."""


def analysis_json(text: str) -> dict[str, Any]:
    """An ``analyse --json`` output read back, each field the page reads checked for its type (`ANALYSIS_FIELDS`);
    `ReplayError` in one line naming the field, what it holds and what is allowed otherwise."""
    if len(text) > MAX_ANALYSIS_CHARS:
        raise ReplayError(f"the analysis is longer than {MAX_ANALYSIS_CHARS:,} characters; no game's analysis is")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ReplayError(f"the analysis is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ReplayError(f"the analysis is {json_type(data)}; it must be an `analyse --json` output (an object)")
    for key, (types, what) in ANALYSIS_FIELDS.items():
        if key not in data:
            if key in REQUIRED:
                raise ReplayError(f"the analysis has no {key!r} field; it must hold {what}")
            continue
        value = data[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise ReplayError(f"the analysis's {key!r} is {json_type(value)}; it must be {what}")
        if isinstance(value, list):
            for i, item in enumerate(value):
                if not isinstance(item, str) or (key == "verdicts" and item not in VERDICTS):
                    raise ReplayError(f"the analysis's {key!r} item {i + 1} is {json_type(item)} {quoted(item)}; "
                                      f"it must be {what}")
    return data
