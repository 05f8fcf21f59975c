"""`uxbench report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories printed by `uxbench run`.")],
    format: Annotated[str, typer.Option("--format", help="table | md | csv | json")] = "table",
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.report.compare import compare_runs, load_run
    from uxbench.report.render import render, render_summary

    if format not in ("table", "md", "csv", "json"):
        raise ConfigError(f"--format must be table, md, csv or json, not '{format}'.")
    if len(run_dirs) == 1 and format != "csv":
        # One run: its headline figures with every breakdown.
        typer.echo(render_summary(load_run(run_dirs[0]).summary, format))  # type: ignore[arg-type]
        return
    typer.echo(render(compare_runs(run_dirs), format))  # type: ignore[arg-type]
