"""`uxbench run`."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Annotated

import typer

EMBEDDED_MODEL = "hf:embedded"
EMBEDDED_MAX_NEW_TOKENS = 16


def run(
    model: Annotated[str | None, typer.Option("--model", "-m", help="PROVIDER:MODEL, e.g. openai:gpt-4o-mini, hf:/path/to/model. Default: the embedded tiny demo model.")] = None,  # noqa: E501
    task: Annotated[str, typer.Option(help="judge (Task 1); eval and recovery arrive with the scoring layer.")] = "judge",  # noqa: E501
    data: Annotated[str | None, typer.Option(help="A .jsonl/.json/.parquet file, a directory of them, or hf:REPO (the official dataset). Default: the bundled demo set.")] = None,  # noqa: E501
    split: Annotated[str, typer.Option(help="Dataset split for hf: sources.")] = "test",
    limit: Annotated[int | None, typer.Option(help="Run a deterministic, class-balanced subset of N cases.")] = None,
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel calls (adapts down on 429 and overload).")] = None,  # noqa: E501
    formulation: Annotated[str, typer.Option(help="binary | three_class | likert")] = "binary",
    strategy: Annotated[str, typer.Option(help="zero_shot | cot | few_shot | user_modeling")] = "zero_shot",
    lang: Annotated[str | None, typer.Option(help="Template language: zh | en | auto (by the conversation's script; the default, except with the English-only embedded model, which gets en)")] = None,  # noqa: E501
    verdict_from: Annotated[str | None, typer.Option(help="text | logprobs (binary: p(good) vs p(bad) at the first answer token; default text, logprobs for the embedded model)")] = None,  # noqa: E501
    few_shot_k: Annotated[int | None, typer.Option(help="Examples for --strategy few_shot.")] = None,
    likert_scale: Annotated[int | None, typer.Option(help="Points of the Likert scale (4-7).")] = None,
    likert_threshold: Annotated[int | None, typer.Option(help="Likert score from which a reply counts as good.")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider: base_url, api_key_env, dtype, device, reasoning_effort, timeout ...")] = None,  # noqa: E501
    out: Annotated[Path | None, typer.Option(help="Run directory (default: ./runs/<task>-<model>-<config hash>).")] = None,  # noqa: E501
    fresh: Annotated[bool, typer.Option(help="Discard the records of an existing run with this config.")] = False,
    skip_invalid: Annotated[bool, typer.Option(help="Skip invalid data rows (reported) instead of stopping.")] = False,
    no_cache: Annotated[bool, typer.Option(help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file (default $UXBENCH_CACHE_DIR or ~/.cache/uxbench).")] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a sample is recorded as an error.")] = 6,
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.")] = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.progress import RichProgress
    from uxbench.models.registry import parse_model_args
    from uxbench.report.render import render_summary
    from uxbench.orchestrate.runner import RunSpec, execute

    console = Console(stderr=True)
    spec_model = model or EMBEDDED_MODEL
    model_args = parse_model_args(model_arg)
    if model is None:
        # A verdict is one short answer; capping generation keeps the offline demo to a couple of minutes.
        model_args.setdefault("max_new_tokens", str(EMBEDDED_MAX_NEW_TOKENS))
        lang = lang or "en"
        # A 135M model rarely writes the verdict word first; its next-token distribution still orders them.
        if formulation == "binary":
            verdict_from = verdict_from or "logprobs"
        console.print(
            f"[bold]Model:[/] {EMBEDDED_MODEL} (SmolLM2-135M-Instruct, run in-process on the CPU, English templates, "
            f"verdict from {verdict_from or 'text'}, max_new_tokens={model_args['max_new_tokens']}). "
            "[yellow]This is a tiny demo model: its verdicts are near chance. Name a real one with --model.[/]"
        )
    else:
        console.print(f"[bold]Model:[/] {spec_model}")
    if data is None:
        console.print("[bold]Data:[/] the bundled DEMO set (written by this project, not UXBench data). "
                      "Use --data for the official dataset.")
    task_options = {
        "formulation": formulation, "strategy": strategy, "lang": lang or "auto",
        "verdict_from": verdict_from, "few_shot_k": few_shot_k,
        "likert_scale": likert_scale, "likert_threshold": likert_threshold,
    }
    spec = RunSpec(
        task=task, model=spec_model, model_args=model_args, data=data, split=split,
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
    typer.echo(render_summary(result.summary, "table", breakdowns=False))
    n_errors = int(result.summary.get("n_errors") or 0)
    unparseable = (result.summary.get("metrics") or {}).get("unparseable") or {}
    if (unparseable.get("rate") or 0) > 0.5:
        console.print(
            "[yellow]Most answers could not be read as a verdict.[/] The raw outputs are in "
            f"{result.run_dir}/samples.jsonl (field raw_output, with parse_note); small models rarely keep to the "
            "answer format, and a larger judge or --strategy cot usually fixes it."
        )
    console.print(f"[bold]Run directory:[/] {result.run_dir}")
    if n_errors:
        errors = result.summary.get("errors") or []
        console.print(
            f"[red]{n_errors} of {result.summary.get('n_selected')} samples failed[/] and are not in the figures"
            + (f"; first error: {errors[0]}" if errors else "")
            + ". Rerun the same command to retry them."
        )
        raise typer.Exit(1)
