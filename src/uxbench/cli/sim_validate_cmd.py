"""`uxbench sim validate | rubric-agreement`: simulated users against real logs (registered on `sim_cmd.app`)."""

from __future__ import annotations

import asyncio
import json
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer

from uxbench.cli.options import format_option
from uxbench.cli.sim_app import FORMATS as _FORMATS
from uxbench.cli.sim_app import choice as _choice
from uxbench.cli.sim_app import sim_app as app
from uxbench.cli.sim_quality_cmd import Ticker, judge_model

_REAL = "Real logs"
_REPLAY = "Replay"
_RUN = "Runtime"
_OUT = "Output"


def _write(out: Path | None, report: dict[str, Any]) -> None:
    if out is not None:
        from uxbench.fileio import atomic_write_bytes

        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(out, (json.dumps(report, ensure_ascii=False, indent=2, default=str) + "\n").encode())


def _roles(simulator: str, simulator_args: dict[str, str], assessor: str, assessor_args: dict[str, str],
           stack: ExitStack, cache: bool, cache_path: Path | None) -> tuple[Any, Any, list[Any], dict[str, Any]]:
    """The realiser and the assessor of a replay, with the models to close and their prices."""
    from uxbench.models.model import create_model
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.sim.assess import ModelAssessor, RulesAssessor
    from uxbench.sim.realize import SCRIPTED_SPECS, ModelRealiser
    from uxbench.sim.scripted import ScriptedRealiser

    store = ResponseCache(cache_path or default_cache_path()) if cache else None
    if store is not None:
        stack.callback(store.close)
    models: list[Any] = []
    prices: dict[str, Any] = {}
    if simulator in SCRIPTED_SPECS:
        realiser: Any = ScriptedRealiser(simulator)
    else:
        model = create_model(simulator, simulator_args, cache=store)
        models.append(model)
        prices["simulator"] = model.usage.models[model.spec].price
        realiser = ModelRealiser(model)
    if assessor == "rules":
        judge: Any = RulesAssessor()
    else:
        model = create_model(assessor, assessor_args, cache=store)
        models.append(model)
        prices["assessor"] = model.usage.models[model.spec].price
        judge = ModelAssessor(model)
    return realiser, judge, models, prices


@app.command("validate", help="Simulated users against real logs in the canonical format: reaction rates and their "
                              "ratios, the cooperativeness gap, Jensen-Shannon distance, KS on session length, a "
                              "discriminator AUC beside a length-only baseline, thumbs or ratings, Kendall tau, and "
                              "per assistant a verdict against the real logs' split-half control; warns or refuses "
                              "when language, task vs chit-chat or mining drops make the sides unlike. --replay: the "
                              "simulator answers each held-out real reply (Cohen's kappa, confusion matrix).")
def validate(
    run_dirs: Annotated[list[Path] | None, typer.Argument(help="Sim run directories to compare with the real logs (free-run validation).", show_default="none")] = None,  # noqa: E501
    real: Annotated[str | None, typer.Option("--real", help="Real logs: a log file or directory (canonical, ShareGPT, messages, product), a `uxbench mine run` output, or llm-rubric:PATH (a checkout of microsoft/LLM-Rubric: its real rated conversations).", show_default="none: required", rich_help_panel=_REAL)] = None,  # noqa: E501
    workdir: Annotated[Path | None, typer.Option(help="Where the real logs are mined (kept: a rerun reuses it).", show_default="a temporary directory", rich_help_panel=_REAL)] = None,  # noqa: E501
    workers: Annotated[int | None, typer.Option(min=1, help="Processes of the mining stages.", show_default="all cores", rich_help_panel=_REAL)] = None,  # noqa: E501
    replay: Annotated[bool, typer.Option("--replay", help="Replay validation: needs --personas built from these logs with --holdout prefix:F.", rich_help_panel=_REPLAY)] = False,  # noqa: E501
    personas: Annotated[list[str] | None, typer.Option("--personas", "-p", help="Replay: personas built from the real logs (`uxbench personas build`).", show_default="none", rich_help_panel=_REPLAY)] = None,  # noqa: E501
    simulator: Annotated[str, typer.Option("--simulator", "-s", help="Replay: PROVIDER:MODEL of the realiser, or scripted:user.", rich_help_panel=_REPLAY)] = "scripted:user",  # noqa: E501
    simulator_arg: Annotated[list[str] | None, typer.Option("--simulator-arg", "-S", help="KEY=VALUE for the simulator's provider.", show_default="none", rich_help_panel=_REPLAY)] = None,  # noqa: E501
    assessor: Annotated[str, typer.Option("--assessor", help="Replay: rules (the goal items' literal checks; refused with personas built by rules) or PROVIDER:MODEL.", rich_help_panel=_REPLAY)] = "rules",  # noqa: E501
    assessor_arg: Annotated[list[str] | None, typer.Option("--assessor-arg", help="KEY=VALUE for the assessor's provider.", show_default="none", rich_help_panel=_REPLAY)] = None,  # noqa: E501
    seed: Annotated[int, typer.Option(help="Replay: seed of the users' policy.", rich_help_panel=_REPLAY)] = 0,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_RUN)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench", rich_help_panel=_RUN)] = None,  # noqa: E501
    no_discriminator: Annotated[bool, typer.Option("--no-discriminator", help="Skip the n-gram discriminator (it needs scikit-learn).", rich_help_panel=_OUT)] = False,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds.", rich_help_panel=_OUT)] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.", rich_help_panel=_OUT)] = 0,
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON here.", show_default="none", rich_help_panel=_OUT)] = None,  # noqa: E501
    format: Annotated[str, format_option()] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress.", rich_help_panel=_OUT)] = False,
) -> None:
    from rich.console import Console

    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.report.sim_validation import render_validate
    from uxbench.sim.real_llm_rubric import parse_real
    from uxbench.sim.validate_data import mined_logs

    _choice(format, _FORMATS, "--format")
    console = Console(stderr=True)
    if real is None:
        raise ConfigError("--real LOGS is required: the real logs to validate against.")
    real_path, llm_rubric = parse_real(real)
    if not real_path.exists():
        raise ConfigError(f"--real {real}: no such file or directory.")
    if replay and run_dirs:
        raise ConfigError("--replay answers the real replies with the simulator itself: drop the run directories, "
                          "or drop --replay to compare those runs (free-run validation).")
    if not replay and not run_dirs:
        raise ConfigError("Pass one or more sim run directories to compare with the real logs, or --replay with "
                          "--personas.")
    if not replay and (personas or simulator_arg or assessor_arg or simulator != "scripted:user"
                       or assessor != "rules"):
        raise ConfigError("--personas, --simulator and --assessor apply to --replay only.")
    say = None if quiet else (lambda line: console.print(line, highlight=False, markup=False))
    with ExitStack() as stack:
        mined = mined_logs(real_path, stack, workdir=workdir, workers=workers, say=say, llm_rubric=llm_rubric)
        if replay:
            report = _replay(console, mined, personas, simulator, parse_model_args(simulator_arg, option="--simulator-"
                             "arg"), assessor, parse_model_args(assessor_arg, option="--assessor-arg"), seed=seed,
                             cache=not no_cache, cache_path=cache_path, n_boot=n_boot, ci_seed=ci_seed, quiet=quiet)
        else:
            report = _free_run(mined, real, list(run_dirs or []), workers, say, n_boot=n_boot, ci_seed=ci_seed,
                               discriminator=not no_discriminator)
    if say is not None:
        for check in report.get("checks", []):
            console.print(f"warning: {check['message']}", highlight=False, markup=False)
    _write(out, report)
    typer.echo(render_validate(report, format), nl=False)  # type: ignore[arg-type]


def _free_run(mined: Path, real: str, run_dirs: list[Path], workers: int | None, say: Any, *, n_boot: int,
              ci_seed: int, discriminator: bool) -> dict[str, Any]:
    from uxbench.sim.store import SimStore
    from uxbench.sim.validate import SimSide, free_run_report
    from uxbench.sim.validate_checks import like_with_like, mining_drops
    from uxbench.sim.validate_data import mined_sim_run, read_side

    sims = []
    sim_checks = []
    for run_dir in run_dirs:
        store = SimStore.open_existing(run_dir)
        try:
            manifest = store.read_manifest() or {}
            sessions = {r.session_id: (r.persona_id, r.lang) for r in store.iter_sessions()}
        finally:
            store.close()
        model = manifest.get("model") or {}
        assistant = str(model.get("spec", "?")) + (f" {model['args']}" if model.get("args") else "")
        mined_run = mined_sim_run(run_dir, workers=workers, say=say)
        side = read_side(str(run_dir), mined_run, assistant=assistant,
                         cluster_of={sid: persona for sid, (persona, _) in sessions.items()})
        label = f"{run_dir.name} ({assistant})"
        sims.append(SimSide(label, assistant, side))
        sim_checks.append((label, side, mining_drops(mined_run, {sid: lang for sid, (_, lang) in sessions.items()})))
    real_side = read_side(real, mined)
    checks = like_with_like((real, real_side, mining_drops(mined)), sim_checks)
    report = free_run_report(real_side, sims, n_boot=n_boot, seed=ci_seed, discriminator=discriminator,
                             checks=checks)
    report["command"] = {"real": real, "runs": [str(p) for p in run_dirs]}
    return report


def _replay(console: Any, mined: Path, personas: list[str] | None, simulator: str, simulator_args: dict[str, str],
            assessor: str, assessor_args: dict[str, str], *, seed: int, cache: bool, cache_path: Path | None,
            n_boot: int, ci_seed: int, quiet: bool) -> dict[str, Any]:
    from uxbench.errors import ConfigError
    from uxbench.sim.persona_io import load_personas
    from uxbench.sim.session import Ledger
    from uxbench.sim.validate_replay import replay_report, run_replay

    if not personas:
        raise ConfigError("--replay needs --personas: personas built from the real logs "
                          "(`uxbench personas build --from MINE_RUN --holdout prefix:0.5`).")
    loaded = [p.persona for p in load_personas(personas)]
    ruled = [p.id for p in loaded if (p.meta or {}).get("extraction") == "rules"]
    if ruled and assessor == "rules":
        raise ConfigError(
            f"--replay with personas built by rules ({len(ruled)} of {len(loaded)}, e.g. {ruled[0]}) and --assessor "
            "rules measures nothing: those personas' goal items hold the real user's own words, which a real reply "
            "almost never contains, so the rules assessor fails nearly every reply and the simulated users dislike "
            "and leave where the real ones did not. Pass --assessor PROVIDER:MODEL (an LLM reads each real reply "
            "against the goal), or build the personas with `uxbench personas build --model PROVIDER:MODEL`.")
    tick = Ticker(console, "replay", "conversations", quiet)

    async def go() -> Any:
        with ExitStack() as stack:
            realiser, judge, models, prices = _roles(simulator, simulator_args, assessor, assessor_args, stack, cache,
                                                     cache_path)
            try:
                return await run_replay(mined, loaded, realiser, judge, seed=seed, ledger=Ledger(prices),
                                        tick=tick)
            finally:
                for model in models:
                    await model.aclose()

    try:
        result = asyncio.run(go())
    finally:
        tick.stop()
    report = replay_report(result.steps, result.counts, n_boot=n_boot, seed=ci_seed)
    report["simulator"], report["assessor"] = simulator, assessor
    report["usage"] = {k: v.model_dump() for k, v in (result.usage.usage if result.usage else {}).items()}
    return report


@app.command("rubric-agreement", help="Personalised against general rubric: which one's score of a real reply better "
                                      "predicts the real user's reaction (AUC, accuracy, paired difference with CIs), "
                                      "on the held-out turns personas were not built from.")
def rubric_agreement(
    real: Annotated[Path, typer.Option("--real", help="The `uxbench mine run` output the personas were built from.")],
    personas: Annotated[list[str], typer.Option("--personas", "-p", help="Personas built from it (`uxbench personas build --holdout prefix:F`).")],  # noqa: E501
    judge: Annotated[str, typer.Option("--judge", "-j", help="PROVIDER:MODEL that scores each reply on both rubrics.")],
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider.", show_default="none")] = None,  # noqa: E501
    general: Annotated[str, typer.Option(help="The general rubric: ux_general, mt_bench, flask, helpsteer2 or a rubric file.")] = "ux_general",  # noqa: E501
    strategy: Annotated[str, typer.Option(help="zero_shot | cot | user_modeling")] = "zero_shot",
    concurrency: Annotated[int | None, typer.Option(min=1, help="Judge calls in flight at most.", show_default="the provider's")] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.")] = False,
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds.")] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    out: Annotated[Path | None, typer.Option(help="Also write the report as JSON here.", show_default="none")] = None,
    format: Annotated[str, format_option()] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
) -> None:
    from rich.console import Console

    from uxbench.models.registry import parse_model_args
    from uxbench.report.sim_validation import render_rubric_agreement
    from uxbench.scoring.rubric import load_rubric
    from uxbench.sim.mined import check_mined_dir
    from uxbench.sim.persona_io import load_personas
    from uxbench.sim.rubric_agreement import rubric_agreement as compare

    _choice(format, _FORMATS, "--format")
    _choice(strategy, ("zero_shot", "cot", "user_modeling"), "--strategy")
    console = Console(stderr=True)
    check_mined_dir(real)
    load_rubric(general)  # a wrong name or a broken file fails before any call
    loaded = [p.persona for p in load_personas(personas)]
    args = parse_model_args(judge_arg, option="--judge-arg")
    tick = Ticker(console, "rubric judge", "replies", quiet)

    async def go() -> dict[str, Any]:
        async with judge_model(judge, args, cache=not no_cache, cache_path=cache_path,
                               concurrency=concurrency) as model:
            return await compare(real, loaded, model, general=general, strategy=strategy, n_boot=n_boot,
                                 seed=ci_seed, width=model.limiter.max_concurrency, tick=tick)

    try:
        report = asyncio.run(go())
    finally:
        tick.stop()
    report["judge"] = judge
    _write(out, report)
    typer.echo(render_rubric_agreement(report, format), nl=False)  # type: ignore[arg-type]
    if report.get("judge_errors"):
        console.print(f"[red]{report['judge_errors']} judge calls failed[/] (their replies are left out, counted as "
                      f"unscored). First error: {report['first_judge_error']}. Rerun the same command to retry them "
                      "(answers so far come from the response cache).")
        raise typer.Exit(1)
