"""Options and helpers shared by the verbs: the variant, the deal, the console."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console

from sim.deals import MAX_DEAL, MAX_SEED, PYSOL_MAX_DEAL
from sim.position import LayoutError, parse_position
from sim.rules import Rules, resolve_variant

if TYPE_CHECKING:
    from sim.game import Game

MAX_LAYOUT_CHARS = 1 << 20
"""A layout is 52 cards on a few lines; far longer text is refused before it is parsed."""


def console() -> Console:
    """Rich output; wide enough for the tables when printing to a file or pipe."""
    return Console() if sys.stdout.isatty() else Console(width=180)


# --- shared options -----------------------------------------------------------

def variant_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--variant", "-v", default="bakers-dozen", show_default=True,
        help="A preset name or alias (see `bakers-dozen variants`), or a variant file: text ending in .toml or "
             "holding a path separator (a preset name always means the preset).",
    )(f)


def deal_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--layout", "layout_file", type=click.File("r"), default=None,
                     help="Read the position from FILE ('-' for standard input) instead of dealing.")(f)
    f = click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
                     help="Deal numbering: this toolkit's, or PySolFC's (for cross-checks).")(f)
    f = click.option("--seed", type=int, default=0, show_default=True,
                     help=f"Deal seed, 0..{MAX_SEED} (default source; pysol takes 0).")(f)
    f = click.option("--deal", "-d", "number", type=int, default=None,
                     help=f"Deal number, 1..{MAX_DEAL} (pysol: 1..{PYSOL_MAX_DEAL}).")(f)
    return f


def start(variant: str, number: int | None, seed: int, source: str, layout_file: Any) -> tuple[Rules, Game]:
    """The rules and the game a verb plays: a numbered deal, or a layout read from a file."""
    from sim.game import Game  # numba: only for the verbs that deal

    rules = resolve_variant(variant)
    if layout_file is not None:
        if number is not None:
            raise click.UsageError("give either --deal or --layout, not both")
        return rules, Game(rules, parse_position(layout_text(layout_file), rules))
    if number is None:
        raise click.UsageError("missing --deal N (or --layout FILE)")
    return rules, Game.from_deal(rules, number, seed, source)


def layout_text(layout_file: Any) -> str:
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


