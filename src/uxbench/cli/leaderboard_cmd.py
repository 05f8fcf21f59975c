"""`uxbench leaderboard RUN_DIR...`: every task's runs ranked, with CIs, honest ties and scaling trends."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from uxbench.cli.options import format_option, width_option

N_BOOT_HELP = "2000"


def leaderboard(
    paths: Annotated[list[str], typer.Argument(help="Run directories of any task, globs (quoted: 'runs/eval-*') or parent directories (runs/).")],  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Tasks 2/3: rank by this judge (its PROVIDER:MODEL spec, its label as the tables show it, or its key).", show_default="each run's primary judge")] = None,  # noqa: E501
    calibration: Annotated[list[Path] | None, typer.Option(metavar="T1_RUN_DIR", help="Tasks 2/3: a Task 1 run of a judge on labelled replies; its error rates correct that judge's Good% (repeat for several judges; docs/TRUST.md).", show_default="the runs' own calibrations")] = None,  # noqa: E501
    format: Annotated[str, format_option()] = "table",
    n_boot: Annotated[int | None, typer.Option("--n-boot", min=1, help="Bootstrap rounds (paired differences, trend CIs); the web view and the site use the same.", show_default=N_BOOT_HELP)] = None,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Bootstrap and permutation seed.")] = 0,
    models: Annotated[str | None, typer.Option(help="A model table (YAML) extending the bundled one and $UXBENCH_MODELS.", show_default="the bundled table and $UXBENCH_MODELS")] = None,  # noqa: E501
    width: Annotated[int | None, width_option()] = None,
) -> None:
    from uxbench.data.model_meta import ModelTable
    from uxbench.metrics.proportions import DEFAULT_N_BOOT
    from uxbench.report.leaderboard import leaderboard as build
    from uxbench.report.leaderboard_render import render_leaderboard

    report = build(paths, judge=judge, calibration=calibration or [], n_boot=n_boot or DEFAULT_N_BOOT, seed=seed,
                   table=ModelTable.default(models))
    typer.echo(render_leaderboard(report, format, width=width), nl=False)  # type: ignore[arg-type]
