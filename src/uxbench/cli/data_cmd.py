"""`uxbench data validate|stats`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True)


@app.command("validate", help="Check every row of a data source; report invalid rows with file, line and field.")
def validate(
    path: Annotated[str, typer.Argument(help="File, directory or hf:REPO.")],
    task: Annotated[str | None, typer.Option(help="judge | eval | recovery (default: inferred per row).")] = None,
    split: Annotated[str, typer.Option()] = "test",
    max_errors: Annotated[int, typer.Option(help="How many problems to list.")] = 20,
) -> None:
    from uxbench.data.loaders import load_cases
    from uxbench.data.stats import validate as validate_source

    source = load_cases(path, task=task, split=split, skip_invalid=True)  # type: ignore[arg-type]
    report = validate_source(source)
    typer.echo(f"{source.description}: {report.n_valid} valid rows, {report.n_invalid} invalid")
    for err in report.errors[:max_errors]:
        typer.echo(f"  {err}")
    if report.n_invalid > max_errors:
        typer.echo(f"  ... and {report.n_invalid - max_errors} more")
    if report.n_invalid:
        raise typer.Exit(1)


@app.command("stats", help="Counts, lengths, turns and label distributions of a data source.")
def stats(
    path: Annotated[str, typer.Argument(help="File, directory, hf:REPO, or 'demo' for the bundled demo set.")],
    task: Annotated[str | None, typer.Option(help="judge | eval | recovery")] = None,
    split: Annotated[str, typer.Option()] = "test",
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    skip_invalid: Annotated[bool, typer.Option(help="Skip invalid rows (counted) instead of stopping.")] = False,
) -> None:
    from uxbench.data.loaders import load_cases
    from uxbench.data.stats import dataset_stats

    source = load_cases(None if path == "demo" else path, task=task, split=split, skip_invalid=skip_invalid)  # type: ignore[arg-type]
    result = dataset_stats(source)
    if format == "json":
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2, default=str))
        return
    from uxbench.cli.data_view import render_data_stats

    typer.echo(render_data_stats(result))
