"""`uxbench run`: one task, or the whole protocol (`--task judge,eval,recovery`)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from uxbench.orchestrate.runner import RunResult
    from uxbench.orchestrate.spec import RunSpec

EMBEDDED_MODEL = "hf:embedded"
EMBEDDED_MAX_NEW_TOKENS = 16
"""Task 1 with the embedded model: a verdict is one short answer."""
EMBEDDED_RUBRIC_TOKENS = 160
"""Task 1's rubric formulation with the embedded model: room for one score per dimension (FLASK has 12)."""
EMBEDDED_REPLY_TOKENS = 64
"""Tasks 2/3 with the embedded model: a short reply keeps the offline demo to about a minute."""
_MODEL_HELP = "PROVIDER:MODEL, e.g. openai:gpt-4o-mini, hf:/path/to/model (`uxbench providers` shows each provider's)."
_TASK_HELP = ("judge (Task 1), eval (Task 2), recovery (Task 3), or several separated by commas "
              "(judge,eval,recovery: the whole protocol, one summary).")
_JUDGE_HELP = ("PROVIDER:MODEL of the judge that scores Tasks 2/3, e.g. openai:UXBench-GRM -J base_url=... "
               "With the embedded model, the default is the embedded model under the GRM protocol.")


def run(
    model: Annotated[str | None, typer.Option("--model", "-m", help=_MODEL_HELP, show_default="hf:embedded, the tiny demo model")] = None,  # noqa: E501
    task: Annotated[str, typer.Option(help=_TASK_HELP)] = "judge",
    data: Annotated[str | None, typer.Option(help="A .jsonl/.json/.parquet file, a directory of them, hf:REPO (the official dataset), or demo (the bundled demo set).", show_default="demo, the bundled demo set")] = None,  # noqa: E501
    split: Annotated[str, typer.Option(help="Dataset split for hf: sources.")] = "test",
    limit: Annotated[int | None, typer.Option(help="Run a deterministic, class-balanced subset of N cases.", show_default="all cases")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel calls (adapts down on 429 and overload).", show_default="the provider's")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider of --model: base_url, api_key_env, dtype, device, timeout ...", show_default="none")] = None,  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help=_JUDGE_HELP, show_default="hf:embedded with the embedded model, else none")] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider (as -M).", show_default="none")] = None,  # noqa: E501
    judge_mode: Annotated[str | None, typer.Option(help="grm (one token, verdict from p(good) / (p(good) + p(bad))) or pointwise (the judge writes its verdict: LLM-as-a-judge for judges without logprobs).", show_default="grm")] = None,  # noqa: E501
    grm_threshold: Annotated[float | None, typer.Option(help="GRM: a reply is good when p(good) >= this.", show_default="0.5")] = None,  # noqa: E501
    judge_strategy: Annotated[str | None, typer.Option(help="pointwise judge: zero_shot | cot | few_shot | user_modeling.", show_default="zero_shot")] = None,  # noqa: E501
    judge_lang: Annotated[str | None, typer.Option(help="Judge template language: zh | en | auto.", show_default="en with the embedded judge, else auto")] = None,  # noqa: E501
    formulation: Annotated[str | None, typer.Option(help="Task 1: binary | three_class | likert | rubric", show_default="binary")] = None,  # noqa: E501
    rubric: Annotated[str | None, typer.Option(help="Task 1 with --formulation rubric: mt_bench | flask | helpsteer2 | ux_general, or a rubric file of your own (YAML / JSON with the fields of the bundled ones).", show_default="mt_bench")] = None,  # noqa: E501
    strategy: Annotated[str | None, typer.Option(help="Task 1: zero_shot | cot | few_shot | user_modeling", show_default="zero_shot")] = None,  # noqa: E501
    lang: Annotated[str | None, typer.Option(help="Template language: zh | en | auto (by the conversation's script).", show_default="auto; en with the embedded model")] = None,  # noqa: E501
    verdict_from: Annotated[str | None, typer.Option(help="Task 1: text | logprobs (binary: p(good) vs p(bad) at the first answer token).", show_default="text; logprobs with the embedded model")] = None,  # noqa: E501
    few_shot_k: Annotated[int | None, typer.Option(help="Task 1: examples for --strategy few_shot.", show_default="2")] = None,  # noqa: E501
    likert_scale: Annotated[int | None, typer.Option(help="Task 1: points of the Likert scale (4-7).", show_default="5")] = None,  # noqa: E501
    likert_threshold: Annotated[int | None, typer.Option(help="Task 1: Likert score from which a reply counts as good.", show_default="above the scale's midpoint")] = None,  # noqa: E501
    system_prompt: Annotated[str | None, typer.Option(help="Task 2: a preset (helpful, ux, empathetic, none), a file, or literal text; none is the method's.", show_default="none")] = None,  # noqa: E501
    recovery_layout: Annotated[str | None, typer.Option(help="Task 3: multi_message | coach", show_default="multi_message")] = None,  # noqa: E501
    recovery_strategy: Annotated[str | None, typer.Option(help="Task 3: plain | cot | dimension_aware | critique", show_default="plain")] = None,  # noqa: E501
    strategy_model: Annotated[str | None, typer.Option(help="Task 3: PROVIDER:MODEL that also labels each recovery's strategy (apology, agreement, error_diagnosis, humor, direct_fix, clarification); rules always label it.", show_default="none: rules only")] = None,  # noqa: E501
    strategy_arg: Annotated[list[str] | None, typer.Option("--strategy-arg", help="KEY=VALUE for the strategy model's provider (as -M).", show_default="none")] = None,  # noqa: E501
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the model under test.", show_default="Task 1: 0, Tasks 2/3: 0.7")] = None,  # noqa: E501
    max_tokens: Annotated[int | None, typer.Option(help="Token cap of the model under test.", show_default="Task 1: the provider's, Tasks 2/3: 2048")] = None,  # noqa: E501
    reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the model under test: low | medium | high.", show_default="the provider's")] = None,  # noqa: E501
    seed: Annotated[int | None, typer.Option(help="Tasks 2/3: sampling seed, where the provider supports one.", show_default="none")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the confidence intervals (summary only).")] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed (summary only).")] = 0,
    out: Annotated[Path | None, typer.Option(help="Run directory; with several tasks, one sub-directory each.", show_default="runs/<task>-<model>-<config hash>")] = None,  # noqa: E501
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard the records of an existing run with this config.")] = False,  # noqa: E501
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Skip invalid data rows (reported) instead of stopping.")] = False,  # noqa: E501
    curation: Annotated[Path | None, typer.Option(help="A curation file (curation.sqlite from `uxbench view`): its excluded cases are left out.", show_default="curation.sqlite beside the data, when there is one")] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench")] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a sample is recorded as an error.")] = 6,
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.orchestrate.spec import JudgeSpec, RunSpec, StrategySpec
    from uxbench.scoring.scorer import judge_settings
    from uxbench.tasks.base import SummaryOptions
    from uxbench.tasks.registry import TASK_NAMES

    console = Console(stderr=True)
    tasks = [t.strip() for t in task.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASK_NAMES]
    if not tasks or unknown:
        import difflib

        close = difflib.get_close_matches(unknown[0], TASK_NAMES, n=1) if unknown else []
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"Unknown task '{unknown[0] if unknown else task}'. Tasks: {', '.join(TASK_NAMES)}.{hint}")
    embedded = model is None
    spec_model = model or EMBEDDED_MODEL
    model_args = parse_model_args(model_arg, option="--model-arg")
    judge_spec: JudgeSpec | None = None
    generative = [t for t in tasks if t != "judge"]
    if generative and (judge is not None or embedded):
        settings: dict[str, Any] = {"mode": judge_mode, "threshold": grm_threshold, "strategy": judge_strategy,
                                    "lang": judge_lang or ("en" if judge is None else None)}
        judge_spec = JudgeSpec(
            model=judge or EMBEDDED_MODEL, args=parse_model_args(judge_arg, option="--judge-arg"),
            settings=judge_settings(**settings),
        )
    elif judge_arg or judge_mode or grm_threshold is not None:
        raise ConfigError("--judge-arg, --judge-mode and --grm-threshold need --judge (Tasks 2/3 only).")
    if judge is not None and not generative:
        raise ConfigError(
            "Task 1 has no judge step: the model under test (--model) is the judge. Drop --judge, or add "
            "--task eval / recovery."
        )
    strategy_spec = None
    if strategy_model is not None:
        if "recovery" not in tasks:
            raise ConfigError(f"--strategy-model labels Task 3 recoveries, but --task is {','.join(tasks)}: "
                              "add recovery.")
        strategy_spec = StrategySpec(model=strategy_model, args=parse_model_args(strategy_arg, option="--strategy-arg"))
    elif strategy_arg:
        raise ConfigError("--strategy-arg needs --strategy-model.")
    if system_prompt is not None and Path(system_prompt).is_file():
        system_prompt = Path(system_prompt).read_text(encoding="utf-8")

    _announce(console, spec_model, embedded, tasks, judge_spec, data)
    _announce_curation(console, data, curation)
    common = {"temperature": temperature, "max_tokens": max_tokens, "reasoning_effort": reasoning_effort}
    options: dict[str, dict[str, Any]] = {
        "judge": {**common, "formulation": formulation, "strategy": strategy, "lang": lang,
                  "verdict_from": verdict_from, "few_shot_k": few_shot_k, "likert_scale": likert_scale,
                  "likert_threshold": likert_threshold, "rubric": rubric},
        "eval": {**common, "lang": lang, "seed": seed, "system_prompt": system_prompt},
        "recovery": {**common, "lang": lang, "seed": seed, "layout": recovery_layout,
                     "strategy": recovery_strategy},
    }
    _reject_foreign_options(tasks, options)
    specs: list[RunSpec] = []
    for name in tasks:
        args = dict(model_args)
        opts = options[name]
        if embedded:
            opts = _embedded_defaults(name, opts, args)
        specs.append(RunSpec(
            task=name, model=spec_model, model_args=args, judge=judge_spec if name != "judge" else None,
            strategy_model=strategy_spec if name == "recovery" else None,
            data=data, curation=curation, split=split, limit=limit, concurrency=concurrency, task_options=opts,
            summary=SummaryOptions(n_boot=n_boot, seed=ci_seed),
            out=(out / name if out is not None and len(tasks) > 1 else out), fresh=fresh,
            skip_invalid=skip_invalid, use_cache=not no_cache, cache_path=cache_path,
            max_attempts=max_attempts, timeout_s=timeout,
        ))
    results = [_execute(console, spec, quiet) for spec in specs]
    _print_results(console, results)


def _announce_curation(console: Console, data: str | None, explicit: Path | None) -> None:
    from uxbench.runs.curation import Curation, curation_file

    path = curation_file(data, explicit)
    if path is not None:
        console.print(f"[bold]Curation:[/] {len(Curation(path).excluded())} excluded case ids in {path} are left out.")


def _announce(
    console: Console, spec_model: str, embedded: bool, tasks: list[str], judge: Any, data: str | None
) -> None:
    if embedded:
        console.print(
            f"[bold]Model:[/] {EMBEDDED_MODEL} (SmolLM2-135M-Instruct, run in-process on the CPU, English templates). "
            "[yellow]This is a tiny demo model: its verdicts and replies are near chance. Name a real one with "
            "--model.[/]"
        )
    else:
        console.print(f"[bold]Model:[/] {spec_model}")
    if judge is not None:
        console.print(f"[bold]Judge:[/] {judge.model} ({judge.settings.mode})")
    elif any(t != "judge" for t in tasks):
        console.print("[yellow]No --judge: replies are generated but not scored.[/] Score them later with "
                      "`uxbench score RUN_DIR --judge PROVIDER:MODEL`.")
    if data is None:
        console.print("[bold]Data:[/] the bundled DEMO set (written by this project, not UXBench data). "
                      "Use --data for the official dataset.")


def _reject_foreign_options(tasks: list[str], options: dict[str, dict[str, Any]]) -> None:
    """An option given for a task that is not run is a mistake worth saying (e.g. --formulation with eval)."""
    from uxbench.errors import ConfigError

    shared = {"temperature", "max_tokens", "reasoning_effort", "lang", "seed"}
    flags = {"strategy": "--strategy", "layout": "--recovery-layout", "system_prompt": "--system-prompt"}
    given = {k for name in options for k, v in options[name].items() if v is not None and k not in shared}
    used = {k for name in tasks for k, v in options[name].items() if v is not None}
    for key in sorted(given - used):
        owner = next(name for name in options if options[name].get(key) is not None)
        flag = flags.get(key, "--" + key.replace("_", "-"))
        if owner == "recovery" and key == "strategy":
            flag = "--recovery-strategy"
        raise ConfigError(f"{flag} is a {owner} option, but --task is {','.join(tasks)}.")


def _embedded_defaults(task: str, opts: dict[str, Any], args: dict[str, str]) -> dict[str, Any]:
    """Settings that keep the offline demo short and its tiny English model usable."""
    opts = dict(opts)
    opts["lang"] = opts.get("lang") or "en"
    if task == "judge":
        # A verdict is one short answer; its next-token distribution orders good and bad even when the
        # 135M model does not write the verdict word first.
        rubric = opts.get("formulation") == "rubric"
        args.setdefault("max_new_tokens", str(EMBEDDED_RUBRIC_TOKENS if rubric else EMBEDDED_MAX_NEW_TOKENS))
        if (opts.get("formulation") or "binary") == "binary":
            opts["verdict_from"] = opts.get("verdict_from") or "logprobs"
    else:
        opts["max_tokens"] = opts.get("max_tokens") or EMBEDDED_REPLY_TOKENS
    return opts


def _execute(console: Console, spec: RunSpec, quiet: bool) -> RunResult:
    from uxbench.cli.progress import RichProgress
    from uxbench.orchestrate.runner import execute

    progress = RichProgress(console, enabled=not quiet)
    try:
        return asyncio.run(execute(spec, progress=progress))
    except KeyboardInterrupt:
        progress.stop()
        where = f" in {progress.run_dir}" if progress.run_dir else ""
        console.print(f"[yellow]Interrupted.[/] Finished samples are saved{where}; "
                      "rerun the same command to finish the rest.")
        raise typer.Exit(130) from None
    finally:
        progress.stop()


def _print_results(console: Console, results: list[RunResult]) -> None:
    from uxbench.data.loaders import ReadReport
    from uxbench.report.generative import render_generative_summary
    from uxbench.report.protocol import render_protocol
    from uxbench.report.render import render_summary
    from uxbench.report.strategies import render_strategies, unlabelled_recoveries

    failed = 0
    for result in results:
        summary = result.summary
        for note in ReadReport.model_validate(summary.get("read") or {}).notes():
            console.print(f"[yellow]Note:[/] {note}.")
        if summary.get("task") == "judge":
            typer.echo(render_summary(summary, "table", breakdowns=False))
            unparseable = (summary.get("metrics") or {}).get("unparseable") or {}
            if (unparseable.get("rate") or 0) > 0.5:
                console.print(
                    "[yellow]Most answers could not be read as a verdict.[/] The raw outputs are in "
                    f"{result.run_dir}/samples.jsonl (field raw_output, with parse_note); small models rarely "
                    "keep to the answer format, and a larger judge or --strategy cot usually fixes it."
                )
        else:
            typer.echo(render_generative_summary(summary, "table", breakdowns=False))
            typer.echo(render_strategies(summary, "table"), nl=False)
        console.print(f"[bold]Run directory:[/] {result.run_dir}")
        n_errors = int(summary.get("n_errors") or 0)
        score_errors = sum(int(j.get("n_score_errors") or 0) for j in (summary.get("judges") or {}).values())
        score_errors += unlabelled_recoveries(summary)  # strategy labels that failed count as failed scores
        if n_errors or score_errors:
            errors = summary.get("errors") or []
            console.print(
                f"[red]{n_errors} of {summary.get('n_selected')} samples failed"
                + (f" and {score_errors} scores failed" if score_errors else "") + "[/]: they are not in the figures"
                + (f"; first error: {errors[0]}" if errors else "") + ". Rerun the same command to retry them."
            )
            failed += 1
    if len(results) > 1:
        typer.echo(render_protocol([r.summary for r in results], "table"))
    if failed:
        raise typer.Exit(1)
