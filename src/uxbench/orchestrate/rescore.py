"""`uxbench score RUN_DIR --judge J`: score a finished generation run with another judge, without regenerating.

The scores sit beside those of earlier judges (records keyed by sample and judge); the summary is recomputed
from the store and lists every judge. Resumable: a killed scoring resumes with the same command.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from uxbench.errors import ConfigError, UxbenchError
from uxbench.orchestrate.progress import ProgressFn, RunAborted
from uxbench.orchestrate.runner import RunResult
from uxbench.orchestrate.spec import JudgeSpec
from uxbench.runs.store import MANIFEST, RunStore
from uxbench.runs.summary import check_summary
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
) -> RunResult:
    """Score the run's selected generations with `judge`; returns the refreshed summary.

    `make_primary`: whether this judge becomes the run's primary judge (default: when the run has none)."""
    from uxbench.dirlock import hold_dir_lock

    RunStore.open_existing(run_dir)  # a clear error for a path that is not a run directory, before locking it
    with hold_dir_lock(run_dir, command="uxbench score", what="run directory"):
        return await _score_locked(run_dir, judge, summary_options=summary_options, make_primary=make_primary,
                                   use_cache=use_cache, cache_path=cache_path, max_attempts=max_attempts,
                                   timeout_s=timeout_s, progress=progress)


async def _score_locked(
    run_dir: Path,
    judge: JudgeSpec,
    *,
    summary_options: SummaryOptions | None,
    make_primary: bool | None,
    use_cache: bool,
    cache_path: Path | None,
    max_attempts: int,
    timeout_s: float | None,
    progress: ProgressFn | None,
) -> RunResult:
    from uxbench.models.model import create_model
    from uxbench.models.registry import parse_model_spec
    from uxbench.orchestrate.scoring_step import judge_role, judges_in_manifest, score_step
    from uxbench.orchestrate.summary import run_summary, task_from_manifest
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy

    store = RunStore.open_existing(run_dir)
    manifest = store.read_manifest() or {}
    task = task_from_manifest(manifest, str(store.path / MANIFEST))
    if not task.generative:
        raise ConfigError(
            f"{store.path} is a Task 1 ({task.name}) run: its model is the judge under test, so it has nothing to "
            "score. `uxbench score` scores Task 2/3 runs."
        )
    selected = store.read_selection()
    if selected is None:
        raise UxbenchError(
            f"{store.path} has not finished its generation step: rerun the `uxbench run` command that made it, "
            "then score."
        )
    parse_model_spec(judge.model)
    role = judge_role(judge)
    judges = judges_in_manifest(manifest)
    judges[role.key] = role.info
    manifest["judges"] = judges
    if make_primary or (make_primary is None and not manifest.get("primary_judge")):
        manifest["primary_judge"] = role.key
    store.write_manifest(manifest)

    cache = ResponseCache(cache_path or default_cache_path()) if use_cache else None
    model = create_model(judge.model, judge.args, cache=cache, max_concurrency=judge.concurrency,
                         retry=RetryPolicy(max_attempts=max_attempts, timeout_s=timeout_s))
    started = time.monotonic()
    try:
        outcome = await score_step(store, task, role, model, selected=selected,
                                   concurrency=model.limiter.max_concurrency, progress=progress)
    except RunAborted:
        store.close()
        raise
    finally:
        await model.aclose()
    old = store.read_summary() or {}
    extra: dict[str, Any] = {key: old[key] for key in ("skipped_rows", "read", "invocation") if key in old}
    extra["scoring"] = {"judge": role.key, "elapsed_s": round(time.monotonic() - started, 3), **outcome,
                        "usage": model.usage.to_dict()}
    summary = run_summary(store, task, manifest, summary_options or SummaryOptions(), selected=selected,
                          extra=extra)
    check_summary(summary, str(store.path / "summary.json"))
    store.write_summary(summary)
    store.export_scores_jsonl(selected)
    store.close()
    return RunResult(run_dir=store.path, summary=summary)
