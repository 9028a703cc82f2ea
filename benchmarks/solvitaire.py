"""The toolkit's solver side by side with Solvitaire on the same deals: verdicts, disagreements, CPU per game.

Solvitaire (Blake & Gent, JAIR) is the published state of the art for this family. This script only runs
its binary (GPL-2; build notes in ../shared/solvitaire/README.md of the workplace, or its own repository):
it writes each of the toolkit's deals as a Solvitaire deal file (JSON: piles bottom to top, the last card
the one that moves, ``10`` for ten, cards that start home in ``"foundations"``), writes the game's rules as
a Solvitaire rules file (``--custom-rules``), and solves each deal with both, one process at a time on one
core: the toolkit's solver at its defaults in this process, Solvitaire in its "smart" mode (streamliners
for a tenth of the time cap, then a complete search) with a per-deal time cap. CPU seconds are this
process's for the toolkit and the child's (user + system) for Solvitaire; the ratio is Solvitaire's
against the toolkit's, over all the deals and over the deals both decide.

Games: ``bakers-dozen`` (the preset; kings-to-bottom is part of the deal, so the file holds the layout
after the kings moved), ``spanish-worrying-back`` (Spanish Patience with worrying back, as Solvitaire's
preset plays it) and ``eight-by-six`` (8 piles of 6, aces home, any card fills an empty pile: Solvitaire's
Beleaguered Castle), the last two as the variant files in benchmarks/variants/.

    python benchmarks/solvitaire.py --solvitaire PATH [--games a,b] [--deals 1-100] [--timeout 30] [--param K=V]
    python benchmarks/solvitaire.py --out DIR --deals 1-10     # only write the deal and rules files
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/strategies.py is named like the `strategies` package; keep this folder off the import path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import sim  # noqa: E402, F401 - before numba: it sets numba's cache folder (sim.compile_cache)

# isort: split
from bakers_dozen.solve import parse_deals, parse_params  # noqa: E402
from sim.cards import card_str  # noqa: E402
from sim.deals import make_deal  # noqa: E402
from sim.errors import UserError, run_script  # noqa: E402
from sim.position import Position  # noqa: E402
from sim.rules import Rules, resolve_variant  # noqa: E402
from strategies.solver.strategy import SolverStrategy  # noqa: E402

HERE = Path(__file__).resolve().parent
GAMES = {
    "bakers-dozen": "bakers-dozen",
    "spanish-worrying-back": str(HERE / "variants" / "spanish-worrying-back.toml"),
    "eight-by-six": str(HERE / "variants" / "eight-by-six.toml"),
}
"""The games compared: a label and the variant (preset name or variant file) the toolkit plays."""

SOLVITAIRE_BUILD = {"any-suit": "any-suit", "alternate-colour": "red-black", "same-suit": "same-suit"}
"""The toolkit's ``build`` rules that Solvitaire's ``build policy`` can say (it has no other-suit building)."""
SOLVITAIRE_SPACES = {"none": "no-build", "kings": "kings", "any": "any"}
"""The toolkit's ``empty_fill`` as Solvitaire's ``spaces policy``."""
VERDICTS = {"solved": "won", "unsolvable": "lost"}
"""Solvitaire's final classification as a verdict; anything else (timed-out, memory-limit-reached,
terminated) is unknown."""


class SolvitaireError(UserError):
    """A game Solvitaire cannot express, or a binary that does not answer as expected."""


def card_name(code: int) -> str:
    """A card as Solvitaire writes it: rank then suit letter, ``10`` for ten (``10D``, ``AC``, ``KS``)."""
    text = card_str(code)
    return ("10" + text[1:]) if text[0] == "T" else text


def solvitaire_rules(rules: Rules) -> dict[str, Any]:
    """The rules file (``--custom-rules``) that makes Solvitaire play ``rules``: a pile per column, single
    cards moved, all cards face up, foundations built up in suit from the ace (removable with worrying back).
    Raises `SolvitaireError` for rules it has no words for (face-down cards, other-suit building,
    alternate-colour foundations)."""
    if rules.face_down:
        raise SolvitaireError(f"variant {rules.name!r} deals cards face down: Solvitaire's piles here are all face up")
    if rules.build not in SOLVITAIRE_BUILD:
        raise SolvitaireError(f"variant {rules.name!r} builds {rules.build}: Solvitaire has no such build policy")
    if rules.foundation != "suit":
        raise SolvitaireError(f"variant {rules.name!r} has {rules.foundation} foundations: Solvitaire builds them in suit")
    return {
        "tableau piles": {"count": rules.columns, "build policy": SOLVITAIRE_BUILD[rules.build],
                          "spaces policy": SOLVITAIRE_SPACES[rules.empty_fill], "diagonal deal": False,
                          "move built group": "no", "face up cards": "all"},
        "foundations": {"present": True, "initial cards": "none", "base card": "A", "removable": rules.worrying_back,
                        "only complete pile moves": False},
    }


def deal_document(position: Position) -> dict[str, Any]:
    """A position as a Solvitaire deal file: each pile bottom to top (the last card is the one that moves), and
    the cards already home, each foundation bottom to top (Solvitaire puts each on its suit's foundation)."""
    if any(position.face_down):
        raise SolvitaireError("a position with face-down cards has no Solvitaire deal file here")
    document: dict[str, Any] = {"tableau piles": [[card_name(c) for c in pile] for pile in position.piles]}
    home = [card_name(c) for foundation in position.foundations for c in foundation]
    if home:
        document["foundations"] = home
    return document


@dataclass
class Side:
    """One solver's verdicts (deal number to won, lost or unknown) and CPU seconds per deal."""

    verdicts: dict[int, str] = field(default_factory=dict)
    cpu: dict[int, float] = field(default_factory=dict)

    def count(self, verdict: str) -> int:
        return sum(v == verdict for v in self.verdicts.values())

    def seconds(self, deals: list[int]) -> float:
        return sum(self.cpu[d] for d in deals)


def solve_toolkit(rules: Rules, deals: range, params: dict[str, str]) -> Side:
    """The toolkit's solver (its defaults, but for ``params``) on each deal, CPU seconds of this process per deal
    (compiling done before, on the first deal)."""
    solver = SolverStrategy(**params)
    solver.solve_position(rules, make_deal(rules, deals[0]).position)  # compiles or loads the search outside the timing
    side = Side()
    for number in deals:
        position = make_deal(rules, number).position
        start = time.process_time()
        verdict, _, _, _ = solver.solve_position(rules, position)
        side.cpu[number] = time.process_time() - start
        side.verdicts[number] = verdict if verdict in ("won", "lost") else "unknown"
    return side


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def solve_solvitaire(binary: Path, rules_file: Path, deal_files: dict[int, Path], timeout: float,
                     cache_states: int) -> Side:
    """Solvitaire's smart mode on each deal file, one process each (its CPU seconds: user + system). Its
    ``--timeout`` is wall time (the complete search gets it all, the streamlined pass a tenth); a process
    that outlives it by far is killed and counted unknown."""
    side = Side()
    for number, path in deal_files.items():
        command = [str(binary), "--custom-rules", str(rules_file), "--classify", "--streamliners", "smart-solvability",
                   "--timeout", str(int(timeout * 1000)), "--cache-capacity", str(cache_states), str(path)]
        before = _child_cpu()
        try:
            run = subprocess.run(command, capture_output=True, text=True, timeout=timeout * 1.2 + 10)
        except subprocess.TimeoutExpired:
            side.cpu[number], side.verdicts[number] = _child_cpu() - before, "unknown"
            continue
        except OSError as exc:
            raise SolvitaireError(f"cannot run {binary}: {exc.strerror or exc}") from None
        side.cpu[number] = _child_cpu() - before
        lines = [line for line in run.stdout.splitlines() if line.startswith(",")]
        if run.returncode != 0 or not lines:
            tail = (run.stderr or run.stdout).strip().splitlines()[-1:] or ["no output"]
            raise SolvitaireError(f"{binary} on {path.name} exited {run.returncode} without a classification: {tail[0]}")
        side.verdicts[number] = VERDICTS.get(lines[-1].rsplit(",", 1)[-1].strip(), "unknown")
    return side


def write_files(rules: Rules, deals: range, folder: Path) -> tuple[Path, dict[int, Path]]:
    """The game's rules file and one deal file per deal in ``folder``; their paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rules_file = folder / f"{rules.name}.rules.json"
    rules_file.write_text(json.dumps(solvitaire_rules(rules), indent=2) + "\n", encoding="utf-8")
    files = {}
    for number in deals:
        files[number] = folder / f"{rules.name}-{number}.json"
        files[number].write_text(json.dumps(deal_document(make_deal(rules, number).position)) + "\n", encoding="utf-8")
    return rules_file, files


def _range(deals: list[int]) -> str:
    return ", ".join(map(str, deals[:12])) + (f" and {len(deals) - 12} more" if len(deals) > 12 else "") or "none"


def report(label: str, rules: Rules, deals: range, ours: Side, theirs: Side | None) -> None:
    """Print one game's verdicts, disagreements and CPU."""
    n = len(deals)
    print(f"\n{label} (rules {rules.fingerprint}), deals {deals[0]}-{deals[-1]}")
    print(f"  toolkit    won {ours.count('won'):5} lost {ours.count('lost'):5} unknown {ours.count('unknown'):5}   "
          f"CPU {ours.seconds(list(deals)):9.2f} s ({ours.seconds(list(deals)) / n * 1000:.2f} ms a deal)")
    if theirs is None:
        return
    print(f"  Solvitaire won {theirs.count('won'):5} lost {theirs.count('lost'):5} unknown {theirs.count('unknown'):5}   "
          f"CPU {theirs.seconds(list(deals)):9.2f} s ({theirs.seconds(list(deals)) / n * 1000:.2f} ms a deal)")
    both = [d for d in deals if ours.verdicts[d] != "unknown" and theirs.verdicts[d] != "unknown"]
    clash = [d for d in both if ours.verdicts[d] != theirs.verdicts[d]]
    ours_only = [d for d in deals if theirs.verdicts[d] != "unknown" and ours.verdicts[d] == "unknown"]
    theirs_only = [d for d in deals if ours.verdicts[d] != "unknown" and theirs.verdicts[d] == "unknown"]
    print(f"  disagreements (won against lost): {len(clash)}{': ' + _range(clash) if clash else ''}")
    print(f"  decided by Solvitaire, unknown to the toolkit: {len(ours_only)}{': ' + _range(ours_only) if ours_only else ''}")
    print(f"  decided by the toolkit, unknown to Solvitaire: {len(theirs_only)}"
          f"{': ' + _range(theirs_only) if theirs_only else ''}")
    def ratio(some: list[int]) -> float:
        return theirs.seconds(some) / max(ours.seconds(some), 1e-9) if some else float("nan")

    print(f"  CPU ratio, Solvitaire / toolkit: {ratio(list(deals)):.1f}x over all {n} deals, {ratio(both):.1f}x over "
          f"the {len(both)} both decide")
    for verdict in ("won", "lost"):  # where each side's time goes: wins found late, or losses proven
        same = [d for d in both if ours.verdicts[d] == verdict]
        if same:
            print(f"    on the {len(same)} {verdict} deals: toolkit {ours.seconds(same):.2f} s, Solvitaire "
                  f"{theirs.seconds(same):.2f} s ({ratio(same):.1f}x)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--solvitaire", type=Path, help="the Solvitaire binary (without it: the toolkit's side only)")
    ap.add_argument("--games", default=",".join(GAMES), help=f"comma-separated, of: {', '.join(GAMES)}")
    ap.add_argument("--deals", default="1-100", help="deal range A-B (default 1-100)")
    ap.add_argument("--timeout", type=float, default=30.0, help="Solvitaire's wall-clock cap per deal, seconds")
    ap.add_argument("--cache-states", type=int, default=5_000_000,
                    help="Solvitaire's cache capacity in states (about 300 bytes each; its default needs ~30 GB)")
    ap.add_argument("--out", type=Path, help="write the rules and deal files here and keep them")
    ap.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                    help="a parameter of the toolkit's solver, as `solve --param` takes it (repeatable)")
    args = ap.parse_args()
    params = parse_params(args.param)
    first, last = parse_deals(args.deals)
    deals = range(first, last + 1)
    labels = [g for g in args.games.split(",") if g]
    unknown = [g for g in labels if g not in GAMES]
    if unknown or not labels:
        raise UserError(f"--games {args.games!r}: choose among {', '.join(GAMES)}")
    if args.solvitaire is not None and not os.access(args.solvitaire, os.X_OK):
        raise UserError(f"--solvitaire {str(args.solvitaire)!r} is not an executable file")
    if args.timeout <= 0 or args.cache_states <= 0:
        raise UserError("--timeout and --cache-states must be positive")
    print(f"side by side on {len(deals)} deals a game, one core each; Solvitaire: "
          f"{args.solvitaire or 'not given (the toolkit side only)'}, smart mode, {args.timeout:g} s cap, "
          f"{args.cache_states:,} cached states; the toolkit's solver: "
          f"{' '.join(args.param) or 'its defaults'}")
    for label in labels:
        rules = resolve_variant(GAMES[label])
        with tempfile.TemporaryDirectory() as tmp:
            folder = args.out if args.out is not None else Path(tmp)
            rules_file, files = write_files(rules, deals, folder)
            ours = solve_toolkit(rules, deals, params)
            theirs = (solve_solvitaire(args.solvitaire, rules_file, files, args.timeout, args.cache_states)
                      if args.solvitaire is not None else None)
        report(label, rules, deals, ours, theirs)


if __name__ == "__main__":
    run_script(main)
