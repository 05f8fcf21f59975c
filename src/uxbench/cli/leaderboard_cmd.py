"""`uxbench leaderboard RUN_DIR...`: every task's runs ranked, with CIs, honest ties and scaling trends."""

from __future__ import annotations

from typing import Annotated

import typer

from uxbench.cli.options import format_option, width_option


def leaderboard(
    paths: Annotated[list[str], typer.Argument(help="Run directories of any task, globs (quoted: 'runs/eval-*') or parent directories (runs/).")],  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Tasks 2/3: rank by this judge (its key, or its PROVIDER:MODEL spec).", show_default="each run's primary judge")] = None,  # noqa: E501
    format: Annotated[str, format_option()] = "table",
    n_boot: Annotated[int, typer.Option("--n-boot", min=1, help="Bootstrap rounds (paired differences, trend CIs).")] = 2000,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Bootstrap and permutation seed.")] = 0,
    models: Annotated[str | None, typer.Option(help="A model table (YAML) extending the bundled one and $UXBENCH_MODELS.", show_default="the bundled table and $UXBENCH_MODELS")] = None,  # noqa: E501
    width: Annotated[int | None, width_option()] = None,
) -> None:
    from uxbench.data.model_meta import ModelTable
    from uxbench.report.leaderboard import leaderboard as build
    from uxbench.report.leaderboard_render import render_leaderboard

    report = build(paths, judge=judge, n_boot=n_boot, seed=seed, table=ModelTable.default(models))
    typer.echo(render_leaderboard(report, format, width=width), nl=False)  # type: ignore[arg-type]
