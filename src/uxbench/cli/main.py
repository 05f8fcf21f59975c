"""`uxbench` entry point. Heavy modules are imported inside commands so `--help` stays fast."""

# ruff: noqa: E402  (the imports follow the pause of the garbage collector, below)
from __future__ import annotations

import gc

_COLLECTING = gc.isenabled()
gc.disable()  # while the command line's modules load; resumed at the end of this module (_loaded)

import sys
from typing import Annotated, Any, NoReturn

import typer
from typer.core import TyperGroup

from uxbench.cli.help_format import install as _install_help_format
from uxbench.cli.lazy_group import LazyCommand, LazyGroup
from uxbench.cli.startup import install as _install_startup
from uxbench.errors import UxbenchError
from uxbench.extras import RUNNING_COMMAND

_install_help_format()
_install_startup()

ERROR_EXIT = 2
"""Exit status of a command stopped by bad input, configuration or files (as click uses for usage errors)."""


DISK_FULL_HINT = ("the disk is full. What was finished is saved: free some space (or point --out / the cache "
                  "elsewhere) and rerun the same command, which resumes where this one stopped")


def os_error_text(exc: OSError) -> str:
    """'cannot write /x/y: Permission denied' from an OSError, naming the path when it has one."""
    import errno

    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        where = f" (writing {exc.filename})" if exc.filename is not None else ""
        return f"{DISK_FULL_HINT}{where}."
    if exc.filename is None:
        return f"{reason} ({exc})" if exc.strerror and str(exc) != reason else reason
    path = str(exc.filename) + (f" -> {exc.filename2}" if exc.filename2 is not None else "")
    return f"cannot use {path}: {reason}"


def sqlite_error_text(exc: Exception) -> str:
    """A SQLite error that reached the command: a full disk, a damaged file (the stores name their own file
    first; this is the last resort), or a lock."""
    text = str(exc)
    if "disk is full" in text:
        return f"{DISK_FULL_HINT} ({text})."
    return (f"a SQLite file could not be used: {text}. If a file of the run or study is damaged, restore it from a "
            "backup or start over with --fresh.")


def fail(message: str) -> NoReturn:
    """Print `error: message` on stderr and stop with `ERROR_EXIT`, without a traceback."""
    from uxbench.redact import scrub

    typer.secho(f"error: {scrub(message)}", fg=typer.colors.RED, err=True)  # no secret reaches the terminal
    raise typer.Exit(ERROR_EXIT)


class _ErrorsAsMessages(TyperGroup):
    """Every command's `UxbenchError` (bad input, config, data) and file-system error (a path that is a
    file, a directory without permission) becomes one `error:` line, under the test runner as in a shell."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        """Also note the command's full name (`uxbench mine run`) for the messages of a missing extra."""
        name, command, rest = super().resolve_command(ctx, args)
        words = [name]
        subcommands = getattr(command, "commands", None)
        if isinstance(subcommands, dict) and rest and rest[0] in subcommands:
            words.append(rest[0])
        RUNNING_COMMAND.set(" ".join(["uxbench", *(w for w in words if w)]))
        return name, command, rest

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except UxbenchError as exc:
            fail(str(exc))
        except BrokenPipeError:  # output piped into `head` and the like: stop quietly, as other tools do
            _silence_stdout()
            raise typer.Exit(0) from None
        except OSError as exc:
            fail(os_error_text(exc))
        except Exception as exc:
            sqlite3 = sys.modules.get("sqlite3")  # imported by the command that used SQLite (not at start)
            if sqlite3 is None or not isinstance(exc, sqlite3.Error):
                raise
            fail(sqlite_error_text(exc))
        finally:
            RUNNING_COMMAND.set(None)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not fail on the closed pipe."""
    import os

    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):  # no real stdout (a test runner's buffer)
        pass


COMMANDS = {
    "run": LazyCommand("uxbench.cli.run_cmd:run",
                       "Run a task (default: Task 1, UX Judge) and write a run directory."),
    "report": LazyCommand("uxbench.cli.report_cmd:report",
                          "Compare finished runs: a table with 95% confidence intervals."),
    "score": LazyCommand("uxbench.cli.score_cmd:score",
                         "Score a Task 2/3 run's replies with a judge (again, or another one), without regenerating."),
    "pairwise": LazyCommand("uxbench.cli.pairwise_cmd:pairwise",
                            "Compare two Task 2/3 runs' replies case by case with a pairwise judge (both orders)."),
    "bias": LazyCommand("uxbench.cli.bias_cmd:bias",
                        "Judge biases over scored runs: self-preference, length bias, agreement, calibration."),
    "leaderboard": LazyCommand("uxbench.cli.leaderboard_cmd:leaderboard",
                               "Rank runs of every task with CIs and honest ties; metadata and scaling trends."),
    "plan": LazyCommand("uxbench.cli.plan_cmd:plan",
                        "How many cases a difference needs (paired, 80% power), from pilot runs or a stated rate."),
    "plot": LazyCommand("uxbench.cli.plot_cmd:plot", "Draw a PNG or SVG: per-scenario bars, reliability, "
                        "self-preference, scaling, mining funnel or signal rates."),
    "view": LazyCommand("uxbench.cli.view_cmd:view",
                        "Browse runs, samples and mining outputs in a local web app (needs the web extra)."),
    "providers": LazyCommand("uxbench.cli.main:providers",
                             "List the model providers, how to name a model and each one's --model-arg values."),
    "data": LazyCommand("uxbench.cli.data_cmd:app", "Check and describe data files before a run."),
    "mine": LazyCommand("uxbench.cli.mine_cmd:app", "Mine chat logs for dissatisfaction signals and build test cases."),
    "human": LazyCommand("uxbench.cli.human_cmd:app",
                         "Blind human evaluation: create a study, serve it, read its results."),
    "site": LazyCommand("uxbench.cli.site_cmd:app", "Publish the leaderboard as a static site (HTML + JSON, no CDN)."),
    "judge": LazyCommand("uxbench.cli.judge_cmd:app", "Train a UX judge from your feedback, measure it, serve it."),
    "sim": LazyCommand("uxbench.cli.sim_cmd:app",
                       "UXBench Pro: simulated users talk to a model over many turns; session metrics."),
    "personas": LazyCommand("uxbench.cli.personas_cmd:app", "Check and list the personas of simulated users."),
}
"""Every command, in the order `uxbench --help` lists them: its module, and its one line of help.
A module is imported only when its command runs or shows its help; register a new command here with one line."""


class _RootGroup(LazyGroup, _ErrorsAsMessages):
    lazy = COMMANDS


app = typer.Typer(
    name="uxbench",
    help="Measure how AI assistants make their users feel (UXBench: UX Judge, UX Eval, UX Recovery).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    cls=_RootGroup,
    context_settings={"help_option_names": ["-h", "--help"]},  # inherited by every subcommand
)


def _print_version(value: bool) -> None:
    if value:
        from uxbench import __version__

        typer.echo(f"uxbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[bool, typer.Option("--version", callback=_print_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    pass


def providers() -> None:
    from uxbench.models.registry import provider_help

    typer.echo(provider_help())


GC_YOUNG = 20_000
"""Net allocations between two collections of the youngest generation (CPython's default: 700). A run keeps
thousands of objects alive for long (sessions in flight, their turns, pending requests), and the young generation
is gone over at every collection: at 700, about 200 collections per 1,000 simulated sessions, 0.17-0.25 s in which
the event loop read no answer and sent no request (bench/RESULTS.md, issue 29's fourth round); at 20,000, three.
Cyclic garbage is still collected, a little later."""


def _loaded() -> None:
    """Start-up is over: what it loaded (typer and its click, ~120 modules, ~26,000 objects) stays for the life of
    the process, so the garbage collector is told to leave it alone (`gc.freeze`) and resumes. Running while they
    loaded, it went over them again and again (a collection every 700 allocations, and the older generations
    behind it), and in every later full collection: about 40 M instructions of `uxbench --help` (480 M) and of
    `uxbench run --help`, for nothing to collect. A command's own objects are collected as before, less often
    (`GC_YOUNG`)."""
    gc.freeze()
    young, *older = gc.get_threshold()
    if young:  # 0: the caller turned automatic collection off that way
        gc.set_threshold(max(young, GC_YOUNG), *older)
    if _COLLECTING:
        gc.enable()


def main() -> None:
    from uxbench.runs.command import set_command

    # `mine run`'s worker processes: their imports overlap the parse below (tested here first, so that no other
    # command imports multiprocessing at start)
    if sys.argv[1:3] == ["mine", "run"]:
        from uxbench.mining.workers import start_for_command

        start_for_command(sys.argv[1:])
    set_command(["uxbench", *sys.argv[1:]])  # what a run's summary says made it (secrets removed when shown)
    try:
        app()
    except UxbenchError as exc:  # raised outside a command (the group converts those inside one)
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(ERROR_EXIT)
    except KeyboardInterrupt:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        sys.exit(130)


_loaded()
