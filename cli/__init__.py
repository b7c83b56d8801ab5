"""The shiftbench command line: the root group and its error policy (one line on stderr,
exit code 2 for bad input, 1 for a runtime fault, 130 after Ctrl-C, 143 after SIGTERM);
each stage's commands live in `shiftbench.cli.commands`."""

from __future__ import annotations

import logging
import os
import signal
import sys
from typing import Any

import click

from shiftbench import __version__
from shiftbench.cli.commands.options import CONTEXT
from shiftbench.core.messages import REPORT, command_line
from shiftbench.errors import InputError, ShiftbenchError, write_fault

GENERATING = frozenset({"gen", "run"})
INTERRUPTED, TERMINATED = 130, 143  # 128 + the signal's number, as a shell reports a kill
VERBOSITY = "shiftbench.verbosity"  # the root context's count of -v, wherever given


class Terminated(BaseException):
    """SIGTERM, raised in the main thread (`main` installs the handler) so that it stops the
    work exactly as Ctrl-C's KeyboardInterrupt does. No Exception, so that no `except
    Exception` (a retry, a wrapper) takes it for a failure."""


class ShiftbenchGroup(click.Group):
    """A group whose failures are one line on stderr: 2 for bad input, 1 otherwise, 130
    after Ctrl-C, 143 after SIGTERM."""

    running: str | None = None  # the command being run, for the interrupt's message
    no_cache = False  # whether it was told --no-cache (then nothing is kept)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name, command, rest = super().resolve_command(ctx, args)
        self.running = command.name if command is not None else name
        self.no_cache = "--no-cache" in rest
        return name, command, rest

    def list_commands(self, ctx: click.Context) -> list[str]:
        """The commands in the order they were added (that of `COMMANDS`), not sorted."""
        return list(self.commands)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:
            _decodable(arg)
        return super().parse_args(ctx, args)

    def interrupted(self, how: str = "Interrupted") -> str:
        """The line that ends a command stopped by a signal; `how` names the signal."""
        if self.running in GENERATING:
            kept = "nothing is kept (--no-cache)" if self.no_cache else "finished rows are cached"
            return f"{how}; {kept}."
        return f"{how}."

    @staticmethod
    def disk_full(exc: BaseException) -> str:
        name = getattr(exc, "filename", None)
        where = f" (writing {name})" if name else ""
        return (
            f"Error: no space left on the device{where}; free some space, or write elsewhere "
            "(--output, --cache-dir), and run the command again"
        )

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        self.running = None
        try:
            with command_line():  # errors name the options typed (core.messages.option)
                return super().main(*args, **kwargs)
        except click.exceptions.Exit as exc:
            sys.exit(exc.exit_code)
        except click.Abort as exc:
            # click turns Ctrl-C into Abort (after a blank line that ends the ^C echo)
            if isinstance(exc.__cause__, KeyboardInterrupt):
                _fail(self.interrupted(), INTERRUPTED)
            _fail("Aborted.", 1)
        except click.ClickException as exc:
            _fail(f"Error: {exc.format_message()}", exc.exit_code)
        except ShiftbenchError as exc:
            _fail(f"Error: {exc}", exc.exit_code)
        except KeyboardInterrupt:  # one that came outside click's own handling
            _fail(self.interrupted(), INTERRUPTED)
        except Terminated:
            _fail(self.interrupted("Terminated"), TERMINATED)
        except Exception as exc:
            if os.environ.get("SHIFTBENCH_DEBUG"):
                raise
            fault = write_fault(exc)
            if isinstance(fault, ShiftbenchError):  # past the file-size limit
                _fail(f"Error: {fault}", fault.exit_code)
            if fault is not None:
                _fail(self.disk_full(fault), 1)
            _fail(
                f"Error: {type(exc).__name__}: {exc} (set SHIFTBENCH_DEBUG=1 for the traceback)", 1
            )


class _EchoHandler(logging.Handler):
    """The one sink of the library's messages (core/messages.py), one line each, through
    Click (so a test runner that swaps the streams sees them too): a command's REPORT
    lines on stdout, every other record on stderr."""

    def emit(self, record: logging.LogRecord) -> None:
        err = record.levelno != REPORT
        std = sys.modules.get("tqdm.std")
        if std is None or not std.tqdm._instances:
            click.echo(self.format(record), err=err)
            return
        # a line while a bar is drawn: the bar is cleared, the line written, the bar drawn
        # again below it
        with std.tqdm.external_write_mode(file=sys.stderr if err else sys.stdout):
            click.echo(self.format(record), err=err)


def _log_sink(verbosity: int) -> None:
    logger = logging.getLogger("shiftbench")
    logger.handlers = [h for h in logger.handlers if not isinstance(h, _EchoHandler)]
    logger.addHandler(_EchoHandler())
    logger.setLevel((REPORT, logging.INFO, logging.DEBUG)[min(verbosity, 2)])
    logger.propagate = False
    # huggingface_hub shows its warnings through a handler of its own: one copy, even when
    # another library (absl, under mlcroissant) gives the root logger a handler too
    logging.getLogger("huggingface_hub").propagate = False


def _verbose_after(ctx: click.Context, param: click.Parameter, value: int) -> None:
    """-v given after a command's name: counted with the root's, and the level set again
    (the root's own -v has set it already by the time a command's options are read)."""
    if not value or ctx.resilient_parsing:
        return
    root = ctx.find_root()
    root.meta[VERBOSITY] = root.meta.get(VERBOSITY, 0) + value
    _log_sink(root.meta[VERBOSITY])


def _with_verbosity(command: click.Command) -> None:
    """Give `command` (and, for a group, each of its commands) the root's -v, so that it
    may come before or after the command's name."""
    command.params.append(
        click.Option(
            ["--verbose", "-v"],
            count=True,
            expose_value=False,
            callback=_verbose_after,
            help="Say more on stderr, as 'shiftbench -v': -v what each stage does, -vv "
            "debugging detail.",
        )
    )
    if isinstance(command, click.Group):
        for sub in command.commands.values():
            _with_verbosity(sub)


def _decodable(arg: str) -> None:
    """Refuse an argument whose bytes are not text in the locale's encoding (a non-ASCII
    path under LC_ALL=C): Python keeps it as lone surrogates, which open the right file
    but cannot be written into shiftbench.json, results.json or a card."""
    if not any("\udc80" <= c <= "\udcff" for c in arg):
        return
    shown = repr(os.fsencode(arg))[2:-1]
    raise InputError(
        f"the argument {shown} is not text in this locale's encoding "
        f"({sys.getfilesystemencoding()}); run under a UTF-8 locale (LC_ALL=C.UTF-8) or with "
        "PYTHONUTF8=1"
    )


def _fail(message: str, code: int) -> None:
    _end_bars()
    click.echo(" ".join(message.split()), err=True)
    sys.exit(code)


def _end_bars() -> None:
    """Close every progress bar still open (one a library left behind as it failed), so
    the error line starts a line of its own and no bar is drawn again after it."""
    import contextlib

    std = sys.modules.get("tqdm.std")  # no bar was ever made when tqdm is not loaded
    if std is None:
        return
    for bar in list(std.tqdm._instances):
        with contextlib.suppress(Exception):  # a bar whose stream is gone: nothing to end
            bar.close()


@click.group(name="shiftbench", cls=ShiftbenchGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="shiftbench")
@click.option(
    "--verbose", "-v", count=True,
    help="Say more on stderr: -v what each stage does, -vv debugging detail (also accepted "
    "after the command).",
)  # fmt: skip
@click.option(
    "--quiet", "-q", is_flag=True,
    help="No progress bars, for any command (the same as the command's own -q).",
)  # fmt: skip
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """shiftbench: how much of an encoder's score survives when its benchmark is rewritten.

    gen writes seeded, LLM-transformed variants of an MTEB dataset into a run folder (and
    rule-based controls whose effect on meaning is known); validate checks every variant
    (and scores it with encoders and LLM judges on request), measure-checks measures how
    far its checks can be trusted; judge-calibrate and compare help pick a judge and a
    generator; human-eval gathers and summarises human ratings;
    card writes a run folder's dataset card, publish releases it to the Hugging Face Hub
    as a frozen version and verify checks a published version; evaluate scores sentence
    encoders on the original and every variant, report combines several datasets'
    results, and probe runs task-free alignment probes on the controls. run makes a whole
    release from one spec file (init writes a starter spec); merge joins the run folders
    of a sharded gen; hteb import and export read HTEB's published transformation files
    as a run folder and write them from one.
    """
    ctx.meta[VERBOSITY] = verbose
    _log_sink(verbose)
    from shiftbench.core.data.mteb_tasks import mteb_cache_ready

    mteb_cache_ready()  # before any stage imports mteb


# each stage's commands live in shiftbench.cli.commands (`from shiftbench.cli import gen`
# still works)
from shiftbench.cli.commands.cards import card, publish, verify  # noqa: E402
from shiftbench.cli.commands.catalog import list_names  # noqa: E402
from shiftbench.cli.commands.evaluate import evaluate, leaderboard, probe, report  # noqa: E402
from shiftbench.cli.commands.gen import gen, merge  # noqa: E402
from shiftbench.cli.commands.hteb import hteb  # noqa: E402
from shiftbench.cli.commands.human_eval import (  # noqa: E402
    human_eval,
    human_eval_batch,
    human_eval_export,
    human_eval_import,
    human_eval_report,
)
from shiftbench.cli.commands.run import init, run  # noqa: E402
from shiftbench.cli.commands.validate import (  # noqa: E402
    compare,
    judge_calibrate,
    measure_checks,
    validate,
)

# Every command, in the order `shiftbench --help` lists them: the workflow's stages first,
# then the helpers, each after what it serves (init writes run's spec; merge joins a
# sharded gen; judge-calibrate, compare and measure-checks help validate; verify checks a
# publish), then HTEB's interchange and the catalogue. A command is registered here or not
# at all (tests/integration/test_help_layout.py finds any the list misses).
COMMANDS: tuple[click.Command, ...] = (
    gen, validate, human_eval, card, publish, evaluate, report, leaderboard, probe, run,
    init, merge, judge_calibrate, compare, measure_checks, verify, hteb, list_names,
)  # fmt: skip
for _command in COMMANDS:
    _with_verbosity(_command)
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point (and `python -m shiftbench`'s): SIGTERM stops a command as
    Ctrl-C does, and a command a signal stopped ends the process at once."""
    signal.signal(signal.SIGTERM, _terminate)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when ignored
        signal.signal(signal.SIGINT, _interrupt)
    try:
        cli()
    except SystemExit as exc:
        if exc.code in (INTERRUPTED, TERMINATED):
            _end_now(exc.code)
        raise


def _interrupt(signum: int, frame: Any) -> None:
    # a second Ctrl-C while the first one's work is undone ends the process outright
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    raise KeyboardInterrupt


def _terminate(signum: int, frame: Any) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # likewise a second SIGTERM
    raise Terminated


def _end_now(code: int) -> None:
    """Exit with `code` without waiting for the other threads. A request thread may still
    wait on a server that never answers (its deadline, then each retry's): the interpreter's
    exit would join it for minutes. Nothing is lost by not waiting: finished rows are
    committed to the cache as each comes, and the cache survives a process killed outright.
    The exit handlers still run (a vLLM engine's shutdown, temporary files)."""
    import atexit
    from contextlib import suppress

    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe: nobody is left to read it
            stream.flush()
    os._exit(code)


__all__ = [
    "COMMANDS",
    "card",
    "cli",
    "compare",
    "evaluate",
    "gen",
    "human_eval",
    "human_eval_batch",
    "human_eval_export",
    "human_eval_import",
    "human_eval_report",
    "init",
    "judge_calibrate",
    "list_names",
    "main",
    "measure_checks",
    "merge",
    "probe",
    "publish",
    "report",
    "run",
    "validate",
    "verify",
]
