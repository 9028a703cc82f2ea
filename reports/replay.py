"""A replay page: one self-contained HTML file that steps through a game, forward and back.

Every position is drawn here in Python (`sim.draw`) and embedded in the page,
one hidden block each; the page's short script only shows one block at a time,
so the pictures are those of every other view and the page needs no network,
no library and no renderer of its own. Buttons and the arrow keys step
(Home and End jump to the ends), the move list marks the move that led to the
shown position and jumps on a click, and ``#N`` in the address opens position
N. Where an analysis (`strategies.analyse.Analysis.to_json`) is given, each
position shows its verdict, and the losing move is highlighted with the move
that would have kept the game won.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from typing import Any

from sim.errors import UserError
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

SCRIPT = """
(function () {
  var pos = document.querySelectorAll('.pos');
  var items = document.querySelectorAll('#moves li');
  var where = document.getElementById('where');
  var at = 0;
  function show(k) {
    at = Math.max(0, Math.min(pos.length - 1, k));
    for (var j = 0; j < pos.length; j++) { pos[j].hidden = j !== at; }
    for (var j = 0; j < items.length; j++) { items[j].classList.toggle('current', j === at); }
    where.innerHTML = pos[at].getAttribute('data-label');
  }
  document.getElementById('first').onclick = function () { show(0); };
  document.getElementById('prev').onclick = function () { show(at - 1); };
  document.getElementById('next').onclick = function () { show(at + 1); };
  document.getElementById('last').onclick = function () { show(pos.length - 1); };
  for (var j = 0; j < items.length; j++) {
    items[j].onclick = (function (k) { return function () { show(k); }; })(j);
  }
  document.addEventListener('keydown', function (e) {
    var to = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: pos.length - 1}[e.key];
    if (to !== undefined) { show(to); e.preventDefault(); }
  });
  function fromHash() { var k = parseInt(location.hash.slice(1), 10); show(isNaN(k) ? 0 : k); }
  window.addEventListener('hashchange', fromHash);
  fromHash();
})();
"""


def replay_page(rules: Rules, start: Position, moves: Sequence[str | Move], title: str,
                analysis: dict[str, Any] | None = None, reveal: bool = False) -> str:
    """The HTML of the replay of ``moves`` from ``start``; ``analysis`` (``analyse --json``) adds the verdicts.

    Face-down cards are drawn as backs, or with ``reveal`` face up on grey. An illegal
    move raises `sim.game.IllegalMoveError`; an analysis of another move list raises `ReplayError`.
    """
    game = Game(rules, start)
    numbered = rules.foundation != "suit"
    pictures = [game.svg(reveal)]
    texts = []
    for k, mv in enumerate(moves):
        try:
            texts.append(game.play(mv).text(numbered))
        except UserError as exc:  # an illegal or unreadable move: the same error, saying which move
            raise type(exc)(f"move {k + 1}: {exc}") from None
        pictures.append(game.svg(reveal))
    verdicts: list[str] = []
    losing = None
    if analysis is not None:
        if list(analysis.get("moves", [])) != texts:
            raise ReplayError("the analysis is of another move list than the game's (run `analyse` on this record)")
        verdicts, losing = list(analysis["verdicts"]), analysis.get("losing_move")
        if len(verdicts) != len(texts) + 1 or not set(verdicts) <= {"won", "lost", "unknown"}:
            raise ReplayError(f"the analysis must hold {len(texts) + 1} verdicts, each won, lost or unknown")
        if losing is not None and (not isinstance(losing, int) or not 0 <= losing < len(texts)):
            raise ReplayError(f"the analysis's losing_move {losing!r} is not a move of the game (0..{len(texts) - 1})")
    blocks, items = [], [_item(0, "start", verdicts, losing, None)]
    for i, svg in enumerate(pictures):
        label = "start" if i == 0 else f"after move {i} of {len(texts)}: {escape(texts[i - 1])}"
        if verdicts:
            label += f' <span class="verdict {verdicts[i]}">{verdicts[i]}</span>'
        blocks.append(f'<div class="pos" data-label="{escape(label)}"{" hidden" if i else ""}>{svg}</div>')
        if i:
            items.append(_item(i, f"{i}. {escape(texts[i - 1])}", verdicts, losing, analysis))
    note = _note(analysis, texts) if analysis is not None else ""
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{escape(title)}</title>",
        f"<style>{STYLE}</style></head><body>", f"<h1>{escape(title)}</h1>", note,
        '<div id="controls"><button id="first" title="Home">&laquo; start</button>'
        '<button id="prev" title="left arrow">&#x25C0; back</button>'
        '<button id="next" title="right arrow">forward &#x25B6;</button>'
        '<button id="last" title="End">end &raquo;</button><span id="where"></span></div>',
        '<div id="layout"><div id="board">', *blocks, "</div>",
        '<ol id="moves">', *items, "</ol></div>",
        f"<script>{SCRIPT}</script>", "</body></html>", ""])


def _item(i: int, text: str, verdicts: list[str], losing: int | None, analysis: dict[str, Any] | None) -> str:
    """Entry i of the move list: the move that led to position i, and that position's verdict."""
    cls = " losing" if losing is not None and i == losing + 1 else ""
    mark = f' <span class="verdict {verdicts[i]}">{verdicts[i]}</span>' if verdicts else ""
    if cls and analysis is not None:
        mark += f" (instead: {escape(str(analysis.get('alternative')))})"
    return f'<li class="step{cls}" data-i="{i}">{text}{mark}</li>'


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


def analysis_json(text: str) -> dict[str, Any]:
    """An ``analyse --json`` output read back; `ReplayError` if it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ReplayError(f"the analysis is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("verdicts"), list) or not isinstance(data.get("moves"), list):
        raise ReplayError("not an `analyse --json` output: it needs 'moves' and 'verdicts' lists")
    return data
