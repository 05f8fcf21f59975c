"""`uxbench score RUN_DIR --strategy-model M`: label a finished Task 3 run's recoveries with a strategy model,
without regenerating or re-scoring. Resumable (same command); the summary is recomputed from the store."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.orchestrate.progress import ProgressFn, RunAborted
from uxbench.orchestrate.runner import RunResult
from uxbench.orchestrate.spec import StrategySpec
from uxbench.runs.store import MANIFEST, RunStore
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
    from uxbench.dirlock import hold_dir_lock

    RunStore.open_existing(run_dir)  # a clear error for a path that is not a run directory, before locking it
    with hold_dir_lock(run_dir, command="uxbench score", what="run directory"):
        return await _label_locked(run_dir, spec, summary_options=summary_options, use_cache=use_cache,
                                   cache_path=cache_path, max_attempts=max_attempts, timeout_s=timeout_s,
                                   progress=progress)


async def _label_locked(
    run_dir: Path,
    spec: StrategySpec,
    *,
    summary_options: SummaryOptions | None,
    use_cache: bool,
    cache_path: Path | None,
    max_attempts: int,
    timeout_s: float | None,
    progress: ProgressFn | None,
) -> RunResult:
    from uxbench.models.model import create_model
    from uxbench.models.registry import parse_model_spec, validate_provider_args
    from uxbench.orchestrate.strategy_step import (
        classifier_role,
        classifiers_in_manifest,
        require_recovery,
        strategy_step,
    )
    from uxbench.orchestrate.summary import run_summary, task_from_manifest
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy

    store = RunStore.open_existing(run_dir)
    manifest = store.read_manifest() or {}
    task = task_from_manifest(manifest, str(store.path / MANIFEST))
    require_recovery(task.name)
    selected = store.read_selection()
    if selected is None:
        raise UxbenchError(
            f"{store.path} has not finished its generation step: rerun the `uxbench run` command that made it, "
            "then label."
        )
    parse_model_spec(spec.model)
    validate_provider_args(spec.model, spec.args, option="--strategy-arg")
    role = classifier_role(spec)
    manifest["strategy_classifiers"] = {**classifiers_in_manifest(manifest), role.key: role.info}
    store.write_manifest(manifest)

    cache = ResponseCache(cache_path or default_cache_path()) if use_cache else None
    model = create_model(spec.model, spec.args, cache=cache, max_concurrency=spec.concurrency,
                         retry=RetryPolicy(max_attempts=max_attempts, timeout_s=timeout_s))
    started = time.monotonic()
    try:
        outcome = await strategy_step(store, role, model, selected=selected,
                                      concurrency=model.limiter.max_concurrency, progress=progress)
    except RunAborted:
        store.close()
        raise
    finally:
        await model.aclose()
    old = store.read_summary() or {}
    extra: dict[str, Any] = {key: old[key] for key in ("skipped_rows", "invocation", "scoring") if key in old}
    extra.setdefault("skipped_rows", {"count": 0})
    extra["strategy_labelling"] = {"classifier": role.key, "elapsed_s": round(time.monotonic() - started, 3),
                                   **outcome, "usage": model.usage.to_dict()}
    summary = run_summary(store, task, manifest, summary_options or SummaryOptions(), selected=selected,
                          extra=extra)
    store.write_summary(summary)
    store.export_scores_jsonl(selected)
    store.close()
    return RunResult(run_dir=store.path, summary=summary)
