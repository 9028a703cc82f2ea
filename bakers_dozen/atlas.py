"""`bakers-dozen atlas`: the winnability atlas from the command line. `atlas show` looks a variant or a deal up in it
(here: it reads two files and imports no solver, so it answers in well under two seconds); `atlas run` computes one
and `atlas verify` solves a sample of its deals again (`bakers_dozen.atlas_run`, imported only when used). Arguments
that start with no subcommand are `atlas run`'s, the verb's form before it had subcommands.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import click

from bakers_dozen.limits import Bounded
from sim.deals import MAX_DEAL
from sim.errors import UserError

LATER = {"run": "bakers_dozen.atlas_run:run", "verify": "bakers_dozen.atlas_run:verify"}
"""The subcommands whose modules are imported only when they run (they load the solver and the runner)."""


class AtlasInputError(UserError):
    """A variant, deal range or option `atlas` cannot use."""


class _AtlasGroup(click.Group):
    """`atlas` with its subcommands; arguments that do not start with one are `atlas run`'s, so that the verb's form
    before it had subcommands (``bakers-dozen atlas -v good-measure -d 1-50``) still runs."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LATER})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The subcommand ``cmd_name``, importing its module now when it is one of `LATER`."""
        if cmd_name in LATER and cmd_name not in self.commands:
            module_name, _, attribute = LATER[cmd_name].partition(":")
            self.add_command(getattr(importlib.import_module(module_name), attribute))
        return super().get_command(ctx, cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.list_commands(ctx) and args[0] not in ctx.help_option_names):
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=_AtlasGroup)
def atlas() -> None:
    """The winnability atlas: every deal of a range of each preset decided by the solver's escalation ladder.

    \b
    bakers-dozen atlas show -v VARIANT [--deal N]   is deal N winnable, and what fraction is
    bakers-dozen atlas run [OPTIONS]                 compute an atlas (also: bakers-dozen atlas [OPTIONS])
    bakers-dozen atlas verify [FOLDER]               solve a random sample of its deals again
    """


def atlas_folder(given: Path | None) -> Path:
    """``--atlas``'s folder, or the shipped atlas."""
    from studies.atlas import shipped

    return given if given is not None else shipped()


@atlas.command("show")
@click.option("--variant", "-v", required=True, help="A preset name or alias (see `bakers-dozen variants`).")
@click.option("--deal", "-d", "deal", type=Bounded(int, 1, MAX_DEAL), default=None, help="This deal's verdict.")
@click.option("--lost", "listing", flag_value="lost", default=None, help="List the deals proven lost.")
@click.option("--unknown", "listing", flag_value="unknown", help="List the deals no rung decided.")
@click.option("--source", type=click.Choice(["default", "pysol"]), default="default", show_default=True,
              help="Deal numbering: this toolkit's, or PySolFC's.")
@click.option("--atlas", "folder", type=click.Path(path_type=Path), default=None,
              help="An atlas folder [default: the atlas shipped with bakers-dozen].")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as one JSON object.")
def show(variant: str, deal: int | None, listing: str | None, source: str, folder: Path | None, as_json: bool) -> None:
    """Is deal N of a variant winnable, and what fraction of its deals is: the atlas's answer, nothing solved."""
    from studies.atlas.lookup import look_up

    where = atlas_folder(folder)
    if deal is not None and listing is not None:
        raise AtlasInputError(f"--deal and --{listing}: one question at a time")
    answer = look_up(where, variant, source, deal, listing)
    if as_json:
        click.echo(json.dumps(answer, indent=2))
        return
    numbering = "PySolFC's numbering" if source == "pysol" else "this toolkit's numbering"
    if deal is not None:
        d = answer["deal"]
        how = {"won": "winnable (the solver found a win, replayed by the referee)", "lost": "not winnable (proven lost)",
               "unknown": "undecided (no rung of the ladder decided it"
                          + (", the seconds cap stopped the last" if d["timeout"] else "") + ")"}[d["verdict"]]
        click.echo(f"{answer['variant']} deal {deal:,} ({numbering}): {how}; rung {d['rung']}, {d['nodes']:,} nodes")
    n = answer["deals"]
    fraction = (f"{answer['winnable_low']:.3%}" if not answer["unknown"]
                else f"between {answer['winnable_low']:.3%} and {answer['winnable_high']:.3%}")
    click.echo(f"{answer['variant']} deals {answer['first']:,}-{answer['last']:,} ({numbering}): {fraction} winnable "
               f"(won {answer['won']:,}, lost {answer['lost']:,}, unknown {answer['unknown']:,} of {n:,}; 95% "
               f"{answer['ci_low']:.3%} - {answer['ci_high']:.3%})"
               + ("; clairvoyant: the solver saw the face-down cards, an upper bound for honest play"
                  if answer["clairvoyant"] else ""))
    kin = answer["related"]
    if kin is not None and (kin["won"] or kin["lost"]):
        vias = ", ".join(sorted(set(kin["via"].values())))
        low = (answer["won"] + len(kin["won"])) / n
        high = (answer["won"] + answer["unknown"] - len(kin["lost"])) / n
        proved = (f"deal {deal:,} proven {kin['deal']} through {kin['via'][str(deal)]}'s row; "
                  if deal is not None and kin["deal"] else "")
        click.echo(f"related rules ({vias}): {proved}{len(kin['won']):,} unknown deal(s) proven won and "
                   f"{len(kin['lost']):,} lost through their rows, so {low:.3%} to {high:.3%} winnable")
    honest = answer["honest"]
    if honest is not None:
        played = ""
        if deal is not None:
            played = (f"{honest['deal']} this deal; " if honest["deal"] else "did not play this deal; ")
        click.echo(f"honest player ({honest['player'].split(':')[0]}, never reads a face-down card): {played}won "
                   f"{honest['won']:,} of deals {honest['first']:,}-{honest['last']:,} ({honest['win_rate']:.1%}, 95% "
                   f"{honest['ci_low']:.1%} - {honest['ci_high']:.1%})"
                   + (f"; clairvoyant on the same deals {honest['clairvoyant_won'] / honest['deals']:.1%}"
                      if honest["clairvoyant_won"] is not None else ""))
    if answer["climbed"] is not None and answer["unknown"]:
        click.echo(f"ladder: rungs 0-{answer['rungs']} begun, every unknown deal through rung {answer['climbed']}")
    if listing is not None:
        deals = answer[f"{listing}_deals"]
        click.echo(f"{len(deals):,} {listing}: " + (" ".join(map(str, deals)) if deals else "none"))
    click.echo(f"atlas: {where}" + (" (the shipped atlas)" if folder is None else ""))
