"""`uxbench run`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated, Optional

import typer

EMBEDDED_MODEL = "hf:embedded"


def run(
    model: Annotated[Optional[str], typer.Option("--model", "-m", help="PROVIDER:MODEL, e.g. openai:gpt-4o-mini, hf:/path/to/model. Default: the embedded tiny demo model.")] = None,  # noqa: UP007,E501
    task: Annotated[str, typer.Option(help="judge (Task 1). eval and recovery arrive with the scoring layer.")] = "judge",
    data: Annotated[Optional[str], typer.Option(help="A .jsonl/.json/.parquet file, a directory of them, or hf:REPO (the official dataset). Default: the bundled demo set.")] = None,  # noqa: UP007,E501
    split: Annotated[str, typer.Option(help="Dataset split for hf: sources.")] = "test",
    limit: Annotated[Optional[int], typer.Option(help="Run a deterministic, class-balanced subset of N cases.")] = None,  # noqa: UP007
    concurrency: Annotated[Optional[int], typer.Option(help="Maximum parallel calls (adapts down on 429 and overload).")] = None,  # noqa: UP007,E501
    formulation: Annotated[str, typer.Option(help="binary | three_class | likert")] = "binary",
    strategy: Annotated[str, typer.Option(help="zero_shot | cot | few_shot | user_modeling")] = "zero_shot",
    lang: Annotated[str, typer.Option(help="Template language: zh | en | auto (by the conversation's script)")] = "auto",
    few_shot_k: Annotated[Optional[int], typer.Option(help="Examples for --strategy few_shot.")] = None,  # noqa: UP007
    likert_scale: Annotated[Optional[int], typer.Option(help="Points of the Likert scale (4-7).")] = None,  # noqa: UP007
    likert_threshold: Annotated[Optional[int], typer.Option(help="Likert score from which a reply counts as good.")] = None,  # noqa: UP007,E501
    model_arg: Annotated[Optional[list[str]], typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider: base_url, api_key_env, dtype, device, reasoning_effort, timeout ...")] = None,  # noqa: UP007,E501
    out: Annotated[Optional[Path], typer.Option(help="Run directory (default: ./runs/<task>-<model>-<config hash>).")] = None,  # noqa: UP007,E501
    fresh: Annotated[bool, typer.Option(help="Discard the records of an existing run with this configuration.")] = False,
    skip_invalid: Annotated[bool, typer.Option(help="Skip invalid data rows (reported) instead of stopping.")] = False,
    no_cache: Annotated[bool, typer.Option(help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Optional[Path], typer.Option(help="Response cache file (default $UXBENCH_CACHE_DIR or ~/.cache/uxbench).")] = None,  # noqa: UP007,E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a sample is recorded as an error.")] = 6,
    timeout: Annotated[Optional[float], typer.Option(help="Seconds per call attempt.")] = None,  # noqa: UP007
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.progress import RichProgress
    from uxbench.models.registry import parse_model_args
    from uxbench.report.render import render_summary
    from uxbench.runs.runner import RunSpec, execute

    console = Console(stderr=True)
    spec_model = model or EMBEDDED_MODEL
    if model is None:
        console.print(
            f"[bold]Model:[/] {EMBEDDED_MODEL} (SmolLM2-135M-Instruct, run in-process). "
            "[yellow]This is a tiny demo model: its verdicts are near chance. Name a real one with --model.[/]"
        )
    else:
        console.print(f"[bold]Model:[/] {spec_model}")
    if data is None:
        console.print("[bold]Data:[/] the bundled DEMO set (written by this project, not UXBench data). "
                      "Use --data for the official dataset.")
    task_options = {
        "formulation": formulation, "strategy": strategy, "lang": lang, "few_shot_k": few_shot_k,
        "likert_scale": likert_scale, "likert_threshold": likert_threshold,
    }
    spec = RunSpec(
        task=task, model=spec_model, model_args=parse_model_args(model_arg), data=data, split=split,
        limit=limit, concurrency=concurrency, task_options=task_options, out=out, fresh=fresh,
        skip_invalid=skip_invalid, use_cache=not no_cache, cache_path=cache_path,
        max_attempts=max_attempts, timeout_s=timeout,
    )
    progress = RichProgress(console, enabled=not quiet)
    try:
        result = asyncio.run(execute(spec, progress=progress))
    except KeyboardInterrupt:
        progress.stop()
        where = f" in {progress.run_dir}" if progress.run_dir else ""
        console.print(f"[yellow]Interrupted.[/] Finished samples are saved{where}; "
                      "rerun the same command to finish the rest.")
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    typer.echo(render_summary(result.summary, "table"))
    console.print(f"[bold]Run directory:[/] {result.run_dir}")
