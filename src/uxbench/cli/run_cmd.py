"""`uxbench run`: one task, or the whole protocol (`--task judge,eval,recovery`).

No `from __future__ import annotations` here: typer reads `run`'s signature to build its options, and string
annotations would make it parse and evaluate all 45 of them, twice (`inspect.signature(eval_str=True)` and then
`get_type_hints`), on every `uxbench run --help` (about 50 M instructions, 6% of it). Evaluated once when the
module is imported, from its cached bytecode, they cost nothing more. Names imported for type checking only are
written in quotes.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from uxbench.cli.options import (
    PANEL_JUDGE,
    PANEL_MODEL,
    PANEL_OUTPUT,
    PANEL_RUNTIME,
    PANEL_TASK1,
    PANEL_TASKS23,
    PANEL_WHAT,
    format_option,
    judge_args_option,
    judge_option,
    model_args_option,
    model_option,
)

if TYPE_CHECKING:
    from rich.console import Console

    from uxbench.orchestrate.runner import RunResult
    from uxbench.orchestrate.spec import RunSpec
    from uxbench.report.render import ReportFormat

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
_JUDGE_HELP = ("PROVIDER:MODEL of the judge that scores Tasks 2/3, e.g. openai:UXBench-GRM -J base_url=... The first "
               "judge of a run is its primary judge (the one `report` and `leaderboard` use); a later one scores "
               "beside it and the primary stays, unless --primary.")
_PRIMARY_HELP = "Make --judge the run's primary judge even when the run has another one (--no-primary: never)."
_W, _M, _J, _T1, _T23, _RT, _O = (PANEL_WHAT, PANEL_MODEL, PANEL_JUDGE, PANEL_TASK1, PANEL_TASKS23, PANEL_RUNTIME,
                                  PANEL_OUTPUT)


def run(
    task: Annotated[str, typer.Option(help=_TASK_HELP, rich_help_panel=_W)] = "judge",
    data: Annotated[str | None, typer.Option(help="A .jsonl/.json/.parquet file, a directory of them, hf:REPO (the official dataset, e.g. hf:mengze-hong/UXBench), or demo.", show_default="demo, the bundled demo set", rich_help_panel=_W)] = None,  # noqa: E501
    split: Annotated[str, typer.Option(help="Dataset split of hf: sources.", rich_help_panel=_W)] = "test",
    limit: Annotated[int | None, typer.Option(help="Run a deterministic, class-balanced subset of N cases (a larger N holds a smaller one).", show_default="all cases", rich_help_panel=_W)] = None,  # noqa: E501
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Skip invalid data rows (counted, and listed in the run directory) instead of stopping.", rich_help_panel=_W)] = False,  # noqa: E501
    curation: Annotated[Path | None, typer.Option(help="A curation file (curation.sqlite from `uxbench view`): its excluded cases are left out.", show_default="curation.sqlite beside the data, when there is one", rich_help_panel=_W)] = None,  # noqa: E501
    lang: Annotated[str | None, typer.Option(help="Template language of every task: zh | en | auto (zh when the conversation has Han characters, else en).", show_default="auto; en with the embedded model", rich_help_panel=_W)] = None,  # noqa: E501
    model: Annotated[str | None, model_option(_MODEL_HELP, show_default="hf:embedded, the tiny demo model")] = None,
    model_arg: Annotated[list[str] | None, model_args_option()] = None,
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the model under test.", show_default="Task 1: 0, Tasks 2/3: 0.7", rich_help_panel=_M)] = None,  # noqa: E501
    max_tokens: Annotated[int | None, typer.Option(help="Token cap of the model under test's answer.", show_default="Task 1: the provider's, Tasks 2/3: 2048 (64 with the embedded model)", rich_help_panel=_M)] = None,  # noqa: E501
    reasoning_effort: Annotated[str | None, typer.Option(help="Reasoning effort of the model under test: low | medium | high.", show_default="the provider's", rich_help_panel=_M)] = None,  # noqa: E501
    seed: Annotated[int | None, typer.Option(help="Tasks 2/3: sampling seed, where the provider supports one.", show_default="none", rich_help_panel=_M)] = None,  # noqa: E501
    fit_history: Annotated[bool, typer.Option("--fit-history", help="A conversation longer than the model under test accepts: drop its oldest history messages until it fits (recorded per sample), instead of recording it as too long.", rich_help_panel=_M)] = False,  # noqa: E501
    judge: Annotated[str | None, judge_option(_JUDGE_HELP, show_default="hf:embedded with the embedded model, else none: generate only")] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, judge_args_option()] = None,
    primary: Annotated[bool | None, typer.Option("--primary/--no-primary", help=_PRIMARY_HELP, show_default="when the run has no primary judge", rich_help_panel=_J)] = None,  # noqa: E501
    judge_mode: Annotated[str | None, typer.Option(help="grm (one token, verdict from p(good) / (p(good) + p(bad))) or pointwise (the judge writes its verdict: LLM-as-a-judge for judges without logprobs).", show_default="grm", rich_help_panel=_J)] = None,  # noqa: E501
    grm_threshold: Annotated[float | None, typer.Option(help="GRM: a reply is good when p(good) >= this.", show_default="0.5", rich_help_panel=_J)] = None,  # noqa: E501
    calibration: Annotated[Path | None, typer.Option(metavar="T1_RUN_DIR", help="Tasks 2/3: a Task 1 run of the judge on replies with real users' labels; its Good-Acc and Bad-Acc correct the judge's Good% (shown beside the raw one; docs/TRUST.md).", show_default="none: raw Good% only", rich_help_panel=_J)] = None,  # noqa: E501
    judge_strategy: Annotated[str | None, typer.Option(help="pointwise judge: zero_shot | cot | few_shot | user_modeling.", show_default="zero_shot", rich_help_panel=_J)] = None,  # noqa: E501
    judge_lang: Annotated[str | None, typer.Option(help="Judge template language: zh | en | auto. A judge trained on Chinese answers (the UXBench GRM: 好/差) needs zh.", show_default="en with the embedded judge, else auto", rich_help_panel=_J)] = None,  # noqa: E501
    strategy_model: Annotated[str | None, typer.Option(help="Task 3: PROVIDER:MODEL that also labels each recovery's strategy (apology, agreement, error_diagnosis, humor, direct_fix, clarification); rules always label it.", show_default="none: rules only", rich_help_panel=_J)] = None,  # noqa: E501
    strategy_arg: Annotated[list[str] | None, typer.Option("--strategy-arg", metavar="KEY=VALUE", help="An argument of the strategy model's provider (as -M).", show_default="none", rich_help_panel=_J)] = None,  # noqa: E501
    formulation: Annotated[str | None, typer.Option(help="binary | three_class | likert | rubric", show_default="binary", rich_help_panel=_T1)] = None,  # noqa: E501
    rubric: Annotated[str | None, typer.Option(help="With --formulation rubric: mt_bench | flask | helpsteer2 | ux_general, or a rubric file of your own (YAML / JSON with the fields of the bundled ones).", show_default="mt_bench", rich_help_panel=_T1)] = None,  # noqa: E501
    strategy: Annotated[str | None, typer.Option(help="zero_shot | cot | few_shot | user_modeling", show_default="zero_shot", rich_help_panel=_T1)] = None,  # noqa: E501
    verdict_from: Annotated[str | None, typer.Option(help="text | logprobs (binary: p(good) vs p(bad) at the first answer token).", show_default="text; logprobs with the embedded model", rich_help_panel=_T1)] = None,  # noqa: E501
    few_shot_k: Annotated[int | None, typer.Option(help="Examples for --strategy few_shot.", show_default="2", rich_help_panel=_T1)] = None,  # noqa: E501
    likert_scale: Annotated[int | None, typer.Option(help="Points of the Likert scale (4-7).", show_default="5", rich_help_panel=_T1)] = None,  # noqa: E501
    likert_threshold: Annotated[int | None, typer.Option(help="Likert score from which a reply counts as good.", show_default="the score just above the scale's midpoint", rich_help_panel=_T1)] = None,  # noqa: E501
    system_prompt: Annotated[str | None, typer.Option(help="Task 2: a preset (helpful, ux, empathetic, none), a file, or literal text (several words, or text:WORD).", show_default="none, as the method", rich_help_panel=_T23)] = None,  # noqa: E501
    recovery_layout: Annotated[str | None, typer.Option(help="Task 3: multi_message | coach", show_default="multi_message", rich_help_panel=_T23)] = None,  # noqa: E501
    recovery_strategy: Annotated[str | None, typer.Option(help="Task 3: plain | cot | dimension_aware | critique", show_default="plain", rich_help_panel=_T23)] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(help="Maximum parallel calls (adapts down on 429 and overload).", show_default="the provider's", rich_help_panel=_RT)] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(help="Attempts per call before a sample is recorded as an error.", rich_help_panel=_RT)] = 6,  # noqa: E501
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's", rich_help_panel=_RT)] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_RT)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR/responses.sqlite or ~/.cache/uxbench/responses.sqlite", rich_help_panel=_RT)] = None,  # noqa: E501
    out: Annotated[Path | None, typer.Option(help="Run directory; with several tasks, one sub-directory each.", show_default="runs/<task>-<model>-<options that differ>-<config hash>", rich_help_panel=_O)] = None,  # noqa: E501
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard the records of an existing run with this config.", rich_help_panel=_O)] = False,  # noqa: E501
    format: Annotated[str, format_option(help="How to print the figures at the end: a table, Markdown, CSV or JSON.")] = "table",  # noqa: E501
    n_boot: Annotated[int, typer.Option(help="Bootstrap rounds of the confidence intervals (summary only).", rich_help_panel=_O)] = 2000,  # noqa: E501
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed (summary only).", rich_help_panel=_O)] = 0,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.", rich_help_panel=_O)] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.checks import check_run_options
    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.orchestrate.spec import JudgeSpec, RunSpec, StrategySpec
    from uxbench.scoring.scorer import judge_settings
    from uxbench.tasks.base import SummaryOptions
    from uxbench.tasks.registry import TASK_NAMES

    console = Console(stderr=True)
    tasks = [t.strip() for t in task.split(",") if t.strip()]
    check_run_options(
        model=model, data=data, tasks=tasks, concurrency=concurrency, n_boot=n_boot, max_attempts=max_attempts,
        timeout=timeout, limit=limit, temperature=temperature, max_tokens=max_tokens,
        reasoning_effort=reasoning_effort, formulation=formulation, strategy=strategy, few_shot_k=few_shot_k,
        likert_scale=likert_scale, likert_threshold=likert_threshold, judge=judge, judge_arg=judge_arg,
        judge_mode=judge_mode, grm_threshold=grm_threshold, judge_strategy=judge_strategy, judge_lang=judge_lang,
        no_cache=no_cache, cache_path=cache_path)
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
    elif judge_arg or judge_mode or grm_threshold is not None or primary is not None:
        raise ConfigError("--judge-arg, --judge-mode, --grm-threshold and --primary need --judge (Tasks 2/3 only).")
    if calibration is not None and judge_spec is None:
        raise ConfigError("--calibration corrects a judge's Good%: it needs --task eval or recovery and a judge "
                          "(--judge, or the embedded model's).")
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
    if system_prompt is not None:
        from uxbench.tasks.eval.system_prompt import resolve_system_prompt
        from uxbench.tasks.eval.task import PRESETS

        system_prompt = resolve_system_prompt(system_prompt, PRESETS) or "none"

    _check_extras(data, spec_model, judge_spec.model if judge_spec else None,
                  strategy_spec.model if strategy_spec else None)
    _announce(console, spec_model, embedded, tasks, judge_spec, data)
    _announce_curation(console, data, curation)
    common = {"temperature": temperature, "max_tokens": max_tokens, "reasoning_effort": reasoning_effort,
              "fit_history": True if fit_history else None}
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
            make_primary=primary,
            strategy_model=strategy_spec if name == "recovery" else None,
            calibration=calibration if name != "judge" else None,
            data=data, curation=curation, split=split, limit=limit, concurrency=concurrency, task_options=opts,
            summary=SummaryOptions(n_boot=n_boot, seed=ci_seed),
            out=(out / name if out is not None and len(tasks) > 1 else out), fresh=fresh,
            skip_invalid=skip_invalid, use_cache=not no_cache, cache_path=cache_path,
            max_attempts=max_attempts, timeout_s=timeout,
        ))
    results = [_execute(console, spec, quiet) for spec in specs]
    _print_results(console, results, format, fit_history)  # type: ignore[arg-type]  # checked by format_option


def _check_extras(data: str | None, *models: str | None) -> None:
    """A missing extra (of a model's provider, or the hub's for `--data hf:...`) is one error line before the
    banner. Opening the data reads nothing yet."""
    from uxbench.data.loaders import load_cases
    from uxbench.models.registry import require_provider_extra

    for spec in models:
        if spec is not None:
            require_provider_extra(spec)
    if data is not None:
        load_cases(data)


def _announce_curation(console: "Console", data: str | None, explicit: Path | None) -> None:
    from uxbench.runs.curation import Curation, curation_file

    path = curation_file(data, explicit)
    if path is not None:
        console.print(f"[bold]Curation:[/] {len(Curation(path).excluded())} excluded case ids in {path} are left out.")


def _announce(
    console: "Console", spec_model: str, embedded: bool, tasks: list[str], judge: Any, data: str | None
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

    shared = {"temperature", "max_tokens", "reasoning_effort", "lang", "fit_history"}
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


def _execute(console: "Console", spec: "RunSpec", quiet: bool) -> "RunResult":
    import asyncio

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


def _print_results(console: "Console", results: list["RunResult"], fmt: "ReportFormat", fit_history: bool) -> None:
    from uxbench.cli.run_outcome import outcome_lines
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
        if fmt == "json" or (fmt == "csv" and len(results) > 1):
            pass  # one document for all tasks, below
        elif summary.get("task") == "judge":
            typer.echo(render_summary(summary, fmt, breakdowns=False), nl=False)
            unparseable = (summary.get("metrics") or {}).get("unparseable") or {}
            if (unparseable.get("rate") or 0) > 0.5:
                console.print(
                    "[yellow]Most answers could not be read as a verdict.[/] The raw outputs are in "
                    f"{result.run_dir}/samples.jsonl (field raw_output, with parse_note); small models rarely "
                    "keep to the answer format, and a larger judge or --strategy cot usually fixes it."
                )
        else:
            typer.echo(render_generative_summary(summary, fmt, breakdowns=False), nl=False)
            typer.echo(render_strategies(summary, fmt), nl=False)
        console.print(f"[bold]Run directory:[/] {result.run_dir}")
        score_errors = sum(int(j.get("n_score_errors") or 0) for j in (summary.get("judges") or {}).values())
        score_errors += unlabelled_recoveries(summary)  # strategy labels that failed count as failed scores
        lines, any_failed = outcome_lines(summary, score_errors, fit_history=fit_history)
        for line in lines:
            console.print(line, highlight=False)
        failed += any_failed
    if fmt == "json":
        import json

        summaries = [r.summary for r in results]
        typer.echo(json.dumps(summaries if len(summaries) > 1 else summaries[0], ensure_ascii=False, indent=2))
    elif len(results) > 1:
        typer.echo(render_protocol([r.summary for r in results], fmt), nl=False)
    if failed:
        raise typer.Exit(1)
