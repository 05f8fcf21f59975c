"""`uxbench report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

DEFAULT_N_BOOT = 2000


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories printed by `uxbench run`.")],
    format: Annotated[str, typer.Option("--format", help="table | md | csv | json")] = "table",
    n_boot: Annotated[int | None, typer.Option(
        "--n-boot", min=1, help="Recompute every summary from the stored records with this many bootstrap rounds "
                                "(nothing is rerun; also used by the paired tests). Default: the stored summaries, "
                                f"and {DEFAULT_N_BOOT} rounds for the paired tests.", show_default="the stored summaries; 2000 for the paired tests")] = None,  # noqa: E501
    seed: Annotated[int | None, typer.Option(
        help="Bootstrap seed; like --n-boot, recomputes the summaries from the stored records.", show_default="0")] = None,  # noqa: E501
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.report.compare import compare_views, load_run
    from uxbench.report.render import render, render_summary

    if format not in ("table", "md", "csv", "json"):
        raise ConfigError(f"--format must be table, md, csv or json, not '{format}'.")
    rounds, boot_seed = n_boot or DEFAULT_N_BOOT, seed or 0
    run_dirs = _report_sim_runs(run_dirs, format, n_boot, seed)
    if not run_dirs:
        return
    if any(_task_of(path) != "judge" for path in run_dirs):
        _report_generative(run_dirs, format, n_boot, seed)
        return
    if n_boot is None and seed is None:
        views = [load_run(path) for path in run_dirs]
    else:
        from uxbench.report.resummarize import resummarize_run

        views = [resummarize_run(path, n_boot=rounds, seed=boot_seed) for path in run_dirs]
        typer.echo(f"Summaries recomputed from the stored records (n_boot={rounds}, seed={boot_seed}); "
                   "the run directories are unchanged.", err=True)
    if len(views) == 1 and format != "csv":
        # One run: its headline figures with every breakdown.
        typer.echo(render_summary(views[0].summary, format))  # type: ignore[arg-type]
        return
    report = compare_views(views, n_boot=rounds, seed=boot_seed)
    typer.echo(render(report, format))  # type: ignore[arg-type]


def _report_sim_runs(run_dirs: list[Path], format: str, n_boot: int | None, seed: int | None) -> list[Path]:
    """Print the simulated-session runs among `run_dirs` (`uxbench sim run`); returns the other runs."""
    from uxbench.sim.store import is_sim_run

    sims = [p for p in run_dirs if is_sim_run(p)]
    if sims:
        from uxbench.report.sim import sim_report

        typer.echo(sim_report(sims, format, n_boot=n_boot, seed=seed), nl=False)  # type: ignore[arg-type]
    return [p for p in run_dirs if p not in sims]


def _task_of(path: Path) -> str:
    from uxbench.report.compare import open_run_store

    store = open_run_store(path)
    try:
        return str((store.read_manifest() or {}).get("task") or "judge")
    finally:
        store.close()


def _report_generative(run_dirs: list[Path], format: str, n_boot: int | None, seed: int | None) -> None:
    """Runs of Tasks 2/3 (or a mix of tasks): each run's summary, and with several runs one headline table.
    Ranking with paired tests is `uxbench leaderboard`."""
    from uxbench.errors import UxbenchError
    from uxbench.report.generative import render_generative_summary
    from uxbench.report.protocol import render_protocol
    from uxbench.report.render import render_summary
    from uxbench.report.resummarize import recomputed_summary

    summaries = []
    for path in run_dirs:
        if n_boot is None and seed is None:
            from uxbench.report.compare import open_run_store

            store = open_run_store(path)
            try:
                summary = store.read_summary()
            finally:
                store.close()
            if summary is None:
                raise UxbenchError(f"{path} has no summary.json: the run has not finished. Rerun the same "
                                   "`uxbench run` command to resume it.")
        else:
            summary = recomputed_summary(path, n_boot=n_boot or DEFAULT_N_BOOT, seed=seed or 0)[2]
        summaries.append(summary)
    if format == "json":
        import json

        typer.echo(json.dumps(summaries if len(summaries) > 1 else summaries[0], ensure_ascii=False, indent=2))
        return
    if len(summaries) > 1:
        typer.echo(render_protocol(summaries, format))  # type: ignore[arg-type]
        typer.echo("Ranked, with paired tests between runs on the same cases: uxbench leaderboard "
                   + " ".join(str(p) for p in run_dirs), err=True)
        return
    summary = summaries[0]
    if summary.get("task") == "judge":
        typer.echo(render_summary(summary, format))  # type: ignore[arg-type]
    else:
        typer.echo(render_generative_summary(summary, format))  # type: ignore[arg-type]
