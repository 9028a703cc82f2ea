"""`tournament --sequential`: play in rounds until the ranking is decided, and show the sequential tests."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace

import click
from rich.text import Text

from bakers_dozen.options import console, table
from bakers_dozen.simulate import run_exits
from sim.rules import Rules
from studies.paired import store_player
from studies.rounds import PairState, SequentialResult, play_rounds


def play_sequential(rules: Rules, specs: Sequence[str], max_deals: int, round_deals: int, first: int, seed: int, source: str,
                    jobs: int | None, store_dir: str, quiet: bool, alpha: float, beta: float,
                    delta: float) -> SequentialResult:
    """Play the rounds into ``store_dir`` (a line per round on standard error unless ``quiet``) until decided."""
    play = store_player(store_dir, jobs, sys.argv)

    def said(deals: int, pairs: list[PairState]) -> None:
        if not quiet:
            done = sum(p.test.decided for p in pairs)
            click.echo(f"after {deals:,} deals: {done} of {len(pairs)} adjacent pairs of the ranking decided", err=True)

    with run_exits():
        return play_rounds(rules, specs, play, max_deals=max_deals, round_deals=round_deals, first=first, seed=seed,
                           source=source, alpha=alpha, beta=beta, delta=delta, on_round=said)


def labelled(result: SequentialResult, labels: dict[str, str]) -> SequentialResult:
    """``result`` with each strategy spec replaced by its player's label (``labels``), the name the report's
    tables and the JSON ranking give it: one name per player everywhere."""
    def name(spec: str) -> str:
        return labels.get(spec, spec)

    return replace(result, ranking=[name(s) for s in result.ranking],
                   wins={name(s): w for s, w in result.wins.items()},
                   pairs=[replace(p, first=name(p.first), second=name(p.second)) for p in result.pairs],
                   history=[(deals, [(name(a), name(b), llr, rev) for a, b, llr, rev in tests])
                            for deals, tests in result.history])


def show_sequential(result: SequentialResult, out_dir: str) -> None:
    """Print the adjacent pairs' tests and write the report's sequential section (`reports.sequential`)."""
    from reports.sequential import write_sequential_report

    how = "decided" if result.decided else "not decided"
    t = table(f"Sequential tests ({how} after {result.deals_played:,} deals)",
              {"pair": "left", "decision": "left", "deals needed": "right", "LLR": "right", "LLR reverse": "right",
               "bounds": "right"})
    for p in result.pairs:
        decision = {"first": f"{p.first} better", "second": f"{p.second} better", "equal": "no difference of delta",
                    None: "undecided"}[p.test.decision]
        t.add_row(Text(f"{p.first} vs {p.second}"), Text(decision), "" if p.needed is None else f"{p.needed:,}",
                  f"{p.test.llr:+.2f}", f"{p.test.llr_reverse:+.2f}", f"{p.test.lower:.2f}..{p.test.upper:.2f}")
    console().print(t)
    md = write_sequential_report(result, out_dir)
    click.echo(f"sequential tests: {md}")
