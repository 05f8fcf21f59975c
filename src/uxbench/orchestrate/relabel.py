"""`uxbench score RUN_DIR --strategy-model M`: label a finished Task 3 run's recoveries with a strategy model,
without regenerating or re-scoring. Resumable (same command); the summary is recomputed from the store."""

from __future__ import annotations

from pathlib import Path

from uxbench.orchestrate.finished_run import CallSettings, open_finished_run, refresh_summary, run_with_model
from uxbench.orchestrate.preflight import check_models
from uxbench.orchestrate.progress import ProgressFn
from uxbench.orchestrate.runner import RunResult
from uxbench.orchestrate.spec import StrategySpec
from uxbench.orchestrate.summary import usage_key
from uxbench.tasks.base import SummaryOptions


async def label_run(
    run_dir: Path,
    spec: StrategySpec,
    *,
    summary_options: SummaryOptions | None = None,
    use_cache: bool = True,
    cache_path: Path | None = None,
    max_attempts: int = 6,
    timeout_s: float | None = None,
    progress: ProgressFn | None = None,
) -> RunResult:
    """Label the run's selected recoveries with `spec`'s model; returns the refreshed summary. Holds the run
    directory's lock, as `uxbench run` and `uxbench score` do."""
    from uxbench.models.registry import validate_provider_args
    from uxbench.orchestrate.strategy_step import (
        classifier_role,
        classifiers_in_manifest,
        require_recovery,
        strategy_step,
    )

    validate_provider_args(spec.model, spec.args, option="--strategy-arg")
    await check_models([("--strategy-model", spec.model, spec.args)])
    role = classifier_role(spec)
    calls = CallSettings(use_cache=use_cache, cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout_s)
    async with open_finished_run(run_dir, command="uxbench score", verb="label") as run:
        require_recovery(run.task.name)
        run.manifest["strategy_classifiers"] = {**classifiers_in_manifest(run.manifest), role.key: role.info}
        run.store.write_manifest(run.manifest)
        outcome, spent = await run_with_model(
            spec.model, spec.args, spec.concurrency, calls,
            lambda model: strategy_step(run.store, role, model, selected=run.selected,
                                        concurrency=model.limiter.max_concurrency, progress=progress),
            sent_to=(run.store, usage_key(role.key)),
        )
        return refresh_summary(run, summary_options, strategy_labelling={"classifier": role.key, **outcome, **spent})
