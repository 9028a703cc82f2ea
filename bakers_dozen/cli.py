"""The `bakers-dozen` command.

Every verb reports bad input as one line naming what was wrong and what is
allowed, with exit code 2 and no traceback. The command ends when its verb
is done, even if a plug-in left threads running (`_end_process`).

A verb's module is imported only when that verb runs (`VERBS`), so that
``bakers-dozen variants`` does not pay for pandas, pyarrow, scipy, matplotlib,
dask or numba, which only some verbs use.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import traceback
from typing import Any

import click

from bakers_dozen.dependencies import missing_dependency
from bakers_dozen.output import EXIT_BROKEN_PIPE, Guarded, OutputWriteError, discard_stdout
from sim import __version__
from sim.errors import UserError
from sim.text import one_line

USER_ERRORS = (UserError,)
"""What the command reports as one line and exit code 2; every other exception is a bug."""
EXIT_BAD_INPUT = 2
EXIT_BUG = 1
EXIT_ABORTED = 1
"""A Ctrl-C outside the verbs that handle it themselves: click's "Aborted!" and its exit code."""

VERBS = {
    "help": "bakers_dozen.cli:help_verb",
    "variants": "bakers_dozen.games:variants",
    "deal": "bakers_dozen.games:deal",
    "strategies": "bakers_dozen.games:strategies",
    "play": "bakers_dozen.games:play",
    "verify": "bakers_dozen.record:verify",
    "simulate": "bakers_dozen.simulate:simulate",
    "compare": "bakers_dozen.report:compare",
    "tournament": "bakers_dozen.report:tournament",
    "tune": "bakers_dozen.tune:tune",
    "report": "bakers_dozen.report:report",
    "demo": "bakers_dozen.report:demo",
    "solve": "bakers_dozen.solve:solve",
    "atlas": "bakers_dozen.atlas:atlas",
    "check-strategy": "bakers_dozen.check:check_strategy",
    "analyse": "bakers_dozen.analyse:analyse",
    "replay": "bakers_dozen.replay:replay",
    "hint": "bakers_dozen.hint:hint",
}
"""Each verb and where its click command lives (``module:attribute``), imported when the verb is used."""


class _Group(click.Group):
    """Bad input in one line and exit code 2; anything else is a bug, shown with its traceback and exit code 1.

    Bad input is a `sim.errors.UserError` or click's own usage errors (an unknown
    option, a value of the wrong type). Output that cannot be written (standard
    output or a file named for output, `bakers_dozen.output`) is one line and exit
    code 2 too; a closed pipe ends quietly with `EXIT_BROKEN_PIPE`. The verbs' own
    exit codes (``sys.exit``) pass through. Click runs in non-standalone mode here so that its usage errors
    reach this method; it then returns ``--help``'s exit code, and a verb's return
    value (verbs return None) counts as exit 0.
    """

    def main(self, args: Any = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        try:
            return self._verb(args, prog_name, complete_var, standalone_mode, **extra)
        except SystemExit as exc:
            if args is None and standalone_mode:  # the program itself (arguments from sys.argv), not a caller
                _end_process(exc)
            raise

    def _verb(self, args: Any, prog_name: str | None, complete_var: str | None, standalone_mode: bool,
              **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        stdout = sys.stdout
        guarded = sys.stdout = Guarded("standard output", stdout)  # type: ignore[assignment]
        try:
            code = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
            sys.stdout.flush()
        except BrokenPipeError:  # the reader closed the pipe: it has what it wanted
            discard_stdout()
            sys.exit(EXIT_BROKEN_PIPE)
        except OutputWriteError as exc:
            discard_stdout()
            _one_line_error(str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except click.exceptions.Abort:
            click.echo("Aborted!", err=True)
            sys.exit(EXIT_ABORTED)
        except click.ClickException as exc:
            _one_line_error(exc.format_message())
            sys.exit(EXIT_BAD_INPUT)
        except USER_ERRORS as exc:
            _one_line_error(str(exc))
            sys.exit(EXIT_BAD_INPUT)
        except SystemExit as exc:
            # rich (its Console.on_broken_pipe) and click (wrapping standard output) each end with 1 on a closed pipe
            if exc.code == 1 and (isinstance(exc.__context__, BrokenPipeError) or sys.stdout is not guarded):
                discard_stdout()
                sys.exit(EXIT_BROKEN_PIPE)
            raise
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 (a bug: say so, with the traceback)
            if (missing := missing_dependency(exc)) is not None:  # not a bug: the environment lacks a package
                _one_line_error(missing)
                sys.exit(EXIT_BAD_INPUT)
            traceback.print_exc()
            click.echo(f"bakers-dozen: this is a bug in bakers-dozen {__version__}, not in your input; please report it "
                       "with the command line and the traceback above", err=True)
            sys.exit(EXIT_BUG)
        finally:
            if sys.stdout is guarded:  # click puts its own wrapper there after a closed pipe
                sys.stdout = stdout
        sys.exit(code if isinstance(code, int) else 0)

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *VERBS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The verb ``cmd_name``, importing its module now (click's documented way to load verbs lazily)."""
        if cmd_name not in VERBS or cmd_name in self.commands:
            return super().get_command(ctx, cmd_name)
        module_name, _, attribute = VERBS[cmd_name].partition(":")
        command = getattr(importlib.import_module(module_name), attribute)
        if not isinstance(command, click.Command) or command.name != cmd_name:
            raise TypeError(f"{VERBS[cmd_name]} is not the click command {cmd_name!r}")
        self.add_command(command)
        return command


def _end_process(done: SystemExit) -> None:
    """The command's verb is done (``done`` carries its exit status): stop the runner's kept worker processes now
    and, when threads are left running that the interpreter would wait for (not daemon threads: a plug-in's,
    which may never end), end the process at once with `os._exit` after flushing the output, saying so in one
    line, rather than wait for them. Returns, for the usual exit, when no such thread is left."""
    backends = sys.modules.get("studies.backends")
    if backends is not None:
        backends.close_pools()
    left = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive() and not t.daemon]
    if not left:
        return
    if isinstance(done.code, str):
        click.echo(done.code, err=True)
    click.echo(f"bakers-dozen: warning: {len(left)} thread(s) left running (started by a plug-in); ending without "
               "waiting for them", err=True)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(done.code if isinstance(done.code, int) else int(done.code is not None))


def _one_line_error(message: str) -> None:
    """``bakers-dozen: error: MESSAGE`` on standard error, the message folded onto one line, its control
    characters escaped (a message quotes what the user typed)."""
    click.echo("bakers-dozen: error: " + one_line(message), err=True)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="bakers-dozen")
def main() -> None:
    """Simulate Baker's Dozen and its family: deals, strategies, win rates."""



@click.command("help")
@click.argument("verb", required=False)
@click.pass_context
def help_verb(ctx: click.Context, verb: str | None) -> None:
    """Show the help of the command, or of VERB (the same as --help)."""
    group = ctx.parent
    assert group is not None and isinstance(group.command, click.Group)
    if verb is None:
        click.echo(group.get_help())
        return
    command = group.command.get_command(group, verb)
    if command is None:
        raise click.UsageError(f"no such verb {verb!r}; the verbs: {', '.join(group.command.list_commands(group))}")
    with click.Context(command, info_name=verb, parent=group) as sub:
        click.echo(command.get_help(sub))
