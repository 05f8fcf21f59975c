"""`uxbench score RUN_DIR --judge J`: score a finished generation run with another judge, without regenerating.

The scores sit beside those of earlier judges (records keyed by sample and judge); the summary is recomputed
from the store and lists every judge. Resumable: a killed scoring resumes with the same command.
"""

from __future__ import annotations

from pathlib import Path

from uxbench.errors import ConfigError
from uxbench.orchestrate.finished_run import CallSettings, open_finished_run, refresh_summary, run_with_model
from uxbench.orchestrate.preflight import check_models
from uxbench.orchestrate.primary import choose_primary
from uxbench.orchestrate.progress import ProgressFn, note
from uxbench.orchestrate.runner import RunResult
from uxbench.orchestrate.spec import JudgeSpec
from uxbench.orchestrate.summary import usage_key
from uxbench.tasks.base import SummaryOptions


async def score_run(
    run_dir: Path,
    judge: JudgeSpec,
    *,
    summary_options: SummaryOptions | None = None,
    make_primary: bool | None = None,
    use_cache: bool = True,
    cache_path: Path | None = None,
    max_attempts: int = 6,
    timeout_s: float | None = None,
    progress: ProgressFn | None = None,
    calibration: Path | None = None,
) -> RunResult:
    """Score the run's selected generations with `judge`; returns the refreshed summary.

    `make_primary`: whether this judge becomes the run's primary judge (default: when the run has none).
    `calibration`: a Task 1 run of this judge whose error rates correct its Good% (`orchestrate.calibration`)."""
    from uxbench.models.registry import validate_provider_args
    from uxbench.orchestrate.calibration import calibration_record, calibrations_in_manifest, load_calibration_run
    from uxbench.orchestrate.scoring_step import judge_role, judges_in_manifest, score_step

    validate_provider_args(judge.model, judge.args, option="--judge-arg")
    await check_models([("--judge", judge.model, judge.args)])
    role = judge_role(judge)
    record = calibration_record(role.info, load_calibration_run(calibration)) if calibration is not None else None
    calls = CallSettings(use_cache=use_cache, cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout_s)
    async with open_finished_run(run_dir, command="uxbench score", verb="score") as run:
        if not run.task.generative:
            raise ConfigError(
                f"{run.store.path} is a Task 1 ({run.task.name}) run: its model is the judge under test, so it has "
                "nothing to score. `uxbench score` scores Task 2/3 runs."
            )
        manifest = run.manifest
        manifest["judges"] = {**judges_in_manifest(manifest), role.key: role.info}
        if record is not None:
            manifest["calibrations"] = {**calibrations_in_manifest(manifest), role.key: record}
        manifest["primary_judge"], primary_note = choose_primary(manifest, role.key, judge.model, make_primary,
                                                                 set(run.store.judges()))
        run.store.write_manifest(manifest)
        if primary_note and progress is not None:
            progress(note(primary_note))
        outcome, spent = await run_with_model(
            judge.model, judge.args, judge.concurrency, calls,
            lambda model: score_step(run.store, run.task, role, model, selected=run.selected,
                                     concurrency=model.limiter.max_concurrency, progress=progress),
            sent_to=(run.store, usage_key(role.key)),
        )
        return refresh_summary(run, summary_options, scoring={"judge": role.key, **outcome, **spent})


async def calibrate_run(run_dir: Path, calibration: Path, *, summary_options: SummaryOptions | None = None
                        ) -> RunResult:
    """Attach a Task 1 run's error rates to the judges of a scored run that it measured (same model spec), with no
    judge call; the summary then shows the judge-corrected Good% beside the raw one."""
    from uxbench.errors import UxbenchError
    from uxbench.orchestrate.calibration import calibrate_judges, calibrations_in_manifest, load_calibration_run
    from uxbench.orchestrate.scoring_step import judges_in_manifest

    cal = load_calibration_run(calibration)
    async with open_finished_run(run_dir, command="uxbench score", verb="calibrate") as run:
        if not run.task.generative:
            raise ConfigError(f"{run.store.path} is a Task 1 run: only Task 2/3 judges are calibrated.")
        judges = judges_in_manifest(run.manifest)
        records, _ = calibrate_judges(judges, [cal])
        if not records:
            specs = ", ".join(sorted({str(i.get("spec")) for i in judges.values()})) or "none"
            raise UxbenchError(f"--calibration {cal.path} measured {cal.model}, which scored nothing in "
                               f"{run.store.path} (its judges: {specs}). Score the run with that judge first "
                               f"(uxbench score {run.store.path} --judge {cal.model}), or calibrate its own judge.")
        run.manifest["calibrations"] = {**calibrations_in_manifest(run.manifest), **records}
        run.store.write_manifest(run.manifest)
        return refresh_summary(run, summary_options)
