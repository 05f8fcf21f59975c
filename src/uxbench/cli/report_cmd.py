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
    from uxbench.report.compare import compare_runs
    from uxbench.report.render import render

    if format not in ("table", "md", "csv", "json"):
        raise ConfigError(f"--format must be table, md, csv or json, not '{format}'.")
    typer.echo(render(compare_runs(run_dirs), format))  # type: ignore[arg-type]
