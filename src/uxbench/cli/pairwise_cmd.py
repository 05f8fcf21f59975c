"""`uxbench pairwise RUN_A RUN_B --judge J`: which run's replies does a judge prefer, case by case?"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

_FLAGS = {"strategy": "--judge-strategy", "lang": "--judge-lang", "max_tokens": "--judge-max-tokens",
          "temperature": "--judge-temperature", "max_chars": "--max-chars"}


def pairwise(
    run_a: Annotated[Path, typer.Argument(help="Run directory A (Task 2/3).")],
    run_b: Annotated[Path, typer.Argument(help="Run directory B, made on the same data.")],
    judge: Annotated[str, typer.Option("--judge", "-j", help="PROVIDER:MODEL of the pairwise judge (any chat model).")],
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider.", show_default="none")] = None,  # noqa: E501
    judge_strategy: Annotated[str | None, typer.Option(help="zero_shot (answer A, B or tie; default) | cot (reason first).", show_default="zero_shot")] = None,  # noqa: E501
    judge_lang: Annotated[str | None, typer.Option(help="Judge template language: zh | en | auto.", show_default="auto")] = None,  # noqa: E501
    judge_temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the judge (default 0).", show_default="0")] = None,  # noqa: E501
    judge_max_tokens: Annotated[int | None, typer.Option(help="Token cap of the judge's answer.", show_default="the provider's")] = None,  # noqa: E501
    out: Annotated[Path | None, typer.Option(help="Output directory (default: runs/pairwise-<A>-vs-<B>-<hash>); rerun with the same one to resume.", show_default="runs/pairwise-<A>-vs-<B>-<hash>")] = None,  # noqa: E501
    limit: Annotated[int | None, typer.Option(help="Compare a deterministic subset of N shared cases.", show_default="all shared cases")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel judge calls.", show_default="the provider's")] = None,  # noqa: E501
    format: Annotated[str, typer.Option("--format", help="table | md | csv | json")] = "table",
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench")] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a verdict is recorded as failed.")] = 6,
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from pydantic import ValidationError
    from rich.console import Console

    from uxbench.cli.checks import common_numbers, not_blank, same_run
    from uxbench.cli.progress import RichProgress
    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.orchestrate.pairwise import PairwiseSpec, run_pairwise
    from uxbench.report.pairwise import render_pairwise
    from uxbench.report.render import FORMATS
    from uxbench.scoring.pairwise import PairwiseSettings

    if format not in FORMATS:
        raise ConfigError(f"--format must be one of {', '.join(FORMATS)}, not '{format}'.")
    not_blank("--judge", judge, hint="name the judge as PROVIDER:MODEL")
    common_numbers(concurrency=concurrency, max_attempts=max_attempts, timeout=timeout, limit=limit,
                   temperature=judge_temperature, max_tokens=judge_max_tokens,
                   temperature_option="--judge-temperature", max_tokens_option="--judge-max-tokens")
    if no_cache and cache_path is not None:
        raise ConfigError("--cache-path names a response cache and --no-cache turns the cache off: drop one.")
    same_run(run_a, run_b)
    values = {"strategy": judge_strategy, "lang": judge_lang, "temperature": judge_temperature,
              "max_tokens": judge_max_tokens}
    try:
        settings = PairwiseSettings.model_validate({k: v for k, v in values.items() if v is not None})
    except ValidationError as err:
        first = err.errors()[0]
        name = str(first["loc"][0]) if first["loc"] else "judge"
        raise ConfigError(f"{_FLAGS.get(name, name)}: {first['msg']} (got {first.get('input')!r})") from None
    args = parse_model_args(judge_arg, option="--judge-arg")
    spec = PairwiseSpec(run_a=run_a, run_b=run_b, judge=judge, judge_args=args, settings=settings,
                        out=out, limit=limit, concurrency=concurrency, use_cache=not no_cache,
                        cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout)
    console = Console(stderr=True)
    progress = RichProgress(console, enabled=not quiet)
    try:
        result = asyncio.run(run_pairwise(spec, progress))
    except KeyboardInterrupt:
        progress.stop()
        console.print("[yellow]Interrupted.[/] Finished verdicts are saved; rerun the same command to finish.")
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    typer.echo(render_pairwise(result.figures, format))  # type: ignore[arg-type]
    console.print(f"[bold]Comparison directory:[/] {result.out_dir}")
    failed = result.figures["invocation"]["failed_now"]
    if failed:
        console.print(f"[red]{failed} judge calls failed[/]; rerun the same command to retry them.")
        raise typer.Exit(1)
