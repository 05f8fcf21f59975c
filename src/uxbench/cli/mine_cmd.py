"""`uxbench mine run|report|audit`: mine raw chat logs for dissatisfaction signals and test cases."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from uxbench.cli.options import format_option

if TYPE_CHECKING:
    from uxbench.cli.mine_progress import StageBars
    from uxbench.mining.pipeline.audit import AuditReport

app = typer.Typer(no_args_is_help=True)

@app.command("run", help="Mine logs: de-identify, gate, signals, dedup, then (with --model) the LLM agents and the "
                         "exported cases. Reruns resume from the checkpoints in OUT/work.")
def run(
    logs: Annotated[list[str], typer.Argument(help="Log files (.jsonl[.gz], .parquet) or directories of them; demo: the bundled sample log.")],  # noqa: E501
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory (checkpoints in OUT/work).")],
    no_llm: Annotated[bool, typer.Option("--no-llm", help="Only the deterministic stages: no model needed.")] = False,
    llm_signals: Annotated[bool, typer.Option("--llm-signals", help="Also classify each follow-up message with the model.")] = False,  # noqa: E501
    engine: Annotated[str, typer.Option(help="local (in-process, all cores) | ray (Ray Data).")] = "local",
    ray_address: Annotated[str | None, typer.Option(help="Join this Ray cluster (auto or host:port).", show_default="start a local Ray")] = None,  # noqa: E501
    model: Annotated[str | None, typer.Option("--model", "-m", help="PROVIDER:MODEL for the agents and --llm-signals.", show_default="none: deterministic stages only")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider (base_url, api_key_env, ...).", show_default="none")] = None,  # noqa: E501
    log_format: Annotated[str, typer.Option("--log-format", help="How the logs are written: auto (detected per row) | canonical | product | messages | sharegpt.")] = "auto",  # noqa: E501
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Count and skip invalid rows instead of stopping.")] = False,  # noqa: E501
    workers: Annotated[int | None, typer.Option(min=1, help="Worker processes (local) or CPUs of a local Ray.", show_default="all cores")] = None,  # noqa: E501
    batch_size: Annotated[int, typer.Option(min=1, help="Conversations per batch (one checkpoint each).")] = 1000,
    seed: Annotated[int, typer.Option(help="Seed of the case sample.")] = 0,
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard earlier work in OUT (the de-identification key lives outside OUT and is kept).")] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache of the LLM stages.", show_default="OUT/work/responses.sqlite")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Most model calls at once; adapts down on 429, timeouts and a server that queues.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress lines.")] = False,
    dissatisfied_threshold: Annotated[float | None, typer.Option("--dissatisfied-threshold", min=0.0, max=1.0, help="Flag a reply dissatisfied at dissatisfied_score >= this (chosen on the dev part of the real labelled follow-ups).", show_default="0.5")] = None,  # noqa: E501
    deid_model: Annotated[str | None, typer.Option("--deid-model", help="PROVIDER:MODEL of a local model that looks for the personal data the rules missed (names without a cue, handles ...); each value it proposes is replaced only where it occurs in the text.", show_default="none: the rules only")] = None,  # noqa: E501
    deid_model_arg: Annotated[list[str] | None, typer.Option("--deid-model-arg", help="KEY=VALUE for the --deid-model provider.", show_default="none")] = None,  # noqa: E501
    agent_max_tokens: Annotated[int | None, typer.Option("--agent-max-tokens", min=16, help="Output cap of each agent call (miner, judge, QA); a few hundred tokens fit each answer.", show_default="600")] = None,  # noqa: E501
    signals_mode: Annotated[str, typer.Option("--signals", help="Who decides dissatisfied on a reply with a next message: rules, or learned:DIR (a classifier from `uxbench mine train-signals`; the learn extra).")] = "rules",  # noqa: E501
) -> None:
    from uxbench.cli.checks import check_mine_run_options
    from uxbench.mining import workers as mining_workers

    check_mine_run_options(logs=logs, no_llm=no_llm, engine=engine, ray_address=ray_address, model=model,
                           model_arg=model_arg, cache_path=cache_path, concurrency=concurrency,
                           agent_max_tokens=agent_max_tokens)
    if engine == "local":  # the workers' imports overlap the driver's below
        mining_workers.start_early(workers or mining_workers.default_workers())
    from uxbench.dirlock import check_output_dir, hold_dir_lock
    from uxbench.mining.ingest import require_turns
    from uxbench.mining.logformat import check_format
    from uxbench.mining.pipeline import MineConfig, run_pipeline

    logs = _sim_run_logs(logs, quiet)
    options: dict[str, object] = {}
    if agent_max_tokens is not None:
        options["agent_options"] = {"max_tokens": agent_max_tokens}
    if deid_model is not None or deid_model_arg:
        from uxbench.cli.checks import not_blank
        from uxbench.models.registry import parse_model_args

        not_blank("--deid-model", deid_model, hint="name a local model as PROVIDER:MODEL, or leave it out")
        options.update(deid_model=deid_model, deid_model_args=parse_model_args(deid_model_arg,
                                                                              option="--deid-model-arg"))
    if signals_mode != "rules":
        from uxbench.mining.pipeline.learned_stage import parse_signals_option

        options["learned_signals"] = str(Path(parse_signals_option(signals_mode) or "").resolve())
    if workers is not None:
        options["workers"] = workers
    if dissatisfied_threshold is not None:
        from uxbench.mining.signals import SignalConfig

        options["signals"] = SignalConfig(dissatisfied_threshold=dissatisfied_threshold)
    if model_arg:
        from uxbench.models.registry import parse_model_args

        options["model_args"] = parse_model_args(model_arg)
    config = MineConfig(
        inputs=tuple(logs), out=str(out), format=log_format, skip_invalid=skip_invalid, engine=engine,  # type: ignore[arg-type]
        ray_address=ray_address, batch_size=batch_size, seed=seed, fresh=fresh, llm=not no_llm,
        llm_signals=llm_signals, model=model, cache_path=str(cache_path) if cache_path else None,
        concurrency=concurrency, **options,  # type: ignore[arg-type]
    )
    check_format(log_format)
    check_output_dir(out, "--out directory")
    if (out / "summary.json").is_file() or (out / "samples.sqlite").is_file():
        from uxbench.errors import ConfigError

        raise ConfigError(f"--out {out} is a run directory of `uxbench run`: mining would write its outputs among the "
                          "run's files. Choose another --out.")
    require_turns(logs, log_format, skip_invalid=skip_invalid)  # nothing to read: say so before writing anything
    if model is not None and not no_llm:  # a missing key or an unreachable server: one error before any stage
        from uxbench.orchestrate.preflight import check_models

        asyncio.run(check_models([("--model", model, config.model_args)]))

    def say(line: str) -> None:
        if not quiet:
            typer.echo(line, err=True)

    with hold_dir_lock(out, command=f"uxbench mine run --out {out}", what="--out directory"), \
            _stage_bars(quiet) as bars:
        result = run_pipeline(config, progress=say, ticks=bars)
    counts = result.stage_counts
    signals = counts.get("signals", {})
    typer.echo(
        f"{counts['ingest']['turns']} turns, {counts['sessions'].get('sessions', 0)} conversations; "
        f"{counts['gate'].get('gated', 0)} gated; {signals.get('sessions', 0)} with signals, "
        f"{signals.get('dissatisfied_turns', 0)} of {signals.get('assistant_turns', 0)} replies dissatisfied; "
        f"{counts['dedup'].get('duplicates', 0)} near-duplicates"
        + (f"; {counts['cases']['selected']} cases selected" if "cases" in counts else "")
    )
    for line in _count_notes(counts):
        typer.echo(line)
    agents = counts.get("agents") or {}
    if agents:
        from uxbench.mining.pipeline.llm_stages import failure_causes

        exchanges, failed, causes = failure_causes(agents)
        if failed:
            by_cause = ", ".join(f"{n} {cause}" for cause, n in sorted(causes.items(), key=lambda x: -x[1]))
            typer.secho(f"{failed} of {exchanges} agent exchanges failed ({by_cause}); their sessions gave no "
                        f"case. Counts per agent: {out / 'stage_counts.json'}", err=True, fg=typer.colors.YELLOW)
    for name, path in sorted(result.outputs.items()):
        typer.echo(f"  {name}: {path}")
    typer.echo(f"Next: `uxbench mine report {out}` (signal rates, failure patterns, recovery), "
               f"`uxbench view {out}` (the flagged turns in a local web page; the web extra).")


def _sim_run_logs(logs: list[str], quiet: bool) -> list[str]:
    """A `uxbench sim run` directory stands for its canonical log, sessions.jsonl (its other files are not logs);
    `demo` (when no such file is here) for the sample chat log bundled with uxbench."""
    from uxbench.mining.ingest import SAMPLE_LOG

    out = []
    for path in logs:
        if path == "demo" and not Path(path).exists():
            if not quiet:
                typer.echo(f"demo: the sample chat log bundled with uxbench (38 conversations written by this project, "
                           f"zh and en), {SAMPLE_LOG}", err=True)
            out.append(str(SAMPLE_LOG))
            continue
        if not Path(path).is_dir():  # a sim run is a directory: a log file needs no sim import (~0.1 s of CPU)
            out.append(path)
            continue
        from uxbench.sim.store import SESSIONS_LOG, is_sim_run

        if is_sim_run(path):
            log = Path(path) / SESSIONS_LOG
            if not log.is_file():
                from uxbench.errors import DataError

                raise DataError(f"has no {SESSIONS_LOG} yet: the simulation has not finished (rerun the same "
                                "`uxbench sim run` command)", source=str(path))
            if not quiet:
                typer.echo(f"{path} is a simulated-session run: reading its {SESSIONS_LOG}.", err=True)
            path = str(log)
        out.append(path)
    return out


def _count_notes(counts: dict[str, Any]) -> list[str]:
    """What the run left out, merged or kept empty: one line each, so that nothing is dropped silently."""
    ingest, sessions = counts.get("ingest", {}), counts.get("sessions", {})
    notes = []
    if ingest.get("invalid_rows"):
        notes.append(f"{ingest['invalid_rows']} invalid rows skipped (see stage_counts.json)")
    if sessions.get("duplicates_dropped"):
        other = sessions.get("duplicates_with_other_text", 0)
        notes.append(f"{sessions['duplicates_dropped']} duplicate rows of the same message dropped (same message id "
                     "and turn, or same turn without an id; the latest kept)"
                     + (f", {other} of them with other text than the kept row" if other else ""))
    if sessions.get("reused_message_ids"):
        notes.append(f"{sessions['reused_message_ids']} turns share a message id with another turn; all were kept")
    if ingest.get("empty_turns"):
        notes.append(f"{ingest['empty_turns']} turns have no text (null or empty content); they were kept as empty "
                     "messages")
    return notes


def _not_a_mining_dir(directory: Path) -> None:
    """A clear error for `mine report|audit` pointed at a run directory of `uxbench run`."""
    from uxbench.errors import ConfigError

    if (directory / "summary.json").is_file() or (directory / "samples.sqlite").is_file():
        raise ConfigError(f"{directory} is a run directory of `uxbench run`, not a mining output directory; "
                          f"use `uxbench report {directory}`.")


@app.command("report", help="Signal rates per scenario and per day, top failure patterns, recovery outcomes.")
def report(
    directory: Annotated[Path, typer.Argument(help="Output directory of `uxbench mine run`.")],
    format: Annotated[str, format_option("table", "md", "json")] = "table",
    top: Annotated[int, typer.Option(min=1, help="How many failure patterns to list.")] = 10,
) -> None:
    from uxbench.mining.report import build_report
    from uxbench.mining.report_text import report_markdown, report_table

    _not_a_mining_dir(directory)
    result = build_report(directory, top=top)
    if format == "json":
        typer.echo(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    typer.echo(report_markdown(result) if format == "md" else report_table(result), nl=format == "md")


@app.command("audit", help="Recovery strategies after complaints (apology, agreement, error_diagnosis, humor, "
                           "direct_fix, clarification) with 95% CIs and the outcome per strategy.")
def audit(
    directory: Annotated[Path, typer.Argument(help="Output directory of `uxbench mine run`.")],
    format: Annotated[str, format_option("table", "md", "json")] = "table",
    model: Annotated[str | None, typer.Option("--model", "-m", help="Label the openings with this model instead of the rules.", show_default="none: the rules label them")] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the provider.", show_default="none")] = None,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache.", show_default="DIR/work/responses.sqlite")] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Most model calls at once; adapts down on 429, timeouts and a server that queues.", show_default="the provider's")] = None,  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from uxbench.cli.checks import not_blank, only_with
    from uxbench.mining.pipeline.audit import audit as rules_audit
    from uxbench.mining.pipeline.audit import audit_markdown

    _not_a_mining_dir(directory)
    if model is None:
        only_with({"--model-arg": model_arg, "--cache-path": cache_path, "--concurrency": concurrency},
                  "with --model (the rules label the openings without a model)",
                  fix="add --model PROVIDER:MODEL, or drop it")
    else:
        not_blank("--model", model, hint="name a model as PROVIDER:MODEL, or leave --model out for the rules")
    result: AuditReport
    if model is None:
        result = rules_audit(directory)
    else:
        with _stage_bars(quiet) as bars:
            result = asyncio.run(_model_audit(directory, model, model_arg, cache_path, concurrency, bars))
    if format == "json":
        typer.echo(json.dumps(result.model_dump(mode="json"), ensure_ascii=False, indent=2))
        return
    if format == "md":
        typer.echo(audit_markdown(result))
        return
    typer.echo(f"{result.complaints} complaints: {result.with_reply} answered, {result.without_reply} ended the "
               f"conversation (labels: {result.method}{' ' + result.model if result.model else ''})")
    rows = []
    for r in result.strategies:
        rate = "n/a" if r.recovered_rate is None or r.recovered_ci is None else (
            f"{r.recovered_rate:.0%} [{r.recovered_ci[0]:.0%}, {r.recovered_ci[1]:.0%}]")
        rows.append([r.strategy, str(r.count), f"{r.share:.0%} [{r.ci[0]:.0%}, {r.ci[1]:.0%}]", rate,
                     *(str(r.outcomes[o]) for o in ("recovered", "failed", "user_gave_up", "unknown"))])
    from uxbench.report.layout import render_tables, terminal_width

    header = ["strategy", "n", f"% of {result.with_reply}\nanswered\n[95% CI]", "recovered %\nof known\n[95% CI]",
              "recovered", "failed", "gave up", "unknown"]
    typer.echo(render_tables([("Recovery strategies", header, rows)], [], terminal_width(),
                             droppable=("unknown", "gave up", "failed", "recovered"), wrap=(0,),
                             show_all="--format md or json show everything"), nl=False)


def _stage_bars(quiet: bool) -> StageBars:
    """Progress bars (stderr) for the stages that ask a model."""
    from rich.console import Console

    from uxbench.cli.mine_progress import StageBars

    return StageBars(Console(stderr=True), enabled=not quiet)


async def _model_audit(directory: Path, spec: str, model_arg: list[str] | None, cache_path: Path | None,
                       concurrency: int | None, bars: StageBars) -> AuditReport:
    from uxbench.mining.llm import default_cache_path, open_model
    from uxbench.mining.pipeline.audit import audit_with_model
    from uxbench.models.registry import parse_model_args

    cache = cache_path or default_cache_path(directory / "work")
    async with open_model(spec, parse_model_args(model_arg), cache_path=cache, concurrency=concurrency) as llm:
        return await audit_with_model(directory, llm, spec=spec, ticks=bars)


from uxbench.cli.mine_signals_cmd import register as _register_signal_commands  # noqa: E402

_register_signal_commands(app)  # eval-signals, train-signals
