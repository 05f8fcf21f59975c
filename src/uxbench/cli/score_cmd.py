"""`uxbench score`: score a Task 2/3 run's generations with a judge, without regenerating them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

from uxbench.cli.options import PANEL_JUDGE, PANEL_OUTPUT, PANEL_RUNTIME, format_option, judge_args_option, judge_option

_J, _RT, _O = PANEL_JUDGE, PANEL_RUNTIME, PANEL_OUTPUT


def score(
    run_dir: Annotated[Path, typer.Argument(help="A run directory made by `uxbench run --task eval|recovery`.")],
    judge: Annotated[str | None, judge_option("PROVIDER:MODEL of the judge.", show_default="none: --strategy-model only")] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, judge_args_option()] = None,
    judge_mode: Annotated[str | None, typer.Option(help="grm or pointwise.", show_default="grm", rich_help_panel=_J)] = None,  # noqa: E501
    grm_threshold: Annotated[float | None, typer.Option(help="GRM: good when p(good) >= this.", show_default="0.5", rich_help_panel=_J)] = None,  # noqa: E501
    judge_strategy: Annotated[str | None, typer.Option(help="pointwise: zero_shot | cot | few_shot | user_modeling.", show_default="zero_shot", rich_help_panel=_J)] = None,  # noqa: E501
    judge_lang: Annotated[str | None, typer.Option(help="Judge template language: zh | en | auto. A judge trained on Chinese answers (the UXBench GRM: 好/差) needs zh.", show_default="auto", rich_help_panel=_J)] = None,  # noqa: E501
    calibration: Annotated[Path | None, typer.Option(metavar="T1_RUN_DIR", help="A Task 1 run of the judge on replies with real users' labels: its Good-Acc and Bad-Acc correct the judge's Good% (docs/TRUST.md). Without --judge: attached to the run's judges that it measured, with no judge call.", show_default="none", rich_help_panel=_J)] = None,  # noqa: E501
    primary: Annotated[bool | None, typer.Option("--primary/--no-primary", help="Make --judge the run's primary judge even when the run has another one (--no-primary: never). The first judge of a run is its primary judge; a later one scores beside it.", show_default="when the run has no primary judge", rich_help_panel=_J)] = None,  # noqa: E501
    strategy_model: Annotated[str | None, typer.Option(help="Task 3 runs: PROVIDER:MODEL that labels each recovery's strategy (with or without --judge).", show_default="none", rich_help_panel=_J)] = None,  # noqa: E501
    strategy_arg: Annotated[list[str] | None, typer.Option("--strategy-arg", metavar="KEY=VALUE", help="An argument of the strategy model's provider (as -M).", show_default="none", rich_help_panel=_J)] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel judge calls.", show_default="the provider's", rich_help_panel=_RT)] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a score is recorded as failed.", rich_help_panel=_RT)] = 6,  # noqa: E501
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's", rich_help_panel=_RT)] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_RT)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR/responses.sqlite or ~/.cache/uxbench/responses.sqlite", rich_help_panel=_RT)] = None,  # noqa: E501
    format: Annotated[str, format_option(help="How to print the figures at the end: a table, Markdown, CSV or JSON.")] = "table",  # noqa: E501
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the confidence intervals.", rich_help_panel=_O)] = 2000,  # noqa: E501
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.", rich_help_panel=_O)] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.", rich_help_panel=_O)] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.checks import common_numbers, judge_mode_options, not_blank
    from uxbench.cli.progress import RichProgress
    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.orchestrate.relabel import label_run
    from uxbench.orchestrate.rescore import calibrate_run, score_run
    from uxbench.orchestrate.spec import JudgeSpec, StrategySpec
    from uxbench.report.generative import render_generative_summary
    from uxbench.report.strategies import render_strategies, unlabelled_recoveries
    from uxbench.scoring.scorer import judge_settings
    from uxbench.tasks.base import SummaryOptions

    console = Console(stderr=True)
    not_blank("--judge", judge, hint="name the judge as PROVIDER:MODEL")
    common_numbers(concurrency=concurrency, n_boot=n_boot, max_attempts=max_attempts, timeout=timeout)
    judge_mode_options(judge_mode, grm_threshold=grm_threshold, judge_strategy=judge_strategy)
    if no_cache and cache_path is not None:
        raise ConfigError("--cache-path names a response cache and --no-cache turns the cache off: drop one.")
    if judge is None and strategy_model is None and calibration is None:
        raise ConfigError("Name a judge (--judge PROVIDER:MODEL), a strategy model (--strategy-model, Task 3 runs), "
                          "a calibration run (--calibration), or several.")
    if judge is None and (judge_arg or judge_mode or grm_threshold is not None or judge_strategy or judge_lang):
        raise ConfigError("--judge-arg, --judge-mode, --grm-threshold, --judge-strategy and --judge-lang need --judge.")
    if strategy_model is None and strategy_arg:
        raise ConfigError("--strategy-arg needs --strategy-model.")
    settings = {"mode": judge_mode, "threshold": grm_threshold, "strategy": judge_strategy, "lang": judge_lang}
    summary_options = SummaryOptions(n_boot=n_boot, seed=ci_seed)
    progress = RichProgress(console, enabled=not quiet)
    judge_key: str | None = None
    try:
        if judge is not None:
            spec = JudgeSpec(
                model=judge, args=parse_model_args(judge_arg, option="--judge-arg"), concurrency=concurrency,
                settings=judge_settings(**settings),
            )
            result = asyncio.run(score_run(
                run_dir, spec, summary_options=summary_options, make_primary=primary, use_cache=not no_cache,
                cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout, progress=progress,
                calibration=calibration,
            ))
            judge_key = str((result.summary.get("scoring") or {}).get("judge") or "")
        elif calibration is not None:
            result = asyncio.run(calibrate_run(run_dir, calibration, summary_options=summary_options))
        if strategy_model is not None:
            labeller = StrategySpec(model=strategy_model, concurrency=concurrency,
                                    args=parse_model_args(strategy_arg, option="--strategy-arg"))
            result = asyncio.run(label_run(
                run_dir, labeller, summary_options=summary_options, use_cache=not no_cache, cache_path=cache_path,
                max_attempts=max_attempts, timeout_s=timeout, progress=progress,
            ))
    except KeyboardInterrupt:
        progress.stop()
        console.print("[yellow]Interrupted.[/] Finished scores are saved; rerun the same command to finish.")
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    typer.echo(render_generative_summary(result.summary, format, breakdowns=False), nl=False)  # type: ignore[arg-type]
    typer.echo(render_strategies(result.summary, format), nl=False)  # type: ignore[arg-type]
    judges = result.summary.get("judges") or {}
    failed = int((judges.get(judge_key) or {}).get("n_score_errors") or 0) if judge_key else 0
    unlabelled = unlabelled_recoveries(result.summary) if strategy_model is not None else 0
    others = {k: int(j.get("n_score_errors") or 0) for k, j in judges.items() if k != judge_key}
    if any(others.values()):  # failures of other judges: theirs to retry, not this command's outcome
        console.print("[yellow]Note:[/] other judges of this run have failed scores: " + ", ".join(
            f"{k} {n}" for k, n in others.items() if n) + " (rerun `uxbench score` with that judge to retry them).")
    if failed or unlabelled:
        what = [f"{failed} scores failed"] if failed else []
        what += [f"{unlabelled} recoveries have no strategy label (failed calls)"] if unlabelled else []
        console.print(f"[red]{' and '.join(what)}[/]; rerun the same command to retry them.")
        raise typer.Exit(1)
