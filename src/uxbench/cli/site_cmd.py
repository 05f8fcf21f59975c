"""`uxbench site build`: the leaderboard as a static site (HTML + JSON, no CDN) that opens from the file system.

A subcommand of its own rather than `uxbench leaderboard build`: `uxbench leaderboard PATHS...` takes any
directory, and a run directory named `build` would then be read as the subcommand."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, add_completion=False)


@app.command("build", help="Write the leaderboard of these runs as a static site into --out.")
def build(
    paths: Annotated[list[str], typer.Argument(help="Run directories of any task, globs or parent directories.")],
    out: Annotated[Path, typer.Option(help="The site directory (created).")],
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Tasks 2/3: rank by this judge (spec, label or key).", show_default="each run's primary judge")] = None,  # noqa: E501
    calibration: Annotated[list[Path] | None, typer.Option(metavar="T1_RUN_DIR", help="Tasks 2/3: a Task 1 run of a judge; its error rates correct that judge's Good% (repeatable).", show_default="the runs' own calibrations")] = None,  # noqa: E501
    n_boot: Annotated[int | None, typer.Option("--n-boot", min=1, help="Bootstrap rounds of the paired differences (as `uxbench leaderboard`).", show_default="2000")] = None,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    models: Annotated[str | None, typer.Option(help="A model table (YAML) extending the bundled one.", show_default="the bundled table and $UXBENCH_MODELS")] = None,  # noqa: E501
    title: Annotated[str, typer.Option(help="The page title.")] = "UXBench leaderboard",
) -> None:
    from uxbench.cli.view_cmd import require_web

    require_web("uxbench site build")
    from uxbench.data.model_meta import ModelTable
    from uxbench.metrics.proportions import DEFAULT_N_BOOT
    from uxbench.web.site import build_site

    index = build_site(paths, out, judge=judge, calibration=calibration or [], n_boot=n_boot or DEFAULT_N_BOOT,
                       seed=seed, table=ModelTable.default(models), title=title)
    import json

    for note in json.loads((index.parent / "leaderboard.json").read_text("utf-8")).get("notes") or []:
        typer.echo(f"Note: {note}", err=True)  # the site shows them too (a calibration that measured no judge ...)
    typer.echo(f"Site written: {index} (open it in a browser, or publish {out} as it is)")
