"""`uxbench score`: score a Task 2/3 run's generations with a judge, without regenerating them."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer


def score(
    run_dir: Annotated[Path, typer.Argument(help="A run directory made by `uxbench run --task eval|recovery`.")],
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="PROVIDER:MODEL of the judge.", show_default="none: --strategy-model only")] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider.", show_default="none")] = None,  # noqa: E501
    judge_mode: Annotated[str | None, typer.Option(help="grm (default) or pointwise.", show_default="grm")] = None,
    grm_threshold: Annotated[float | None, typer.Option(help="GRM: good when p(good) >= this (default 0.5).", show_default="0.5")] = None,  # noqa: E501
    judge_strategy: Annotated[str | None, typer.Option(help="pointwise: zero_shot | cot | few_shot | user_modeling.", show_default="zero_shot")] = None,  # noqa: E501
    judge_lang: Annotated[str | None, typer.Option(help="Judge template language: zh | en | auto.", show_default="auto")] = None,  # noqa: E501
    calibration: Annotated[Path | None, typer.Option(metavar="T1_RUN_DIR", help="A Task 1 run of the judge on replies with real users' labels: its Good-Acc and Bad-Acc correct the judge's Good% (docs/TRUST.md). Without --judge: attached to the run's judges that it measured, with no judge call.", show_default="none")] = None,  # noqa: E501
    strategy_model: Annotated[str | None, typer.Option(help="Task 3 runs: PROVIDER:MODEL that labels each recovery's strategy (with or without --judge).", show_default="none")] = None,  # noqa: E501
    strategy_arg: Annotated[list[str] | None, typer.Option("--strategy-arg", help="KEY=VALUE for the strategy model's provider.", show_default="none")] = None,  # noqa: E501
    primary: Annotated[bool | None, typer.Option("--primary/--no-primary", help="Make this the run's primary judge (default: when it has none).", show_default="when the run has no primary judge")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel judge calls.", show_default="the provider's")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the confidence intervals.")] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench")] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a score is recorded as failed.")] = 6,
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

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
    typer.echo(render_generative_summary(result.summary, "table", breakdowns=False))
    typer.echo(render_strategies(result.summary, "table"), nl=False)
    failed = sum(int(j.get("n_score_errors") or 0) for j in (result.summary.get("judges") or {}).values())
    unlabelled = unlabelled_recoveries(result.summary)
    if failed or unlabelled:
        what = [f"{failed} scores failed"] if failed else []
        what += [f"{unlabelled} recoveries have no strategy label (failed calls)"] if unlabelled else []
        console.print(f"[red]{' and '.join(what)}[/]; rerun the same command to retry them.")
        raise typer.Exit(1)
