"""`uxbench plot`: a PNG or SVG of run directories or a mining output directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

_KIND_HELP = ("scenario: Task 1 Avg-Acc or Task 2/3 Good % per scenario, with 95% CI whiskers | reliability: "
              "Task 1 probability verdicts' calibration | selfpref: judge x model Good % heatmap | scaling: "
              "leaderboard figure by release date or size | funnel: what each mining stage kept | signals: "
              "mining signal rates per day.")


def plot(
    paths: Annotated[list[str], typer.Argument(
        help="Run directories (globs and parents too), or one `uxbench mine run` output directory.",
        metavar="RUN_DIR|MINE_DIR...")],
    kind: Annotated[str, typer.Option("--kind", "-k", help=_KIND_HELP)],
    out: Annotated[Path, typer.Option("--out", "-o", help="Output file; .png or .svg chooses the format.")],
    task: Annotated[str | None, typer.Option(
        help="selfpref, scaling: eval | recovery | judge.", show_default="the first task the runs hold")] = None,
    by: Annotated[str, typer.Option(help="scaling: release | size | params.")] = "release",
    n_boot: Annotated[int, typer.Option(min=1, help="selfpref, scaling: bootstrap rounds of the CIs.")] = 1000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    from uxbench.report.plot_data import chart_for
    from uxbench.report.plots import FORMATS, write

    if out.suffix.lower().lstrip(".") not in FORMATS:
        from uxbench.errors import ConfigError

        raise ConfigError(f"--out {out}: the file name must end in .png or .svg.")
    from uxbench.extras import require

    require("plot", "uxbench plot")
    chart = chart_for(kind, paths, task=task, by=by, n_boot=n_boot, seed=seed)
    typer.echo(f"Wrote {write(chart, out)}")
