"""`uxbench data validate|stats`."""

from __future__ import annotations

import json
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True)


_TASK_TITLES = {"judge": "Task 1 (judge)", "eval": "Task 2 (eval)", "recovery": "Task 3 (recovery)"}


@app.command("validate", help="Check every row of a data source the way `uxbench run` reads it; report invalid rows "
                              "with file, line and field, and which task each file's rows load as.")
def validate(
    path: Annotated[str, typer.Argument(help="File, directory or hf:REPO.")],
    task: Annotated[str | None, typer.Option(
        help="judge | eval | recovery: check the rows as this task, as `uxbench run --task` reads them "
             "(default: inferred per row).", show_default="from the file's fields")] = None,
    split: Annotated[str, typer.Option()] = "test",
    max_errors: Annotated[int, typer.Option(help="How many problems to list.")] = 20,
) -> None:
    from uxbench.cli.checks import at_least, not_blank
    from uxbench.data.loaders import load_cases
    from uxbench.data.stats import validate as validate_source

    not_blank("PATH", path, hint="give a file, a directory or hf:REPO")
    at_least("--max-errors", max_errors, 0, what="problems to list")
    source = load_cases(path, task=task, split=split, skip_invalid=True)  # type: ignore[arg-type]
    report = validate_source(source, max_errors=max(max_errors, 1))  # counted in full either way
    typer.echo(f"{source.description}: {report.n_valid} valid rows, {report.n_invalid} invalid")
    as_what = f"read as {_TASK_TITLES[task]}" if task else "task inferred per row (give --task to check as one task)"
    counts = [f"{title} {report.by_task[t]}" for t, title in _TASK_TITLES.items() if t in report.by_task]
    typer.echo(f"  {as_what}: " + (", ".join(counts) or "none"))
    if len(report.by_file) > 1:
        for name, per_task in report.by_file.items():
            typer.echo(f"    {name}: " + ", ".join(f"{t} {n}" for t, n in per_task.items()))
    for err in report.errors[:max_errors]:
        typer.echo(f"  {err}")
    if report.n_invalid > max_errors:
        typer.echo(f"  ... and {report.n_invalid - max_errors} more")
    if report.n_duplicate_ids:
        typer.echo(f"  {report.n_duplicate_ids} cases reuse an id with other content: "
                   + ", ".join(report.duplicate_ids[:5]))
    if report.n_label_without_reply:
        typer.echo(
            f"  {report.n_label_without_reply} rows carry a Task 1 label (ground_truth) but no reply, so they load as "
            f"Task 2 (eval) rows ({', '.join(report.label_without_reply_ids)}); a Task 1 row needs the judged reply "
            "(agent_response_full or response). Check with --task judge, or pass --task eval if they are Task 2 rows."
        )
    for note in report.read.notes():
        typer.echo(f"  note: {note}")
    if report.empty_reason is not None:
        typer.secho(f"error: no cases were read: {report.empty_reason}", err=True, fg=typer.colors.RED)
    if not report.ok:
        raise typer.Exit(1)


@app.command("stats", help="Counts, lengths, turns and label distributions of a data source.")
def stats(
    path: Annotated[str, typer.Argument(help="File, directory, hf:REPO, or 'demo' for the bundled demo set.")],
    task: Annotated[str | None, typer.Option(help="judge | eval | recovery", show_default="from the file's fields")] = None,  # noqa: E501
    split: Annotated[str, typer.Option()] = "test",
    format: Annotated[str, typer.Option("--format", help="table | json")] = "table",
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Skip invalid rows (counted) instead of stopping.")] = False,  # noqa: E501
) -> None:
    from uxbench.cli.checks import not_blank, one_of
    from uxbench.data.loaders import load_cases
    from uxbench.data.stats import dataset_stats

    not_blank("PATH", path, hint="give a file, a directory, hf:REPO or demo")
    one_of("--format", format, ("table", "json"))
    source = load_cases(None if path == "demo" else path, task=task, split=split, skip_invalid=skip_invalid)  # type: ignore[arg-type]
    result = dataset_stats(source)
    if format == "json":
        typer.echo(json.dumps(result, ensure_ascii=False, indent=2, default=str))
        return
    from uxbench.cli.data_view import render_data_stats

    typer.echo(render_data_stats(result))
