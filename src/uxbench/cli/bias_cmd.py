"""`uxbench bias RUN_DIR...`: self-preference, length bias and agreement of the judges that scored the runs."""

from __future__ import annotations

from typing import Annotated

import typer

from uxbench.cli.options import format_option, width_option


def bias(
    paths: Annotated[list[str], typer.Argument(help="Run directories (Tasks 2/3 scored by one or more judges; Task 1 runs for calibration), `uxbench pairwise` directories, globs or parent directories.")],  # noqa: E501
    format: Annotated[str, format_option()] = "table",
    n_boot: Annotated[int, typer.Option("--n-boot", min=1, help="Bootstrap rounds (kappa, length-controlled Good%).")] = 1000,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    models: Annotated[str | None, typer.Option(help="A model table (YAML) extending the bundled one and $UXBENCH_MODELS.", show_default="the bundled table and $UXBENCH_MODELS")] = None,  # noqa: E501
    width: Annotated[int | None, width_option()] = None,
) -> None:
    from uxbench.data.model_meta import ModelTable
    from uxbench.report.bias import bias_report
    from uxbench.report.bias_render import render_bias

    report = bias_report(paths, n_boot=n_boot, seed=seed, table=ModelTable.default(models))
    typer.echo(render_bias(report, format, width=width), nl=False)  # type: ignore[arg-type]
