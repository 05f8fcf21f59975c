"""`uxbench sim fidelity | frontier | sensitivity`: checks of the simulator itself (registered on `sim_cmd.app`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from uxbench.cli.options import format_option
from uxbench.cli.sim_app import FORMATS as _FORMATS
from uxbench.cli.sim_app import choice as _choice
from uxbench.cli.sim_app import sim_app as app

if TYPE_CHECKING:
    from rich.console import Console

_JUDGE = "Judge"
_OUT = "Output"
_RUN = "Runtime"
JUDGE_HELP = ("PROVIDER:MODEL of the UFS judge (paraphrased disclosures, hallucinations, goal pursuit); use another "
              "model than the simulator's.")


@asynccontextmanager
async def judge_model(spec: str, args: dict[str, str], *, cache: bool, cache_path: Path | None,
                      concurrency: int | None) -> AsyncIterator[Any]:
    """A model through the runtime (limiter, retries, the response cache unless `cache` is off), closed after."""
    from uxbench.models.model import create_model
    from uxbench.runtime.cache import ResponseCache, default_cache_path

    store = ResponseCache(cache_path or default_cache_path()) if cache else None
    model = create_model(spec, args, cache=store, max_concurrency=concurrency)
    try:
        yield model
    finally:
        await model.aclose()
        if store is not None:
            store.close()


class Ticker:
    """A progress bar (plain lines without a terminal) for a pass over items: `tick(done, total)`; `stop()`."""

    def __init__(self, console: Console, stage: str, unit: str, quiet: bool) -> None:
        from uxbench.cli.mine_progress import StageBars

        self.bars = StageBars(console, enabled=not quiet)
        self.stage, self.unit = stage, unit

    def __call__(self, done: int, total: int, concurrency: int | None = None) -> None:
        from uxbench.mining.pipeline.progress import StageProgress

        self.bars(StageProgress(self.stage, self.unit, done, total, concurrency))

    def stop(self) -> None:
        self.bars.stop()


@app.command("fidelity", help="User Fidelity Score of a sim run: items compiled from each persona, checked by code "
                              "(disclosure of facts in any spelling, language, length, reactions, termination) and by "
                              "a judge blind to success; split by success and by the corruption gate.")
def fidelity(
    run_dir: Annotated[Path, typer.Argument(help="A sim run directory.")],
    judge: Annotated[str | None, typer.Option("--judge", "-j", help=JUDGE_HELP, show_default="none: the items code decides", rich_help_panel=_JUDGE)] = None,  # noqa: E501
    judge_arg: Annotated[list[str] | None, typer.Option("--judge-arg", "-J", help="KEY=VALUE for the judge's provider.", show_default="none", rich_help_panel=_JUDGE)] = None,  # noqa: E501
    concurrency: Annotated[int | None, typer.Option(min=1, help="Judge calls in flight at most (adapts down on 429 and overload).", show_default="the provider's", rich_help_panel=_RUN)] = None,  # noqa: E501
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the response cache.", rich_help_panel=_RUN)] = False,  # noqa: E501
    cache_path: Annotated[Path | None, typer.Option(help="Response cache file.", show_default="$UXBENCH_CACHE_DIR or ~/.cache/uxbench", rich_help_panel=_RUN)] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds of the CIs.", rich_help_panel=_OUT)] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.", rich_help_panel=_OUT)] = 0,
    format: Annotated[str, format_option()] = "table",
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.", rich_help_panel=_OUT)] = False,
) -> None:
    from rich.console import Console

    from uxbench.errors import ConfigError
    from uxbench.models.registry import parse_model_args
    from uxbench.report.sim_quality import render_fidelity
    from uxbench.sim.fidelity import check_judged, fidelity_report, judge_key, judge_pending, warnings_for
    from uxbench.sim.store import SimStore

    _choice(format, _FORMATS, "--format")
    if judge is None and judge_arg:
        raise ConfigError("--judge-arg needs --judge.")
    console = Console(stderr=True)
    args = parse_model_args(judge_arg, option="--judge-arg")
    store = SimStore.open_existing(run_dir)
    try:
        manifest = store.read_manifest() or {}
        records = list(store.iter_sessions())
        if not records:
            raise ConfigError(f"{run_dir} holds no finished session: rerun the `uxbench sim run` command that made it.")
        personas = store.personas()
        for warning in warnings_for(manifest, judge):
            console.print(f"[yellow]Warning:[/] {warning}")
        if judge is not None:
            tick = Ticker(console, "fidelity judge", "sessions", quiet)

            async def run_judge() -> int:
                async with judge_model(judge, args, cache=not no_cache, cache_path=cache_path,
                                       concurrency=concurrency) as model:
                    done = len(store.judged_ids(judge_key(judge)))
                    todo = len(records) - done
                    tick(0, todo, model.limiter.max_concurrency)
                    return await judge_pending(store, records, personas, model, judge_key(judge),
                                               width=model.limiter.max_concurrency,
                                               tick=lambda n: tick(n, todo, model.limiter.max_concurrency))
            try:
                asyncio.run(run_judge())
            except KeyboardInterrupt:
                console.print("[yellow]Interrupted.[/] The judge's answers so far are saved; rerun the same command "
                              "to finish.")
                raise typer.Exit(130) from None
            finally:
                tick.stop()
        failed, first = check_judged(store, records, judge) if judge is not None else (0, None)
        summary = fidelity_report(store, records, personas, judge, manifest, n_boot=n_boot, seed=ci_seed)
    finally:
        store.close()
    typer.echo(render_fidelity(summary, format), nl=False)  # type: ignore[arg-type]
    console.print(f"[bold]Written:[/] {run_dir}/fidelity.json, {run_dir}/fidelity_sessions.jsonl")
    if failed:
        console.print(f"[red]The judge failed on {failed} of {len(records)} sessions[/] (their judge items are "
                      f"unchecked, not counted). First error: {first}. Rerun the same command to ask it again.")
        raise typer.Exit(1)


@app.command("frontier", help="Cost per session (simulator, judges and model under test apart) against UFS for "
                              "several simulator configurations on the same personas and seeds; the Pareto set and "
                              "the cheapest simulator with UFS >= --target.")
def frontier(
    run_dirs: Annotated[list[Path], typer.Argument(help="Sim run directories, one per simulator configuration.")],
    target: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="The UFS a simulator must reach (0-1).", show_default="none")] = None,  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Use the UFS of this judge's pass (from `uxbench sim fidelity --judge`).", show_default="each run's latest pass")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds (a code-only pass made here).")] = 2000,
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.report.sim_quality import render_frontier
    from uxbench.sim.frontier import frontier_report

    _choice(format, _FORMATS, "--format")
    report = frontier_report(run_dirs, judge=judge, target=target, n_boot=n_boot)
    typer.echo(render_frontier(report, format), nl=False)  # type: ignore[arg-type]


@app.command("sensitivity", help="The same assistants under two or more simulator configurations: each session "
                                 "metric's change with a paired CI, and whether the assistants' ranking changes "
                                 "(Kendall tau). Tells whether a conclusion depends on the simulator.")
def sensitivity(
    run_dirs: Annotated[list[Path], typer.Argument(help="Sim run directories: every assistant under every simulator configuration.")],  # noqa: E501
    baseline: Annotated[str | None, typer.Option(help="The configuration to compare the others with, as printed (e.g. 'scripted:user (structured)').", show_default="the first run's")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds.")] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.report.sim_quality import render_sensitivity
    from uxbench.sim.sensitivity import sensitivity_report

    _choice(format, _FORMATS, "--format")
    report = sensitivity_report(run_dirs, baseline=baseline, n_boot=n_boot, seed=ci_seed)
    typer.echo(render_sensitivity(report, format), nl=False)  # type: ignore[arg-type]


@app.command("proxies", help="UserProxyBench over tool tasks: runs that share the agent and the tasks and differ "
                             "only in the user proxy. Mean reward per proxy with paired CIs and the largest "
                             "difference, the share of successful episodes with a user-instruction violation, "
                             "premature disclosure "
                             "and what it does to the agent's tool calls, UFS, and the cost-fidelity frontier.")
def proxies(
    run_dirs: Annotated[list[Path], typer.Argument(help="Tool-task sim runs (`uxbench sim run --tasks ...`), one per user proxy; the first is the reference of the paired differences.")],  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Use this judge's UFS pass (from `uxbench sim fidelity RUN --judge J`) beside the code items.", show_default="none: the items code decides")] = None,  # noqa: E501
    target: Annotated[float | None, typer.Option(min=0.0, max=1.0, help="The UFS a proxy must reach (0-1): the cheapest that does is named.", show_default="none")] = None,  # noqa: E501
    n_boot: Annotated[int, typer.Option(min=1, help="Bootstrap rounds of the CIs.")] = 2000,
    ci_seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    format: Annotated[str, format_option()] = "table",
) -> None:
    from uxbench.report.proxies import render_proxies
    from uxbench.sim.proxies import proxies_report

    _choice(format, _FORMATS, "--format")
    report = proxies_report(run_dirs, judge=judge, target=target, n_boot=n_boot, seed=ci_seed)
    typer.echo(render_proxies(report, format), nl=False)  # type: ignore[arg-type]
