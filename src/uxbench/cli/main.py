"""`uxbench` entry point. Heavy modules are imported inside commands so `--help` stays fast."""

from __future__ import annotations

import sys

import typer

from uxbench.cli import data_cmd, mine_cmd, report_cmd, run_cmd

app = typer.Typer(
    name="uxbench",
    help="Measure how AI assistants make their users feel (UXBench: UX Judge, UX Eval, UX Recovery).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.command("run", help="Run a task (default: Task 1, UX Judge) and write a run directory.")(run_cmd.run)
app.command("report", help="Compare finished runs: a table with 95% confidence intervals.")(report_cmd.report)
app.add_typer(data_cmd.app, name="data", help="Check and describe data files before a run.")
app.add_typer(mine_cmd.app, name="mine", help="Mine chat logs for dissatisfaction signals and build test cases.")


@app.command("providers", help="List the model providers and how to name a model.")
def providers() -> None:
    from uxbench.models.registry import provider_names

    for name in provider_names():
        typer.echo(name)


def main() -> None:
    from uxbench.errors import UxbenchError

    try:
        app()
    except UxbenchError as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        typer.secho("interrupted", fg=typer.colors.YELLOW, err=True)
        sys.exit(130)
