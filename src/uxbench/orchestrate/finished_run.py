"""One more step on a run whose generation is done (`uxbench score`: a judge, a strategy model): lock the run
directory, rebuild its task from the manifest, run the step with its own model, refresh the summary from the
store. Resumable like every step: a kill, then the same command, finishes what is missing."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uxbench.errors import UxbenchError
from uxbench.models.model import Model
from uxbench.orchestrate.runner import RunResult
from uxbench.runs.store import MANIFEST, SUMMARY, RunStore
from uxbench.tasks.base import SummaryOptions, Task

_KEPT = ("skipped_rows", "read", "invocation", "scoring", "strategy_labelling")
"""Summary fields only the invocations that wrote them know: carried over when the summary is refreshed."""


@dataclass
class CallSettings:
    """How the step's model is called (the `uxbench score` options)."""

    use_cache: bool = True
    cache_path: Path | None = None
    max_attempts: int = 6
    timeout_s: float | None = None


@dataclass
class FinishedRun:
    store: RunStore
    manifest: dict[str, Any]
    task: Task
    selected: list[str]


@asynccontextmanager
async def open_finished_run(run_dir: Path, *, command: str, verb: str) -> AsyncIterator[FinishedRun]:
    """The run at `run_dir`, locked for this process, with its task and latest selection."""
    from uxbench.dirlock import hold_dir_lock
    from uxbench.orchestrate.summary import task_from_manifest

    RunStore.open_existing(run_dir)  # a clear error for a path that is not a run directory, before locking it
    with hold_dir_lock(run_dir, command=command, what="run directory"):
        store = RunStore.open_existing(run_dir)
        try:
            manifest = store.read_manifest() or {}
            task = task_from_manifest(manifest, str(store.path / MANIFEST))
            selected = store.read_selection()
            if selected is None:
                raise UxbenchError(
                    f"{store.path} has not finished its generation step: rerun the `uxbench run` command that made "
                    f"it, then {verb}."
                )
            yield FinishedRun(store=store, manifest=manifest, task=task, selected=selected)
        finally:
            store.close()


async def run_with_model(
    spec: str, args: dict[str, str], concurrency: int | None, calls: CallSettings,
    step: Callable[[Model], Awaitable[dict[str, Any]]], *, sent_to: tuple[RunStore, str] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Build the step's model, run `step` with it and close it: (the step's outcome, usage and time).
    `sent_to`: the store and role that count the requests it sends."""
    from uxbench.models.model import create_model
    from uxbench.runtime.cache import ResponseCache, default_cache_path
    from uxbench.runtime.retry import RetryPolicy

    cache = ResponseCache(calls.cache_path or default_cache_path()) if calls.use_cache else None
    model = create_model(spec, args, cache=cache, max_concurrency=concurrency,
                         retry=RetryPolicy(max_attempts=calls.max_attempts, timeout_s=calls.timeout_s))
    if sent_to is not None:
        store, role = sent_to
        model.on_send = lambda: store.count_sent(role)
    started = time.monotonic()
    try:
        outcome = await step(model)
    finally:
        await model.aclose()
    return outcome, {"elapsed_s": round(time.monotonic() - started, 3), "usage": model.usage.to_dict()}


def refresh_summary(run: FinishedRun, options: SummaryOptions | None, **invocation: dict[str, Any]) -> RunResult:
    """Recompute the summary from the store, keep what earlier invocations recorded, add this one's (e.g.
    `scoring=...`), check and write it with the scores export."""
    from uxbench.orchestrate.summary import run_summary
    from uxbench.runs.summary import check_summary

    store = run.store
    old = store.read_summary() or {}
    extra = {key: old[key] for key in _KEPT if key in old} | invocation
    with store.exporting_scores_jsonl(run.selected) as scores:  # written in the summary's pass over the scores
        summary = run_summary(store, run.task, run.manifest, options or SummaryOptions(), selected=run.selected,
                              extra=extra, scores_sink=scores)
        check_summary(summary, str(store.path / SUMMARY))
        store.write_summary(summary)
    return RunResult(run_dir=store.path, summary=summary)
