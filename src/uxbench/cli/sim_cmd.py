"""`uxbench sim run|compare|signals`: interactive evaluation against simulated users (UXBench Pro).

New `sim` subcommands register on `app` here (or from their own module, imported at the end of this file)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from uxbench.cli.options import format_option
from uxbench.cli.sim_app import FORMATS as _FORMATS
from uxbench.cli.sim_app import choice as _choice
from uxbench.cli.sim_app import sim_app as app

if TYPE_CHECKING:
    from rich.console import Console

    from uxbench.sim.run import SimResult
    from uxbench.sim.spec import SimSpec

_MODELS = "Models"
_SESSIONS = "Sessions"
_GEN = "Generation"
_RUN = "Run directory and runtime"
_OUT = "Output"
_MODES = ("structured", "free")
_LANGS = ("zh", "en", "auto")
EMBEDDED_MAX_TURNS = 3
EMBEDDED_PERSONAS = 4
"""Replies per session, and personas, when the embedded tiny model simulates the users: the offline demo takes a
few minutes on two idle cores (bench/demo.py --defaults); --full-panel runs every persona."""
RUN_HELP = ("Simulated users talk to a model under test over many turns; session metrics with CIs over personas. "
            "Writes a run directory (sessions in the canonical log format, acts sidecar, summary); rerun the same "
            "command to resume.")


@app.command("run", help=RUN_HELP)
def run(
    personas: Annotated[list[str] | None, typer.Option("--personas", "-p", help="Persona files (.yaml, .jsonl) or directories; repeat for several. demo = the bundled 24 (12 zh, 12 en).", show_default="demo", rich_help_panel=_SESSIONS)] = None,  # noqa: E501
    tasks: Annotated[list[str] | None, typer.Option("--tasks", help="Tool tasks instead of personas (the tau2 extra): tau2:airline, tau2:retail, tau2:mock, a split (tau2:retail:test) or task ids (tau2:mock:create_task_1,update_task_1); repeat for several (--tasks tau2:airline --tasks tau2:retail). The model under test is the agent; tau2's evaluator gives each session its reward.", show_default="none: personas", rich_help_panel=_SESSIONS)] = None,  # noqa: E501
    agent_prompt: Annotated[str, typer.Option("--agent-prompt", metavar="policy|oracle", help="Tool tasks: the agent's system prompt, policy (the benchmark's own) or oracle (with the task's resolution steps, which the scripted agents need).", rich_help_panel=_SESSIONS)] = "policy",  # noqa: E501
    max_tool_calls: Annotated[int, typer.Option(min=1, max=500, help="Tool tasks: tool calls the agent may make before one reply to the user.", rich_help_panel=_SESSIONS)] = 30,  # noqa: E501
    model: Annotated[str | None, typer.Option("--model", "-m", help="PROVIDER:MODEL of the assistant under test (`uxbench providers`); on tool tasks, scripted:reference-agent or scripted:weak-agent run without a model (with --agent-prompt oracle).", show_default="hf:embedded, the tiny demo model", rich_help_panel=_MODELS)] = None,  # noqa: E501
    model_arg: Annotated[list[str] | None, typer.Option("--model-arg", "-M", help="KEY=VALUE for the model under test's provider (base_url, api_key_env, ...).", show_default="none", rich_help_panel=_MODELS)] = None,  # noqa: E501
    simulator: Annotated[str | None, typer.Option("--simulator", "-s", help="PROVIDER:MODEL that writes the user's messages, or scripted:user (deterministic wording, no model); scripted:user-leaky opens with every fact, scripted:user-uncooperative declines every one.", show_default="hf:embedded", rich_help_panel=_MODELS)] = None,  # noqa: E501
    simulator_arg: Annotated[list[str] | None, typer.Option("--simulator-arg", "-S", help="KEY=VALUE for the simulator's provider.", show_default="none", rich_help_panel=_MODELS)] = None,  # noqa: E501
    assessor: Annotated[str, typer.Option("--assessor", help="Who reads each reply against the goal: rules (code: the goal items' literal checks) or PROVIDER:MODEL.", rich_help_panel=_MODELS)] = "rules",  # noqa: E501
    assessor_arg: Annotated[list[str] | None, typer.Option("--assessor-arg", help="KEY=VALUE for the assessor's provider.", show_default="none", rich_help_panel=_MODELS)] = None,  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="PROVIDER:MODEL of an independent judge that rates each reply 1-5 (a second satisfaction curve).", show_default="none", rich_help_panel=_MODELS)] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider.", show_default="none", rich_help_panel=_MODELS)] = None,  # noqa: E501
    trials: Annotated[int, typer.Option(min=1, help="Sessions per persona, each with its own seed (pass^k).", rich_help_panel=_SESSIONS)] = 1,  # noqa: E501
    full_panel: Annotated[bool, typer.Option("--full-panel", help=f"Every persona, also with the embedded simulator (whose demo runs the first {EMBEDDED_PERSONAS}).", rich_help_panel=_SESSIONS)] = False,  # noqa: E501
    max_turns: Annotated[int | None, typer.Option(min=1, max=200, help="Assistant replies per session at most.", show_default=f"8; {EMBEDDED_MAX_TURNS} with the embedded simulator", rich_help_panel=_SESSIONS)] = None,  # noqa: E501
    mode: Annotated[str, typer.Option(help="structured (policy in code, the simulator only writes) or free (one prompt holds the whole persona, as tau-bench does).", rich_help_panel=_SESSIONS)] = "structured",  # noqa: E501
    lang: Annotated[str | None, typer.Option(help="zh | en: only the personas of that language; auto: all, each in its own.", show_default="auto; en with the embedded simulator (an English model)", rich_help_panel=_SESSIONS)] = None,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Seed of the users' policy and of every model call.", rich_help_panel=_SESSIONS)] = 0,  # noqa: E501
    temperature: Annotated[float | None, typer.Option(help="Sampling temperature of the model under test.", show_default="the provider's", rich_help_panel=_GEN)] = None,  # noqa: E501
    max_tokens: Annotated[int | None, typer.Option(min=1, help="Token cap of the model under test's replies.", show_default="the provider's; 64 with the embedded model", rich_help_panel=_GEN)] = None,  # noqa: E501
    sim_temperature: Annotated[float, typer.Option(help="Sampling temperature of the simulator.", rich_help_panel=_GEN)] = 0.7,  # noqa: E501
    sim_max_tokens: Annotated[int, typer.Option(min=1, help="Token cap of a simulated user message.", rich_help_panel=_GEN)] = 256,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Sessions in flight per process (and calls per model at most; adapts down on 429 and overload).", show_default="the model's, at most 64", rich_help_panel=_RUN)] = None,  # noqa: E501
    procs: Annotated[int, typer.Option(min=1, max=64, help="Processes to shard the sessions over.", rich_help_panel=_RUN)] = 1,  # noqa: E501
    out: Annotated[Path | None, typer.Option(help="Run directory.", show_default="runs/sim-<model>-<config hash>", rich_help_panel=_RUN)] = None,  # noqa: E501
    fresh: Annotated[bool, typer.Option("--fresh", help="Discard the sessions of an existing run in --out.", rich_help_panel=_RUN)] = False,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_RUN)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench", rich_help_panel=_RUN)] = None,  # noqa: E501
    max_attempts: Annotated[int, typer.Option(min=1, help="Attempts per call before the session ends with an error.", rich_help_panel=_RUN)] = 6,  # noqa: E501
    timeout: Annotated[float | None, typer.Option(help="Seconds per call attempt.", show_default="the provider's", rich_help_panel=_RUN)] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds of the CIs.", rich_help_panel=_OUT)] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.", rich_help_panel=_OUT)] = 0,
    format: Annotated[str, format_option(help="How to print the summary at the end: a table, Markdown, CSV or JSON.")] = "table",  # noqa: E501
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.", rich_help_panel=_OUT)] = False,
) -> None:
    from rich.console import Console

    from uxbench.cli.checks import at_least, common_numbers
    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.report.sim import render_sim_summary
    from uxbench.sim.spec import EMBEDDED, RoleSpec, SimSpec

    _choice(format, _FORMATS, "--format")
    _choice(mode, _MODES, "--mode")
    common_numbers(timeout=timeout, temperature=temperature)  # the rest have typer's bounds
    at_least("--sim-temperature", sim_temperature, 0, what="the simulator's sampling temperature")
    _choice(agent_prompt, ("policy", "oracle"), "--agent-prompt")
    if tasks and personas:
        raise ConfigError("--tasks and --personas each choose the users: give one of them.")
    if not tasks and (agent_prompt != "policy" or max_tool_calls != 30):
        raise ConfigError("--agent-prompt and --max-tool-calls apply to tool tasks: add --tasks tau2:DOMAIN.")
    if tasks:
        from uxbench.extras import require

        require("tau2", "uxbench sim run --tasks")
    embedded_model, embedded_sim = model is None, simulator is None
    lang = _choice(lang or ("en" if embedded_sim else "auto"), _LANGS, "--lang")
    max_turns = max_turns or (EMBEDDED_MAX_TURNS if embedded_sim else 8)
    if judge is None and judge_arg:
        raise ConfigError("--judge-arg needs --judge.")
    if assessor == "rules" and assessor_arg:
        raise ConfigError("--assessor-arg needs --assessor PROVIDER:MODEL.")
    console = Console(stderr=True)
    m_args = parse_model_args(model_arg, option="--model-arg")
    s_args = parse_model_args(simulator_arg, option="--simulator-arg")
    if embedded_model:
        m_args.setdefault("max_new_tokens", str(max_tokens or 64))
    if embedded_sim:
        s_args.setdefault("max_new_tokens", str(min(sim_max_tokens, 64)))
    demo = embedded_model or embedded_sim
    spec = SimSpec(
        personas=personas or ["demo"], tasks=tasks or [], agent_prompt=agent_prompt,  # type: ignore[arg-type]
        max_tool_calls=max_tool_calls, model=RoleSpec(model=model or EMBEDDED, args=m_args),
        simulator=RoleSpec(model=simulator or EMBEDDED, args=s_args),
        assessor=RoleSpec(model=assessor, args=parse_model_args(assessor_arg, option="--assessor-arg")),
        judge=RoleSpec(model=judge, args=parse_model_args(judge_arg, option="--judge-arg")) if judge else None,
        mode=mode, trials=trials, max_turns=max_turns, lang=lang, seed=seed,  # type: ignore[arg-type]
        max_personas=EMBEDDED_PERSONAS if embedded_sim and not full_panel else None,
        temperature=temperature, max_tokens=max_tokens if not embedded_model else (max_tokens or 64),
        sim_temperature=sim_temperature, sim_max_tokens=sim_max_tokens if not embedded_sim else min(sim_max_tokens, 64),
        concurrency=concurrency, procs=procs, demo=demo, out=out, fresh=fresh, use_cache=not no_cache,
        cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout, n_boot=n_boot, ci_seed=ci_seed,
    )
    from uxbench.models.registry import require_provider_extra

    for role in (spec.model, spec.simulator, spec.judge, spec.assessor if assessor != "rules" else None):
        if role is not None:
            require_provider_extra(role.model)  # a missing extra: one line, before the banner
    _announce(console, spec, embedded_model, embedded_sim)
    result = _execute(console, spec, quiet)
    typer.echo(render_sim_summary(result.summary, format), nl=False)  # type: ignore[arg-type]
    console.print(f"[bold]Run directory:[/] {result.run_dir}")
    parties = result.summary.get("errors_by_party") or {}
    if result.summary.get("n_errors"):
        retried = parties.get("assistant", 0)
        console.print(
            f"[red]{result.summary['n_errors']} of {result.summary['n_sessions']} sessions ended with an error[/] "
            f"(model under test {retried}, simulator {parties.get('simulator', 0)}, assessor "
            f"{parties.get('assessor', 0)}); they count as failed sessions. First: {result.summary['errors'][0]}."
            + (" Rerun the same command to retry those the model under test failed." if retried else ""))
        raise typer.Exit(1)
    if spec.tasks:  # tool tasks: the proxy's fidelity and the comparison of proxies
        console.print(f"Next: `uxbench report {result.run_dir}`, `uxbench view {result.run_dir}`, "
                      f"`uxbench sim fidelity {result.run_dir}`, and `uxbench sim proxies {result.run_dir} OTHER_RUN` "
                      "with a run of the same tasks and agent under another user proxy (docs/USERPROXYBENCH.md).")
        return
    console.print(f"Next: `uxbench report {result.run_dir}`, `uxbench view {result.run_dir}`, "
                  f"`uxbench sim signals {result.run_dir}`, `uxbench mine run {result.run_dir} --out MINED --no-llm`.")


def _announce(console: Console, spec: SimSpec, embedded_model: bool, embedded_sim: bool) -> None:
    if embedded_model or embedded_sim:
        roles = " and ".join(r for r, e in (("the assistant", embedded_model), ("the simulated users", embedded_sim))
                             if e)
        lang = {"en": "English", "zh": "Chinese"}.get(spec.lang, "all")
        panel = (f"the first {spec.max_personas} {lang} personas, --full-panel runs every one" if spec.max_personas
                 else f"{lang} personas")
        console.print(f"[bold yellow]DEMO:[/] the embedded SmolLM2-135M-Instruct plays {roles}, in-process on the CPU "
                      f"(short replies; {panel}; at most {spec.max_turns} replies each, --max-turns sets more). Its "
                      "sessions show the machinery, not a model's quality; name real models with --model and "
                      "--simulator.")
    console.print(f"[bold]Model under test:[/] {spec.model.model}   [bold]Simulator:[/] {spec.simulator.model} "
                  f"({spec.mode})   [bold]Assessor:[/] {spec.assessor.model}"
                  + (f"   [bold]Judge:[/] {spec.judge.model}" if spec.judge else ""))
    if spec.judge is not None and spec.judge.model == spec.simulator.model:
        console.print("[yellow]Warning:[/] the judge is the simulator's model: its satisfaction estimates are not "
                      "independent of the simulator's.")


def _execute(console: Console, spec: SimSpec, quiet: bool) -> SimResult:
    from uxbench.cli.sim_progress import SimProgress
    from uxbench.sim.run import execute

    progress = SimProgress(console, enabled=not quiet)
    try:
        result = asyncio.run(execute(spec, progress=progress))
    except KeyboardInterrupt:
        progress.stop()
        where = f" in {progress.run_dir}" if progress.run_dir else ""
        console.print(f"[yellow]Interrupted.[/] Finished sessions are saved{where}; rerun the same command to finish "
                      "the rest.")
        raise typer.Exit(130) from None
    finally:
        progress.stop()
    return result


@app.command("compare", help="Paired comparison of two sim runs on the same personas and seeds: B minus A for each "
                             "session metric, with a paired cluster-bootstrap CI over personas.")
def compare(
    run_a: Annotated[Path, typer.Argument(help="The baseline sim run directory (A).")],
    run_b: Annotated[Path, typer.Argument(help="The other sim run directory (B).")],
    format: Annotated[str, format_option()] = "table",
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
) -> None:
    from uxbench.report.sim_compare import paired_report, render_paired

    _choice(format, _FORMATS, "--format")
    report = paired_report(run_a, run_b, n_boot=n_boot, seed=seed)
    typer.echo(render_paired(report, format), nl=False)  # type: ignore[arg-type]


@app.command("signals", help="Consistency check: the acts the simulator intended against the reactions the mining "
                             "detectors find in its messages (agreement, confusion matrix).")
def signals(
    run_dir: Annotated[Path, typer.Argument(help="A sim run directory.")],
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.sim.signals import render_signal_check, signal_check

    _choice(format, _FORMATS, "--format")
    typer.echo(render_signal_check(signal_check(run_dir), format), nl=False)


from uxbench.cli import sim_quality_cmd, sim_validate_cmd  # noqa: E402, F401  (their commands register on `app`)
