"""Options and helpers shared by the verbs: the variant, the deal, the console."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click
from rich.console import Console
from rich.table import Table

from bakers_dozen.output import InputFile
from sim.deals import MAX_DEAL, MAX_SEED, PYSOL_MAX_DEAL
from sim.position import LayoutError, parse_position
from sim.rules import Rules, is_variant_file, resolve_variant
from sim.text import text_console

if TYPE_CHECKING:
    from sim.game import Game

MAX_LAYOUT_CHARS = 1 << 20
"""A layout is 52 cards on a few lines; far longer text is refused before it is parsed."""


PIPE_WIDTH = 180
"""Columns of rich output written to a file or pipe, unless ``COLUMNS`` says otherwise."""


def console() -> Console:
    """Rich output that shows data as written (`sim.text.text_console`: no markup, controls escaped): as wide
    as the terminal (the verbs' tables fit 80 columns); on a file or pipe ``COLUMNS`` wide when that is set,
    else `PIPE_WIDTH`, so nothing is wrapped there."""
    if sys.stdout.isatty():
        return text_console()
    columns = os.environ.get("COLUMNS", "")
    return text_console(width=int(columns) if columns.isdigit() and int(columns) > 0 else PIPE_WIDTH)


def table(title: str, columns: dict[str, str]) -> Table:
    """A rich table that never cuts a cell: on a narrow terminal (80 columns) long words fold
    onto the next line instead of ending in '...'. ``columns``: name -> justify ("left"/"right")."""
    out = Table(title=title, title_justify="left")
    for name, justify in columns.items():
        out.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return out


# --- shared options -----------------------------------------------------------

def variant_option(f: Callable[..., Any]) -> Callable[..., Any]:
    return click.option(
        "--variant", "-v", default="bakers-dozen", show_default=True,
        help="A preset name or alias (see `bakers-dozen variants`), or a variant file: text ending in .toml or "
             "holding a path separator (a preset name always means the preset).",
    )(f)


def deal_options(f: Callable[..., Any]) -> Callable[..., Any]:
    f = click.option("--layout", "layout_file", type=InputFile(), default=None,
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


def variant_title(spec: str, rules: Rules) -> str:
    """How a verb names the variant it plays: a preset by its name, a variant file by its name and the file
    (``mine (file ./mine.toml)``), so that a file is never taken for a preset."""
    return f"{rules.name} (file {spec})" if is_variant_file(spec) else rules.name


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


