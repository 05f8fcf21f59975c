"""`uxbench report`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from uxbench.cli.options import format_option

DEFAULT_N_BOOT = 2000


def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="One or more run directories printed by `uxbench run`.")],
    format: Annotated[str, format_option()] = "table",
    n_boot: Annotated[int | None, typer.Option(
        "--n-boot", min=1, help="Recompute every summary from the stored records with this many bootstrap rounds "
                                "(nothing is rerun; also used by the paired tests).",
        show_default=f"the stored summaries; {DEFAULT_N_BOOT} for the paired tests")] = None,
    seed: Annotated[int | None, typer.Option(
        help="Bootstrap seed; like --n-boot, recomputes the summaries from the stored records.", show_default="0")] = None,  # noqa: E501
    judge: Annotated[str | None, typer.Option("--judge", "-j", help="Tasks 2/3: the judge whose figures head the table (its PROVIDER:MODEL spec, its label or its key).", show_default="each run's primary judge")] = None,  # noqa: E501
    calibration: Annotated[list[Path] | None, typer.Option(metavar="T1_RUN_DIR", help="Tasks 2/3: a Task 1 run of a judge on labelled replies; its error rates correct that judge's Good% in this report (repeatable; the run directories are unchanged; docs/TRUST.md).", show_default="the runs' own calibrations")] = None,  # noqa: E501
) -> None:
    from uxbench.errors import ConfigError
    from uxbench.report.compare import compare_views, load_run
    from uxbench.report.render import render, render_summary

    rounds, boot_seed = n_boot or DEFAULT_N_BOOT, seed or 0
    run_dirs = _report_sim_runs(run_dirs, format, n_boot, seed)
    if not run_dirs:
        return
    if any(_task_of(path) != "judge" for path in run_dirs):
        _report_generative(run_dirs, format, n_boot, seed, judge, calibration or [])
        return
    if judge is not None or calibration:
        raise ConfigError("--judge and --calibration apply to Task 2/3 runs; in Task 1 the model under test is the "
                          "judge.")
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


def _report_generative(run_dirs: list[Path], format: str, n_boot: int | None, seed: int | None, judge: str | None,
                       calibration: list[Path]) -> None:
    """Runs of Tasks 2/3 (or a mix of tasks): each run's summary, and with several runs one headline table with
    the paired differences from the first run of each task. Ranking every pair is `uxbench leaderboard`."""
    from uxbench.errors import UxbenchError
    from uxbench.orchestrate.calibration import load_calibration_run
    from uxbench.report.generative import render_generative_summary
    from uxbench.report.generative_report import calibrate_summary, generative_report, render_generative_report
    from uxbench.report.render import render_summary
    from uxbench.report.resummarize import recomputed_summary
    from uxbench.report.run_data import load_run_data

    calibrations = [load_calibration_run(p) for p in calibration]

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
    if len(summaries) > 1:
        report = generative_report([load_run_data(p) for p in run_dirs], summaries, judge=judge,
                                   calibrations=calibrations, n_boot=n_boot or DEFAULT_N_BOOT, seed=seed or 0)
        typer.echo(render_generative_report(report, format), nl=False)  # type: ignore[arg-type]
        typer.echo("Every pair ranked, with ties and separability: uxbench leaderboard "
                   + " ".join(str(p) for p in run_dirs), err=True)
        return
    summary = summaries[0]
    if judge is not None and summary.get("task") != "judge":
        from uxbench.report.generative_report import choose_judge
        from uxbench.report.leaderboard import check_judge_known

        run = load_run_data(run_dirs[0])
        check_judge_known([run], judge)
        choose_judge(summary, run, judge)
    for note in calibrate_summary(summary, calibrations):
        typer.secho(f"note: {note}", err=True, fg=typer.colors.YELLOW)
    if format == "json":
        import json

        typer.echo(json.dumps(summary, ensure_ascii=False, indent=2))
        return
    if summary.get("task") == "judge":
        typer.echo(render_summary(summary, format))  # type: ignore[arg-type]
    else:
        typer.echo(render_generative_summary(summary, format))  # type: ignore[arg-type]
