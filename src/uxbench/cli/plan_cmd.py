"""`uxbench plan`: how many cases a difference needs, from pilot runs or a stated rate."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from uxbench.cli.options import format_option


def plan(
    difference: Annotated[float, typer.Option(metavar="SHARE", help="The difference to detect, as a share (0.02 = 2 points of Good%).")],  # noqa: E501
    task: Annotated[str, typer.Option(metavar="TASK", help="judge (Avg-Acc), eval (Good%) or recovery (Recovery Rate).")] = "eval",  # noqa: E501
    pilot: Annotated[list[Path] | None, typer.Option(metavar="RUN_DIR", help="A finished run of the task (repeat: two or more on the same data measure how often systems disagree).", show_default="none")] = None,  # noqa: E501
    rate: Annotated[float | None, typer.Option(metavar="P", help="Without pilots: the expected rate; the two systems' outcomes are taken as independent.", show_default="none")] = None,  # noqa: E501
    discordance: Annotated[float | None, typer.Option(metavar="PSI", help="Without pilots: the share of cases on which the two systems disagree.", show_default="none")] = None,  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", metavar="JUDGE", help="Tasks 2/3 pilots: the judge whose verdicts count (spec, label or key).", show_default="each pilot's primary judge")] = None,  # noqa: E501
    alpha: Annotated[float, typer.Option(metavar="ALPHA", help="Significance level (two-sided).")] = 0.05,
    power: Annotated[float, typer.Option(metavar="POWER", help="Power: the chance of detecting a real difference of that size.")] = 0.8,  # noqa: E501
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.report.plan import plan as build
    from uxbench.report.plan_render import render_plan
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise ConfigError("--alpha and --power are shares between 0 and 1 (e.g. 0.05 and 0.8).")
    if judge is not None and task == "judge":
        raise ConfigError("--judge picks the verdicts of Task 2/3 pilots; Task 1 has no judge step.")
    if judge is not None and not pilot:
        raise ConfigError("--judge applies to --pilot runs.")
    report = build(task, difference, pilots=pilot or [], rate=rate, discordance=discordance, judge=judge,
                   alpha=alpha, power=power)
    typer.echo(render_plan(report, format), nl=False)  # type: ignore[arg-type]
